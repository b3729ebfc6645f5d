// For make_offset_goldens.mjs: a transcript of the `tokenizers` calls transformers' converter makes
// (convert_slow_tokenizers.py records them: class, positional and keyword arguments, attributes set)
// → the tokenizer.json the Rust library would save for that Tokenizer. Each class's Python signature
// (tokenizers 0.19's, the version transformers 4.40.2 requires) names the positional arguments and
// gives the defaults; the golden script has the Rust library read the file back and checks that it
// saves the same JSON, so a field written here under a wrong name or shape fails there.

/** Python class → [parameter, default] in order, and the JSON of its arguments. */
const CLASSES = {
  'models.BPE': {
    params: [['vocab', {}], ['merges', []], ['cache_capacity', null], ['dropout', null], ['unk_token', null], ['continuing_subword_prefix', null],
      ['end_of_word_suffix', null], ['fuse_unk', false], ['byte_fallback', false], ['ignore_merges', false]],
    json: (a) => ({ type: 'BPE', dropout: a.dropout, unk_token: a.unk_token, continuing_subword_prefix: a.continuing_subword_prefix,
      end_of_word_suffix: a.end_of_word_suffix, fuse_unk: a.fuse_unk, byte_fallback: a.byte_fallback, ignore_merges: a.ignore_merges, vocab: a.vocab, merges: a.merges }),
  },
  'models.Unigram': {
    params: [['vocab', []], ['unk_id', null], ['byte_fallback', false]],
    json: (a) => ({ type: 'Unigram', unk_id: a.unk_id, vocab: a.vocab, byte_fallback: a.byte_fallback }),
  },
  Regex: { params: [['pattern', undefined]], json: (a) => ({ Regex: a.pattern }) },
  'normalizers.Sequence': { params: [['normalizers', []]], json: (a) => ({ type: 'Sequence', normalizers: a.normalizers }) },
  'normalizers.Strip': { params: [['left', true], ['right', true]], json: (a) => ({ type: 'Strip', strip_left: a.left, strip_right: a.right }) },
  'normalizers.Replace': {
    params: [['pattern', undefined], ['content', undefined]],
    json: (a) => ({ type: 'Replace', pattern: typeof a.pattern === 'string' ? { String: a.pattern } : a.pattern, content: a.content }),
  },
  'normalizers.Precompiled': { params: [['precompiled_charsmap', undefined]], json: (a) => ({ type: 'Precompiled', precompiled_charsmap: a.precompiled_charsmap.bytes }) },
  'pre_tokenizers.ByteLevel': {
    params: [['add_prefix_space', true], ['use_regex', true]],
    json: (a) => ({ type: 'ByteLevel', add_prefix_space: a.add_prefix_space, trim_offsets: true, use_regex: a.use_regex }),
  },
  'pre_tokenizers.Metaspace': {
    params: [['replacement', '▁'], ['prepend_scheme', 'always'], ['split', true]],
    json: (a) => ({ type: 'Metaspace', replacement: a.replacement, prepend_scheme: a.prepend_scheme, split: a.split }),
  },
  'decoders.ByteLevel': { params: [], json: () => ({ type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true }) },
  'decoders.Metaspace': {
    params: [['replacement', '▁'], ['prepend_scheme', 'always'], ['split', true]],
    json: (a) => ({ type: 'Metaspace', replacement: a.replacement, prepend_scheme: a.prepend_scheme, split: a.split }),
  },
  'processors.RobertaProcessing': {
    params: [['sep', undefined], ['cls', undefined], ['trim_offsets', true], ['add_prefix_space', true]],
    json: (a) => ({ type: 'RobertaProcessing', sep: a.sep, cls: a.cls, trim_offsets: a.trim_offsets, add_prefix_space: a.add_prefix_space }),
  },
  'processors.TemplateProcessing': {
    params: [['single', undefined], ['pair', undefined], ['special_tokens', []]],
    json: (a) => ({ type: 'TemplateProcessing', single: template(a.single), pair: template(a.pair),
      special_tokens: Object.fromEntries(a.special_tokens.map(([t, id]) => [t, { id: t, ids: [id], tokens: [t] }])) }),
  },
};

/** A template string as the Rust library parses it: '$A' / '$B' / '$A:1' the sequences, other pieces special tokens ('x:1' sets the type id). */
function template(s) {
  return s.split(' ').filter((p) => p !== '').map((p) => {
    const [name, type] = p.split(':');
    const typeId = type === undefined ? 0 : Number(type);
    if (name.startsWith('$')) return { Sequence: { id: name === '$' || name === '$A' ? 'A' : 'B', type_id: typeId } };
    return { SpecialToken: { id: name, type_id: typeId } };
  });
}

/** A recorded value (a call or plain data) as JSON. */
function value(v) {
  if (Array.isArray(v)) return v.map(value);
  if (v && typeof v === 'object' && 'call' in v) return call(v);
  return v;
}

function call(c) {
  const cls = CLASSES[c.call];
  if (!cls) throw new Error(`transcript: the converter called ${c.call}, which this file does not write (add it to CLASSES)`);
  const a = {};
  cls.params.forEach(([name, d], i) => {
    a[name] = i < c.args.length ? value(c.args[i]) : name in c.kwargs ? value(c.kwargs[name]) : d;
    if (a[name] === undefined) throw new Error(`transcript: ${c.call} without ${name}`);
  });
  for (const k of Object.keys(c.kwargs)) if (!cls.params.some(([n]) => n === k)) throw new Error(`transcript: ${c.call} got ${k}, not one of its parameters`);
  return cls.json(a);
}

/**
 * The tokenizer.json of a recorded Tokenizer(model) with its normalizer, pre_tokenizer, decoder and
 * post_processor attributes, and `added` ({ id, content, single_word, lstrip, rstrip, normalized,
 * special }) as its added tokens.
 */
export function tokenizerJson(transcript, added) {
  if (transcript.call !== 'Tokenizer') throw new Error(`transcript: expected a Tokenizer, got ${transcript.call}`);
  const set = transcript.set;
  for (const k of Object.keys(set)) if (!['normalizer', 'pre_tokenizer', 'decoder', 'post_processor'].includes(k)) throw new Error(`transcript: Tokenizer.${k} set`);
  const part = (k) => (set[k] == null ? null : value(set[k]));
  return { version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer: part('normalizer'), pre_tokenizer: part('pre_tokenizer'),
    post_processor: part('post_processor'), decoder: part('decoder'), model: value(transcript.args[0]) };
}
