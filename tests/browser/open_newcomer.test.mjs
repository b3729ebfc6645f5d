// The open page (web/open/) as a newcomer meets it (issue 37), in headless Chromium against tools/serve.mjs: the
// home page's count of demos matches its cards; the page's inputs look like the other pages' (the write page's
// computed styles: its settings, its text area; the file pickers' buttons like the secondary buttons); what fits
// says the device's memory as the lower bound navigator.deviceMemory is; the runtime panel keeps its place after a
// load and a completion; a plain completion that stops at the model's end-of-sequence token says so, not "the end
// of the turn" (the fortune writer of models/lm/, greedy, stops at its <eos>); this repository's model, chosen by
// its URL, is asked for its header's bytes alone (a Range request, cancelled after the header when the server
// sends the whole file), with no 404 and no console error. Screenshots in test-artifacts/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ARTIFACTS, demoSession } from './demo_pages.mjs';

const session = demoSession();

/** The computed styles that make an input look as it does. */
const LOOK = ['font-family', 'font-size', 'padding-top', 'padding-left', 'border-top-width', 'border-top-color', 'border-top-left-radius', 'background-color', 'color'];
const looks = (page, selector) => page.$eval(selector, (el, props) => Object.fromEntries(props.map((p) => [p, getComputedStyle(el).getPropertyValue(p)])), LOOK);

test('home page: it says as many demos as it shows', async () => {
  const { page, problems } = await session.open('/web/');
  const cards = await page.locator('a.demo').count();
  const said = (await page.textContent('p.lead')).match(/These (\w+) demos/)?.[1];
  assert.equal(['one', 'two', 'three', 'four', 'five', 'six'].indexOf(said) + 1, cards, `the lead says "${said}", the page shows ${cards} cards`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('open page: inputs styled as the other pages\', memory said as a lower bound, the panel in place, a completion\'s end, no 404', async () => {
  const write = await session.open('/web/write/');
  const want = { setting: await looks(write.page, '#max-tokens'), text: await looks(write.page, '#prompt'), button: await looks(write.page, 'button.secondary') };
  await write.page.close();
  const { page, problems } = await session.open('/web/open/');
  const responses = [];
  page.on('response', (r) => responses.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}${r.request().headers().range ? ` ${r.request().headers().range}` : ''}`));
  assert.deepEqual(await looks(page, '#max-tokens'), want.setting, 'a setting (tokens) as the write page\'s');
  assert.deepEqual(await looks(page, '#temperature'), want.setting, 'temperature');
  assert.deepEqual(await looks(page, '#prompt'), want.text, 'the prompt as the write page\'s');
  const picker = await page.$eval('#pick-folder', (el) => {
    const s = getComputedStyle(el, '::file-selector-button');
    return { color: s.color, 'background-color': s.backgroundColor, 'border-top-color': s.borderTopColor, 'border-top-left-radius': s.borderTopLeftRadius };
  });
  assert.deepEqual(picker, { color: want.button.color, 'background-color': want.button['background-color'], 'border-top-color': want.button['border-top-color'],
    'border-top-left-radius': want.button['border-top-left-radius'] }, 'the file pickers\' buttons as a secondary button');

  const top = async () => page.$eval('#panel', (el) => el.getBoundingClientRect().top + window.scrollY);
  const panelTop = await top();
  assert.equal(panelTop, await page.$eval('#source-card', (el) => el.getBoundingClientRect().top + window.scrollY), 'the panel beside the first card');

  // This repository's fortune writer, by its URL: its header only, by a byte range.
  await page.click('#repo-models button:first-child');
  await page.waitForSelector('#fit-card:not(.hidden)');
  assert.match(await page.textContent('#source-summary'), /lm\.safetensors: 1 weight file\(s\), 38 tensors — a causal LM/);
  // Asked for its first bytes only (tools/serve.mjs answers ranges with the whole file: the page cancels it after the header).
  assert.deepEqual(responses.filter((r) => r.includes('/models/')), ['200 GET /models/lm/lm.safetensors bytes=0-65535']);
  const device = await page.evaluate(() => navigator.deviceMemory ?? null);
  const note = await page.textContent('#fit-note');
  assert.ok(!/capped at \d/.test(note), note);
  assert.match(note, device ? new RegExp(`at least ${device} GiB`) : /does not say how much memory/);

  await page.click('#load');
  await page.waitForFunction(() => document.body.dataset.loaded === 'true', null, { timeout: 30_000 });
  assert.equal(await top(), panelTop, 'the panel after the load');
  await page.check('#mode-complete');
  await page.fill('#max-tokens', '400');
  await page.fill('#prompt', 'Q: What is ');
  await page.click('#send');
  await page.waitForFunction(() => document.getElementById('stats').dataset.state === 'done', null, { timeout: 30_000 });
  const state = await page.evaluate(() => window.openDemo.state);
  assert.equal(state.stopReason, 'stop', `the writer stops at its <eos> within 400 tokens (${state.tokens} written)`);
  assert.equal(state.endText, 'ended: the end-of-sequence token');
  assert.equal(await page.textContent('#stats [data-stat="end"]'), 'ended: the end-of-sequence token');
  assert.equal(await top(), panelTop, 'the panel after a completion, the page scrolled');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(ARTIFACTS, 'open_completion.png'), fullPage: true });
  assert.deepEqual(responses.filter((r) => /^4\d\d /.test(r)), []);
  assert.deepEqual(problems.filter((p) => !/^requestfailed: GET .*\/models\/lm\/lm\.safetensors net::ERR_ABORTED$/.test(p)), []);
  await page.close();
});

test('open page: the same file picked twice is read twice (the input emptied after each pick)', async () => {
  const lm = fileURLToPath(new URL('../../models/lm/lm.safetensors', import.meta.url));
  const { page, problems } = await session.open('/web/open/');
  const summary = () => page.textContent('#source-summary');
  for (let pick = 1; pick <= 2; pick++) {
    await page.evaluate(() => { document.getElementById('source-summary').textContent = ''; });
    await page.setInputFiles('#pick-files', lm);
    await page.waitForFunction(() => /lm\.safetensors: 1 weight file/.test(document.getElementById('source-summary').textContent), null, { timeout: 10_000 });
    assert.match(await summary(), /lm\.safetensors: 1 weight file\(s\), 38 tensors — a causal LM/, `pick ${pick}`);
    assert.equal(await page.$eval('#pick-files', (el) => el.value), '', `the input emptied after pick ${pick}`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});
