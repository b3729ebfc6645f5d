// attnwasm/inspect in headless Chromium, imported as a page imports it (an import map, no wasm): a folder picked
// (<input webkitdirectory>: a FileList whose Files are named by their paths below the folder) and files picked
// (a File[] of a sharded checkpoint), a Blob, a base URL and a file's URL of the same server, each described as
// Node describes the same files (tests/js/inspect.test.mjs compares Node's with the runtime's); the base URL asks
// for model.safetensors (HEAD) and never for an index, and its side files are not asked for with probe false —
// no 404, no console error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readFileSync, readdirSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from '../../bindings/inspect/index.js';
import { writeCheckpoint } from '../../tools/make_checkpoint.mjs';
import { launchChromium } from './chromium.mjs';
import { startStatic } from './static_server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ENCODER = join(ROOT, 'tests/data/goldens/encoders/bert_mean_norm_pooler');
const PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>attnwasm inspect</title>
<script type="importmap">{ "imports": { "attnwasm/inspect": "/bindings/inspect/index.js" } }</script>
<input type="file" id="folder" webkitdirectory multiple><input type="file" id="files" multiple>
<script type="module">
import { inspect } from 'attnwasm/inspect';
const plain = (r) => JSON.parse(JSON.stringify(r));
window.inspectPicked = async (id) => plain(await inspect(document.getElementById(id).files));
window.inspectFileArray = async (id) => plain(await inspect([...document.getElementById(id).files]));
window.inspectBlob = async (id) => plain(await inspect(new Blob([document.getElementById(id).files[0]])));
window.inspectUrl = async (url, options) => plain(await inspect(url, options));
window.ready = true;
</script>`;
let tmp, server, browser;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'attnwasm-inspect-browser-'));
  writeCheckpoint('tiny', join(tmp, 'tiny'), { shards: 2 });
  cpSync(ENCODER, join(tmp, 'encoder'), { recursive: true });
  server = await startStatic({ root: tmp, routes: { '/page.html': { type: 'text/html', body: PAGE } } });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** A report with its files in name order (a folder pick lists them in the browser's order, Node's listing sorted). */
const sorted = (r) => ({ ...r, files: [...r.files].sort((a, b) => (a.name < b.name ? -1 : 1)) });
/** Node's report of the same files, as the page's would be (JSON), with the source the page gave. */
const nodeReport = async (source, kind, options) => sorted({ ...JSON.parse(JSON.stringify(await inspect(source, options))), source: kind });

test('picked files, a Blob, a base URL: the same report as Node gives; no index asked for, no 404', async () => {
  const page = await browser.context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  // The static server's pages are served from tmp; the package's modules through a route of their own.
  await page.route('**/bindings/**', (route) => {
    const path = decodeURIComponent(new URL(route.request().url()).pathname);
    route.fulfill({ path: join(ROOT, path), contentType: 'text/javascript' });
  });
  try {
    await page.goto(`${server.url}page.html`);
    await page.waitForFunction(() => window.ready === true);
    // A folder picked: the encoder's, 1_Pooling/ and all.
    await page.setInputFiles('#folder', join(tmp, 'encoder'));
    const picked = sorted(await page.evaluate(() => window.inspectPicked('folder')));
    const want = await nodeReport(join(tmp, 'encoder'), 'files');
    assert.deepEqual(picked, want);
    assert.equal(picked.family.kind, 'encoder');
    assert.equal(picked.files.find((f) => f.name === '1_Pooling/config.json')?.role, 'sentence-transformers');
    // Files picked: the sharded checkpoint's, as a File[].
    const shards = readdirSync(join(tmp, 'tiny')).map((f) => join(tmp, 'tiny', f));
    await page.setInputFiles('#files', shards);
    const files = sorted(await page.evaluate(() => window.inspectFileArray('files')));
    assert.deepEqual(files, await nodeReport(join(tmp, 'tiny'), 'files'));
    assert.equal(files.files.filter((f) => f.role === 'weights').length, 2);
    // One file as a Blob (no name: 'source'), with no config: refused as the loader refuses it.
    await page.setInputFiles('#files', join(tmp, 'encoder', 'model.safetensors'));
    const blob = await page.evaluate(() => window.inspectBlob('files'));
    assert.deepEqual(blob, await nodeReport(readFileSync(join(tmp, 'encoder', 'model.safetensors')), 'file'));
    assert.match(blob.refused.message, /no "attnwasm\.config" metadata/);
    // A base URL (probe false: no side file asked for) and a sharded one: the index only where there is no model.safetensors.
    const from = server.requests.length;
    const url = await page.evaluate((u) => window.inspectUrl(u, { probe: false }), `${server.url}encoder/`);
    assert.deepEqual({ ...url, files: url.files.map((f) => f.name) }, { ...want, source: 'url', side: null, files: ['model.safetensors', 'config.json'] });
    const sharded = await page.evaluate((u) => window.inspectUrl(u, { probe: false }), `${server.url}tiny/`);
    assert.deepEqual(sharded.tensors, files.tensors);
    const asked = server.requests.slice(from);
    assert.deepEqual(asked.filter((p) => p.startsWith('/encoder/')), ['/encoder/model.safetensors', '/encoder/config.json', '/encoder/model.safetensors']);
    assert.ok(asked.includes('/tiny/model.safetensors.index.json') && !asked.includes('/encoder/model.safetensors.index.json'), asked.join(' '));
    // The sharded folder's absent model.safetensors is the one 404 (its HEAD), logged by Chromium as an error.
    assert.deepEqual(problems.filter((p) => !/Failed to load resource: the server responded with a status of 404/.test(p)), []);
    assert.equal(problems.length, 1, problems.join('\n'));
  } finally {
    await page.close();
  }
});
