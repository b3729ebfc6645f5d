// 'attnwasm/tokenizer': Hugging Face tokenizer.json in pure JS (no wasm) — byte-level BPE (GPT-2,
// Llama 3, SmolLM, Qwen2), SentencePiece-style BPE (Llama 2, Mistral, Gemma, Phi-3), WordPiece (BERT,
// MiniLM, bge, e5, gte) and Unigram (XLM-R, multilingual-e5): text → ids as Hugging Face's Rust
// `tokenizers` gives them, ids → text, a streaming decoder, padded batches. SentencePiece model files
// (SentencePieceProcessor) and a folder's slow tokenizer files (tokenizerFromFolder: Marian, T5,
// M2M100, NLLB, XLM-R, BERT, RoBERTa) give the ids of sentencepiece and transformers' Python classes.
// The package entry only: the code is in bindings/tokenizer/ (one concept per file; docs/tokenizer.md).
export { Tokenizer } from './tokenizer/tokenizer.js';
export { SentencePieceProcessor } from './tokenizer/sentencepiece.js';
export { tokenizerFromFolder } from './tokenizer/folder.js';
