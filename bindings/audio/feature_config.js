// preprocessor_config.json of a Whisper checkpoint, read once and validated: the keys transformers'
// WhisperFeatureExtractor (v4.40.2) reads, with its defaults, and the derived sizes. Every refusal
// names the key, what is expected and what the file has. Not here: the arithmetic (log_mel.js).
//
// transformers recomputes `mel_filters` (Slaney scale and norm, 0 – 8000 Hz) and overwrites the one a
// file stores (older hub files store an (n_mels, 201) list); so does this reader by default. The
// option melFilters: 'config' uses the stored matrix instead. n_samples and nb_max_frames are derived
// (chunk_length · sampling_rate, n_samples // hop_length); a file whose stored values disagree is refused.
import { AttnWasmError } from '../errors.js';
import { parseJson, isObject, show, phrase } from '../tokenizer/json.js';
import { melFilterBank, MelBank } from './mel.js';

const FILE = 'preprocessor_config.json';
const bad = (key, expected, got) => new AttnWasmError('ERR_INVALID_ARGUMENT', `${FILE} ${key}: expected ${expected}, got ${show(got)}`);

function integer(cfg, key, dflt, min, max) {
  const v = cfg[key] ?? dflt;
  if (!Number.isInteger(v) || v < min || v > max) throw bad(key, `an integer in [${min}, ${max}]`, cfg[key]);
  return v;
}

/** The stored `mel_filters`: (bins, mels) as transformers keeps it, or (mels, bins) as older files store it. */
function storedBank(v, nBins, nMels) {
  const rows = Array.isArray(v) ? v.length : -1;
  const cols = rows > 0 && Array.isArray(v[0]) ? v[0].length : -1;
  let transposed;
  if (rows === nMels && cols === nBins) transposed = true;
  else if (rows === nBins && cols === nMels) transposed = false;
  else throw bad('mel_filters', `a (${nMels}, ${nBins}) or (${nBins}, ${nMels}) array of numbers (feature_size, 1 + n_fft // 2)`, rows < 0 ? v : phrase(`an array of shape (${rows}, ${cols})`));
  const dense = new Float64Array(nBins * nMels);
  v.forEach((row, i) => {
    if (!Array.isArray(row) || row.length !== cols) throw bad(`mel_filters[${i}]`, `an array of ${cols} numbers`, row);
    row.forEach((w, j) => {
      if (typeof w !== 'number' || !Number.isFinite(w)) throw bad(`mel_filters[${i}][${j}]`, 'a finite number', w);
      dense[transposed ? j * nMels + i : i * nMels + j] = w;
    });
  });
  return MelBank.fromDense(dense, nBins, nMels);
}

/**
 * Reads a Whisper preprocessor_config.json (its text, bytes or parsed object; omitted: Whisper's
 * defaults, 80 mel bins).
 * @param {string | Uint8Array | ArrayBuffer | object} [json]
 * @param {{melFilters?: 'computed' | 'config'}} [options]
 * @returns {object} the frozen config: featureSize, samplingRate, hopLength, chunkLength, nFft,
 *   paddingValue, returnAttentionMask, nSamples, nbMaxFrames, melSource, bank (a MelBank)
 */
export function readFeatureConfig(json = {}, { melFilters = 'computed' } = {}) {
  const cfg = parseJson(json, FILE);
  if (melFilters !== 'computed' && melFilters !== 'config') {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `melFilters: expected 'computed' or 'config', got ${show(melFilters)}`);
  }
  const type = cfg.feature_extractor_type;
  if (type !== undefined && type !== 'WhisperFeatureExtractor') {
    throw new AttnWasmError('ERR_UNSUPPORTED', `${FILE} feature_extractor_type: expected 'WhisperFeatureExtractor', got ${show(type)}`);
  }
  if (cfg.padding_side !== undefined && cfg.padding_side !== 'right') {
    throw new AttnWasmError('ERR_UNSUPPORTED', `${FILE} padding_side: expected 'right' (Whisper pads audio at the end), got ${show(cfg.padding_side)}`);
  }
  const featureSize = integer(cfg, 'feature_size', 80, 1, 512);
  const samplingRate = integer(cfg, 'sampling_rate', 16000, 1000, 768000);
  const hopLength = integer(cfg, 'hop_length', 160, 1, 1 << 16);
  const chunkLength = integer(cfg, 'chunk_length', 30, 1, 3600);
  const nFft = integer(cfg, 'n_fft', 400, 2, 1 << 16);
  if (nFft % 2 !== 0) throw bad('n_fft', 'an even integer', nFft);
  const paddingValue = cfg.padding_value ?? 0.0;
  if (typeof paddingValue !== 'number' || !Number.isFinite(paddingValue)) throw bad('padding_value', 'a finite number', cfg.padding_value);
  const returnAttentionMask = cfg.return_attention_mask ?? false;
  if (typeof returnAttentionMask !== 'boolean') throw bad('return_attention_mask', 'a boolean', returnAttentionMask);
  const nSamples = chunkLength * samplingRate;
  const nbMaxFrames = Math.floor(nSamples / hopLength);
  if (nSamples > 1 << 28) throw bad('chunk_length', `at most ${2 ** 28} samples per chunk (chunk_length · sampling_rate)`, nSamples);
  for (const [key, want] of [['n_samples', nSamples], ['nb_max_frames', nbMaxFrames]]) {
    if (cfg[key] !== undefined && cfg[key] !== want) {
      throw bad(key, `${want} (derived from chunk_length ${chunkLength}, sampling_rate ${samplingRate}${key === 'nb_max_frames' ? `, hop_length ${hopLength}` : ''}, as transformers derives it)`, cfg[key]);
    }
  }
  const nBins = 1 + nFft / 2;
  let bank;
  if (melFilters === 'config') {
    if (!isObject(cfg) || cfg.mel_filters === undefined) throw bad('mel_filters', "a stored filter bank (melFilters: 'config')", undefined);
    bank = storedBank(cfg.mel_filters, nBins, featureSize);
  } else {
    bank = melFilterBank({ numFrequencyBins: nBins, numMelFilters: featureSize, minFrequency: 0.0, maxFrequency: 8000.0,
      samplingRate, norm: 'slaney', melScale: 'slaney' });
  }
  return Object.freeze({ featureSize, samplingRate, hopLength, chunkLength, nFft, paddingValue, returnAttentionMask,
    nSamples, nbMaxFrames, melSource: melFilters, bank });
}
