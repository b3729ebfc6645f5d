// The two-tower models' face (src/models/clip_model.h: CLIP and SigLIP from hub folders): CLIPModel embeds images and
// texts into one space, scores them against each other, and labels images zero-shot, as transformers' CLIPModel /
// SiglipModel and its zero-shot-image-classification pipeline. Images become pixel_values through attnwasm/image
// (the folder's preprocessor_config.json), texts input ids through the folder's tokenizer; the towers run natively,
// the normalisation and the logits (a few dot products) here.
import { AttnWasmError, typeError, describe } from './errors.js';
import { checkInteger, checkOptions, checkTensor } from './checks.js';
import { nextTask } from './next_task.js';
import { Model } from './model.js';
import { preprocessImages, imageProcessor } from './image/index.js';
import { imageBatches } from './vision.js';
import * as boundary from './boundary.js';

const MAX_BATCH = 1 << 20;
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const noTower = (what, type) => new AttnWasmError('ERR_INVALID_ARGUMENT', `${what}: this model (model_type "${type}") has no ${what === 'images' || what === 'pixelValues' ? 'vision' : 'text'} tower`);

/** Rows (n, D) divided by their L2 norms in float32, as `x / x.norm(p=2, dim=-1, keepdim=True)`. */
export function normalizeRows(data, D) {
  const out = new Float32Array(data.length);
  for (let i = 0; i < data.length; i += D) {
    let ss = 0;
    for (let j = i; j < i + D; j++) ss += data[j] * data[j];
    const n = Math.fround(Math.sqrt(ss));
    for (let j = i; j < i + D; j++) out[j] = Math.fround(data[j] / n);
  }
  return out;
}

/**
 * CLIPModel / SiglipModel (or one of their towers) loaded by aw.loadModel from a hub folder (config.json model_type
 * clip, siglip, clip_text_model, clip_vision_model, siglip_text_model, siglip_vision_model). Owns native memory:
 * dispose().
 */
export class CLIPModel extends Model {
  /** Internal: built by loadModel (families.js). */
  constructor(rt, handle, { hfConfig, preprocessorConfig, tokenizer }, fileBytes) {
    super(rt, handle, 'CLIPModel', fileBytes);
    const info = this._info;
    /** @readonly the Hugging Face config (config.json's keys, as given) */ this.config = hfConfig;
    /** @readonly config.json's model_type */ this.modelType = info.modelType;
    /** @readonly whether this is SigLIP (sigmoid scores, logit_bias) */ this.siglip = info.siglip;
    /** @readonly */ this.hasText = info.hasText;
    /** @readonly */ this.hasVision = info.hasVision;
    /** @readonly the image embeddings' size (projection_dim, or the tower's) */ this.imageEmbedDim = info.imageEmbedDim ?? null;
    /** @readonly the text embeddings' size */ this.textEmbedDim = info.textEmbedDim ?? null;
    /** @readonly tokens a text may have (max_position_embeddings) */ this.maxPositions = info.maxPositions ?? null;
    /** @readonly the side of the images the vision tower takes (config.image_size) */ this.imageSize = info.imageSize ?? null;
    /** @readonly the vision tower's patch side */ this.patchSize = info.patchSize ?? null;
    /** @readonly tokens before the patches in the vision tower: CLIP's class token (1), none for SigLIP (0) */
    this.extraTokens = info.extraTokens ?? null;
    /** @readonly the vision tower's layers and heads (what visionForward's attentions hold) */
    this.visionNumLayers = info.visionNumLayers ?? null;
    /** @readonly */ this.visionNumHeads = info.visionNumHeads ?? null;
    /** @readonly the parsed preprocessor_config.json, or null (then pass pixelValues to forward()) */
    this.preprocessorConfig = preprocessorConfig ?? null;
    /** @readonly the folder's tokenizer, or null (then pass inputIds to forward()) */ this.tokenizer = tokenizer ?? null;
    const [scale, bias] = boundary.models.clipLogitScale(rt, handle).data;
    /** @readonly exp(logit_scale) (1 for a one-tower model) */ this.logitScale = scale;
    /** @readonly logit_bias (SigLIP's; 0 for CLIP) */ this.logitBias = bias;
    this._processorType = this.siglip ? 'siglip' : 'clip';
    if (this.preprocessorConfig) imageProcessor(this.preprocessorConfig, { modelType: this._processorType });
  }

  /** pixel_values of images as the folder's image processor computes them: { data, shape: [n, 3, H, W] }. */
  async preprocess(images, options) {
    this._handle();
    const o = checkOptions(options, ['exifOrientation'], 'preprocess');
    if (!this.hasVision) throw noTower('images', this.modelType);
    if (!this.preprocessorConfig) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'images: this folder has no preprocessor_config.json, so images cannot be prepared as its processor would; pass pixelValues to forward(), or aw.preprocessImages(images, config) yourself');
    }
    return preprocessImages(images, this.preprocessorConfig, { modelType: this._processorType, exifOrientation: o.exifOrientation });
  }

  /**
   * Texts as the model's processor prepares them: { inputIds, attentionMask } ({ data: Int32Array, shape: [n, T] }),
   * truncated to maxPositions; CLIP pads to the longest text, SigLIP to maxPositions (padding="max_length", as
   * transformers' zero-shot pipeline does for it).
   */
  tokenize(texts) {
    const list = this._texts(texts);
    const enc = this.tokenizer.encodeBatch(list, { padding: this.siglip ? 'max_length' : 'longest', maxLength: this.maxPositions, truncation: true });
    return { inputIds: { data: enc.inputIds, shape: enc.shape }, attentionMask: { data: enc.attentionMask, shape: enc.shape } };
  }

  /**
   * The model on a batch, as CLIPModel.forward / SiglipModel.forward: inputs { inputIds, attentionMask (optional),
   * pixelValues } → { logitsPerImage (nImages, nTexts), logitsPerText (nTexts, nImages), imageEmbeds, textEmbeds }
   * (the embeddings L2-normalized, as the model returns them). A one-tower model takes its tower's inputs and returns
   * its embeddings only (not normalized: get_*_features).
   */
  forward(inputs) {
    const h = this._handle();
    if (!isObject(inputs) || 'data' in inputs) {
      throw typeError(`inputs: expected { inputIds, attentionMask, pixelValues }, got ${describe(inputs)}`);
    }
    const o = checkOptions(inputs, ['inputIds', 'attentionMask', 'pixelValues', 'interpolatePosEncoding'], 'forward');
    const out = {};
    if (o.pixelValues !== undefined) out.imageEmbeds = this._imageFeatures(h, o.pixelValues, o.interpolatePosEncoding);
    else if (this.hasVision && this.hasText) throw typeError('pixelValues: expected { data: Float32Array, shape: [B, C, H, W] }, got undefined');
    if (o.inputIds !== undefined) out.textEmbeds = this._textFeatures(h, o.inputIds, o.attentionMask);
    else if (this.hasText && this.hasVision) throw typeError('inputIds: expected { data: Int32Array, shape: [B, T] }, got undefined');
    if (!out.imageEmbeds && !out.textEmbeds) throw typeError(`inputs: expected ${this.hasText ? 'inputIds' : 'pixelValues'}, got neither`);
    if (!(this.hasText && this.hasVision)) return out;
    const img = { data: normalizeRows(out.imageEmbeds.data, this.imageEmbedDim), shape: out.imageEmbeds.shape };
    const txt = { data: normalizeRows(out.textEmbeds.data, this.textEmbedDim), shape: out.textEmbeds.shape };
    const logitsPerText = this._logits(txt, img);
    const [nT, nI] = logitsPerText.shape;
    const perImage = new Float32Array(nI * nT);
    for (let t = 0; t < nT; t++) for (let i = 0; i < nI; i++) perImage[i * nT + t] = logitsPerText.data[t * nI + i];
    return { logitsPerImage: { data: perImage, shape: [nI, nT] }, logitsPerText, imageEmbeds: img, textEmbeds: txt };
  }

  /**
   * get_image_features: { pixelValues (B, C, H, W), interpolatePosEncoding } → { data, shape: [B, imageEmbedDim] },
   * not normalized.
   */
  imageFeatures(inputs) {
    const h = this._handle();
    if (!isObject(inputs) || 'data' in inputs) throw typeError(`inputs: expected { pixelValues }, got ${describe(inputs)}`);
    const o = checkOptions(inputs, ['pixelValues', 'interpolatePosEncoding'], 'imageFeatures');
    return this._imageFeatures(h, o.pixelValues, o.interpolatePosEncoding);
  }

  /**
   * The vision tower's outputs (CLIPVisionModelWithProjection's, SigLIP's vision model's): { pixelValues,
   * interpolatePosEncoding, outputAttentions } → { imageEmbeds (B, imageEmbedDim; not normalized), lastHiddenState
   * (B, T, E; CLIP's before post_layernorm, as transformers returns it), attentions (B, layers, heads, T, T) with
   * outputAttentions }.
   */
  visionForward(inputs) {
    const h = this._handle();
    if (!isObject(inputs) || 'data' in inputs) throw typeError(`inputs: expected { pixelValues }, got ${describe(inputs)}`);
    const o = checkOptions(inputs, ['pixelValues', 'interpolatePosEncoding', 'outputAttentions'], 'visionForward');
    const attention = o.outputAttentions ?? false;
    if (typeof attention !== 'boolean') throw typeError(`outputAttentions: expected a boolean, got ${describe(attention)}`);
    const [imageEmbeds, lastHiddenState, attentions] = this._imageRun(h, o.pixelValues, o.interpolatePosEncoding, attention);
    return attention ? { imageEmbeds, lastHiddenState, attentions } : { imageEmbeds, lastHiddenState };
  }

  /** get_text_features: { inputIds (B, T), attentionMask } → { data, shape: [B, textEmbedDim] }, not normalized. */
  textFeatures(inputs) {
    const h = this._handle();
    if (!isObject(inputs) || 'data' in inputs) throw typeError(`inputs: expected { inputIds, attentionMask }, got ${describe(inputs)}`);
    const o = checkOptions(inputs, ['inputIds', 'attentionMask'], 'textFeatures');
    return this._textFeatures(h, o.inputIds, o.attentionMask);
  }

  /**
   * One vector per image: { data, shape: [n, imageEmbedDim] }, get_image_features, L2-normalized unless normalize:
   * false; batchSize (default 8), onProgress.
   */
  async embedImages(images, options) {
    const o = checkOptions(options, ['batchSize', 'normalize', 'onProgress'], 'embedImages');
    this._handle();
    if (!this.hasVision) throw noTower('images', this.modelType);
    const normalize = checkNormalize(o.normalize);
    const D = this.imageEmbedDim;
    const out = await imageBatches(this, images, o, (pixelValues) => this._imageFeatures(this._handle(), pixelValues).data);
    return { data: normalize ? normalizeRows(out, D) : out, shape: [out.length / D, D] };
  }

  /**
   * One vector per text: { data, shape: [n, textEmbedDim] }, get_text_features on the texts as tokenize() prepares
   * them, L2-normalized unless normalize: false; batchSize (default 32).
   */
  async embedTexts(texts, options) {
    const o = checkOptions(options, ['batchSize', 'normalize'], 'embedTexts');
    const normalize = checkNormalize(o.normalize);
    const list = this._texts(texts);  // every text checked before the first batch runs
    const batchSize = o.batchSize === undefined ? 32 : checkInteger(o.batchSize, 'batchSize', { min: 1, max: MAX_BATCH });
    const D = this.textEmbedDim, out = new Float32Array(list.length * D);
    for (let i = 0; i < list.length; i += batchSize) {
      const { inputIds, attentionMask } = this.tokenize(list.slice(i, i + batchSize));
      out.set(this._textFeatures(this._handle(), inputIds, attentionMask).data, i * D);
      if (i + batchSize < list.length) await nextTask();
    }
    return { data: normalize ? normalizeRows(out, D) : out, shape: [out.length / D, D] };
  }

  /**
   * Zero-shot labels per image, best first, as transformers' pipeline('zero-shot-image-classification'): each label
   * put into hypothesisTemplate (default 'This is a photo of {}.'), scores softmax over the labels (CLIP) or sigmoid
   * per label (SigLIP). topK: the best k (default: every label).
   * @returns {Promise<{ label: string, score: number }[][]>}
   */
  async zeroShot(images, labels, options) {
    const o = checkOptions(options, ['hypothesisTemplate', 'topK', 'batchSize'], 'zeroShot');
    this._handle();
    if (!this.hasText || !this.hasVision) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `zeroShot: needs both towers; this model (model_type "${this.modelType}") has one`);
    if (!Array.isArray(labels) || labels.length === 0) throw typeError(`labels: expected a non-empty array of strings, got ${describe(labels)}`);
    labels.forEach((l, i) => { if (typeof l !== 'string') throw typeError(`labels[${i}]: expected a string, got ${describe(l)}`); });
    const template = o.hypothesisTemplate ?? 'This is a photo of {}.';
    if (typeof template !== 'string') throw typeError(`hypothesisTemplate: expected a string, got ${describe(template)}`);
    const topK = o.topK === undefined || o.topK === null ? labels.length : checkInteger(o.topK, 'topK', { min: 1, max: MAX_BATCH });
    // str.format with one positional field: '{}' (the first) becomes the label, '{{' / '}}' literal braces.
    const texts = labels.map((l) => template.replace(/\{\{|\}\}|\{\}/g, (m) => (m === '{}' ? l : m[0])));
    const txt = await this.embedTexts(texts);
    const img = await this.embedImages(images, o.batchSize === undefined ? undefined : { batchSize: o.batchSize });
    const logits = this._logits(img, txt);  // (nImages, nLabels)
    const n = labels.length, out = [];
    for (let i = 0; i < logits.shape[0]; i++) {
      const row = Array.from(logits.data.subarray(i * n, (i + 1) * n));
      let scores;
      if (this.siglip) {
        scores = row.map((x) => Math.fround(1 / (1 + Math.exp(-x))));
      } else {
        const m = Math.max(...row);
        const e = row.map((x) => Math.exp(x - m));
        const s = e.reduce((a, b) => a + b, 0);
        scores = e.map((x) => Math.fround(x / s));
      }
      const ranked = scores.map((score, k) => ({ label: labels[k], score })).sort((a, b) => b.score - a.score);
      out.push(ranked.slice(0, topK));
    }
    return out;
  }

  _imageFeatures(h, pixelValues, interpolate) { return this._imageRun(h, pixelValues, interpolate, false)[0]; }

  _imageRun(h, pixelValues, interpolate, attention) {
    if (!this.hasVision) throw noTower('pixelValues', this.modelType);
    if (pixelValues === undefined) throw typeError('pixelValues: expected { data: Float32Array, shape: [B, C, H, W] }, got undefined');
    const pixels = checkTensor(pixelValues, 'pixelValues', 'float', this._rt);
    if (interpolate !== undefined && typeof interpolate !== 'boolean') throw typeError(`interpolatePosEncoding: expected a boolean, got ${describe(interpolate)}`);
    return boundary.models.clipImageEmbeds(this._rt, h, { pixels }, { interpolate: interpolate ?? false, attention });
  }

  _textFeatures(h, inputIds, attentionMask) {
    if (!this.hasText) throw noTower('inputIds', this.modelType);
    if (inputIds === undefined) throw typeError('inputIds: expected { data: Int32Array, shape: [B, T] }, got undefined');
    const ids = checkTensor(inputIds, 'inputIds', 'ids', this._rt);
    const m = attentionMask && attentionMask.data instanceof Uint8Array ? { data: Int32Array.from(attentionMask.data), shape: attentionMask.shape } : attentionMask;
    const mask = m === undefined || m === null ? undefined : checkTensor(m, 'attentionMask', 'ids', this._rt);
    if (mask && (mask.shape.length !== ids.shape.length || mask.shape.some((d, i) => d !== ids.shape[i]))) {
      throw new AttnWasmError('ERR_SHAPE', `attentionMask: expected the shape of inputIds [${ids.shape.join(', ')}], got [${mask.shape.join(', ')}]`);
    }
    const [embeds] = boundary.models.clipTextEmbeds(this._rt, h, mask ? { ids, mask } : { ids }, {});
    return embeds;
  }

  /** texts as a checked list of strings, with a tokenizer to read them. */
  _texts(texts) {
    this._handle();
    if (!this.hasText) throw noTower('texts', this.modelType);
    const list = Array.isArray(texts) ? texts : [texts];
    if (list.length === 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'texts: expected at least one text, got an empty array');
    list.forEach((t, i) => { if (typeof t !== 'string') throw typeError(`texts[${i}]: expected a string, got ${describe(t)}`); });
    if (!this.tokenizer) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'texts: this folder has no tokenizer (tokenizer.json, or vocab.json + merges.txt / spiece.model); pass inputIds to forward()');
    }
    return list;
  }

  /** a (n, D) · b (m, D)ᵀ · exp(logit_scale) + logit_bias, accumulated in double, rounded to float32. */
  _logits(a, b) {
    const [n, D] = a.shape, m = b.shape[0], out = new Float32Array(n * m);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < m; j++) {
        let s = 0;
        for (let k = 0; k < D; k++) s += a.data[i * D + k] * b.data[j * D + k];
        out[i * m + j] = Math.fround(Math.fround(Math.fround(s) * this.logitScale) + this.logitBias);
      }
    }
    return { data: out, shape: [n, m] };
  }
}

function checkNormalize(v) {
  if (v === undefined) return true;
  if (typeof v !== 'boolean') throw typeError(`normalize: expected a boolean, got ${describe(v)}`);
  return v;
}
