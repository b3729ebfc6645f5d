// An encoder–decoder translator at work (the runtime's Seq2SeqLM: Marian opus-mt, M2M100 / NLLB, BART, mBART, T5
// hub folders): the texts typed, one a line, translated in the worker with the languages, beams and token limit
// chosen. One text with greedy search (numBeams 1) streams, its tokens drawn once per animation frame; several
// lines (one batch) or beams show when the search ends, with beam search's scores. Stop aborts it through its
// AbortSignal. The language selects list the tokenizer's codes (M2M100 / NLLB: source and target; a multilingual
// Marian model: its >>xx<< target codes; a Marian model for one pair, T5: none).
import { formatMs } from '../shared/panel.js';
import { $, show } from './dom.js';
import { page } from './state.js';

/**
 * The translation on show (for tests): `run` { inputs, options, streamed, texts, scores, tokens, ms, firstMs, lastMs,
 * stopReason, error } once one started (a stream's tokens and their times, in ms from the Translate press);
 * `active` ({ controller, finished }) while one runs; `seq` counts the runs and the models shown (a stale run draws
 * nothing).
 */
export const last = { run: null, active: null, seq: 0 };

/** Why a translation ended, in words (a stream's stopReason; a batch ends 'done', or 'aborted' by Stop). */
const END_TEXT = {
  stop: 'ended: the end-of-sequence token', length: 'ended: the token limit', aborted: 'stopped', error: 'failed', done: 'done',
};

/**
 * The languages of the loaded model's tokenizer: { source, target } codes (source empty when it takes none) and
 * their defaults. Marian's codes are its >>xx<< tokens, passed as 'xx'.
 */
function languages(tok) {
  const codes = Array.isArray(tok?.languageCodes) ? tok.languageCodes : [];
  if (!codes.length) return { source: [], target: [] };
  if (typeof tok.srcLang === 'string') {
    const target = tok.tgtLang ?? codes.find((c) => c !== tok.srcLang);
    return { source: codes, target: codes, srcLang: tok.srcLang, tgtLang: target };
  }
  const target = codes.map((c) => (c.startsWith('>>') && c.endsWith('<<') ? c.slice(2, -2) : c));
  return { source: [], target, tgtLang: target[0] };
}

/** A language code's option, named in English where the browser knows it ('fr' → 'fr · French', 'fra_Latn' → 'fra_Latn · French'). */
const names = (() => { try { return new Intl.DisplayNames(['en'], { type: 'language' }); } catch { return null; } })();
function languageOption(code) {
  let name = null;
  try { name = names?.of(code.split('_')[0]) ?? null; } catch { /* not a BCP 47 subtag */ }
  return new Option(name && name !== code && name !== code.split('_')[0] ? `${code} · ${name}` : code, code);
}

/** The folder's generation defaults, as generate() resolves them: generation_config.json, else config.json. */
function defaults(model) {
  const g = model.generationConfig ?? model.config ?? {};
  return { numBeams: Number.isInteger(g.num_beams) ? g.num_beams : 1, maxNewTokens: g.max_new_tokens ?? null, maxLength: g.max_length ?? 20 };
}

/** Shows the card for the translator just loaded: its languages, its beams, its token limit. */
export function showTranslate() {
  const { model } = page;
  const tok = model.tokenizer;
  last.run = null;
  last.seq += 1;
  const lang = languages(tok);
  $('src-lang').replaceChildren(...lang.source.map(languageOption));
  $('tgt-lang').replaceChildren(...lang.target.map(languageOption));
  if (lang.srcLang) $('src-lang').value = lang.srcLang;
  if (lang.tgtLang) $('tgt-lang').value = lang.tgtLang;
  show($('src-lang-field'), lang.source.length > 0);
  show($('tgt-lang-field'), lang.target.length > 0);
  const d = defaults(model);
  $('beams').value = String(d.numBeams);
  $('translate-max').value = '';
  $('translate-max').placeholder = d.maxNewTokens !== null ? `the folder's ${d.maxNewTokens}` : `up to max_length ${d.maxLength}`;
  $('translate-note').textContent = 'one text a line (several: one batch); Ctrl+Enter (⌘+Enter) translates'
    + (/t5$/.test(model.modelType) ? '; T5 reads its task from the text ("translate English to German: …")' : '');
  show($('translate-error'), !tok);
  $('translate-error').textContent = tok ? '' : 'No tokenizer files: nothing to read texts with.';
  $('translate').disabled = !tok;
  $('translate-stop').disabled = true;
  $('translate-stats').dataset.state = 'idle';
  for (const k of ['count', 'tokens', 'first', 'ms', 'rate']) stat(k, '—');
  $('translate-stats').querySelector('[data-stat="end"]').textContent = '';
  $('translations').replaceChildren();
  show($('translations'), false);
  show($('translate-card'));
}

const stat = (k, v) => { const b = $('translate-stats').querySelector(`[data-stat="${k}"] b`); if (b.textContent !== v) b.textContent = v; };

/** Ends the translation running, if any, and waits for it (a new load, a new translation). */
export async function stopTranslation() {
  if (!last.active) return;
  last.active.controller.abort();
  await last.active.finished;
}

/** Translates the lines typed: one greedy text streamed, else one batch shown when its search ends. */
export async function runTranslate() {
  const model = page.model;
  if (!model || model.kind !== 'Seq2SeqLM' || !model.tokenizer) return;
  await stopTranslation();
  const inputs = $('source-text').value.split('\n').map((s) => s.trim()).filter(Boolean);
  show($('translate-error'), false);
  if (!inputs.length) {
    $('translate-error').textContent = 'Type at least one text.';
    show($('translate-error'));
    return;
  }
  // The options as translate() takes them; a blank field is the folder's default (generate() resolves it).
  const options = {};
  if (!$('src-lang-field').classList.contains('hidden')) options.srcLang = $('src-lang').value;
  if (!$('tgt-lang-field').classList.contains('hidden')) options.tgtLang = $('tgt-lang').value;
  options.numBeams = $('beams').value.trim() === '' ? defaults(model).numBeams : Number($('beams').value);
  if ($('translate-max').value.trim() !== '') options.maxNewTokens = Number($('translate-max').value);
  const streamed = inputs.length === 1 && options.numBeams === 1;
  const seq = ++last.seq;
  const controller = new AbortController();
  let done;
  last.active = { controller, finished: new Promise((r) => { done = r; }) };
  const run = { inputs, options, streamed, texts: inputs.map(() => ''), scores: null, tokens: 0, ms: null, firstMs: null, lastMs: null, stopReason: null, error: null };
  last.run = run;
  const cells = renderRows(inputs);
  $('translate').disabled = true;
  $('translate-stop').disabled = false;
  $('translate-stats').dataset.state = 'running';
  stat('count', String(inputs.length));
  for (const k of ['tokens', 'first', 'ms', 'rate']) stat(k, '—');
  $('translate-stats').querySelector('[data-stat="end"]').textContent = 'translating…';
  const t0 = performance.now();
  // numReturnSequences 1: one translation a text, as translate() gives (a folder may ask for more).
  const call = model.generate(streamed ? inputs[0] : inputs, { ...options, numReturnSequences: 1, signal: controller.signal });
  try {
    if (streamed) {
      let pending = '';
      let frame = 0;
      const draw = () => { frame = 0; cells[0].append(pending); pending = ''; drawStats(run, t0); };
      for await (const t of call) {
        run.tokens += 1;
        run.lastMs = performance.now() - t0;
        run.firstMs ??= run.lastMs;
        pending += t.text ?? '';
        frame ||= requestAnimationFrame(draw);
      }
      cancelAnimationFrame(frame);
      run.stopReason = call.stopReason;
    } else {
      const r = await call;
      run.texts = r.texts;
      run.scores = r.scores ? Array.from(r.scores) : null;
      run.stopReason = 'done';
    }
  } catch (e) {
    if (controller.signal.aborted) run.stopReason = 'aborted';  // a batch's search ends with the signal's reason
    else {
      run.stopReason = 'error';
      run.error = e.message;
    }
  }
  run.ms = performance.now() - t0;
  if (streamed) run.texts = [call.text];  // the text so far, when stopped or failed too
  if (seq === last.seq && model === page.model) {
    if (run.stopReason !== 'aborted' || streamed) run.texts.forEach((text, i) => { cells[i].textContent = text; });
    if (run.scores) run.scores.forEach((s, i) => { cells[i].title = `score ${s.toFixed(4)} (beam search's sequences_scores)`; });
    if (run.error) {
      $('translate-error').textContent = run.error;
      show($('translate-error'));
    }
    drawStats(run, t0);
    if (run.stopReason !== 'error' && run.stopReason !== 'aborted') page.panel.setLastInference(run.ms);
    $('translate-stats').dataset.state = run.stopReason === 'error' ? 'error' : run.stopReason === 'aborted' ? 'stopped' : 'done';
    $('translate').disabled = false;
    $('translate-stop').disabled = true;
  }
  last.active = null;
  done();
}

/** The stats line: texts, tokens (a stream's), the first token's time, the time, the speed, why it ended. */
function drawStats(run, t0) {
  const ms = run.ms ?? performance.now() - t0;
  stat('ms', formatMs(ms));
  if (run.streamed) {
    stat('tokens', String(run.tokens));
    stat('first', run.firstMs === null ? '…' : formatMs(run.firstMs));
    stat('rate', run.tokens >= 2 ? `${((run.tokens - 1) / ((run.lastMs - run.firstMs) / 1000)).toFixed(1)} tokens/s` : '—');
  } else if (run.ms !== null && run.stopReason === 'done') {
    stat('rate', `${(run.inputs.length / (ms / 1000)).toFixed(1)} texts/s`);
  }
  $('translate-stats').querySelector('[data-stat="end"]').textContent = run.stopReason ? END_TEXT[run.stopReason] ?? run.stopReason : 'translating…';
}

/** A row per text (the text, its translation); the translations' cells, in order. */
function renderRows(inputs) {
  const table = $('translations');
  const head = document.createElement('tr');
  for (const h of ['text', 'translation']) {
    const th = document.createElement('th');
    th.textContent = h;
    head.append(th);
  }
  const cells = [];
  const rows = inputs.map((text) => {
    const tr = document.createElement('tr');
    const src = document.createElement('td');
    src.className = 'text';
    src.textContent = text;
    const out = document.createElement('td');
    out.className = 'text translation';
    cells.push(out);
    tr.append(src, out);
    return tr;
  });
  table.replaceChildren(head, ...rows);
  show(table);
  return cells;
}

/** Wires the card: its form, Ctrl/Cmd+Enter in the texts, Stop. */
export function mountTranslate() {
  $('translate-form').addEventListener('submit', (e) => { e.preventDefault(); runTranslate(); });
  $('source-text').addEventListener('keydown', (e) => {
    // requestSubmit: the form's own checks first (beams, tokens), as the button's click has them.
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); if (!$('translate').disabled) $('translate-form').requestSubmit(); }
  });
  $('translate-stop').addEventListener('click', () => {
    if (!last.active) return;
    last.active.controller.abort();
    // A stream ends at once; a batch when the worker reads the abort, between two steps of its search.
    $('translate-stop').disabled = true;
    $('translate-stats').querySelector('[data-stat="end"]').textContent = 'stopping…';
  });
}
