// Drives a live picker node's /ui in headless Chromium (run by EppStatusPageBrowserTest).
// Argument: one JSON object {base, screenshot, profile, expect: {streams_open, picks, immediate: {status: n},
// matches, over, under}}. Waits until the endpoint-picker panel shows the expected figures, prints one JSON
// line with what the panel showed; exits non-zero on the first failed check.
'use strict';

const { WAIT, check, withUi } = require('./ui-browser');

const spec = JSON.parse(process.argv[2]);

async function main() {
  await withUi(spec, { width: 1400, height: 900 }, async (page, checkClean) => {
    await page.waitForSelector('#epp:not([hidden])', WAIT);
    const x = spec.expect;
    const shown = () => page.evaluate(() => {
      const t = id => document.getElementById(id).textContent;
      return {
        streams_open: t('epp-streams'), picks: t('epp-picks'), immediate_total: t('epp-immediate'),
        immediate: Object.fromEntries([...document.querySelectorAll('#epp-immediate-rows tr[data-status]')]
          .map(r => [r.dataset.status, r.querySelector('[data-field=requests]').textContent])),
        meanings: [...document.querySelectorAll('#epp-immediate-rows tr[data-status] td:nth-child(2)')].map(c => c.textContent),
        matches: t('epp-matches'), mispredictions: t('epp-mispredictions'), over: t('epp-over'), under: t('epp-under'),
        error: t('epp-error'), decision: t('epp-decision'), scope: document.querySelector('#epp [data-scope-of=epp]').textContent,
      };
    });
    const total = Object.values(x.immediate).reduce((a, b) => a + b, 0);
    const compared = x.matches + x.over + x.under;
    try {
      await page.waitForFunction(want => {
        const t = id => document.getElementById(id).textContent;
        const rows = Object.fromEntries([...document.querySelectorAll('#epp-immediate-rows tr[data-status]')]
          .map(r => [r.dataset.status, r.querySelector('[data-field=requests]').textContent]));
        return t('epp-streams') === String(want.streams_open) && t('epp-picks') === String(want.picks)
          && JSON.stringify(rows) === JSON.stringify(Object.fromEntries(Object.entries(want.immediate)
            .map(([k, v]) => [k, String(v)])))
          && t('epp-over') === String(want.over) && t('epp-under') === String(want.under)
          && t('epp-mispredictions') === String(want.over + want.under);
      }, x, WAIT);
    } catch (e) {
      throw new Error('the panel did not reach ' + JSON.stringify(x) + ': it shows ' + JSON.stringify(await shown()));
    }
    const s = await shown();
    check(s.immediate_total === String(total), 'immediate responses total ' + s.immediate_total);
    check(s.matches === (compared > 0 ? x.matches + ' of ' + compared : '–'), 'matches shown as ' + s.matches);
    check(compared === 0 || /^\d+\.\d tokens$/.test(s.error), 'the mean prediction error in tokens: ' + s.error);
    check(/^\d+\.\d ms$/.test(s.decision), 'the mean decision time: ' + s.decision);
    check(s.meanings.every(m => m.length > 0), 'each status says what it means: ' + JSON.stringify(s.meanings));
    check(s.scope === 'this node', 'the panel says whose figures they are: ' + s.scope);
    check(await page.locator('#epp-immediate-none').isHidden() === (total > 0), 'the "none" line follows the rows');
    checkClean();
    await page.locator('#epp').screenshot({ path: spec.screenshot });
    console.log(JSON.stringify(s));
  });
}

main().catch(e => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
