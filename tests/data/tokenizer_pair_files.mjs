// The tokenizer.json files of the pair goldens (make_pair_goldens.mjs and tests/js/tokenizer_pairs.test.mjs):
// checked-in goldens, and variants that give them another post-processor. `pairs`: how many of
// tokenizer_pair_cases.mjs PAIRS each runs (the variants repeat the model's truncation, so fewer).

export const FILES = {
  bert_template: { path: 'tests/data/goldens/encoders/bert_cls_norm_lower/tokenizer.json', pairs: 5 },
  bert_processing: { path: 'tests/data/goldens/encoders/bert_cls_norm_lower/tokenizer.json', variant: 'bertProcessing', pairs: 2 },
  roberta: { path: 'tests/data/goldens/encoders/roberta_mean/tokenizer.json', pairs: 5 },
  xlmr_roberta: { path: 'tests/data/goldens/tokenizer/xlmr_unigram.json', pairs: 5 },
  xlmr_template: { path: 'tests/data/goldens/tokenizer/xlmr_unigram.json', variant: 'xlmrTemplate', pairs: 2 },
  gpt2_bytelevel: { path: 'tests/data/goldens/tokenizer/gpt2_3k.json', pairs: 2 },
};

const special = (id, typeId) => ({ SpecialToken: { id, type_id: typeId } });
const sequence = (id, typeId) => ({ Sequence: { id, type_id: typeId } });
const entry = (token, id) => ({ id: token, ids: [id], tokens: [token] });

export const VARIANTS = {
  /** BertProcessing with the file's [CLS] and [SEP]. */
  bertProcessing: (json) => {
    const s = json.post_processor.special_tokens;
    return { ...json, post_processor: { type: 'BertProcessing', sep: ['[SEP]', s['[SEP]'].ids[0]], cls: ['[CLS]', s['[CLS]'].ids[0]] } };
  },
  /** XLM-R's <s> A </s> </s> B </s> as a TemplateProcessing whose second half is type 1, in a Sequence after ByteLevel. */
  xlmrTemplate: (json) => ({
    ...json,
    post_processor: {
      type: 'Sequence',
      processors: [
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
        {
          type: 'TemplateProcessing',
          single: [special('<s>', 0), sequence('A', 0), special('</s>', 0)],
          pair: [special('<s>', 0), sequence('A', 0), special('</s>', 0), special('</s>', 1), sequence('B', 1), special('</s>', 1)],
          special_tokens: { '<s>': entry('<s>', 0), '</s>': entry('</s>', 2) },
        },
      ],
    },
  }),
};
