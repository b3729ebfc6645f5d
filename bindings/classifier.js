// Classifier: the ViT-style image classifier family
// (src/models/vit_classifier.h). JS turns the caller's image into the
// model's C·H·W values (an ImageData becomes ink or RGB in [0, 1]); one
// native call normalises it, runs patch embedding → encoder → head and
// returns probabilities, the class token's attention maps and the rollout.
import { AttnWasmError, typeError, describe } from './errors.js';
import { Model } from './model.js';
import * as boundary from './boundary.js';

/**
 * A ViT-style image classifier: the digit demo model, or any classifier
 * exported with tools/export_safetensors.py export_vit. Owns native memory: call dispose().
 */
export class Classifier extends Model {
  /** Internal: built by loadModel / loadClassifier from a handle of the native loader (model_loading.js). */
  constructor(rt, handle, config, fileBytes) {
    super(rt, handle, 'Classifier', fileBytes);
    /** @readonly */ this.config = config;
    /** @readonly */ this.grid = Math.floor(config.imageSize / config.patchSize);
    /** @readonly */ this.labels = config.labels ?? Array.from({ length: config.numClasses }, (_, i) => String(i));
  }

  /**
   * An ImageData (RGBA) or a Float32Array → the model's C·H·W input values.
   * One channel: ImageData becomes ink (dark on light = 1); three: RGB / 255.
   */
  _input(image) {
    const n = this.config.imageSize, C = this.config.inChannels;
    if (image instanceof Float32Array) return image;  // its length is checked natively
    if (image && typeof image === 'object' && image.data && typeof image.width === 'number') {
      if (image.width !== n || image.height !== n) {
        throw new AttnWasmError('ERR_SHAPE', `image: expected a ${n}×${n} ImageData, got ${image.width}×${image.height}`);
      }
      if (!(image.data instanceof Uint8ClampedArray || image.data instanceof Uint8Array)) {
        throw typeError(`image.data: expected a Uint8ClampedArray of RGBA bytes, got ${describe(image.data)}`);
      }
      if (image.data.length !== 4 * n * n) {
        throw new AttnWasmError('ERR_SHAPE', `image.data: expected ${4 * n * n} RGBA bytes (${n}×${n}×4), got ${image.data.length}`);
      }
      if (C !== 1 && C !== 3) {
        throw typeError(`image: an ImageData gives 1 or 3 channels; this model takes ${C}: pass a Float32Array of ${C}×${n}×${n} values`);
      }
      const d = image.data, x = new Float32Array(C * n * n);
      for (let i = 0; i < n * n; i++) {
        if (C === 3) {
          for (let c = 0; c < 3; c++) x[c * n * n + i] = d[4 * i + c] / 255;
        } else {
          const lum = (0.299 * d[4 * i] + 0.587 * d[4 * i + 1] + 0.114 * d[4 * i + 2]) / 255;
          x[i] = (d[4 * i + 3] / 255) * (1 - lum);  // dark ink on a light or transparent background
        }
      }
      return x;
    }
    throw typeError(`image: expected a Float32Array of ${C * n * n} values in [0, 1] (${C}×${n}×${n}) or an ImageData, got ${describe(image)}`);
  }

  /**
   * @param {Float32Array|ImageData} image inChannels×imageSize×imageSize values in [0, 1]
   *   (the digit model: 28×28 ink, 1 = ink), or an ImageData (one channel: dark ink on light)
   * @returns {{label: string, index: number, probabilities: Float32Array, logits: Float32Array,
   *   attention: {layers: number, heads: number, grid: number, data: Float32Array}, rollout: Float32Array, totalMs: number}}
   *   attention.data (layers, heads, grid·grid): the class token's attention to each patch; rollout (grid·grid).
   */
  classify(image) {
    const t0 = performance.now();
    const h = this._handle();
    const x = this._input(image);
    const [logits, probabilities, index, attention, rollout] = boundary.models.classifierClassify(this._rt, h, { image: { data: x, shape: [x.length] } });
    const i = index.data[0];
    const [layers, heads] = attention.shape;
    return {
      label: this.labels[i], index: i, probabilities: probabilities.data, logits: logits.data,
      attention: { layers, heads, grid: this.grid, data: attention.data }, rollout: rollout.data,
      totalMs: performance.now() - t0,
    };
  }
}
