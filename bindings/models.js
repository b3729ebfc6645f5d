// attnwasm models: the two demo model families on top of the layers.
//
//   Translator  — an encoder–decoder nn.Transformer over word tokens
//                 (tools/models/train_translator.py), decoded step by step
//                 against a KV cache, greedy or beam search, with the
//                 cross-attention weights of every step. Its input is checked
//                 and normalised by numberwords.js: what is not one English
//                 number in 0 … 999 999 is refused (ERR_NOT_A_NUMBER).
//   Classifier  — a ViT-style image classifier (tools/models/train_vit.py):
//                 PatchEmbedding → LearnedPositionalEmbedding →
//                 TransformerEncoder → Linear on the class token, with the
//                 class token's attention per layer and head, and rollout.
// Both load from a safetensors file whose metadata "attnwasm.config" holds the
// config and vocabularies (tools/export_safetensors.py export_module).

import { englishWords, parseEnglishNumber } from './numberwords.js';

// Held in a variable so bundlers do not resolve a Node built-in for the browser.
const NODE_FS = 'node:fs/promises';
const isNode = typeof process === 'object' && !!process.versions && !!process.versions.node;

/**
 * Reads model bytes from a URL (fetch, with progress), a Node path or file
 * URL, or takes bytes as they are.
 * @param {string|URL|Uint8Array|ArrayBuffer} source
 * @param {(p: {loaded: number, total: number|null}) => void} [onProgress]
 */
export async function readSource(source, onProgress, errors) {
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw errors.typeError(`onProgress: expected a function, got ${errors.describe(onProgress)}`);
  }
  const progress = (loaded, total) => onProgress && onProgress({ loaded, total });
  if (source instanceof Uint8Array) { progress(source.byteLength, source.byteLength); return source; }
  if (source instanceof ArrayBuffer) { progress(source.byteLength, source.byteLength); return new Uint8Array(source); }
  if (typeof source !== 'string' && !(source instanceof URL)) {
    throw errors.typeError(`source: expected a URL, a path or bytes (Uint8Array/ArrayBuffer), got ${errors.describe(source)}`);
  }
  const s = String(source);
  const isRemote = /^(https?|blob|data):/i.test(s);
  if (isNode && !isRemote) {
    const { readFile } = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_FS);
    let bytes;
    try {
      bytes = new Uint8Array(await readFile(s.startsWith('file:') ? new URL(s) : s));
    } catch (e) {
      throw new errors.AttnWasmError('ERR_INVALID_ARGUMENT', `source: cannot read '${s}': ${e.message}`);
    }
    progress(bytes.byteLength, bytes.byteLength);
    return bytes;
  }
  let res;
  try {
    res = await fetch(s);
  } catch (e) {
    throw new errors.AttnWasmError('ERR_INVALID_ARGUMENT', `source: cannot fetch '${s}': ${e.message}`);
  }
  if (!res.ok) throw new errors.AttnWasmError('ERR_INVALID_ARGUMENT', `source: fetching '${s}' gave HTTP ${res.status}`);
  const total = Number(res.headers.get('content-length')) || null;
  if (!res.body || !res.body.getReader) {
    const bytes = new Uint8Array(await res.arrayBuffer());
    progress(bytes.byteLength, total ?? bytes.byteLength);
    return bytes;
  }
  const reader = res.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    progress(loaded, total);
  }
  const bytes = new Uint8Array(loaded);
  let off = 0;
  for (const c of chunks) { bytes.set(c, off); off += c.byteLength; }
  return bytes;
}

/** The model's "attnwasm.config" from a file's metadata, validated natively first. */
function modelConfig(rt, metadata, kind, errors) {
  const raw = metadata['attnwasm.config'];
  if (typeof raw !== 'string') {
    throw new errors.AttnWasmError('ERR_INVALID_ARGUMENT', `source: the file has no "attnwasm.config" metadata (export it with tools/export_safetensors.py)`);
  }
  // The native validator (src/io/model_config.cpp, fuzzed) checks the JSON, the
  // model kind, types, ranges and vocabularies before the JS layer reads any field.
  const invalid = rt._core.validateModelConfig(raw, kind);
  if (invalid) throw new errors.AttnWasmError('ERR_INVALID_ARGUMENT', `source: ${invalid}`);
  let config;
  try {
    config = JSON.parse(raw);
  } catch (e) {  // not expected once the validator passed; kept so no uncoded error escapes
    throw new errors.AttnWasmError('ERR_INVALID_ARGUMENT', `source: "attnwasm.config" is not valid JSON: ${e.message}`);
  }
  return config;
}

function logSoftmaxRow(logits, off, V) {
  let max = -Infinity;
  for (let j = 0; j < V; j++) if (logits[off + j] > max) max = logits[off + j];
  let sum = 0;
  for (let j = 0; j < V; j++) sum += Math.exp(logits[off + j] - max);
  const lse = max + Math.log(sum);
  const out = new Float64Array(V);
  for (let j = 0; j < V; j++) out[j] = logits[off + j] - lse;
  return out;
}

export function makeModels(rt, classes, errors) {
  const core = rt._core;
  const { AttnWasmError } = errors;

  /**
   * English number words → French or German number words (the demo model).
   * Owns native memory: call dispose().
   */
  class Translator extends classes.Module {
    /** Internal: built by loadTranslator from a file handed out by rt._withFile. */
    constructor(file, config, fileBytes) {
      super();
      const c = config;
      const cfg = {
        dModel: c.dModel, nhead: c.nhead, dimFeedforward: c.dimFeedforward, dropout: 0,
        activation: c.activation ?? 'relu', layerNormEps: c.layerNormEps ?? 1e-5, batchFirst: true,
        normFirst: !!c.normFirst, bias: true,
        numEncoderLayers: c.numEncoderLayers, numDecoderLayers: c.numDecoderLayers,
        srcVocabSize: c.srcVocab.length, tgtVocabSize: c.tgtVocab.length, maxLen: c.maxLen, embedScale: c.embedScale,
      };
      this._adopt(core.createTranslator(cfg), 'Translator');
      try {
        this._loadFromFile(file);  // every tensor of the file: a missing or extra key is an error
      } catch (e) {
        this.dispose();
        throw e;
      }
      /** @readonly */ this.config = config;
      /** @readonly */ this.fileBytes = fileBytes;
      /** @readonly */ this.languages = Object.keys(config.langTokens);
      this._src = new Map(config.srcVocab.map((t, i) => [t, i]));
    }

    /**
     * English text → source tokens of the normalised words (lower case; words
     * and hyphens): "Forty  two" → ['forty', 'two']. Throws ERR_NOT_A_NUMBER
     * for text that is not one number in 0 … 999 999.
     */
    tokenize(text) {
      return this._read(text).tokens;
    }

    /** parseEnglishNumber, then every token must be in this model's source vocabulary. */
    _read(text) {
      const number = parseEnglishNumber(text);
      for (const t of number.tokens) {
        if (!this._src.has(t)) {
          throw new AttnWasmError('ERR_INVALID_ARGUMENT', `text: this model's source vocabulary has no '${t}'; write the number in its plain spelling, '${englishWords(number.value)}'`);
        }
      }
      return number;
    }

    _sourceIds(tokens) {
      const ids = tokens.map((t) => this._src.get(t));
      if (this.config.srcAddsEos) ids.push(this.config.eos);
      if (ids.length > this.config.maxLen) {
        throw new AttnWasmError('ERR_INVALID_ARGUMENT', `text: ${ids.length} tokens, more than the model's maxLen ${this.config.maxLen}`);
      }
      return Int32Array.from(ids);
    }

    /** Target token ids → display text in `lang`. */
    detokenize(ids, lang) {
      this._checkIds(ids, 'ids');
      if (typeof lang !== 'string' || !(lang in this.config.langTokens)) {
        throw errors.rangeError(`lang: expected one of ${this.languages.map((l) => `'${l}'`).join(', ')}, got ${typeof lang === 'string' ? JSON.stringify(lang) : errors.describe(lang)}`);
      }
      const words = [];
      for (const id of ids) {
        if (id === this.config.eos) break;
        const t = this.config.tgtVocab[id];
        if (t.startsWith('<')) continue;
        words.push(t);
      }
      if ((this.config.detokenize?.[lang] ?? 'hyphen-join') === 'concat') return words.join('');
      return words.join(' ').replace(/ - /g, '-');
    }

    /** Checks an array of target token ids (each an integer in [0, tgtVocab.length)). */
    _checkIds(ids, name) {
      if (!Array.isArray(ids) && !(ids instanceof Int32Array)) {
        throw errors.typeError(`${name}: expected an array of token ids, got ${errors.describe(ids)}`);
      }
      const V = this.config.tgtVocab.length;
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i];
        if (typeof id !== 'number' || !Number.isInteger(id)) throw errors.typeError(`${name}[${i}]: expected an integer token id, got ${typeof id === 'number' ? id : errors.describe(id)}`);
        if (id < 0 || id >= V) throw errors.rangeError(`${name}[${i}]: expected a token id in [0, ${V}), got ${id}`);
      }
    }

    _encode(src, beams) {
      const h = this._handle();
      rt._run({ src: { data: src, shape: [src.length] } }, {}, (a) => rt._take(core.translatorEncode(h, a, beams)));
    }

    _step(tokens) {
      const h = this._handle();
      const [logits, cross] = rt._run({ tokens: { data: Int32Array.from(tokens), shape: [tokens.length] } }, {},
        (a) => rt._take(core.translatorStep(h, a)));
      return { logits, cross };
    }

    _reorder(parents) {
      const h = this._handle();
      rt._run({ parents: { data: Int32Array.from(parents), shape: [parents.length] } }, {}, (a) => rt._take(core.translatorReorder(h, a)));
    }

    /**
     * Translates English number words.
     * @param {string} text e.g. "three hundred seventy-one"
     * @param {{to?: string, beamSize?: number, lengthPenalty?: number, maxLength?: number}} [options]
     * @returns {{text: string, input: string, value: number, tokens: string[], tokenIds: number[], sourceTokens: string[],
     *   crossAttention: {layers: number, heads: number, targetLength: number, sourceLength: number, data: Float32Array},
     *   stepMs: number[], totalMs: number}}
     *   crossAttention.data is (layers, heads, targetLength, sourceLength): the weight of each source token for each output token.
     *   input: the normalised words the model translated ("42" → "forty-two", "Forty  Two" → "forty two"); value: the number.
     * @throws {AttnWasmError} ERR_NOT_A_NUMBER (with `suggestion` when one is close) for text that is not one number in 0 … 999 999.
     */
    translate(text, options) {
      const o = errors.checkOptions(options, ['to', 'beamSize', 'lengthPenalty', 'maxLength'], 'translate');
      const to = o.to === undefined ? this.languages[0] : o.to;
      if (typeof to !== 'string' || !(to in this.config.langTokens)) {
        throw errors.rangeError(`to: expected one of ${this.languages.map((l) => `'${l}'`).join(', ')}, got ${JSON.stringify(to)}`);
      }
      const beamSize = o.beamSize === undefined ? 1 : errors.checkInt(o.beamSize, 'beamSize', { min: 1, max: 16 });
      const lengthPenalty = o.lengthPenalty === undefined ? 1.0 : o.lengthPenalty;
      if (typeof lengthPenalty !== 'number' || !Number.isFinite(lengthPenalty)) {
        throw errors.typeError(`lengthPenalty: expected a finite number, got ${errors.describe(lengthPenalty)}`);
      }
      const maxLength = o.maxLength === undefined ? this.config.maxLen - 1 : errors.checkInt(o.maxLength, 'maxLength', { min: 1, max: this.config.maxLen - 1 });
      const number = this._read(text);
      const sourceTokens = number.tokens;
      const src = this._sourceIds(sourceTokens);
      const t0 = performance.now();
      const result = beamSize === 1
        ? this._greedy(src, this.config.langTokens[to], maxLength)
        : this._beam(src, this.config.langTokens[to], maxLength, beamSize, lengthPenalty);
      const totalMs = performance.now() - t0;
      const { ids, cross, stepMs } = result;
      const L = this.config.numDecoderLayers, H = this.config.nhead, S = src.length, T = cross.length;
      const data = new Float32Array(L * H * T * S);
      for (let t = 0; t < T; t++) {
        for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) {
          data.set(cross[t].subarray((l * H + h) * S, (l * H + h + 1) * S), ((l * H + h) * T + t) * S);
        }
      }
      const out = ids[ids.length - 1] === this.config.eos ? ids.slice(0, -1) : ids;
      return {
        text: this.detokenize(out, to),
        input: number.words,
        value: number.value,
        tokens: out.map((i) => this.config.tgtVocab[i]),
        tokenIds: out,
        sourceTokens: this.config.srcAddsEos ? [...sourceTokens, '<eos>'] : sourceTokens,
        crossAttention: { layers: L, heads: H, targetLength: T, sourceLength: S, data },
        stepMs,
        totalMs,
      };
    }

    _greedy(src, first, maxLength) {
      this._encode(src, 1);
      const V = this.config.tgtVocab.length, L = this.config.numDecoderLayers, H = this.config.nhead, S = src.length;
      const ids = [], cross = [], stepMs = [];
      let tok = first;
      for (let t = 0; t < maxLength; t++) {
        const t0 = performance.now();
        const { logits, cross: c } = this._step([tok]);
        stepMs.push(performance.now() - t0);
        let best = 0;
        for (let j = 1; j < V; j++) if (logits.data[j] > logits.data[best]) best = j;
        cross.push(c.data.slice(0, L * H * S));
        ids.push(best);
        if (best === this.config.eos) break;
        tok = best;
      }
      return { ids, cross, stepMs };
    }

    // Beam search. Each step ranks every continuation of the live beams by
    // summed log probability and keeps the top `width` of them, where width
    // starts at beamSize and shrinks by one for every finished hypothesis: a
    // continuation ending in <eos> inside that top set is finished with score
    // / length^lengthPenalty; the others live on. It stops when no beam is
    // left (or at maxLength) and returns the best finished hypothesis. A
    // hypothesis only finishes by out-ranking the live alternatives, so an
    // early, unlikely <eos> cannot end the search. Beam size 1 is greedy.
    _beam(src, first, maxLength, beamSize, lengthPenalty) {
      this._encode(src, beamSize);
      const V = this.config.tgtVocab.length, L = this.config.numDecoderLayers, H = this.config.nhead, S = src.length;
      const eos = this.config.eos;
      let beams = [{ ids: [], cross: [], score: 0, last: first, parent: 0 }];
      const finished = [];
      const stepMs = [];
      const norm = (score, len) => score / Math.pow(len, lengthPenalty);
      for (let t = 0; t < maxLength && beams.length > 0; t++) {
        const t0 = performance.now();
        const { logits, cross } = this._step(beams.map((b) => b.last));
        stepMs.push(performance.now() - t0);
        const B = beams.length, width = beamSize - finished.length;
        const cand = [];
        for (let b = 0; b < B; b++) {
          const lp = logSoftmaxRow(logits.data, b * V, V);
          // Each beam's top `width` tokens contain the global top `width` continuations.
          const order = Array.from(lp.keys()).sort((x, y) => lp[y] - lp[x] || x - y).slice(0, width);
          for (const j of order) cand.push({ parent: b, token: j, score: beams[b].score + lp[j] });
        }
        cand.sort((x, y) => y.score - x.score || x.parent - y.parent || x.token - y.token);
        const next = [];
        for (const c of cand.slice(0, width)) {
          const rows = new Float32Array(L * H * S);  // this step's cross-attention of the parent beam
          for (let l = 0; l < L; l++) rows.set(cross.data.subarray((l * B + c.parent) * H * S, (l * B + c.parent + 1) * H * S), l * H * S);
          const p = beams[c.parent];
          const beam = { ids: [...p.ids, c.token], cross: [...p.cross, rows], score: c.score, last: c.token, parent: c.parent };
          if (c.token === eos) finished.push({ ...beam, norm: norm(c.score, beam.ids.length) });
          else next.push(beam);
        }
        beams = next;
        if (beams.length) this._reorder(beams.map((b) => b.parent));
      }
      const pool = [...finished, ...beams.map((b) => ({ ...b, norm: norm(b.score, b.ids.length) }))];
      pool.sort((x, y) => y.norm - x.norm);
      return { ids: pool[0].ids, cross: pool[0].cross, stepMs };
    }

    /**
     * Logits of a whole target at once (no cache, causal mask): (T, V).
     * `target` starts with the language token. For checking the cached path.
     */
    scoreFull(text, targetIds) {
      const h = this._handle();
      this._checkIds(targetIds, 'targetIds');
      if (targetIds.length < 1 || targetIds.length > this.config.maxLen) {
        throw new AttnWasmError('ERR_SHAPE', `targetIds: expected 1 to maxLen = ${this.config.maxLen} tokens, got ${targetIds.length}`);
      }
      const src = this._sourceIds(this.tokenize(text));
      return rt._run({ src: { data: src, shape: [src.length] }, tgt: { data: Int32Array.from(targetIds), shape: [targetIds.length] } }, {},
        (a) => rt._take(core.translatorForwardFull(h, a)))[0];
    }
  }

  /** A ViT-style image classifier (the digit demo model). Owns native memory: call dispose(). */
  class Classifier {
    /** Internal: built by loadClassifier from a file handed out by rt._withFile. */
    constructor(file, config, fileBytes) {
      const c = config;
      const d = c.dModel;
      const grid = Math.floor(c.imageSize / c.patchSize);
      this._patch = new classes.PatchEmbedding(c.inChannels, d, c.patchSize, { classToken: true });
      this._pos = new classes.LearnedPositionalEmbedding(grid * grid + 1, d, { batchFirst: true });
      const layer = new classes.TransformerEncoderLayer(d, c.nhead, {
        dimFeedforward: c.dimFeedforward, dropout: 0, activation: c.activation, layerNormEps: c.layerNormEps,
        batchFirst: true, normFirst: c.normFirst,
      });
      const norm = new classes.LayerNorm(d, { eps: c.layerNormEps });
      this._encoder = new classes.TransformerEncoder(layer, c.numLayers, { norm });
      layer.dispose();
      norm.dispose();
      this._head = new classes.Linear(d, c.numClasses);
      const parts = [['patch.', this._patch], ['pos.', this._pos], ['encoder.', this._encoder], ['head.', this._head]];
      try {
        for (const [prefix, m] of parts) m._loadFromFile(file, prefix);
        const unexpected = file.unused();
        if (unexpected.length) {
          throw new AttnWasmError('ERR_STATE_DICT', `stateDict: unexpected key(s) for a classifier: ${unexpected.map((k) => `"${k}"`).join(', ')}`);
        }
      } catch (e) {
        this.dispose();
        throw e;
      }
      /** @readonly */ this.config = config;
      /** @readonly */ this.fileBytes = fileBytes;
      /** @readonly */ this.grid = grid;
      /** @readonly */ this.labels = config.labels ?? Array.from({ length: c.numClasses }, (_, i) => String(i));
    }

    /** ImageData (RGBA) or Float32Array of ink in [0, 1] → the model's (1, 1, H, W) input. */
    _input(image) {
      const n = this.config.imageSize;
      let ink;
      if (image instanceof Float32Array) {
        if (image.length !== n * n) throw new AttnWasmError('ERR_SHAPE', `image: expected ${n}×${n} = ${n * n} values, got ${image.length}`);
        ink = image;
      } else if (image && typeof image === 'object' && image.data && typeof image.width === 'number') {
        if (image.width !== n || image.height !== n) {
          throw new AttnWasmError('ERR_SHAPE', `image: expected a ${n}×${n} ImageData, got ${image.width}×${image.height}`);
        }
        if (!(image.data instanceof Uint8ClampedArray || image.data instanceof Uint8Array)) {
          throw errors.typeError(`image.data: expected a Uint8ClampedArray of RGBA bytes, got ${errors.describe(image.data)}`);
        }
        if (image.data.length !== 4 * n * n) {
          throw new AttnWasmError('ERR_SHAPE', `image.data: expected ${4 * n * n} RGBA bytes (${n}×${n}×4), got ${image.data.length}`);
        }
        ink = new Float32Array(n * n);
        for (let i = 0; i < n * n; i++) {
          const [r, g, b, a] = [image.data[4 * i], image.data[4 * i + 1], image.data[4 * i + 2], image.data[4 * i + 3]];
          const lum = (0.299 * r + 0.587 * g + 0.114 * b) / 255;
          ink[i] = (a / 255) * (1 - lum);  // dark ink on a light or transparent background
        }
      } else {
        throw errors.typeError(`image: expected a Float32Array of ${n * n} ink values in [0, 1] or an ImageData, got ${errors.describe(image)}`);
      }
      const x = new Float32Array(n * n);
      const mean = this.config.mean ?? 0, std = this.config.std ?? 1;
      for (let i = 0; i < n * n; i++) x[i] = (ink[i] - mean) / std;
      return { data: x, shape: [1, 1, n, n] };
    }

    /**
     * @param {Float32Array|ImageData} image 28×28: Float32Array of ink in [0, 1] (1 = ink), or ImageData (dark ink on light)
     * @returns {{label: string, index: number, probabilities: Float32Array,
     *   attention: {layers: number, heads: number, grid: number, data: Float32Array}, rollout: Float32Array, totalMs: number}}
     *   attention.data (layers, heads, grid·grid): the class token's attention to each patch; rollout (grid·grid).
     */
    classify(image) {
      const t0 = performance.now();
      const x = this._input(image);
      const tokens = this._pos.forward(this._patch.forward(x));
      const { output, attentionWeights } = this._encoder.forwardWithAttention(tokens);
      const D = this.config.dModel, T = output.shape[1];
      const logits = this._head.forward({ data: output.data.slice(0, D), shape: [1, D] }).data;
      let max = -Infinity;
      for (const v of logits) max = Math.max(max, v);
      const probabilities = Float32Array.from(logits, (v) => Math.exp(v - max));
      const sum = probabilities.reduce((a, b) => a + b, 0);
      for (let i = 0; i < probabilities.length; i++) probabilities[i] /= sum;
      let index = 0;
      for (let i = 1; i < probabilities.length; i++) if (probabilities[i] > probabilities[index]) index = i;
      const Lyr = attentionWeights.length, H = this.config.nhead, P = T - 1;
      const data = new Float32Array(Lyr * H * P);
      for (let l = 0; l < Lyr; l++) for (let h = 0; h < H; h++) {
        // weights (1, H, T, T): row 0 is the class token's attention.
        data.set(attentionWeights[l].data.subarray(h * T * T + 1, h * T * T + T), (l * H + h) * P);
      }
      return { label: this.labels[index], index, probabilities, attention: { layers: Lyr, heads: H, grid: this.grid, data }, rollout: rollout(attentionWeights, H, T), totalMs: performance.now() - t0 };
    }

    /** Frees the native memory. Idempotent; later use throws ERR_DISPOSED. */
    dispose() {
      for (const m of [this._patch, this._pos, this._encoder, this._head]) m?.dispose();
    }

    [Symbol.dispose ?? Symbol.for('Symbol.dispose')]() {
      this.dispose();
    }
  }

  /** Attention rollout (Abnar & Zuidema 2020): head-averaged, + identity, row-normalised, multiplied over layers. */
  function rollout(weights, H, T) {
    let R = null;
    for (const w of weights) {
      const A = new Float64Array(T * T);
      for (let h = 0; h < H; h++) for (let i = 0; i < T * T; i++) A[i] += w.data[h * T * T + i] / H;
      for (let i = 0; i < T; i++) {
        let s = 0;
        for (let j = 0; j < T; j++) { A[i * T + j] = 0.5 * A[i * T + j] + (i === j ? 0.5 : 0); s += A[i * T + j]; }
        for (let j = 0; j < T; j++) A[i * T + j] /= s;
      }
      if (!R) { R = A; continue; }
      const N = new Float64Array(T * T);  // N = A · R
      for (let i = 0; i < T; i++) for (let k = 0; k < T; k++) {
        const a = A[i * T + k];
        if (a) for (let j = 0; j < T; j++) N[i * T + j] += a * R[k * T + j];
      }
      R = N;
    }
    const out = new Float32Array(T - 1);
    let max = 0;
    for (let j = 1; j < T; j++) max = Math.max(max, R[j]);
    for (let j = 1; j < T; j++) out[j - 1] = max > 0 ? R[j] / max : 0;
    return out;
  }

  /**
   * Loads the translation model from a URL, a Node path or bytes.
   * @param {string|URL|Uint8Array|ArrayBuffer} source
   * @param {{onProgress?: (p: {loaded: number, total: number|null}) => void}} [options]
   */
  async function loadTranslator(source, options) {
    const o = errors.checkOptions(options, ['onProgress'], 'loadTranslator');
    const bytes = await readSource(source, o.onProgress, errors);
    return rt._withFile(bytes, 'source', (file, metadata) =>
      new Translator(file, modelConfig(rt, metadata, 'translator', errors), bytes.byteLength));
  }

  /** Loads the image classifier from a URL, a Node path or bytes. */
  async function loadClassifier(source, options) {
    const o = errors.checkOptions(options, ['onProgress'], 'loadClassifier');
    const bytes = await readSource(source, o.onProgress, errors);
    return rt._withFile(bytes, 'source', (file, metadata) =>
      new Classifier(file, modelConfig(rt, metadata, 'vit', errors), bytes.byteLength));
  }

  return { Translator, Classifier, loadTranslator, loadClassifier };
}
