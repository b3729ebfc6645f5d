// Type declarations of 'attnwasm/tokenizer' (bindings/tokenizer.js): the byte-level BPE tokenizer of a
// Hugging Face tokenizer.json. The instance type lives in index.d.ts beside the rest of the API; the
// class exists only in this entry (the main entry does not load the tokenizer or its dependency).
import type { Tokenizer as TokenizerInstance } from './index.js';

export type { TokenizerEncodeOptions, TokenizerDecodeOptions, StreamDecoder } from './index.js';

/** A byte-level BPE tokenizer (index.d.ts Tokenizer). */
export interface Tokenizer extends TokenizerInstance {}

export declare class Tokenizer {
  private constructor();
  /**
   * Reads a Hugging Face tokenizer.json (its text, bytes or parsed object) of the byte-level BPE kind
   * (GPT-2, Llama 3, SmolLM, Qwen2). Another kind throws AttnWasmError ERR_UNSUPPORTED naming the
   * field, the supported types and the file's; a malformed file ERR_INVALID_ARGUMENT.
   */
  static fromJSON(json: string | object | Uint8Array | ArrayBuffer): Tokenizer;
}
