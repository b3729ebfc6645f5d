// The writing page's result: the prompt and the written text (an <eos> as a mark), and the stats line (first
// token, speed, last token, count, how it ended, the seed with "use this seed", the link that writes the text
// again, the panel's last inference). Writes only what changed. Not the canvases (steps.js, heatmap.js) nor
// when to draw (frames.js).
import { formatMs } from '../shared/panel.js';
import { settingsQuery } from './options.js';

const STOP_TEXT = {
  stop: 'ended: the fortune is complete (<eos>)',
  length: 'ended: the token limit',
  context: 'ended: the context is full',
  aborted: 'stopped',
  error: 'failed',
};

/**
 * Mounts the result card `card` (#result-card, with its [data-stat] spans, #reuse-seed and #permalink).
 * `page.run` is the run on show; `runtime` is runtime.js's RUNTIME (the link keeps it); `schedule(false)`
 * asks for a frame. Returns { reset(run), append(pieces), stats(run) }.
 */
export function mountResult({ card, outPrompt, outGen, inputs, panel, page, runtime, schedule }) {
  /** The stats line's elements. */
  const statEl = {
    ...Object.fromEntries([...card.querySelectorAll('[data-stat]')].map((e) => [e.dataset.stat, e.querySelector('b') ?? e])),
    reuse: card.querySelector('#reuse-seed'),
    link: card.querySelector('#permalink'),
  };
  statEl.reuse.addEventListener('click', () => {
    const r = page.run;
    if (!r) return;
    inputs.seed.value = String(r.seed);
    schedule(false);  // the button hides once the field holds the seed
  });

  /** A new run: its prompt, no text yet, no seed button or link. */
  function reset(r) {
    outPrompt.textContent = r.prompt;
    outPrompt.classList.toggle('empty', r.prompt === '');
    outPrompt.title = r.prompt === '' ? 'empty prompt: the model starts a new fortune' : 'the prompt';
    outGen.replaceChildren(document.createTextNode(''));
    statEl.reuse.classList.add('hidden');
    statEl.link.classList.add('hidden');
    card.dataset.run = String(r.number);
    delete card.dataset.stopReason;
  }

  /** Appends text pieces to the output: one text node per stretch between <eos> marks (null). */
  function append(pieces) {
    let text = '';
    const flush = () => {
      if (text) outGen.lastChild.appendData(text);
      text = '';
    };
    for (const p of pieces) {
      if (p !== null) { text += p; continue; }
      flush();
      const eos = document.createElement('span');
      eos.className = 'eos';
      eos.textContent = '<eos>';
      eos.title = 'end of a fortune (the model goes on with a new one)';
      outGen.append(eos, document.createTextNode('\n'));
    }
    flush();
  }

  /** The stats line of run `r` (and, once it has ended, its link). */
  function stats(r) {
    const set = (k, v) => { if (statEl[k].textContent !== v) statEl[k].textContent = v; };
    set('first', r.firstAt === null ? '…' : formatMs(r.firstAt - r.t0));
    const rate = r.n >= 2 ? (r.n - 1) / ((r.lastAt - r.firstAt) / 1000) : null;
    set('rate', rate === null ? '—' : `${Math.round(rate).toLocaleString('en-US')} tokens/s`);
    set('last', r.n ? formatMs(r.ms[r.n - 1]) : '—');
    set('count', String(r.n));
    if (r.n) panel.setLastInference(r.ms[r.n - 1]);
    const { end, seed } = statEl;
    card.dataset.tokens = String(r.n);
    if (r.stopReason) {
      end.textContent = r.error ? `failed: ${r.error.message}` : STOP_TEXT[r.stopReason] ?? r.stopReason;
      end.className = r.error ? 'error-inline' : '';
      card.dataset.stopReason = r.stopReason;
    } else {
      end.textContent = 'writing…';
      end.className = '';
    }
    if (r.options.temperature > 0) {
      seed.textContent = `seed ${r.seed}`;
      seed.title = 'the same seed, prompt and settings write the same text';
      card.dataset.seed = String(r.seed);
      statEl.reuse.classList.toggle('hidden', !r.stopReason || inputs.seed.value.trim() === String(r.seed));
    } else {
      seed.textContent = 'greedy';
      seed.title = 'temperature 0: the most likely character every time';
      delete card.dataset.seed;
    }
    if (r.stopReason && !r.linkWritten) {
      // A link that writes the same text again (history.replaceState took up to 14 ms here: a link costs nothing).
      r.linkWritten = true;
      const q = settingsQuery(r.prompt, r.options, r.seed);
      if (runtime === 'page') q.set('runtime', 'page');
      statEl.link.href = `?${q}`;
      statEl.link.classList.remove('hidden');
    }
  }

  return { reset, append, stats };
}
