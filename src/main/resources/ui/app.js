// kvselect status page: polls the node's JSON routes once a second and redraws with DOM calls
// only (textContent, never innerHTML), so no string from the node is ever parsed as markup.
'use strict';

const REFRESH_MS = 1000;

/** JSON.parse after quoting u64 ids that a JS number cannot hold exactly. */
function parseJson(text) {
  return JSON.parse(text.replace(/"worker_id":(\d{16,})/g, '"worker_id":"$1"'));
}

const TOKEN_KEY = 'kvselect-token';

/** Thrown when the node asks for a bearer token (401); the page then shows the token form. */
class Unauthorized extends Error {}

async function fetchJson(path, optional) {
  const headers = { accept: 'application/json' };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) {
    headers.authorization = 'Bearer ' + token;
  }
  const res = await fetch(path, { cache: 'no-store', headers });
  if (res.status === 401) {
    throw new Unauthorized(path + ' needs a bearer token');
  }
  if (optional && (res.status === 404 || res.status === 405)) {
    return null;
  }
  const text = await res.text();
  if (!res.ok && res.status !== 503) {
    throw new Error(path + ' answered ' + res.status);
  }
  return parseJson(text);
}

/** An element with attributes and children (strings become text nodes). */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) {
      continue;
    }
    if (k === 'class') {
      e.className = v;
    } else {
      e.setAttribute(k, String(v));
    }
  }
  for (const c of children) {
    if (c === undefined || c === null) {
      continue;
    }
    e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function setText(id, value) {
  document.getElementById(id).textContent = value === undefined || value === null ? '–' : String(value);
}

function fmt(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : String(n);
}

function age(iso, nowMs) {
  if (!iso) {
    return 'never';
  }
  const s = Math.max(0, (nowMs - Date.parse(iso)) / 1000);
  if (s < 60) {
    return s.toFixed(s < 10 ? 1 : 0) + ' s';
  }
  if (s < 3600) {
    return Math.floor(s / 60) + ' min';
  }
  return Math.floor(s / 3600) + ' h';
}

function bar(value, max, cls, field) {
  const pct = max > 0 ? Math.min(100, (100 * value) / max) : 0;
  const fill = el('div', { class: 'fill' });
  fill.style.width = pct.toFixed(1) + '%';
  return el('div', { class: 'bar ' + cls, 'data-field': field, 'data-value': value, title: fmt(value) + ' of ' + fmt(max) },
    fill, el('span', { class: 'text' }, fmt(value)));
}

/** What each scope of {@code /ui/state}'s {@code scopes} reads as on the page. */
const SCOPE_LABELS = { node: 'this node', cluster: 'cluster', owned: 'owned by this node' };

function scopeLabel(state, figure) {
  const s = state && state.scopes ? state.scopes[figure] : undefined;
  return s === undefined ? '' : (SCOPE_LABELS[s] || s);
}

function partitionKey(model, group) {
  return model + ':' + group;
}

/** One table per partition: a row per (worker, DP rank) with lifecycle, listener and load. */
function renderPartitions(workers, loads, state) {
  const byPart = new Map();
  for (const w of workers) {
    const k = partitionKey(w.model_name, w.routing_group);
    if (!byPart.has(k)) {
      byPart.set(k, { model: w.model_name, group: w.routing_group, workers: [], loads: new Map(), pending: 0 });
    }
    byPart.get(k).workers.push(w);
  }
  for (const p of loads) {
    const part = byPart.get(partitionKey(p.model_name, p.routing_group));
    if (!part) {
      continue;
    }
    part.pending = p.pending_count;
    for (const l of p.loads) {
      part.loads.set(String(l.worker_id) + '/' + l.dp_rank, l);
    }
  }
  const root = document.getElementById('partitions');
  const sections = [];
  for (const part of [...byPart.values()].sort((a, b) => (a.model + a.group).localeCompare(b.model + b.group))) {
    let maxPrefill = 1;
    let maxDecode = 1;
    for (const l of part.loads.values()) {
      maxPrefill = Math.max(maxPrefill, l.potential_prefill_tokens);
      maxDecode = Math.max(maxDecode, l.potential_decode_blocks);
    }
    const body = el('tbody');
    part.workers.sort((a, b) => String(a.worker_id).localeCompare(String(b.worker_id), 'en', { numeric: true }));
    for (const w of part.workers) {
      const size = w.data_parallel_size || 1;
      const start = w.data_parallel_start_rank || 0;
      for (let i = 0; i < Math.max(1, size); i++) {
        const rank = start + i;
        const listener = w.kv_events ? w.kv_events[String(rank)] : undefined;
        const load = part.loads.get(String(w.worker_id) + '/' + rank);
        const prefillCap = w.max_num_batched_tokens || maxPrefill;
        const decodeCap = w.total_kv_blocks || maxDecode;
        const row = el('tr', { class: i === 0 ? 'worker-first' : null, 'data-worker': w.worker_id, 'data-rank': rank },
          el('td', { class: 'id' }, i === 0 ? String(w.worker_id) : ''),
          el('td', { class: 'endpoint' }, i === 0 ? (w.endpoint || '') : ''),
          el('td', {}, i === 0 ? el('span', { class: 'badge ' + w.lifecycle, 'data-field': 'lifecycle' }, w.lifecycle) : ''),
          el('td', { class: 'num' }, rank),
          el('td', {}, listener ? el('span', { class: 'badge ' + listener.state, 'data-field': 'listener', title: listener.last_error || '' },
            listener.state) : el('span', { class: 'muted' }, state && state.kv_events ? 'not subscribed' : 'approximate')),
          el('td', { class: 'num', 'data-field': 'last_seq' }, listener && listener.last_seq !== null ? fmt(listener.last_seq) : '–'),
          el('td', { class: 'num' }, listener ? fmt(listener.gaps) : '–'),
          el('td', { class: 'num' }, listener ? fmt(listener.replays) : '–'),
          el('td', { class: 'num' }, listener ? fmt(listener.dropped_frames) : '–'),
          el('td', { class: 'num', 'data-field': 'event_age' }, listener ? age(listener.last_event_at, state ? state.now_ms : Date.now()) : '–'),
          el('td', { class: 'error', 'data-field': 'last_error' }, listener && listener.last_error ? listener.last_error : ''),
          el('td', { class: 'num', 'data-field': 'active_requests' }, load ? fmt(load.active_requests) : '–'),
          el('td', {}, load ? bar(load.potential_prefill_tokens, prefillCap, 'prefill', 'prefill_tokens') : '–'),
          el('td', {}, load ? bar(load.potential_decode_blocks, decodeCap, 'decode', 'decode_blocks') : '–'));
        body.appendChild(row);
      }
      if (w.not_schedulable_reasons && w.not_schedulable_reasons.length) {
        body.appendChild(el('tr', { 'data-reasons-of': w.worker_id },
          el('td', {}), el('td', { class: 'reasons', colspan: 13 }, 'not schedulable: ' + w.not_schedulable_reasons.join('; '))));
      }
    }
    const loadScope = scopeLabel(state, 'active_requests');
    const head = el('thead', {}, el('tr', {}, ...['worker', 'endpoint', 'lifecycle', 'rank', 'listener', 'last seq', 'gaps',
      'replays', 'dropped', 'last event', 'last error'].map(h => el('th', {}, h)),
    ...['active', 'prefill tokens', 'decode blocks'].map(h => el('th', { 'data-scope': loadScope },
      h, el('span', { class: 'scope' }, loadScope)))));
    sections.push(el('section', { class: 'partition', 'data-partition': partitionKey(part.model, part.group) },
      el('h2', {}, part.model + ' / ' + part.group + ' ',
        el('span', { class: 'muted' }, part.workers.length + ' worker(s), ' + part.pending + ' queued')),
      el('div', { class: 'scroll' }, el('table', {}, head, body))));
  }
  root.replaceChildren(...sections);
  document.getElementById('empty').hidden = workers.length > 0;
}

function renderState(state) {
  const ready = document.getElementById('ready');
  ready.textContent = state.ready ? 'ready' : 'not ready';
  ready.className = 'badge ' + (state.ready ? 'ok' : 'bad');
  setText('schedulable', state.schedulable_workers);
  setText('bookings', state.bookings);
  setText('pending', state.pending_selections);
  setText('sessions', state.sessions);
  setText('index-blocks', fmt(state.index_blocks));
  setText('batches', state.ingest ? fmt(state.ingest.batches) : 'off');
  setText('queued', Object.values(state.queue_depths).reduce((a, b) => a + b, 0));
  setText('version', state.version);
  setText('mode', state.mode);
  setText('affinity', state.session_affinity ? 'on' : 'off');
  const warnings = Array.isArray(state.listener_warnings) ? state.listener_warnings : [];
  document.getElementById('warning-list').replaceChildren(...warnings.map(w =>
    el('li', { 'data-warning-worker': w.worker_id, 'data-rank': w.dp_rank }, w.message)));
  document.getElementById('warnings').hidden = warnings.length === 0;
  for (const e of document.querySelectorAll('[data-scope-of]')) {
    e.textContent = scopeLabel(state, e.dataset.scopeOf);
  }
}

/** What each immediate-response status of the picker means (docs/epp.md). */
const EPP_STATUS = {
  400: 'malformed body, or the renderer refused the prompt',
  404: 'not an inference route',
  413: 'body too large',
  429: 'shed by the router queue',
  502: 'the renderer failed',
  503: 'no worker ready, none inside the subset, or the renderer unreachable',
  504: 'the renderer too slow',
};

/**
 * The endpoint picker's figures from {@code /ui/state}'s {@code epp} (present only with
 * --epp-port): streams open, picks, immediate responses by status, the engines' cached tokens
 * against the prediction. The panel is hidden when the picker is off.
 */
function renderPicker(state) {
  const section = document.getElementById('epp');
  const e = state.epp;
  if (!e || typeof e !== 'object') {
    section.hidden = true;
    return;
  }
  setText('epp-streams', fmt(e.streams_open));
  setText('epp-picks', fmt(e.picks));
  const statuses = Object.keys(e.immediate).sort((a, b) => Number(a) - Number(b));
  setText('epp-immediate', fmt(statuses.reduce((sum, s) => sum + e.immediate[s], 0)));
  document.getElementById('epp-immediate-rows').replaceChildren(...statuses.map(s => el('tr', { 'data-status': s },
    el('td', { class: 'num' }, s), el('td', {}, EPP_STATUS[s] || ''),
    el('td', { class: 'num', 'data-field': 'requests' }, fmt(e.immediate[s])))));
  document.getElementById('epp-immediate-none').hidden = statuses.length > 0;
  setText('epp-decision', e.picks + statuses.length > 0 ? e.decision_mean_ms.toFixed(1) + ' ms' : '–');
  const c = e.cached_tokens;
  setText('epp-matches', c.compared > 0 ? fmt(c.matches) + ' of ' + fmt(c.compared) : '–');
  setText('epp-compared', c.compared > 0 ? 'responses that reported cached_tokens' : 'no response reported cached_tokens yet');
  setText('epp-mispredictions', fmt(c.over + c.under));
  setText('epp-over', fmt(c.over));
  setText('epp-under', fmt(c.under));
  setText('epp-error', c.compared > 0 ? c.mean_error_tokens.toFixed(1) + ' tokens' : '–');
  section.hidden = false;
}

/**
 * Members of the cluster from {@code GET /cluster} ({enabled, state, name, members: [{id, address,
 * local}]}); the panel is hidden while the route answers 404 or the node runs standalone.
 */
function renderCluster(cluster) {
  const section = document.getElementById('cluster');
  if (cluster === null || typeof cluster !== 'object' || cluster.enabled === false) {
    section.hidden = true;
    return;
  }
  const members = Array.isArray(cluster.members) ? cluster.members : [];
  document.getElementById('cluster-title').textContent =
    [cluster.name, cluster.state, members.length + ' member(s)'].filter(x => x !== undefined && x !== null).join(' · ');
  const rows = members.map(m => el('tr', { 'data-member': m.id },
    el('td', { class: 'endpoint' }, m.id === undefined ? '' : m.id),
    el('td', { class: 'endpoint' }, m.address === undefined ? '' : m.address),
    el('td', {}, m.local ? el('span', { class: 'badge ok' }, 'this node') : '')));
  document.getElementById('cluster-rows').replaceChildren(...rows);
  document.getElementById('cluster-note').textContent = cluster.note || '';
  section.hidden = false;
}

const SVG = 'http://www.w3.org/2000/svg';
const PLOT_W = 240;
const PLOT_H = 64;
const LINE_COLORS = ['#4c7bd9', '#8a63d2', '#1f8a4c', '#b7791f', '#c53030', '#2b6cb0'];

function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) {
    e.setAttribute(k, String(v));
  }
  return e;
}

/**
 * One small line plot: {@code series} is [{name, points: [[t, v]]}] drawn over the time span
 * [t0, t1] and 0..max; null values leave a gap. The polyline carries data-points (how many).
 */
function plot(figure, series, t0, t1, scale, unit) {
  let max = 0;
  for (const s of series) {
    for (const [, v] of s.points) {
      max = Math.max(max, v);
    }
  }
  const shownMax = max > 0 ? max : 1;
  const svg = svgEl('svg', { viewBox: `0 0 ${PLOT_W} ${PLOT_H}`, width: PLOT_W, height: PLOT_H, role: 'img' });
  svg.appendChild(svgEl('rect', { x: 0, y: 0, width: PLOT_W, height: PLOT_H, class: 'frame' }));
  const span = Math.max(1, t1 - t0);
  series.forEach((s, i) => {
    const pts = s.points.map(([t, v]) => (((t - t0) / span) * (PLOT_W - 4) + 2).toFixed(1) + ','
      + (PLOT_H - 2 - (v / shownMax) * (PLOT_H - 6)).toFixed(1));
    const line = svgEl('polyline', { points: pts.join(' '), fill: 'none', stroke: LINE_COLORS[i % LINE_COLORS.length],
      'stroke-width': 1.5, 'data-points': s.points.length, 'data-series': s.name });
    const title = document.createElementNS(SVG, 'title');
    title.textContent = s.name;
    line.appendChild(title);
    svg.appendChild(line);
  });
  const last = series.length && series[0].points.length ? series[0].points[series[0].points.length - 1][1] : null;
  const label = svgEl('text', { x: PLOT_W - 4, y: 12, 'text-anchor': 'end', class: 'plot-max' });
  label.textContent = 'max ' + (max * scale).toLocaleString('en-US', { maximumFractionDigits: 2 }) + unit;
  svg.appendChild(label);
  figure.querySelector('svg')?.remove();
  figure.appendChild(svg);
  figure.dataset.last = last === null ? '' : String(last);
  figure.dataset.max = String(series.some(x => x.points.length) ? max : 0);
}

/** The plots of {@code GET /ui/history}: four node series and one line per worker's event age. */
function renderHistory(history) {
  if (!history || !Array.isArray(history.samples)) {
    return;
  }
  const samples = history.samples;
  const t1 = samples.length ? samples[samples.length - 1].t : Date.now();
  const t0 = t1 - history.window_ms;
  const one = field => [{ name: field, points: samples.filter(s => s[field] !== null).map(s => [s.t, s[field]]) }];
  const figure = name => document.querySelector(`figure[data-plot="${name}"]`);
  plot(figure('selections_per_sec'), one('selections_per_sec'), t0, t1, 1, '/s');
  plot(figure('cached_share'), one('cached_share'), t0, t1, 100, ' %');
  plot(figure('decision_p99_ms'), one('decision_p99_ms'), t0, t1, 1, ' ms');
  plot(figure('queue_depth'), one('queue_depth'), t0, t1, 1, '');
  const workers = [...new Set(samples.flatMap(s => Object.keys(s.kv_event_age_ms)))].sort();
  plot(figure('kv_event_age_ms'), workers.map(w => ({ name: 'worker ' + w,
    points: samples.filter(s => s.kv_event_age_ms[w] !== undefined).map(s => [s.t, s.kv_event_age_ms[w]]) })),
  t0, t1, 0.001, ' s');
}

async function refresh() {
  const problem = document.getElementById('problem');
  try {
    const [state, workers, loads, cluster, history] = await Promise.all([
      fetchJson('/ui/state'), fetchJson('/workers'), fetchJson('/loads'), fetchJson('/cluster', true),
      fetchJson('/ui/history', true)]);
    renderState(state);
    renderPicker(state);
    renderHistory(history);
    renderPartitions(workers, loads, state);
    renderCluster(cluster);
    problem.hidden = true;
    document.getElementById('updated').textContent = 'updated ' + new Date(state.now_ms).toLocaleTimeString('en-GB');
    document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes || 0) + 1);
  } catch (e) {
    const auth = e instanceof Unauthorized;
    document.getElementById('token-form').hidden = !auth;
    problem.textContent = auth ? 'this node needs its bearer token' : 'node unreachable: ' + e.message;
    problem.hidden = false;
    return;
  } finally {
    timer = setTimeout(refresh, REFRESH_MS);
  }
  document.getElementById('token-form').hidden = true;
}

let timer = null;

/** The token is kept for this tab only (sessionStorage) and sent as {@code Authorization: Bearer}. */
document.getElementById('token-form').addEventListener('submit', ev => {
  ev.preventDefault();
  const input = document.getElementById('token');
  sessionStorage.setItem(TOKEN_KEY, input.value.trim());
  input.value = '';
  clearTimeout(timer);
  refresh();
});

refresh();
