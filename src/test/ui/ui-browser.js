// What the status-page scripts share: a headless Chromium on a fresh profile, the node's /ui
// opened in it, page errors and requests that leave the node collected, and the check helper.
'use strict';

const { chromium } = require('playwright-core');

const WAIT = { timeout: 20000 };

function check(cond, message) {
  if (!cond) {
    throw new Error('check failed: ' + message);
  }
}

// Opens spec.base + '/ui' in a headless Chromium with the profile spec.profile and runs
// body(page); then checks that no page error was thrown and no request left spec.base, and
// closes the browser whatever happened.
async function withUi(spec, viewport, body) {
  const context = await chromium.launchPersistentContext(spec.profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const pageErrors = [];
  const external = [];
  try {
    const page = context.pages()[0] || await context.newPage();
    page.on('pageerror', e => pageErrors.push(String(e)));
    page.on('request', r => {
      if (!r.url().startsWith(spec.base)) {
        external.push(r.url());
      }
    });
    await page.goto(spec.base + '/ui', { waitUntil: 'load' });
    return await body(page, () => {
      check(pageErrors.length === 0, 'page errors: ' + pageErrors.join('; '));
      check(external.length === 0, 'requests left the node: ' + external.join(', '));
    });
  } finally {
    await context.close();
  }
}

module.exports = { WAIT, check, withUi };
