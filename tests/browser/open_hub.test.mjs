// The open page's hub ids and cache view (web/open/cache_view.js) in headless Chromium, served as `npm run
// demo` serves it (tools/serve.mjs, cross-origin isolated), the hub a local server of another origin
// (tests/js/hub_server.mjs, named by ?hub=): a hub id typed in the URL box is inspected and loaded (the
// progress tells downloaded bytes from cached ones); the cache view then lists it with its size; after a
// reload with the hub gone, the model opens from the list and loads with no network; Delete empties the list.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../tools/serve.mjs';
import { startHub } from '../js/hub_server.mjs';
import { lmConfig, lmTensors, safetensors } from '../js/lm_checkpoint.mjs';
import { launchChromium, watchedPage } from './chromium.mjs';

const config = lmConfig({ vocab: 3000 });
const bytes = safetensors(lmTensors(config, { seed: 5 }));
const total = bytes.byteLength + JSON.stringify(config).length;
let hub, server, browser;

before(async () => {
  hub = await startHub({ 'org/tiny': { main: { 'model.safetensors': bytes, 'config.json': config } } });
  server = await startServer();
  browser = await launchChromium({ viewport: { width: 1200, height: 1100 } });
});
after(async () => {
  await browser?.close();
  await server?.close();
  await hub?.close();
});

const waitLoaded = async (page) => {
  await page.waitForFunction(() => ['true', 'error'].includes(document.body.dataset.loaded), null, { timeout: 60_000 });
  assert.equal(await page.evaluate(() => document.body.dataset.loaded), 'true', await page.textContent('#load-error'));
};
const rows = (page) => page.$$eval('#cache-list tbody tr', (trs) => trs.map((tr) => ({ id: tr.dataset.id, bytes: Number(tr.cells[1].dataset.bytes) })));

test('open page: a hub id loads and is kept; it opens from the cache view offline; Delete', async () => {
  const { page } = await watchedPage(browser.context);
  const url = `${server.url}web/open/?hub=${encodeURIComponent(hub.host)}`;
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.ready === 'true' && document.getElementById('cache-view').dataset.count === '0', null, { timeout: 30_000 });

  await page.fill('#url', 'org/tiny');
  await page.click('#url-open');
  await page.waitForSelector('#fit-card:not(.hidden)');
  assert.match(await page.textContent('#source-summary'), /^org\/tiny: 1 weight file\(s\), 21 tensors — config.json: model_type "llama"/);
  await page.click('#load');
  await waitLoaded(page);
  assert.match(await page.textContent('#progress-text'), /downloaded, 0 B from the cache/);
  await page.waitForFunction(() => document.getElementById('cache-view').dataset.count === '1');
  assert.deepEqual(await rows(page), [{ id: 'org/tiny', bytes: total }]);

  // The hub gone, a reload: the model opens from the list, with no network.
  await hub.close();
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.ready === 'true' && document.getElementById('cache-view').dataset.count === '1', null, { timeout: 30_000 });
  await page.click('#cache-list tr[data-id="org/tiny"] [data-act="open"]');
  await page.waitForSelector('#fit-card:not(.hidden)');
  assert.match(await page.textContent('#source-summary'), /^org\/tiny \(from the cache\): 1 weight file\(s\), 21 tensors/);
  await page.click('#load');
  await waitLoaded(page);
  assert.match(await page.textContent('#progress-text'), /\(0 B downloaded, [\d.]+ [KM]B from the cache\)/);
  assert.equal(await page.evaluate(() => window.openDemo.state.kind), 'CausalLM');
  if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });

  await page.click('#cache-list tr[data-id="org/tiny"] [data-act="delete"]');
  await page.waitForFunction(() => document.getElementById('cache-view').dataset.count === '0');
});
