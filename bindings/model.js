// The base of every loaded model's face (CausalLM, Embedder, Translator, Classifier, and the families to come):
// what every one shares — it takes the loader's handle, reads the resolved config the handle reports (its
// family's kind first: models/families.h FamilyInfoJson, the one source of the model's numbers), and keeps the
// sizes a user reads (the bytes read, the bytes kept by type). A face adds its family's own fields and methods;
// which face a handle gets is families.js's registry's decision, made once.
import { NativeObject } from './native_object.js';
import * as boundary from './boundary.js';

export class Model extends NativeObject {
  /**
   * Internal: made by loadModel (models.js) from a handle of the native loader.
   * @param {import('./runtime.js').AttnWasm} rt @param {object} handle owned from now on
   * @param {string} className the face's name in messages ('CausalLM') @param {number} fileBytes bytes read
   */
  constructor(rt, handle, className, fileBytes) {
    super(rt);
    this._adopt(handle, className);
    const info = boundary.params.info(handle);
    Object.defineProperty(this, '_info', { value: info });
    /** @readonly bytes read from the files */
    this.fileBytes = fileBytes;
    /** @readonly bytes the weights take in memory (as stored, or in the dtype asked for) */
    this.weightBytes = info.weightBytes;
    /** @readonly the same by type: { bf16: …, f32: … } */
    this.weightTypes = info.weightTypes;
  }
}
