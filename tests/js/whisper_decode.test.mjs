// Whisper's init tokens, language detection, prompt ids, decoding with timestamps and offsets, the ASR pipeline's
// _decode_asr (chunk merging; words with their times), long-form segments, and token-level timestamps
// (_extract_token_timestamps on given weights: bit for bit) (bindings/speech/) against transformers v4.40.2 itself
// (tests/data/make_whisper_decode_goldens.py). Text goes through the project's Tokenizer, built here from a
// tokenizer.json twin of the golden script's slow WhisperTokenizer (its vocabulary, merges and Whisper's token layout).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Tokenizer } from '../../bindings/tokenizer.js';
import {
  whisperInitTokens, needsLanguageDetection, detectLanguageId, languageProbabilities, getPromptIds, decoderPrompt,
} from '../../bindings/speech/init_tokens.js';
import { whisperVocab, whisperDecode, stripPrompt, pyFixed2, pyRound2 } from '../../bindings/speech/whisper_text.js';
import { decodeAsr, asrVocab, findLongestCommonSequence } from '../../bindings/speech/asr_decode.js';
import { retrieveSegment, timeOffset } from '../../bindings/speech/long_form.js';
import { extractTokenTimestamps, alignmentMatrix } from '../../bindings/speech/token_timestamps.js';

const G = JSON.parse(readFileSync(new URL('../data/goldens/whisper_decode/goldens.json', import.meta.url), 'utf8'));
const V = G.V;
const f32 = (b) => new Float32Array(new Uint32Array([b]).buffer)[0];
const bits = (x) => new Uint32Array(new Float32Array([x]).buffer)[0];

function tokenizerJson() {
  const vocab = Object.fromEntries(G.vocab.map((t, i) => [t, i]));
  const added = [];
  let id = G.vocab.length;
  const add = (content, special) => added.push({ id: id++, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special });
  add('<|endoftext|>', true);
  for (const s of G.specials) add(s, true);
  for (let i = 0; i <= 1500; i++) add(`<|${pyFixed2(i * 0.02)}|>`, false);
  const bl = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer: null, pre_tokenizer: bl,
    post_processor: bl, decoder: bl,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges: G.merges },
  };
}
const tok = Tokenizer.fromJSON(tokenizerJson());
const vocab = whisperVocab(tok);
const config = (name) => G.configs[name];

test('the tokenizer twin has the golden script\'s layout', () => {
  assert.equal(tok.tokenToId('<|30.00|>'), V - 1);
  assert.equal(vocab.timestampBegin, G.ids.timestamp_begin);
  assert.equal(vocab.sot, G.ids.sot);
  assert.equal(vocab.startOfPrev, G.ids.startofprev);
});

test('init tokens: every case as _retrieve_init_tokens gives it, errors with transformers\' texts', () => {
  for (const c of G.init) {
    const options = { language: c.language, task: c.task, returnTimestamps: c.return_timestamps, isMultilingual: c.is_multilingual };
    let calls = 0;
    const run = () => whisperInitTokens(config(c.config), { ...options, detectLanguage: () => { calls++; return c.detected; } });
    const what = `${c.config} ${JSON.stringify(options)}`;
    if (c.error) {
      assert.throws(run, (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.message.endsWith(c.error), what);
      continue;
    }
    assert.deepEqual(run(), c.init, what);
    assert.equal(calls, c.detect_called, `${what}: detect_language calls`);
    assert.equal(needsLanguageDetection(config(c.config), options), c.detect_called === 1);
  }
});

test('init tokens: long-form forces timestamps and refuses returnTimestamps false', () => {
  const c = config('multilingual');
  assert.deepEqual(whisperInitTokens(c, { language: 'en', longForm: true }), [G.ids.sot, 278, 378]);
  assert.throws(() => whisperInitTokens(c, { language: 'en', longForm: true, returnTimestamps: false }), /returnTimestamps: You have passed more than 3000/);
});

test('language detection: argmax over the language ids, torch\'s softmax at them, most probable first', () => {
  const langToId = config('multilingual').lang_to_id;
  for (const c of G.detect) {
    const logits = new Float32Array(V);
    let s = c.seed & 0x7fffffff;
    for (let i = 0; i < V; i++) {
      s = (Math.imul(s, 1103515245) + 12345) & 0x7fffffff;
      logits[i] = ((s >>> 7) & 0xffffff) / 2097152 - 4;
    }
    if (c.tie) logits[langToId['<|ja|>']] = logits[langToId['<|es|>']] = 9.5;
    assert.equal(detectLanguageId(logits, langToId), c.lang);
    const probs = languageProbabilities(logits, langToId);
    const byId = new Map(probs.map((p) => [p.id, p.probability]));
    Object.values(langToId).forEach((id, k) => assert.equal(bits(byId.get(id)), c.probs[k], `seed ${c.seed} id ${id}`));
    assert.equal(probs[0].id, c.lang);
    for (let k = 1; k < probs.length; k++) assert.ok(probs[k - 1].probability >= probs[k].probability);
    assert.equal(probs[0].token, `<|${probs[0].language}|>`);
  }
});

test('get_prompt_ids: ids and refusals as the tokenizer gives them; the prompt goes before the init tokens', () => {
  for (const c of G.prompt) {
    if (c.error) assert.throws(() => getPromptIds(tok, c.text), (e) => e.message === `prompt: ${c.error}`, c.text);
    else assert.deepEqual(getPromptIds(tok, c.text), c.ids, JSON.stringify(c.text));
  }
  assert.deepEqual(decoderPrompt([1, 2], [9, 8]), [9, 8, 1, 2]);
  assert.deepEqual(decoderPrompt([1, 2]), [1, 2]);
  assert.deepEqual(stripPrompt([G.ids.startofprev, 5, G.ids.sot, 7], G.ids.startofprev, G.ids.sot), [G.ids.sot, 7]);
});

test('decode: text, decode_with_timestamps and output_offsets as WhisperTokenizer.decode', () => {
  for (const c of G.decode) {
    const what = `${c.ids} skip ${c.skip}`;
    assert.equal(whisperDecode(vocab, c.ids, { skipSpecialTokens: c.skip }), c.text, what);
    assert.equal(whisperDecode(vocab, c.ids, { skipSpecialTokens: c.skip, decodeWithTimestamps: true }), c.with_timestamps, what);
    const o = whisperDecode(vocab, c.ids, { skipSpecialTokens: c.skip, outputOffsets: true });
    assert.equal(o.text, c.text);
    assert.deepEqual(o.offsets, c.offsets, what);
  }
});

test('Python\'s %.2f and round(x, 2): exact ties to even, the rest as the decimal nearest', () => {
  assert.equal(pyFixed2(0.125), '0.12');
  assert.equal(pyFixed2(0.375), '0.38');
  assert.equal(pyFixed2(1.005), '1.00');          // 1.005 is below the tie in binary
  assert.equal(pyFixed2(2.675), '2.67');
  assert.equal(pyFixed2(-0.125), '-0.12');
  assert.equal(pyRound2(25.345), 25.34);
  assert.equal(pyRound2(0.3 + 24.7), 25);
});

test('_decode_asr: text, chunks, timestamps, languages, merged overlapping chunks, as the pipeline gives them', () => {
  const av = asrVocab(tok, vocab.timestampBegin);
  let merged = 0;
  for (const c of G.asr) {
    const got = decodeAsr(av, c.outputs, { returnTimestamps: c.return_timestamps, returnLanguage: c.return_language });
    const what = `${c.name} timestamps ${c.return_timestamps} language ${c.return_language}`;
    assert.equal(got.text, c.text, what);
    assert.deepEqual(got.chunks, c.optional.chunks, what);
    if (c.outputs.length > 1) merged++;
  }
  assert.ok(merged >= 8);
  assert.deepEqual(decodeAsr(av, [], { returnTimestamps: 'word' }), { text: '', chunks: [] });
});

test('_find_longest_common_sequence', () => {
  for (const c of G.lcs) assert.deepEqual(findLongestCommonSequence(c.sequences), c.out, JSON.stringify(c.sequences));
});

test('_retrieve_segment and the time offset: segments, float32 times and the seek advance as generate gives them', () => {
  for (const c of G.segments) {
    const off = timeOffset(c.seek);
    assert.equal(bits(off), c.time_offset, `seek ${c.seek}`);
    const got = retrieveSegment(c.sequence, { timestampBegin: G.ids.timestamp_begin, timeOffset: off, seekNumFrames: c.seek_num_frames });
    assert.equal(got.segmentOffset, c.segment_offset, `${c.sequence}`);
    assert.deepEqual(got.segments, c.segments.map((s) => ({ start: f32(s.start), end: f32(s.end), tokens: s.tokens })), `${c.sequence}`);
  }
});

test('_decode_asr with return_timestamps="word": the words and their times as the pipeline groups them', () => {
  const av = asrVocab(tok, vocab.timestampBegin);
  assert.ok(G.words.length >= 14);
  for (const c of G.words) {
    const outputs = c.outputs.map((o) => ({ tokens: o.tokens, tokenTimestamps: Float32Array.from(o.token_timestamps), ...(o.stride ? { stride: o.stride } : {}) }));
    const got = decodeAsr(av, outputs, { returnTimestamps: 'word', language: c.language });
    assert.equal(got.text, c.text, c.name);
    assert.deepEqual(got.chunks, c.chunks, c.name);
  }
});

/** FNV-1a over a typed array's bytes, as 8 hex digits. */
function fnvHex(a) {
  const b = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  let h = 0x811c9dc5;
  for (let i = 0; i < b.length; i++) { h ^= b[i]; h = Math.imul(h, 0x01000193) >>> 0; }
  return h.toString(16).padStart(8, '0');
}

/** The golden script's lcg_row(seed, n): float32 (k − 2^23) / 2^21. */
function lcgRow(seed, n) {
  let s = seed & 0x7fffffff;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = Number((BigInt(s) * 1103515245n + 12345n) & 0x7fffffffn);
    out[i] = ((s >> 7) & 0xffffff) / 2 ** 21 - 4;
  }
  return out;
}

/** The script's weights_of(kind, T, S, seed) (float32 exact). */
function weightsOf(kind, T, S, seed) {
  const v = lcgRow(seed, T * S), w = new Float32Array(T * S), f = Math.fround;
  for (let t = 0; t < T; t++) for (let s = 0; s < S; s++) {
    const x = v[t * S + s];
    let y;
    if (kind === 'uniform') y = (x + 4) / 8;
    else if (kind === 'ties') y = Math.floor(Math.abs(x)) / 4;
    else if (kind === 'near') y = f(f(1 / S) + x * 2 ** -22);
    else y = (Math.abs(s - Math.floor((t * S) / T)) < 3 ? 8 : 0) + Math.abs(x) / 4;
    w[t * S + s] = y;
  }
  return w;
}

test('_extract_token_timestamps on given weights: the warped matrix bit for bit, the token times equal', () => {
  assert.ok(G.token_timestamps.length >= 12);
  for (const c of G.token_timestamps) {
    const { T, S } = c, H = c.heads.length;
    const weights = new Float32Array(H * T * S);
    c.heads.forEach(([l, h], i) => weights.set(weightsOf(c.kind, T, S, c.seed + 7 * l + h), i * T * S));
    const o = { numFrames: c.num_frames, medianFilterWidth: c.width };
    const what = `T ${T} S ${S} ${c.kind} heads ${H} numFrames ${c.num_frames} width ${c.width}`;
    assert.equal(fnvHex(alignmentMatrix(weights, { heads: H, T, S }, 0, o).matrix), c.matrix_fnv, `${what}: the matrix`);
    const [ts] = extractTokenTimestamps(weights, { rows: 1, heads: H, T, S }, o);
    assert.deepEqual(Array.from(ts), c.timestamps, what);
  }
});
