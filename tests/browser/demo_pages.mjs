// What the demo pages' browser tests share (demo.test.mjs, write.serial.mjs):
// the demo server and a browser for a test file, opening a page with every
// problem it reports collected, and reading a canvas without disturbing the page.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';
import { startServer } from '../../tools/serve.mjs';

/** Where the tests write their screenshots. */
export const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-artifacts');

/**
 * For one test file: registers node:test hooks that start tools/serve.mjs on
 * a free port and a headless Chromium (1280×900) before its tests, create
 * test-artifacts/, and close both after them. Returns `url` (the server's,
 * ending in /, once started) and `open(path)` (openDemoPage on them).
 */
export function demoSession() {
  let server;
  let browser;
  before(async () => {
    server = await startServer({ port: 0 });
    await mkdir(ARTIFACTS, { recursive: true });
    browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  return {
    get url() { return server.url; },
    open: (path) => openDemoPage(browser.context, server.url, path),
  };
}

/**
 * Opens `path` on the server at `baseUrl` in a new page of `context` and
 * records every console error and warning, page error, failed request and
 * HTTP error response in `problems`. Waits until the page says it is ready
 * (body[data-ready]) and asserts that it is ready without error.
 * @returns {Promise<{page: import('playwright-core').Page, problems: string[]}>} the caller closes the page
 */
export async function openDemoPage(context, baseUrl, path) {
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => {
    // Chromium reports a completed HEAD request (the landing page's model sizes) as
    // net::ERR_ABORTED once its empty body is dropped; that is not a failure.
    if (r.method() === 'HEAD' && r.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`requestfailed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  await page.goto(new URL(path, baseUrl).href);
  await page.waitForSelector('body[data-ready]', { timeout: 15000 });
  assert.equal(await page.getAttribute('body', 'data-ready'), 'true', `page did not get ready: ${problems.join('; ')}`);
  return { page, problems };
}

/**
 * Number of canvas pixels that differ from the most common colour (the
 * background), the number of colours, and a signature of the pixels (a
 * 32-bit FNV-1a hash: equal pictures, equal signatures).
 */
export function nonBlankPixels(page, selector) {
  return page.$eval(selector, (c) => {
    // Read a copy: repeated reads of the page's own canvas make Chromium warn in the console.
    const copy = document.createElement('canvas');
    copy.width = c.width;
    copy.height = c.height;
    const ctx = copy.getContext('2d', { willReadFrequently: true });
    ctx.drawImage(c, 0, 0);
    const { data } = ctx.getImageData(0, 0, c.width, c.height);
    const counts = new Map();
    let hash = 0x811c9dc5;
    for (let i = 0; i < data.length; i += 4) {
      const k = (data[i] << 24) | (data[i + 1] << 16) | (data[i + 2] << 8) | data[i + 3];
      counts.set(k, (counts.get(k) ?? 0) + 1);
      hash = Math.imul(hash ^ k, 0x01000193) >>> 0;
    }
    const top = Math.max(...counts.values());
    return { differing: data.length / 4 - top, colours: counts.size, signature: hash };
  });
}
