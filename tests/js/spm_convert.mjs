// tokenizer.json files laid out as transformers v4.40's convert_slow_tokenizer.py lays them out for a
// slow tokenizer (XLMRobertaConverter, T5Converter, NllbConverter, BertConverter, RobertaConverter),
// written here because the converters need the Rust `tokenizers` Python package, which Debian lacks.
// The layouts follow the converters field by field (read, not copied): SpmConverter's normalizer
// (Precompiled, Strip right, Replace ' {2,}' → '▁'), Metaspace with prepend_scheme 'always' ('first'
// for T5's legacy=false), SentencePieceExtractor's merges for BPE models, the slow tokenizer's
// added tokens with their ids and flags.
import { readSpmModel } from '../../bindings/tokenizer/spm_model.js';

const b64 = (bytes) => Buffer.from(bytes).toString('base64');
const metaspace = (scheme) => ({ type: 'Metaspace', replacement: '\u2581', prepend_scheme: scheme, split: true });

function spmNormalizer(proto) {
  const rest = [{ type: 'Strip', strip_left: false, strip_right: true }, { type: 'Replace', pattern: { Regex: ' {2,}' }, content: '\u2581' }];
  const cm = proto.normalizer.precompiled_charsmap;
  return { type: 'Sequence', normalizers: cm.length ? [{ type: 'Precompiled', precompiled_charsmap: b64(cm) }, ...rest] : rest };
}

/** TemplateProcessing for one text: tokens before $A, tokens after (type 0). */
function template(before, after, idOf) {
  const special = (t) => ({ SpecialToken: { id: t, type_id: 0 } });
  const single = [...before.map(special), { Sequence: { id: 'A', type_id: 0 } }, ...after.map(special)];
  const pair = [...single, { Sequence: { id: 'B', type_id: 1 } }];
  const tokens = {};
  for (const t of [...before, ...after]) tokens[t] = { id: t, ids: [idOf(t)], tokens: [t] };
  return { type: 'TemplateProcessing', single, pair, special_tokens: tokens };
}

/** SentencePieceExtractor.extract(): every split of a piece into two pieces, ordered by the merged piece's id. */
function extractMerges(proto) {
  const vocab = new Map(proto.pieces.map((p, i) => [p, i]));
  const merges = [];
  proto.pieces.forEach((piece, id) => {
    const chars = [...piece];
    const local = [];
    for (let k = 1; k < chars.length; k++) {
      const l = chars.slice(0, k).join('');
      const r = chars.slice(k).join('');
      if (vocab.has(l) && vocab.has(r)) local.push([l, r]);
    }
    local.sort((a, b) => vocab.get(a[0]) - vocab.get(b[0]) || vocab.get(a[1]) - vocab.get(b[1]));
    for (const m of local) merges.push({ m, id });
  });
  return merges.sort((a, b) => a.id - b.id).map(({ m }) => m); // a stable sort, as Python's sorted
}

/** The fast tokenizer's added_tokens: the slow tokenizer's added tokens, by id. */
function addedTokens(slow) {
  return [...slow._addedDecoder].sort((a, b) => a[0] - b[0]).map(([id, t]) => ({
    id, content: t.content, single_word: t.single_word, lstrip: t.lstrip, rstrip: t.rstrip, normalized: t.normalized, special: t.special,
  }));
}

/**
 * The tokenizer.json a converter writes for a slow tokenizer of ours (made by tokenizerFromFolder).
 * @param {object} slow @param {(name: string) => Uint8Array | undefined} readFile the folder's files
 */
export function convertSlow(slow, readFile) {
  const idOf = (t) => slow.convertTokenToId(t);
  const base = { version: '1.0', truncation: null, padding: null, added_tokens: addedTokens(slow) };
  switch (slow.tokenizerClass) {
    case 'XLMRobertaTokenizer': case 'NllbTokenizer': {
      const proto = readSpmModel(readFile('sentencepiece.bpe.model'), 'sentencepiece.bpe.model');
      const head = [['<s>', 0], ['<pad>', 0], ['</s>', 0], ['<unk>', 0]];
      const vocab = [...head, ...proto.pieces.slice(3).map((p, i) => [p, proto.scores[i + 3]])];
      const xlmr = slow.tokenizerClass === 'XLMRobertaTokenizer';
      if (xlmr) vocab.push(['<mask>', 0]);
      const model = proto.modelType === 'UNIGRAM' ? { type: 'Unigram', unk_id: 3, vocab, byte_fallback: false }
        : { type: 'BPE', dropout: null, unk_token: proto.trainer.unk_piece, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true,
          byte_fallback: false, vocab: Object.fromEntries(vocab.map(([p], i) => [p, i])), merges: extractMerges(proto).map(([l, r]) => `${l} ${r}`) };
      return { ...base, normalizer: spmNormalizer(proto), pre_tokenizer: metaspace('always'), decoder: metaspace('always'), model,
        post_processor: xlmr ? template(['<s>'], ['</s>'], idOf) : template(['eng_Latn'], ['</s>'], idOf) };
    }
    case 'T5Tokenizer': {
      const proto = readSpmModel(readFile('spiece.model'), 'spiece.model');
      const extra = slow._extraIds;
      const vocab = [...proto.pieces.map((p, i) => [p, proto.scores[i]]), ...Array.from({ length: extra }, (_, i) => [`<extra_id_${extra - 1 - i}>`, 0])];
      const scheme = slow.legacy ? 'always' : 'first';
      return { ...base, normalizer: spmNormalizer(proto), pre_tokenizer: metaspace(scheme), decoder: metaspace(scheme),
        model: { type: 'Unigram', unk_id: proto.trainer.unk_id, vocab, byte_fallback: false }, post_processor: template([], ['</s>'], idOf) };
    }
    case 'BertTokenizer':
      return { ...base, normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: slow.tokenizeChineseChars, strip_accents: slow.stripAccents, lowercase: slow.doLowerCase },
        pre_tokenizer: { type: 'BertPreTokenizer' }, decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
        model: { type: 'WordPiece', unk_token: slow.specialToken('unk_token'), continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: Object.fromEntries(slow.vocab) },
        post_processor: template([slow.specialToken('cls_token')], [slow.specialToken('sep_token')], idOf) };
    case 'RobertaTokenizer':
      return { ...base, normalizer: null, pre_tokenizer: { type: 'ByteLevel', add_prefix_space: slow.addPrefixSpace, trim_offsets: true, use_regex: true },
        decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
        model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false,
          vocab: Object.fromEntries(slow.encoder), merges: [...slow.ranks.keys()] },
        post_processor: { type: 'RobertaProcessing', sep: [slow.specialToken('sep_token'), slow.specialTokenId('sep_token')],
          cls: [slow.specialToken('cls_token'), slow.specialTokenId('cls_token')], trim_offsets: true, add_prefix_space: slow.addPrefixSpace } };
    default:
      throw new Error(`no fast tokenizer for ${slow.tokenizerClass}`);
  }
}
