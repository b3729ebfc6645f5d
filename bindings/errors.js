// The errors of the package (argument checks: checks.js). Every error thrown
// by attnwasm is an Error subclass with a stable `code`:
//   TypeError  ERR_INVALID_TYPE   an argument of the wrong JS type
//   RangeError ERR_OUT_OF_RANGE   a number outside its allowed range
//   AttnWasmError (any other code, see index.d.ts ErrorCode)

/**
 * Error thrown for anything the runtime rejects. `code` is stable across
 * versions: ERR_INVALID_ARGUMENT, ERR_SHAPE, ERR_DTYPE, ERR_STATE_DICT,
 * ERR_OUT_OF_MEMORY, ERR_DISPOSED, ERR_CLOSED, ERR_WASM_LOAD, ERR_NOT_A_NUMBER, ERR_UNSUPPORTED (a
 * valid input of a kind not supported: a tokenizer.json of a kind not read), ERR_UNSAFE_PATH (a file named
 * outside its checkpoint's folder), ERR_TIMEOUT (a read that stalled), ERR_TEMPLATE_LIMIT (a chat template
 * past its budget), ERR_AUDIO_DECODE (an audio file that is corrupt, truncated or unknown), ERR_AUDIO_TOO_LONG
 * (audio over a size limit, the sizes named). A load error
 * (ERR_WASM_LOAD) also has `url` (the .wasm tried first, absent for bytes),
 * `status` (its HTTP status, if any) and `cause`. ERR_NOT_A_NUMBER (the
 * translator's input is not one English number in 0 … 999 999) has `input`
 * (the text) and `suggestion`, when set, a corrected input.
 */
export class AttnWasmError extends Error {
  /**
   * @param {string} code @param {string} message
   * @param {{url?: string, status?: number, cause?: unknown}} [details]
   */
  constructor(code, message, details = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'AttnWasmError';
    this.code = code;
    if (details.url !== undefined) this.url = details.url;
    if (details.status !== undefined) this.status = details.status;
  }
}

export function typeError(message) {
  const e = new TypeError(message);
  e.code = 'ERR_INVALID_TYPE';
  return e;
}

export function rangeError(message) {
  const e = new RangeError(message);
  e.code = 'ERR_OUT_OF_RANGE';
  return e;
}

/** A short name of a value's type for messages: 'null', 'Array', 'Float64Array', 'string', … */
export function describe(x) {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'Array';
  if (ArrayBuffer.isView(x)) return x.constructor.name;
  if (typeof x === 'object') return x.constructor ? x.constructor.name : 'object';
  return typeof x;
}
