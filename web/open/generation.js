// A causal LM at work: a chat turn (its chat template applied by CausalLM#chat) or a plain completion, streamed
// from the worker — a token here is bookkeeping only, what shows is drawn once per animation frame: the text, the
// stats line (first token, speed, last token, count, why it ended), every token's time, and the newest token's
// attention (lm_attention.js). Stop aborts it through its AbortSignal.
import { formatMs } from '../shared/panel.js';
import { $, show } from './dom.js';
import { page, run } from './state.js';
import { drawHeat, updateTopPositions } from './lm_attention.js';

/**
 * Why a generation ended, in words. 'stop': a chat turn ends at the template's end-of-turn token, a completion
 * at the model's end-of-sequence token (generation_config.json's eos_token_id, else config.json's).
 */
const STOP_TEXT = {
  stop: (chat) => (chat ? 'ended: the end of the turn' : 'ended: the end-of-sequence token'),
  length: () => 'ended: the token limit', context: () => 'ended: the context is full', aborted: () => 'stopped', error: () => 'failed',
};

/** Shows the chat or the completion, as the mode chosen says. */
export function renderMode() {
  const chat = $('mode-chat').checked;
  show($('chat-log'), chat);
  show($('completion'), !chat);
  show($('clear'), chat);
  $('send').textContent = chat ? 'Send' : 'Write';
  $('prompt').placeholder = chat ? 'Say something to the model' : 'A text for the model to go on with';
}

function bubble(role, text) {
  const div = document.createElement('div');
  div.className = `msg ${role}`;
  div.textContent = text;
  $('chat-log').append(div);
  return div;
}

/** Sends the prompt: a chat turn or a completion, streamed; one at a time (a new one aborts the one running). */
export async function send() {
  const { model } = page;
  if (!model || model.kind !== 'CausalLM') return;
  if (run.active) { run.active.controller.abort(); await run.active.finished; }
  const text = $('prompt').value;
  const chat = $('mode-chat').checked;
  const num = (id, d) => ($(id).value.trim() === '' ? d : Number($(id).value));
  const options = { maxNewTokens: num('max-tokens', 64), temperature: num('temperature', 0), attention: true };
  if (options.temperature > 0 && $('seed').value.trim() !== '') options.seed = Number($('seed').value);
  const controller = new AbortController();
  let done;
  run.active = { controller, finished: new Promise((r) => { done = r; }) };
  Object.assign(run, { ids: [], ms: [], firstAt: null, lastAt: null, end: '', attention: null, pending: '', n: 0, t0: performance.now(), stopReason: null, chat });
  let g;
  if (chat) {
    run.messages.push({ role: 'user', content: text });
    bubble('user', text);
    run.target = bubble('assistant', '');
    g = model.chat(run.messages, { ...options, signal: controller.signal });
    $('prompt').value = '';
  } else {
    $('completion-prompt').textContent = text;
    $('completion-gen').textContent = '';
    run.target = $('completion-gen');
    g = model.generate(text, { ...options, signal: controller.signal });
  }
  $('stop').disabled = false;
  $('send').disabled = true;
  $('stats').dataset.state = 'writing';
  show($('attention-card'));
  try {
    for await (const t of g) onToken(t);
    run.stopReason = g.stopReason;
  } catch (e) {
    run.stopReason = 'error';
    run.end = `failed: ${e.message}`;
  }
  run.promptLength = g.promptIds?.length ?? 0;
  run.contextIds = [...(g.promptIds ?? []), ...run.ids];
  if (chat) run.messages.push(g.message ?? { role: 'assistant', content: g.text });
  render();
  $('stats').dataset.state = run.stopReason === 'error' ? 'error' : 'done';
  $('stats').dataset.stopReason = run.stopReason ?? '';
  $('stop').disabled = true;
  $('send').disabled = false;
  run.active = null;
  done();
  updateTopPositions();
}

function onToken(t) {
  const now = performance.now();
  run.ids.push(t.id);
  run.ms.push(t.ms);
  run.n += 1;
  run.firstAt ??= now;
  run.lastAt = now;
  run.pending += t.text ?? '';
  if (t.attention) run.attention = t.attention;
  scheduleRender();
}

let frame = false;
function scheduleRender() {
  if (frame) return;
  frame = true;
  requestAnimationFrame(() => { frame = false; render(); });
}

/** Why the run on show ended (or that it is writing), as the stats line says it. */
export const endText = () => (run.stopReason ? (run.end || STOP_TEXT[run.stopReason]?.(run.chat) || run.stopReason) : 'writing…');

function render() {
  if (run.pending && run.target) {
    run.target.append(run.pending);
    run.pending = '';
    if (run.target.classList.contains('msg')) $('chat-log').scrollTop = $('chat-log').scrollHeight;
  }
  const b = (k, v) => { const el = $('stats').querySelector(`[data-stat="${k}"] b`); if (el && el.textContent !== v) el.textContent = v; };
  b('first', run.firstAt === null ? '…' : formatMs(run.firstAt - run.t0));
  b('rate', run.n >= 2 ? `${((run.n - 1) / ((run.lastAt - run.firstAt) / 1000)).toFixed(1)} tokens/s` : '—');
  b('last', run.n ? formatMs(run.ms[run.n - 1]) : '—');
  b('count', String(run.n));
  $('stats').querySelector('[data-stat="end"]').textContent = endText();
  if (run.n) page.panel.setLastInference(run.ms[run.n - 1]);
  drawSteps();
  drawHeat();
}

/** Every token's time, a bar each (the first, with the prompt's prefill, in orange). */
function drawSteps() {
  const c = $('steps');
  const width = c.clientWidth || 600, height = 40;
  if (c.width !== width) { c.width = width; c.height = height; }
  const ctx = c.getContext('2d');
  ctx.clearRect(0, 0, width, height);
  const max = Number($('max-tokens').value) || run.n || 1;
  const bw = width / max;
  const scale = Math.max(1e-3, ...run.ms.slice(1), run.n === 1 ? run.ms[0] : 0);
  for (let i = 0; i < run.n; i++) {
    const h = Math.max(1, Math.min(1, run.ms[i] / scale) * (height - 2));
    ctx.fillStyle = i === 0 ? '#f2a65a' : '#9fb3ef';
    ctx.fillRect(i * bw, height - h, Math.max(1, bw - (bw > 3 ? 1 : 0)), h);
  }
}
