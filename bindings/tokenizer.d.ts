// Type declarations of 'attnwasm/tokenizer' (bindings/tokenizer.js, code in bindings/tokenizer/): the
// tokenizer of a Hugging Face tokenizer.json — byte-level BPE, SentencePiece-style BPE, WordPiece,
// Unigram. The instance type's common part lives in index.d.ts beside the rest of the API (CausalLM
// holds one); the class and the batch types exist only in this entry.
import type { Tokenizer as TokenizerInstance } from './index.js';

export type { TokenizerEncodeOptions, TokenizerDecodeOptions, StreamDecoder, ChatMessage, ChatContentPart, ChatTemplateSources, ApplyChatTemplateOptions } from './index.js';

/** tokenizer.json or tokenizer_config.json: the parsed object, its text or its bytes. */
export type JsonInput = string | object | Uint8Array | ArrayBuffer;

/** encodeInputs options (encodeBatch takes these and `padding`). */
export interface TokenizerInputsOptions {
  /** Add the post-processor's special tokens ([CLS] … [SEP], <s>). Default true. */
  addSpecialTokens?: boolean;
  /**
   * Length in tokens, special tokens included, that truncation cuts to (the text is cut from the
   * right, the special tokens kept). Default: tokenizer_config.json's model_max_length, else none.
   */
  maxLength?: number;
  /** Cut to maxLength. Default true (nothing is cut without a maxLength). */
  truncation?: boolean;
}

/** encodeBatch options. */
export interface TokenizerBatchOptions extends TokenizerInputsOptions {
  /**
   * 'longest' (default): pad every row on the right to the longest; 'max_length': to maxLength;
   * false: no padding (the texts must then have one length). Padding uses tokenizer.json's padding
   * (pad_id, pad_type_id, pad_to_multiple_of) or tokenizer_config.json's pad_token; without either,
   * a batch that needs padding throws AttnWasmError ERR_UNSUPPORTED.
   */
  padding?: 'longest' | 'max_length' | false;
}

/** One text as a model takes it (Int32Arrays owned by the caller, all of one length). */
export interface EncodedInputs {
  inputIds: Int32Array;
  /** All 1 (one text is never padded). */
  attentionMask: Int32Array;
  /** The post-processor's type ids (BERT: 0; a template's type_id per part). */
  tokenTypeIds: Int32Array;
}

/** A padded batch: (n, T) row-major arrays owned by the caller. */
export interface EncodedBatch {
  /** (n, T): ids, each row right-padded with the pad id. */
  inputIds: Int32Array;
  /** (n, T): 1 for a token, 0 for padding. */
  attentionMask: Int32Array;
  /** (n, T): type ids, the padding's pad_type_id. */
  tokenTypeIds: Int32Array;
  /** [n, T]. */
  shape: [number, number];
  /** (n,): each row's length before padding. */
  lengths: Int32Array;
}

/** A Hugging Face tokenizer (index.d.ts Tokenizer) with model inputs and batches. */
export interface Tokenizer extends TokenizerInstance {
  /** tokenizer_config.json as given to fromJSON (deeply frozen), or null. */
  readonly config: Readonly<Record<string, unknown>> | null;
  /** One text → { inputIds, attentionMask, tokenTypeIds }, truncated like encodeBatch, never padded. */
  encodeInputs(text: string, options?: TokenizerInputsOptions): EncodedInputs;
  /** Texts → one right-padded batch with Hugging Face's truncation (special tokens kept). */
  encodeBatch(texts: string[], options?: TokenizerBatchOptions): EncodedBatch;
}

export declare class Tokenizer {
  private constructor();
  /**
   * Reads a Hugging Face tokenizer.json (its text, bytes or parsed object): byte-level BPE (GPT-2,
   * Llama 3, SmolLM, Qwen2), SentencePiece-style BPE (Llama 2, Mistral, Gemma, Phi-3), WordPiece
   * (BERT) or Unigram (XLM-R). `tokenizerConfig` (tokenizer_config.json) sets Llama's and Gemma's
   * BOS/EOS template, the default maxLength and the pad token, gives applyChatTemplate its chat
   * template and special tokens, and is kept as `config`. Another kind
   * throws AttnWasmError ERR_UNSUPPORTED naming the field, the supported values and the file's; a
   * malformed file ERR_INVALID_ARGUMENT.
   */
  static fromJSON(json: JsonInput, tokenizerConfig?: JsonInput): Tokenizer;
}
