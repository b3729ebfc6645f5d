// attnwasm/tokenizer in headless Chromium, without a bundler: a page maps the package's dependency
// with an import map (as the README says), loads bindings/tokenizer.js and encodes and decodes every
// text of the tokenizer goldens with every variant; the ids and texts must be Hugging Face's (Rust)
// goldens, exactly as in Node (tests/js/tokenizer.test.mjs), with no console errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ROOT } from '../tarball.mjs';
import { launchChromium, pageResult } from './chromium.mjs';
import { startStatic } from './static_server.mjs';

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>attnwasm/tokenizer</title>
<script type="importmap">
{ "imports": { "@huggingface/tokenizers": "/node_modules/@huggingface/tokenizers/dist/tokenizers.mjs" } }
</script></head>
<body><script type="module">
  import { Tokenizer } from '/bindings/tokenizer.js';
  import { variants, TEXTS } from '/tests/data/tokenizer_cases.mjs';
  const base = await (await fetch('/tests/data/goldens/tokenizer/gpt2_3k.json')).json();
  const out = {};
  for (const [name, json] of Object.entries(variants(base))) {
    const tok = Tokenizer.fromJSON(json);
    out[name] = TEXTS.map((text) => {
      const ids = tok.encode(text);
      const stream = tok.streamDecoder();
      const streamed = [...ids].map((id) => stream.push(id)).join('') + stream.end();
      return { ids: [...ids], decoded: tok.decode(ids), streamed };
    });
  }
  window.result = out;
</script></body></html>`;

test('attnwasm/tokenizer in Chromium (import map, no bundler) gives the Rust goldens', async (t) => {
  const expected = JSON.parse(readFileSync(new URL('../data/goldens/tokenizer/expected.json', import.meta.url), 'utf8'));
  const server = await startStatic({ root: ROOT.replace(/\/$/, ''), allow: ['bindings', 'node_modules', 'tests'], routes: { '/tokenizer.html': { type: 'text/html; charset=utf-8', body: PAGE } } });
  const browser = await launchChromium();
  try {
    const { result, problems } = await pageResult(browser.context, `${server.url}tokenizer.html`, { timeout: 60_000 });
    assert.deepEqual(problems, []);
    let checks = 0;
    for (const [name, want] of Object.entries(expected.variants)) {
      want.texts.forEach((c, i) => {
        const got = result[name][i];
        assert.deepEqual(got.ids, c.idsWithSpecial, `${name}: ${JSON.stringify(c.text)}`);
        assert.equal(got.decoded, c.decoded ?? c.text, `${name}: ${JSON.stringify(c.text)} decoded`);
        assert.equal(got.streamed, got.decoded, `${name}: ${JSON.stringify(c.text)} streamed`);
        checks += 3;
      });
    }
    t.diagnostic(`${checks} checks in Chromium`);
  } finally {
    await browser.close();
    await server.close();
  }
});
