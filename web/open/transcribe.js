// A Whisper checkpoint at work (the runtime's SpeechRecognizer): the audio given (speech_input.js: a file dropped or
// picked, or a recording) transcribed in the worker, or translated to English, in the language chosen or the one
// detected. With timestamps, stream() gives its segments as each 30-second window is decoded, a row each ([start –
// end] text), or per word (the folder's generation_config.json naming alignment_heads) each window's words; without,
// transcribe() gives the text when it ends (over 30 s: the pipeline's 30-second chunks). Stop
// aborts it through its AbortSignal. The stats: the audio's length, the time, the real-time factor.
import { formatMs } from '../shared/panel.js';
import { $, show } from './dom.js';
import { page } from './state.js';
import { speech, mountSpeechInput } from './speech_input.js';

/**
 * The transcription on show (for tests): `run` { source, options, mode ('stream' | 'transcribe'), segments, text,
 * language, seconds, ms, firstMs, stopReason, error } once one started (the segments' { timestamp, text }, the
 * first one's time in ms from the start); `active` ({ controller, finished }) while one runs; `seq` counts the runs
 * and the models shown (a stale run draws nothing).
 */
export const last = { run: null, active: null, seq: 0 };

/** Why a transcription ended, in words. */
const END_TEXT = { done: 'done', aborted: 'stopped', error: 'failed' };

/** Whisper's languages of the folder (generation_config.json's lang_to_id: '<|fr|>' → 'fr'), or none (English-only). */
function languages(model) {
  const g = model.generationConfig ?? {};
  if (g.is_multilingual === false || !g.lang_to_id) return [];
  return Object.keys(g.lang_to_id).map((t) => t.slice(2, -2));
}

/** A language code's option, named in English where the browser knows it ('fr' → 'French (fr)'). */
const names = (() => { try { return new Intl.DisplayNames(['en'], { type: 'language' }); } catch { return null; } })();
function languageOption(code) {
  let name = null;
  try { name = names?.of(code) ?? null; } catch { /* not a BCP 47 subtag ('jw', 'haw' are) */ }
  return new Option(name && name !== code ? `${name} (${code})` : code, code);
}

const stat = (k, v) => { const b = $('transcribe-stats').querySelector(`[data-stat="${k}"] b`); if (b.textContent !== v) b.textContent = v; };
const endText = (v) => { $('transcribe-stats').querySelector('[data-stat="end"]').textContent = v; };

function showError(message) {
  $('transcribe-error').textContent = message;
  show($('transcribe-error'), !!message);
}

/** Shows the card for the speech recognizer just loaded: its languages, its tasks. */
export function showTranscribe() {
  const { model } = page;
  last.run = null;
  last.seq += 1;
  const codes = languages(model);
  const sorted = codes.map(languageOption).sort((a, b) => a.text.localeCompare(b.text));
  $('speech-lang').replaceChildren(new Option('Auto-detect', ''), ...sorted);
  show($('speech-lang-field'), codes.length > 0);
  show($('speech-task-field'), codes.length > 0);  // an English-only model only transcribes
  // Word timestamps need generation_config.json's alignment_heads (the checkpoints of openai/whisper-* have them).
  const heads = model.generationConfig?.alignment_heads;
  show($('speech-words-field'), Array.isArray(heads) && heads.length > 0);
  $('speech-words').checked = false;
  $('speech-task').value = 'transcribe';
  const tok = !!model.tokenizer;
  showError(tok ? '' : 'No tokenizer files: nothing to write the text with.');
  $('transcribe').disabled = !tok || !speech.input;
  $('transcribe-stop').disabled = true;
  $('transcribe-stats').dataset.state = 'idle';
  for (const k of ['seconds', 'segments', 'language', 'ms', 'rtf']) stat(k, '—');
  endText('');
  $('segments').replaceChildren();
  show($('segments'), false);
  show($('transcribe-card'));
}

/** Ends the transcription running, if any, and waits for it (a new load, new audio). */
export async function stopTranscription() {
  if (!last.active) return;
  last.active.controller.abort();
  await last.active.finished;
}

/** A segment's row: [start – end] and its text. */
function segmentRow(s) {
  const tr = document.createElement('tr');
  const time = document.createElement('td');
  time.className = 'time';
  const t = (v) => (v === null || v === undefined ? '…' : v.toFixed(2));
  time.textContent = s.timestamp ? `[${t(s.timestamp[0])} – ${t(s.timestamp[1])}]` : '';
  const text = document.createElement('td');
  text.className = 'text';
  text.textContent = s.text;
  tr.append(time, text);
  return tr;
}

/** Transcribes the audio given with the options chosen: segments streamed with timestamps, else one text. */
export async function runTranscribe() {
  const model = page.model;
  const input = speech.input;
  if (!model || model.kind !== 'SpeechRecognizer' || !model.tokenizer) return;
  await stopTranscription();
  showError('');
  if (!input) {
    showError('Drop or pick an audio file, or record one.');
    return;
  }
  const auto = !$('speech-lang-field').classList.contains('hidden') && $('speech-lang').value === '';
  const options = {};
  if (!auto && $('speech-lang').value) options.language = $('speech-lang').value;
  if (!$('speech-task-field').classList.contains('hidden')) options.task = $('speech-task').value;
  const timestamps = $('speech-timestamps').checked;
  if (auto) options.returnLanguage = true;
  // Per word: stream() yields each window's words as it is decoded (rows like the segments').
  if (timestamps && $('speech-words').checked && !$('speech-words-field').classList.contains('hidden')) options.returnTimestamps = 'word';
  // Without timestamps, over 30 s: the pipeline's chunks (long-form generation needs the timestamp tokens).
  if (!timestamps && !(input.seconds !== null && input.seconds <= 30)) options.chunkLengthS = 30;
  const seq = ++last.seq;
  const controller = new AbortController();
  let done;
  last.active = { controller, finished: new Promise((r) => { done = r; }) };
  const run = {
    source: input.name, options, mode: timestamps ? 'stream' : 'transcribe', segments: [], text: '', language: options.language ?? null,
    seconds: input.seconds, ms: null, firstMs: null, stopReason: null, error: null,
  };
  last.run = run;
  $('segments').replaceChildren();
  show($('segments'));
  $('transcribe').disabled = true;
  $('transcribe-stop').disabled = false;
  $('transcribe-stats').dataset.state = 'running';
  for (const k of ['segments', 'ms', 'rtf']) stat(k, '—');
  stat('seconds', input.seconds === null ? '—' : `${input.seconds.toFixed(1)} s`);
  stat('language', run.language ?? (auto ? '…' : '—'));
  endText(timestamps ? 'transcribing…' : 'transcribing (the text comes at the end)…');
  const t0 = performance.now();
  const ticker = setInterval(() => drawStats(run, t0), 250);
  try {
    if (timestamps) {
      for await (const s of model.stream(input.audio, { ...options, signal: controller.signal })) {
        if (seq !== last.seq) break;
        run.firstMs ??= performance.now() - t0;
        run.segments.push(s);
        run.text += s.text;
        if (s.language !== undefined) run.language = s.language;
        $('segments').append(segmentRow(s));
        drawStats(run, t0);
      }
    } else {
      const r = await model.transcribe(input.audio, { ...options, signal: controller.signal });
      run.text = r.text;
      run.language = r.chunks?.find((c) => c.language)?.language ?? run.language;
      if (seq === last.seq) $('segments').append(segmentRow({ text: r.text }));
    }
    run.stopReason = controller.signal.aborted ? 'aborted' : 'done';
  } catch (e) {
    if (controller.signal.aborted) run.stopReason = 'aborted';
    else {
      run.stopReason = 'error';
      run.error = e.message;
    }
  }
  clearInterval(ticker);
  run.ms = performance.now() - t0;
  if (seq === last.seq && model === page.model) {
    if (run.error) showError(run.error);
    drawStats(run, t0);
    if (run.stopReason === 'done') page.panel.setLastInference(run.ms);
    $('transcribe-stats').dataset.state = { done: 'done', aborted: 'stopped', error: 'error' }[run.stopReason];
    $('transcribe').disabled = false;
    $('transcribe-stop').disabled = true;
  }
  last.active = null;
  done();
}

/** The stats line: the audio's seconds, the segments, the language, the time, the real-time factor, how it ended. */
function drawStats(run, t0) {
  const ms = run.ms ?? performance.now() - t0;
  stat('ms', formatMs(ms));
  if (run.mode === 'stream') stat('segments', String(run.segments.length));
  if (run.language) stat('language', `${run.language}${run.options.returnLanguage ? ' (detected)' : ''}`);
  // The real-time factor: the time taken over the audio's length (under 1: faster than the audio plays).
  if (run.seconds) stat('rtf', `${(ms / 1000 / run.seconds).toFixed(3)}`);
  endText(run.stopReason ? END_TEXT[run.stopReason] : $('transcribe-stats').querySelector('[data-stat="end"]').textContent);
}

/** Wires the card: the audio given (each new audio transcribed at once), Transcribe, Stop. */
export function mountTranscribe() {
  mountSpeechInput({
    onInput: (input) => {
      $('speech-source').textContent = `${input.name} · ${input.format}${input.seconds !== null ? ` · ${input.seconds.toFixed(1)} s` : ''}`;
      if (page.model?.kind === 'SpeechRecognizer' && page.model.tokenizer) runTranscribe();
    },
    onError: async (message) => {
      await stopTranscription();
      speech.input = null;
      $('speech-source').textContent = 'No audio given.';
      $('transcribe').disabled = true;
      showError(message);
    },
    onRecording: (on) => {
      $('transcribe').disabled = on || !page.model?.tokenizer;
      if (on) stopTranscription();
      $('record-note').textContent = on ? 'recording…' : '';
    },
  });
  $('transcribe-form').addEventListener('submit', (e) => { e.preventDefault(); runTranscribe(); });
  $('transcribe-stop').addEventListener('click', () => {
    if (!last.active) return;
    last.active.controller.abort();
    // A stream ends at once; a transcribe() call when the worker reads the abort, between two steps of its search.
    $('transcribe-stop').disabled = true;
    endText('stopping…');
  });
}
