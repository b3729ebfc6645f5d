// Type declarations of 'attnwasm/tokenizer' (bindings/tokenizer.js, code in bindings/tokenizer/): the
// tokenizer of a Hugging Face tokenizer.json — byte-level BPE, SentencePiece-style BPE, WordPiece,
// Unigram —, SentencePiece model files (SentencePieceProcessor) and a folder's slow tokenizer
// (tokenizerFromFolder). The instance type's common part lives in index.d.ts beside the rest of the API
// (CausalLM holds one); the classes and the batch types exist only in this entry.
import type { Tokenizer as TokenizerInstance, TokenizerEncodeOptions, TokenizerDecodeOptions, StreamDecoder, TokenOffsets } from './index.js';

export type { TokenizerEncodeOptions, TokenOffsets, TokenizerDecodeOptions, StreamDecoder, ChatMessage, ChatContentPart, ChatTemplateSources, ApplyChatTemplateOptions } from './index.js';

/** tokenizer.json or tokenizer_config.json: the parsed object, its text or its bytes. */
export type JsonInput = string | object | Uint8Array | ArrayBuffer;

/** encodeInputs options (encodeBatch takes these and `padding`). */
export interface TokenizerInputsOptions {
  /** Add the post-processor's special tokens ([CLS] … [SEP], <s>). Default true. */
  addSpecialTokens?: boolean;
  /**
   * Length in tokens, special tokens included, that truncation cuts to (texts are cut from the
   * right, the special tokens kept). Default: tokenizer_config.json's model_max_length, else none.
   */
  maxLength?: number;
  /**
   * Cut to maxLength. true (default) is 'longest_first'; false cuts nothing. One text is cut from
   * the right whatever the strategy; a pair as Hugging Face cuts it: 'longest_first' from the
   * longer text (both halved when both must go), 'only_first' / 'only_second' from that text
   * alone — a RangeError naming maxLength and the texts' lengths when that text cannot lose enough.
   */
  truncation?: TruncationStrategy;
}

/** The `truncation` option (transformers' truncation argument). */
export type TruncationStrategy = boolean | 'longest_first' | 'only_first' | 'only_second';

/** encodeInputs options: the second text of a pair, and those encodeBatch shares. */
export interface TokenizerPairOptions extends TokenizerInputsOptions {
  /**
   * The second text (a cross-encoder's document): the post-processor's pair template around both
   * ([CLS] A [SEP] B [SEP] with B [SEP] type 1; <s> A </s></s> B </s>). Undefined or null: one text.
   * A tokenizer without a pair template throws AttnWasmError ERR_UNSUPPORTED naming it.
   */
  pair?: string | null;
}

/** An encodeBatch item: a text, or a [text, pair] array of two strings. */
export type TokenizerBatchItem = string | [string, string];

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
  /** One text or a pair (`pair`) → { inputIds, attentionMask, tokenTypeIds }, truncated like encodeBatch, never padded. */
  encodeInputs(text: string, options?: TokenizerPairOptions): EncodedInputs;
  /** Texts and [text, pair] arrays → one right-padded batch with Hugging Face's truncation (special tokens kept). */
  encodeBatch(texts: TokenizerBatchItem[], options?: TokenizerBatchOptions): EncodedBatch;
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

/** SentencePieceProcessor#encode's result (new arrays owned by the caller). */
export interface SentencePieceEncoding {
  pieces: string[];
  ids: number[];
}

/**
 * A SentencePiece model file (ModelProto: source.spm, target.spm, spiece.model,
 * sentencepiece.bpe.model) in pure JS, giving the ids and text of the sentencepiece library: its
 * normalizer (the precompiled charsmap's longest rule, whitespace rules, '▁'), its unigram or BPE
 * model, unknown runs fused (or byte_fallback's <0xNN> pieces), its decoder. Immutable, no native memory.
 */
export declare class SentencePieceProcessor {
  private constructor();
  /**
   * Reads a model file. A file sentencepiece would refuse (truncated or not a protobuf, no pieces, no
   * unknown piece, a piece given twice, byte pieces missing with byte_fallback, a broken charsmap, a
   * failing self-test) throws AttnWasmError ERR_INVALID_ARGUMENT, a WORD or CHAR model
   * ERR_UNSUPPORTED; both name `file` and the field.
   */
  static fromBytes(bytes: Uint8Array | ArrayBuffer, file?: string): SentencePieceProcessor;
  /** The file name given to fromBytes (messages name it). */
  readonly file: string;
  /** 'UNIGRAM' or 'BPE'. */
  readonly modelType: 'UNIGRAM' | 'BPE';
  /** Number of pieces (ids 0 … size − 1). */
  readonly size: number;
  readonly unkId: number;
  /** The trainer's bos / eos / pad ids where they are control pieces, else -1 (sentencepiece's bos_id() …). */
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;
  /** The same model with normalizer_spec fields changed (a new processor). */
  withNormalizer(changes: { add_dummy_prefix?: boolean; remove_extra_whitespaces?: boolean; escape_whitespaces?: boolean }): SentencePieceProcessor;
  /** Text → pieces and ids, as encode(text, out_type=str) and encode(text). */
  encode(text: string): SentencePieceEncoding;
  encodeIds(text: string): number[];
  encodePieces(text: string): string[];
  /** The normalized text (with '▁' for spaces). */
  normalize(text: string): string;
  /** Ids → text, as decode(ids); an id outside the model throws RangeError. */
  decodeIds(ids: ArrayLike<number>): string;
  /** Pieces → text, as decode_pieces(pieces). */
  decodePieces(pieces: string[]): string;
  /** The id of a piece (the unknown id for anything else). */
  pieceToId(piece: string): number;
  idToPiece(id: number): string;
  scoreOf(id: number): number;
  isUnknown(id: number): boolean;
  isControl(id: number): boolean;
  isByte(id: number): boolean;
}

/** The options of a slow tokenizer's encode / encodeInputs / encodeBatch beyond a Tokenizer's. */
export interface SlowTokenizerModeOptions {
  /**
   * Encode a target text (transformers' text_target): Marian's target.spm (and target_vocab.json),
   * M2M100's and NLLB's target language tokens. Marian, M2M100, NLLB only.
   */
  target?: boolean;
  /** M2M100 / NLLB: the source language ('en', 'eng_Latn'); default tokenizer_config.json's src_lang. Unknown codes: ERR_INVALID_ARGUMENT. */
  srcLang?: string;
  /**
   * M2M100 / NLLB: the target language of a target text (default tgt_lang). Marian (multilingual
   * models): the >>xx<< token written before the text. Unknown codes: ERR_INVALID_ARGUMENT.
   */
  tgtLang?: string;
}

/**
 * A slow tokenizer read from a folder's own files (tokenizerFromFolder): transformers v4.40's
 * MarianTokenizer, T5Tokenizer, M2M100Tokenizer, NllbTokenizer, MBartTokenizer, MBart50Tokenizer, XLMRobertaTokenizer, BertTokenizer,
 * RobertaTokenizer, CLIPTokenizer (as it runs without ftfy) or SiglipTokenizer, giving the Python
 * class's ids and text. Immutable, no native memory.
 */
export interface SlowTokenizer {
  /** The Python class it is: 'MarianTokenizer', 'T5Tokenizer', … (MT5Tokenizer → T5Tokenizer, DistilBertTokenizer → BertTokenizer). */
  readonly tokenizerClass: 'MarianTokenizer' | 'T5Tokenizer' | 'M2M100Tokenizer' | 'NllbTokenizer' | 'MBartTokenizer' | 'MBart50Tokenizer' | 'XLMRobertaTokenizer' | 'BertTokenizer' | 'RobertaTokenizer'
    | 'CLIPTokenizer' | 'SiglipTokenizer';
  /** tokenizer_config.json as read (frozen), or null. */
  readonly config: Readonly<Record<string, unknown>> | null;
  /** len(tokenizer): the vocabulary and the added tokens. */
  readonly vocabSize: number;
  /** Marian: the >>xx<< tokens; M2M100 / NLLB / mBART: the language codes srcLang / tgtLang take. */
  readonly languageCodes?: string[];
  /** M2M100 / NLLB / mBART: a language code's token id (generation's forced_bos_token_id). */
  languageId?(code: string): number;
  /**
   * With returnOffsets: the ids and the offsets of the fast tokenizer transformers converts this class to
   * (BertTokenizer, RobertaTokenizer, XLMRobertaTokenizer with a Unigram model; other classes, and a text
   * whose converted ids differ from the slow ones, throw ERR_UNSUPPORTED).
   */
  encode(text: string, options: TokenizerEncodeOptions & SlowTokenizerModeOptions & { returnOffsets: true }): TokenOffsets;
  /** Text → ids as the Python class's encode(text) (with its special tokens unless addSpecialTokens is false). */
  encode(text: string, options?: TokenizerEncodeOptions & SlowTokenizerModeOptions & { returnOffsets?: false }): Int32Array;
  encodeInputs(text: string, options?: TokenizerPairOptions & SlowTokenizerModeOptions): EncodedInputs;
  encodeBatch(texts: TokenizerBatchItem[], options?: TokenizerBatchOptions & SlowTokenizerModeOptions): EncodedBatch;
  /** The Python class's tokenize(text): token strings, no special tokens added. */
  tokenize(text: string): string[];
  /** Ids → text as the Python class's decode(ids, skip_special_tokens) (Marian: the target pieces). */
  decode(ids: ArrayLike<number>, options?: TokenizerDecodeOptions): string;
  streamDecoder(options?: TokenizerDecodeOptions): StreamDecoder;
  tokenToId(token: string): number | undefined;
  idToToken(id: number): string | undefined;
  /** Whether an id is one of the special tokens (skipSpecialTokens leaves them out). */
  isSpecial(id: number): boolean;
  /** A special token ('eos_token', 'pad_token', 'bos_token', 'unk_token', 'sep_token', 'cls_token', 'mask_token') or null. */
  specialToken(key: string): string | null;
  /** Its id, or null where the tokenizer has no such token. */
  specialTokenId(key: string): number | null;
}

/**
 * A checkpoint folder's tokenizer, as transformers' AutoTokenizer picks it: tokenizer.json (with
 * tokenizer_config.json) when the folder has one, else the slow tokenizer its files name
 * (tokenizer_config.json's tokenizer_class, config.json's tokenizer_class or model_type, or the files:
 * source.spm, spiece.model, sentencepiece.bpe.model (+ vocab.json), vocab.txt, vocab.json + merges.txt;
 * CLIPTokenizer and SiglipTokenizer only by tokenizer_class or model_type).
 * A folder without either throws AttnWasmError ERR_INVALID_ARGUMENT; another class ERR_UNSUPPORTED;
 * a missing or corrupt file ERR_INVALID_ARGUMENT naming it.
 * @param readFile a file of the folder by name: its text or bytes, undefined where the folder has none
 * @param options slow: read the slow tokenizer's files even where tokenizer.json is there
 */
export declare function tokenizerFromFolder(
  readFile: (name: string) => string | Uint8Array | ArrayBuffer | undefined | Promise<string | Uint8Array | ArrayBuffer | undefined>,
  options?: { slow?: boolean },
): Promise<Tokenizer | SlowTokenizer>;
