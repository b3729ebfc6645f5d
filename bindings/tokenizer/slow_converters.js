// Twins of transformers' slow → fast converters (convert_slow_tokenizer.py, v4.40.2) for
// RobertaTokenizer and XLMRobertaTokenizer: the tokenizer.json of the fast tokenizer transformers
// builds from the slow files (what RobertaTokenizerFast / XLMRobertaTokenizerFast run when a folder
// has no tokenizer.json), loaded as a Tokenizer once per slow tokenizer. The slow classes use it for
// encode's returnOffsets only, after checking that its ids are theirs (slow_tokenizer.js _offsets).
// BertConverter's twin is in slow_bert.js (bertJson); all three share convertedOnce and addedTokensJson.
import { Tokenizer } from './tokenizer.js';

const converted = new WeakMap(); // slow tokenizer → its converted Tokenizer, or null where the file does not load

/**
 * The converted Tokenizer of `slow`, made once by `build` (slow → tokenizer.json object, or null where
 * there is no conversion); null where the file would not load (the Rust library would refuse it too).
 * @returns {Tokenizer | null} shared by every call for this tokenizer (immutable)
 */
export function convertedOnce(slow, build) {
  if (!converted.has(slow)) {
    const json = build(slow);
    let tok = null;
    if (json) {
      try {
        tok = Tokenizer.fromJSON(json);
      } catch {
        tok = null;
      }
    }
    converted.set(slow, tok);
  }
  return converted.get(slow);
}

/**
 * The added tokens PreTrainedTokenizerFast.__init__ gives the converted tokenizer: the slow one's, by
 * id, with their flags; special where the token is or its content is one of the special tokens (those
 * go through add_special_tokens).
 */
export function addedTokensJson(slow) {
  const specials = new Set(slow.allSpecialTokens());
  return [...slow._addedDecoder].sort((a, b) => a[0] - b[0]).map(([id, t]) => ({
    id, content: t.content, single_word: !!t.single_word, lstrip: !!t.lstrip, rstrip: !!t.rstrip, normalized: !!t.normalized,
    special: !!t.special || specials.has(t.content),
  }));
}

/**
 * RobertaConverter, then RobertaTokenizerFast.__init__: byte-level BPE with the slow vocabulary and
 * merges (no unknown token, empty prefix and suffix), a ByteLevel pre-tokenizer with the slow
 * tokenizer's add_prefix_space, the ByteLevel decoder, and RobertaProcessing (cls, sep) with
 * add_prefix_space and trim_offsets (tokenizer_config.json's, default true: RobertaTokenizerFast's
 * init argument, which the slow class ignores).
 * @param {import('./slow_roberta.js').RobertaTokenizer} tok
 */
export function robertaJson(tok) {
  const cls = tok.specialToken('cls_token');
  const sep = tok.specialToken('sep_token');
  return {
    version: '1.0',
    added_tokens: addedTokensJson(tok),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: tok.addPrefixSpace, trim_offsets: true, use_regex: true },
    post_processor: { type: 'RobertaProcessing', sep: [sep, tok.convertTokenToId(sep)], cls: [cls, tok.convertTokenToId(cls)], trim_offsets: tok.trimOffsets, add_prefix_space: tok.addPrefixSpace },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false,
      vocab: Object.fromEntries(tok.encoder), merges: [...tok.ranks.keys()].map((m) => m.split(' ')) },
  };
}

/** Bytes as base64 (btoa, in Node and browsers), in chunks: a charsmap is some 200 KB. */
function base64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/**
 * XLMRobertaConverter (an SpmConverter): fairseq's vocabulary (<s> <pad> </s> <unk>, the model's
 * pieces after its first three with their scores, <mask>) as a Unigram model with unk_id 3; the normalizer
 * Precompiled (the model's charsmap, when it has one), Strip right, runs of two or more spaces → '▁';
 * Metaspace '▁' with prepend_scheme 'always' as pre-tokenizer and decoder (the class has no
 * add_prefix_space or legacy); <s> $A </s> and <s> $A </s> </s> $B </s>. Byte fallback is not
 * carried (the converter warns and drops it). null for a BPE model: the converter's BPE (merges
 * guessed from the vocabulary by SentencePieceExtractor) gave the slow ids on only 26 of the 137
 * golden texts, too few to test it by, so it is not built.
 * @param {import('./slow_fairseq.js').XLMRobertaTokenizer} tok
 */
export function xlmRobertaJson(tok) {
  const m = tok.sp._model;
  if (m.modelType !== 'UNIGRAM') return null;
  const vocab = [['<s>', 0], ['<pad>', 0], ['</s>', 0], ['<unk>', 0]];
  for (let i = 3; i < m.pieces.length; i++) vocab.push([m.pieces[i], m.scores[i]]);
  vocab.push(['<mask>', 0]);
  const charsmap = m.normalizer.precompiled_charsmap;
  const metaspace = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
  const special = (t) => ({ id: t, ids: [tok.convertTokenToId(t)], tokens: [t] });
  const item = (t) => (t[0] === '$' ? { Sequence: { id: t[1], type_id: 0 } } : { SpecialToken: { id: t, type_id: 0 } });
  return {
    version: '1.0',
    added_tokens: addedTokensJson(tok),
    normalizer: { type: 'Sequence', normalizers: [
      ...(charsmap.length ? [{ type: 'Precompiled', precompiled_charsmap: base64(charsmap) }] : []),
      { type: 'Strip', strip_left: false, strip_right: true },
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: '\u2581' },
    ] },
    pre_tokenizer: metaspace,
    post_processor: { type: 'TemplateProcessing', single: ['<s>', '$A', '</s>'].map(item), pair: ['<s>', '$A', '</s>', '</s>', '$B', '</s>'].map(item),
      special_tokens: { '<s>': special('<s>'), '</s>': special('</s>') } },
    decoder: metaspace,
    model: { type: 'Unigram', unk_id: 3, vocab, byte_fallback: false },
  };
}
