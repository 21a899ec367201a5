// Drives a live node's /ui in headless Chromium (run by StatusPageBrowserTest).
// Argument: one JSON object {base, screenshot, profile, workers: [id], live: [id], hostile, tokens}.
// Prints one JSON line with what the page showed; exits non-zero on the first failed check.
'use strict';

const { WAIT, check, withUi } = require('./ui-browser');

const spec = JSON.parse(process.argv[2]);

async function main() {
  await withUi(spec, { width: 1400, height: 820 }, async (page, checkClean) => {

    for (const id of spec.workers) {
      await page.waitForSelector(`tr[data-worker="${id}"]`, WAIT);
    }
    for (const id of spec.live) {
      await page.waitForFunction(wid => {
        const b = document.querySelector(`tr[data-worker="${wid}"] [data-field=listener]`);
        const s = document.querySelector(`tr[data-worker="${wid}"] [data-field=last_seq]`);
        return b && b.textContent === 'live' && s && s.textContent !== '–';
      }, id, WAIT);
    }
    await page.waitForFunction(() => {
      const b = document.querySelector('tr[data-worker="18446744073709551615"] [data-field=listener]');
      return b && b.textContent === 'retrying' && b.title.length > 0;
    }, null, WAIT);
    // the listener's last error is shown in its own column, not only as a tooltip
    const lastError = await page.textContent('tr[data-worker="18446744073709551615"] [data-field=last_error]');
    check(lastError.includes('cannot connect'), 'the retrying listener shows its last error: ' + lastError);
    // which node answers: version, mode, session affinity
    await page.waitForFunction(() => document.getElementById('mode').textContent === 'events', null, WAIT);
    check(await page.textContent('#affinity') === 'on', 'session affinity shown as on');
    check((await page.textContent('#version')).length > 1, 'the version is shown');
    // every figure says whose it is; a standalone node's are all its own
    const scopes = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-scope-of]')]
      .map(e => [e.dataset.scopeOf, e.textContent])));
    for (const f of spec.figures) {
      check(scopes[f] === 'this node', 'figure ' + f + ' is labelled this node: ' + JSON.stringify(scopes));
    }
    check(await page.locator('th[data-scope="this node"]').count() === 3 * await page.locator('section.partition').count(),
      'the load columns of every partition are labelled this node');
    await page.waitForFunction(() => document.getElementById('bookings').textContent === '0', null, WAIT);
    await page.waitForFunction(() => document.getElementById('sessions').textContent === '0', null, WAIT);
    check(await page.locator('#cluster').isHidden(), 'the cluster panel is hidden while GET /cluster answers 404');
    check(await page.locator('#epp').isHidden(), 'the endpoint picker panel is hidden on a node without --epp-port');
    const before = Number(await page.evaluate(() => document.body.dataset.refreshes || '0'));

    // a hostile string from the catalog is shown as text, never parsed as markup
    await page.waitForFunction(h => [...document.querySelectorAll('h2')].some(e => e.textContent.includes(h)),
      spec.hostile, WAIT);
    check(await page.locator('#pwn').count() === 0, 'a model name was parsed as HTML');
    const reasons = await page.locator('td.reasons').allTextContents();
    check(reasons.some(r => r.includes('kv_events')), 'the incomplete worker shows its reasons: ' + JSON.stringify(reasons));

    const res = await fetch(spec.base + '/select_and_reserve', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ selection_id: 'ui-test-1', session_id: 'ui-session-1', token_ids: spec.tokens }),
    });
    check(res.status === 200, 'select_and_reserve answered ' + res.status);
    // u64 worker ids stay exact: quoted before parsing, as the page does
    const chosen = JSON.parse((await res.text()).replace(/"worker_id":(\d{16,})/g, '"worker_id":"$1"'));
    const row = `tr[data-worker="${chosen.worker_id}"][data-rank="${chosen.dp_rank}"]`;
    await page.waitForFunction(() => document.getElementById('bookings').textContent === '1', null, WAIT);
    await page.waitForFunction(() => document.getElementById('sessions').textContent === '1', null, WAIT);
    await page.waitForFunction(r => {
      const c = document.querySelector(r + ' [data-field=active_requests]');
      return c && c.textContent === '1';
    }, row, WAIT);
    // a few more selections (no bookings): the plots of the last minutes show them
    for (let i = 0; i < 3; i++) {
      const sel = await fetch(spec.base + '/select', {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token_ids: spec.tokens }),
      });
      check(sel.status === 200, '/select answered ' + sel.status);
    }
    const points = name => page.evaluate(n => [...document.querySelectorAll(`figure[data-plot="${n}"] polyline`)]
      .map(l => Number(l.dataset.points)), name);
    await page.waitForFunction(() => {
      const f = document.querySelector('figure[data-plot=selections_per_sec]');
      const l = f && f.querySelector('polyline');
      return l && Number(l.dataset.points) >= 2 && Number(f.dataset.max) > 0;
    }, null, WAIT);
    for (const name of ['cached_share', 'decision_p99_ms', 'queue_depth']) {
      const n = await points(name);
      check(n.length === 1 && n[0] >= 1, name + ' is plotted with points: ' + JSON.stringify(n));
    }
    check(Number(await page.getAttribute('figure[data-plot=decision_p99_ms]', 'data-max')) > 0, 'a decision latency is plotted');
    const ages = await page.evaluate(() => [...document.querySelectorAll('figure[data-plot=kv_event_age_ms] polyline')]
      .map(l => l.dataset.series));
    check(ages.includes('worker 1'), 'the live worker\'s KV-event age is plotted: ' + JSON.stringify(ages));
    const prefill = Number(await page.getAttribute(row + ' [data-field=prefill_tokens]', 'data-value'));
    const fill = await page.evaluate(r => document.querySelector(r + ' [data-field=prefill_tokens] .fill').style.width, row);
    const after = Number(await page.evaluate(() => document.body.dataset.refreshes || '0'));
    check(after > before, 'the page refreshed itself');
    checkClean();
    // GET /cluster answers once the node is clustered: the panel lists the members (as text)
    const cluster = { enabled: true, state: 'joined', name: 'kvs-ui-test', node_id: 'n1', members: [
      { id: 'member-1', address: '127.0.0.1:5701', local: true },
      { id: '<b id=pwn2>member-2</b>', address: '127.0.0.1:5702', local: false }] };
    await page.route('**/cluster', r => r.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(cluster) }));
    await page.waitForSelector('#cluster:not([hidden]) tr[data-member]', WAIT);
    check(await page.locator('#cluster tr[data-member]').count() === 2, 'two cluster members shown');
    check(await page.locator('#pwn2').count() === 0, 'a member id was parsed as HTML');
    // on a cluster member the same figures say which are the cluster's and which this member's share
    await page.route('**/ui/state', async r => {
      const real = await (await r.fetch()).json();
      real.clustered = true;
      Object.assign(real.scopes, { schedulable_workers: 'cluster', sessions: 'owned', pending_selections: 'owned',
        active_requests: 'cluster' });
      await r.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(real) });
    });
    await page.waitForFunction(() => document.querySelector('[data-scope-of=sessions]').textContent === 'owned by this node',
      null, WAIT);
    check(await page.textContent('[data-scope-of=bookings]') === 'this node', 'bookings stay this node\'s');
    check(await page.textContent('[data-scope-of=schedulable_workers]') === 'cluster', 'the catalog is the cluster\'s');
    await page.waitForSelector('th[data-scope="cluster"]', WAIT);
    // a schedulable worker whose listener keeps retrying is called out once its grace (10 s) is over
    await page.waitForSelector('#warnings:not([hidden]) li[data-warning-worker="18446744073709551615"]',
      { timeout: 40000 });
    const warning = await page.textContent('li[data-warning-worker="18446744073709551615"]');
    check(warning.includes('--liveness-grace-secs') && warning.includes('cannot connect'), 'the warning says why: ' + warning);
    await page.screenshot({ path: spec.screenshot, fullPage: true });
    await page.unroute('**/ui/state');
    await page.unroute('**/cluster');
    await page.waitForSelector('#cluster', { state: 'hidden', timeout: WAIT.timeout });

    // behind a bearer token the page asks for it once and sends it with every call
    await page.route('**/ui/state', r => (r.request().headers().authorization === 'Bearer s3cret' ? r.continue()
      : r.fulfill({ status: 401, contentType: 'application/json', body: '{"error":"missing or invalid bearer token"}' })));
    await page.waitForSelector('#token-form:not([hidden])', WAIT);
    const locked = Number(await page.evaluate(() => document.body.dataset.refreshes));
    await page.fill('#token', 's3cret');
    await page.click('#token-form button');
    await page.waitForSelector('#token-form', { state: 'hidden', timeout: WAIT.timeout });
    await page.waitForFunction(n => Number(document.body.dataset.refreshes) > n, locked, WAIT);
    check(await page.locator('#problem').isHidden(), 'no problem shown once the token is given');
    console.log(JSON.stringify({ worker_id: chosen.worker_id, dp_rank: chosen.dp_rank, prefill_tokens: prefill,
      prefill_bar: fill, refreshes: after }));
  });
}

main().catch(e => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
