// The vision encoders' faces (src/models/vision_encoder.cpp: ViT, DeiT, DINOv2 from hub folders):
//   VisionModel      a bare ViTModel / DeiTModel / Dinov2Model: forward({ pixelValues }) → lastHiddenState,
//                    poolerOutput; embed(images) → the pooled vectors; preprocess(images) → pixel_values
//   ImageClassifier  *ForImageClassification: classify(images, { topK }) as transformers' image-classification
//                    pipeline scores; forward({ pixelValues }) → { logits }
// Images become pixel_values through attnwasm/image (bindings/image/), the folder's preprocessor_config.json read
// as transformers' AutoImageProcessor reads it; the encoder and its head run natively.
import { AttnWasmError, typeError, describe } from './errors.js';
import { checkInteger, checkOptions, checkTensor } from './checks.js';
import { nextTask } from './next_task.js';
import { Model } from './model.js';
import { labelsOf, oneOf, rankedLabels } from './text_classifier.js';
import { preprocessImages, imageProcessor } from './image/index.js';
import * as boundary from './boundary.js';

const FUNCTIONS = ['softmax', 'sigmoid', 'none'];
const MAX_BATCH = 1 << 20;
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A vision encoder loaded by aw.loadModel from a hub folder (config.json model_type vit, deit or dinov2,
 * model.safetensors, preprocessor_config.json). Owns native memory: dispose().
 */
export class VisionModel extends Model {
  /** Internal: built by loadModel (families.js). */
  constructor(rt, handle, { hfConfig, preprocessorConfig }, fileBytes, className = 'VisionModel') {
    super(rt, handle, className, fileBytes);
    const info = this._info;
    /** @readonly the Hugging Face config (config.json's keys, as given) */ this.config = hfConfig;
    /** @readonly 'vit' | 'deit' | 'dinov2' */ this.modelType = info.modelType;
    /** @readonly */ this.hiddenSize = info.hiddenSize;
    /** @readonly */ this.numLayers = info.numLayers;
    /** @readonly the side the positions were trained at (config.image_size) */ this.imageSize = info.imageSize;
    /** @readonly */ this.patchSize = info.patchSize;
    /** @readonly */ this.numChannels = info.numChannels;
    /** @readonly tokens before the patches: the class token (and DeiT's distillation token) */ this.extraTokens = info.extraTokens;
    /** @readonly whether inputs of any size are taken (DINOv2 resizes its positions); else imageSize × imageSize only */
    this.anySize = info.anySize;
    /**
     * @readonly what embed() returns: 'pooler' (tanh(pooler.dense(x[:, 0])), a ViTModel / DeiTModel saved with its
     * pooler), 'cls' (x[:, 0] after the final LayerNorm: DINOv2's pooler_output, and a model saved without a pooler)
     */
    this.pooling = info.pooler && info.modelType !== 'dinov2' ? 'pooler' : 'cls';
    /** @readonly the parsed preprocessor_config.json, or null (then pass pixelValues to forward()) */
    this.preprocessorConfig = preprocessorConfig ?? null;
    if (this.preprocessorConfig) imageProcessor(this.preprocessorConfig, { modelType: this.modelType });  // refused now, not at the first image
  }

  /**
   * pixel_values of images as the folder's image processor computes them (attnwasm/image's preprocessImages):
   * { data: Float32Array, shape: [n, 3, H, W] }. Images: paths, bytes, Blobs, URLs, { data, width, height },
   * ImageData, canvases, … (docs/images.md).
   */
  async preprocess(images, options) {
    this._handle();
    const o = checkOptions(options, ['exifOrientation'], 'preprocess');
    if (!this.preprocessorConfig) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'images: this folder has no preprocessor_config.json, so images cannot be prepared as its processor would; pass pixelValues to forward(), or aw.preprocessImages(images, config) yourself');
    }
    return preprocessImages(images, this.preprocessorConfig, { modelType: this.modelType, exifOrientation: o.exifOrientation });
  }

  /**
   * The model on pixel_values (B, C, H, W), as the transformers model's forward: { lastHiddenState (B, T, E),
   * poolerOutput (B, E) or null } (an ImageClassifier: { logits (B, numLabels) } too). H = W = imageSize unless
   * anySize, or interpolatePosEncoding: true (ViT's and DeiT's interpolate_pos_encoding: the patch positions
   * resized bicubically to the input's grid, as current transformers does). outputAttentions: also `attentions`, every
   * layer's softmax weights (B, layers, heads, T, T), as output_attentions.
   */
  forward(inputs) {
    const h = this._handle();
    if (!isObject(inputs) || 'data' in inputs) {
      throw typeError(`inputs: expected { pixelValues: { data: Float32Array, shape: [B, C, H, W] } }, got ${describe(inputs)}`);
    }
    const o = checkOptions(inputs, ['pixelValues', 'interpolatePosEncoding', 'outputAttentions'], 'forward');
    const pixels = checkTensor(o.pixelValues, 'pixelValues', 'float', this._rt);
    const interpolate = o.interpolatePosEncoding ?? false;
    if (typeof interpolate !== 'boolean') throw typeError(`interpolatePosEncoding: expected a boolean, got ${describe(interpolate)}`);
    const attention = o.outputAttentions ?? false;
    if (typeof attention !== 'boolean') throw typeError(`outputAttentions: expected a boolean, got ${describe(attention)}`);
    const [lastHiddenState, poolerOutput, logits, attentions] = boundary.models.visionForward(this._rt, h, { pixels }, { head: this._head === true, interpolate, attention });
    const empty = (t) => t.shape.length === 1 && t.shape[0] === 0;
    const out = { lastHiddenState, poolerOutput: empty(poolerOutput) ? null : poolerOutput };
    if (this._head) out.logits = logits;
    if (attention) out.attentions = attentions;
    return out;
  }

  /**
   * One vector per image: { data: Float32Array, shape: [n, hiddenSize] }, as `pooling` says, in batches of
   * batchSize (default 8). normalize (default false): L2-normalized, as F.normalize.
   */
  async embed(images, options) {
    const o = checkOptions(options, ['batchSize', 'normalize', 'onProgress'], 'embed');
    const normalize = o.normalize === undefined ? false : o.normalize;
    if (typeof normalize !== 'boolean') throw typeError(`normalize: expected a boolean, got ${describe(normalize)}`);
    const E = this.hiddenSize;
    const rows = await this._batches(images, o, (out) => {
      if (this.pooling === 'pooler') return out.poolerOutput.data;
      const { data, shape } = out.poolerOutput ?? out.lastHiddenState;
      if (shape.length === 2) return data;
      const [B, T] = shape, first = new Float32Array(B * E);
      for (let b = 0; b < B; b++) first.set(data.subarray(b * T * E, b * T * E + E), b * E);
      return first;
    });
    if (normalize) {
      for (let i = 0; i < rows.length; i += E) {
        const v = rows.subarray(i, i + E);
        let ss = 0;
        for (const x of v) ss += x * x;
        const n = Math.max(Math.fround(Math.sqrt(ss)), 1e-12);
        for (let j = 0; j < E; j++) v[j] = Math.fround(v[j] / n);
      }
    }
    return { data: rows, shape: [rows.length / E, E] };
  }

  /** Images preprocessed and run batchSize at a time; pick(forward's output) → that batch's rows, concatenated. */
  async _batches(images, o, pick) {
    this._handle();
    return imageBatches(this, images, o, (pixelValues) => pick(this.forward({ pixelValues })));
  }
}

/**
 * images (one or a list) through model.preprocess and run(pixelValues) → that batch's rows, batchSize (default 8)
 * at a time, concatenated; onProgress({ done, total }) after each batch, the next task between batches. An image
 * that cannot be read is refused naming its index in the whole list. VisionModel's and CLIPModel's batches.
 * @returns {Promise<Float32Array>}
 */
export async function imageBatches(model, images, o, run) {
  const list = Array.isArray(images) ? images : [images];
  if (list.length === 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'images: expected at least one image, got an empty array');
  const batchSize = o.batchSize === undefined ? 8 : checkInteger(o.batchSize, 'batchSize', { min: 1, max: MAX_BATCH });
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw typeError(`onProgress: expected a function, got ${describe(o.onProgress)}`);
  const parts = [];
  let total = 0;
  for (let i = 0; i < list.length; i += batchSize) {
    const chunk = list.slice(i, i + batchSize);
    let pixelValues;
    try {
      pixelValues = await model.preprocess(chunk);
    } catch (e) {
      if (e && typeof e === 'object' && typeof e.index === 'number' && i > 0) {
        e.index += i;
        e.message = e.message.replace(/^images\[(\d+)\]/, (_, k) => `images[${Number(k) + i}]`);
      }
      throw e;
    }
    const part = run(pixelValues);
    parts.push(part);
    total += part.length;
    o.onProgress?.({ done: Math.min(i + batchSize, list.length), total: list.length });
    if (i + batchSize < list.length) await nextTask();
  }
  const out = new Float32Array(total);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

/**
 * An image classifier: ViTForImageClassification, DeiTForImageClassification[WithTeacher] or
 * Dinov2ForImageClassification from a hub folder. Owns native memory: dispose().
 */
export class ImageClassifier extends VisionModel {
  constructor(rt, handle, ctx, fileBytes) {
    super(rt, handle, ctx, fileBytes, 'ImageClassifier');
    Object.defineProperty(this, '_head', { value: true });
    /** @readonly the head's outputs */ this.numLabels = this._info.numLabels;
    /** @readonly id2label in id order (LABEL_i where config.json names none, as transformers) */
    this.labels = Object.freeze(labelsOf(ctx.hfConfig, this.numLabels));
    /** @readonly config.json's problem_type, or null */
    this.problemType = typeof ctx.hfConfig?.problem_type === 'string' ? ctx.hfConfig.problem_type : null;
  }

  /**
   * Labels and scores per image, best first, as transformers' pipeline('image-classification'):
   *
   *   const [[best]] = await clf.classify('cat.jpg');            // { label: 'tabby cat', score: 0.91 }
   *
   * topK (default 5, as the pipeline; null: every label), functionToApply ('softmax', 'sigmoid', 'none'; default:
   * sigmoid for one label or problem_type multi_label_classification, softmax otherwise), batchSize (8).
   * @returns {Promise<{ label: string, score: number }[][]>}
   */
  async classify(images, options) {
    const o = checkOptions(options, ['topK', 'functionToApply', 'batchSize', 'onProgress'], 'classify');
    const C = this.numLabels;
    const topK = o.topK === null ? C : o.topK === undefined ? 5 : checkInteger(o.topK, 'topK', { min: 1, max: MAX_BATCH });
    const multi = C === 1 || this.problemType === 'multi_label_classification';
    const fn = o.functionToApply === undefined ? (multi ? 'sigmoid' : 'softmax') : oneOf(o.functionToApply, FUNCTIONS, 'functionToApply');
    const data = await this._batches(images, o, (out) => out.logits.data);
    return rankedLabels(data, this.labels, fn, topK);
  }

  /** The head's logits of images: { data, shape: [n, numLabels] }. */
  async logits(images, options) {
    const o = checkOptions(options, ['batchSize', 'onProgress'], 'logits');
    const data = await this._batches(images, o, (out) => out.logits.data);
    return { data, shape: [data.length / this.numLabels, this.numLabels] };
  }
}
