// The token times of Whisper's generated rows (transformers v4.40.2's return_token_timestamps): the model's
// alignment heads (generation_config.json alignment_heads) and median filter width (config.json
// median_filter_width, default 7), read and checked once; then, per generation, the heads' cross-attention of the
// rows under teacher forcing (the stepper's alignment: WhisperLm::AlignmentWeights, against the generation's own
// decoding state, before it is freed) through token_timestamps.js. Not here: the words (word_timestamps.js).
import { AttnWasmError } from '../errors.js';
import { extractTokenTimestamps } from './token_timestamps.js';

const isPair = (p) => Array.isArray(p) && p.length === 2 && p.every((v) => Number.isInteger(v));

/**
 * What token times need of a Whisper model, or transformers' refusal when its generation config has no
 * alignment_heads (ERR_UNSUPPORTED, naming them). `what` names the option that asked (e.g. "returnTimestamps: 'word'").
 * @param {{config: object, generationConfig: object | null}} model
 * @returns {{heads: Int32Array, count: number, medianFilterWidth: number}} new: heads as (count, 2) [layer, head]
 */
export function alignmentSettings(model, what) {
  const gc = model.generationConfig ?? {};
  const heads = gc.alignment_heads;
  if (heads === undefined || heads === null) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `${what}: token-level timestamps need the cross-attention alignment heads, and this model's generation_config.json has no alignment_heads (transformers: "Model generation config has no \`alignment_heads\`, token-level timestamps not available. See https://gist.github.com/hollance/42e32852f24243b748ae6bc1f985b13a on how to add this property to the generation config.")`);
  }
  if (!Array.isArray(heads) || heads.length === 0) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `generation_config.json alignment_heads: expected a non-empty list of [layer, head] pairs, got ${JSON.stringify(heads)}`);
  }
  heads.forEach((p, i) => {
    if (!isPair(p)) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `generation_config.json alignment_heads[${i}]: expected a [layer, head] pair of integers, got ${JSON.stringify(p)}`);
  });
  const width = model.config?.median_filter_width ?? 7;
  if (!(Number.isInteger(width) && width > 0 && width % 2 === 1)) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `config.json median_filter_width: \`filter_width\` should be an odd number, got ${JSON.stringify(width)}`);
  }
  return { heads: Int32Array.from(heads.flat()), count: heads.length, medianFilterWidth: width };
}

/**
 * transformers' token_timestamps of generated rows: each row's times (its length; the first token's 0), from the
 * cross-attention of its tokens but the last under teacher forcing against `state` (the generation's, still held).
 * The cross attention of a position depends on the tokens up to it only, so greedy and sampled rows get exactly the
 * rows transformers concatenates over its steps. Beam search: each row's own hypothesis (see docs/speech.md: 4.40.2
 * indexes the beams' steps off by the decoder prompt's length).
 * @param {{alignment: (state: object, tokens: Int32Array, rows: number, T: number, heads: Int32Array) =>
 *   {data: Float32Array, shape: number[]}}} stepper
 * @param {object} state @param {ArrayLike<number>[]} sequences rows of one length, k per source of the state
 * @param {ReturnType<typeof alignmentSettings>} settings
 * @param {{numFrames?: number | null}} [o] the input's frames: the states past numFrames // 2 are not looked at
 * @returns {Float32Array[]} new, one per row
 */
export function tokenTimestamps(stepper, state, sequences, settings, o = {}) {
  const rows = sequences.length, L = sequences[0].length, T = L - 1;
  if (T < 1) return sequences.map(() => new Float32Array(L));
  const tokens = new Int32Array(rows * T);
  sequences.forEach((q, r) => {
    if (q.length !== L) throw new AttnWasmError('ERR_INTERNAL', `token timestamps: rows of ${L} and ${q.length} tokens`);
    for (let t = 0; t < T; t++) tokens[r * T + t] = q[t];
  });
  const w = stepper.alignment(state, tokens, rows, T, settings.heads);
  const S = w.shape[3];
  return extractTokenTimestamps(w.data, { rows, heads: settings.count, T, S }, { numFrames: o.numFrames ?? null, medianFilterWidth: settings.medianFilterWidth });
}
