// SentencePiece models and slow tokenizers (bindings/tokenizer/) on 100 000 characters: encode and
// decode times, median of 5, for the golden models and folders of tests/data/make_spm_goldens.py,
// against the sentencepiece library itself (C++, Debian's python3-sentencepiece, timed inside Python
// with the same text) in the same run. Hostile inputs (one letter repeated, emoji, unknown characters,
// spaces, punctuation) show the work is bounded. Not a test: `node bench/tokenizer_spm.mjs`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { SentencePieceProcessor, tokenizerFromFolder } from '../bindings/tokenizer.js';
import { folderReader, modelBytes } from '../tests/js/spm_folders.mjs';

const N = 100000;
const prose = (() => {
  let t = '';
  for (const f of ['README.md', 'docs/tokenizer.md', 'docs/architecture.md']) t += readFileSync(new URL(`../${f}`, import.meta.url), 'utf8');
  while (t.length < N) t += t;
  return t.slice(0, N);
})();
const INPUTS = {
  prose, 'a×100k': 'a'.repeat(N), emoji: '😀👍🏽'.repeat(N / 4), unknown: '𝔘'.repeat(N / 2), spaces: ' '.repeat(N), punctuation: '!?'.repeat(N / 2),
};
const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
const time = (fn) => median(Array.from({ length: 5 }, () => {
  const s = performance.now();
  fn();
  return performance.now() - s;
}));

/** The sentencepiece library's encode time (ms, median of 5) for each input, timed inside Python. */
function libraryTimes(model) {
  const script = `
import json, sys, time, sentencepiece as spm
sp = spm.SentencePieceProcessor(model_file=sys.argv[1])
out = {}
for k, t in json.load(sys.stdin).items():
    ts = []
    for _ in range(5):
        s = time.perf_counter(); sp.encode(t); ts.append((time.perf_counter() - s) * 1000)
    out[k] = sorted(ts)[2]
print(json.dumps(out))`;
  const path = new URL(`../tests/data/goldens/spm/models/${model}.model`, import.meta.url).pathname;
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, path], { input: JSON.stringify(INPUTS), encoding: 'utf8' }));
}

console.log(`CPU: ${os.cpus()[0].model}, ${os.cpus().length} cores; Node ${process.version}; load average ${os.loadavg()[0].toFixed(2)}`);
console.log('\nSentencePieceProcessor.encode, ms (JS / sentencepiece C++):');
for (const model of ['uni_nfkc', 'uni_bf', 'bpe_rules', 'bpe_suffix', 't5like']) {
  const sp = SentencePieceProcessor.fromBytes(modelBytes(model), model);
  const lib = libraryTimes(model);
  const cells = Object.entries(INPUTS).map(([k, t]) => `${k} ${time(() => sp.encode(t)).toFixed(0)}/${lib[k].toFixed(0)}`);
  console.log(`  ${model.padEnd(11)} ${cells.join('  ')}`);
}
console.log('\nSlow tokenizers, ms (encode of each input; decode of the prose ids):');
for (const name of ['marian_hub', 't5_nonlegacy_saved', 'm2m_hub', 'nllb_hub', 'xlmr_hub', 'bert_hub', 'roberta_hub']) {
  const tok = await tokenizerFromFolder(folderReader(name));
  const cells = Object.entries(INPUTS).map(([k, t]) => `${k} ${time(() => tok.encode(t)).toFixed(0)}`);
  const ids = tok.encode(prose);
  console.log(`  ${name.padEnd(19)} ${cells.join('  ')}  decode ${time(() => tok.decode(ids)).toFixed(0)} (${ids.length} ids)`);
}
