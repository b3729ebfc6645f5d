// Post-processors of tokenizer.json for one text: the special tokens added before and after it
// (TemplateProcessing, BertProcessing, RobertaProcessing, in a Sequence with ByteLevel, which only
// trims offsets) and the type ids, as the Rust library gives them: a template's $A keeps its type_id
// with or without the special tokens; BERT's and RoBERTa's texts are type 0. Pairs are not read.
import { MAX_ID, invalid, isObject, phrase, requireArray, requireObject, requireType, show, unsupported } from './json.js';

/**
 * @returns {{ before: Int32Array, after: Int32Array, beforeTypes: Int32Array, afterTypes: Int32Array, typeId: number }}
 *   typeId: the text's type id (with or without the special tokens)
 */
export function readPostProcessor(config, idOf, types) {
  const template = { before: [], after: [], beforeTypes: [], afterTypes: [], typeId: 0, set: false };
  const one = (field, what) => {
    if (template.set) throw unsupported(field, 'one TemplateProcessing', phrase('a second one'));
    template.set = what;
  };
  const typeIdOf = (item, field) => {
    const t = item.type_id ?? 0;
    if (!Number.isInteger(t) || t < 0 || t > MAX_ID) throw invalid(`${field}.type_id`, `expected an integer in [0, 2^31 - 1], got ${show(t)}`);
    return t;
  };
  const tokenPair = (v, field) => {
    if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== 'string' || !Number.isInteger(v[1])) throw invalid(field, `expected [token, id], got ${show(v)}`);
    if (idOf(v[1]) === undefined) throw invalid(field, `expected an id of the vocabulary or added_tokens, got ${v[1]}`);
    return v[1];
  };
  const visit = (pp, field) => {
    const type = requireType(pp, field, types);
    if (type === 'Sequence') {
      requireArray(pp.processors, `${field}.processors`).forEach((p, i) => visit(p, `${field}.processors[${i}]`));
    } else if (type === 'TemplateProcessing') {
      one(field, type);
      requireArray(pp.single, `${field}.single`);
      const special = requireObject(pp.special_tokens, `${field}.special_tokens`);
      let side = 'before';
      pp.single.forEach((item, i) => {
        const itemField = `${field}.single[${i}]`;
        if (isObject(item) && isObject(item.Sequence) && item.Sequence.id === 'A' && side === 'before') {
          template.typeId = typeIdOf(item.Sequence, `${itemField}.Sequence`);
          side = 'after';
        } else if (isObject(item) && isObject(item.SpecialToken) && typeof item.SpecialToken.id === 'string') {
          const name = item.SpecialToken.id;
          const entry = special[name];
          if (!isObject(entry) || !Array.isArray(entry.ids)) throw invalid(`${field}.special_tokens['${name}'].ids`, `expected the ids of '${name}', got ${show(entry?.ids)}`);
          entry.ids.forEach((id, k) => {
            if (!Number.isSafeInteger(id) || idOf(id) === undefined) throw invalid(`${field}.special_tokens['${name}'].ids[${k}]`, `expected an id of the vocabulary or added_tokens, got ${show(id)}`);
          });
          const typeId = typeIdOf(item.SpecialToken, `${itemField}.SpecialToken`);
          template[side].push(...entry.ids);
          template[`${side}Types`].push(...entry.ids.map(() => typeId));
        } else {
          throw unsupported(itemField, "{ SpecialToken: { id } } or one { Sequence: { id: 'A' } }", isObject(item) ? phrase(`an item with keys ${Object.keys(item).join(', ')}`) : item);
        }
      });
      if (side !== 'after') throw invalid(`${field}.single`, "expected one { Sequence: { id: 'A' } } (the text), got none");
    } else if (type === 'BertProcessing' || type === 'RobertaProcessing') {
      one(field, type);
      template.before.push(tokenPair(pp.cls, `${field}.cls`));
      template.after.push(tokenPair(pp.sep, `${field}.sep`));
      template.beforeTypes.push(0);
      template.afterTypes.push(0);
    }
    // ByteLevel as a post-processor only trims offsets: nothing to do for ids.
  };
  if (config != null) visit(config, 'post_processor');
  return {
    before: Int32Array.from(template.before),
    after: Int32Array.from(template.after),
    beforeTypes: Int32Array.from(template.beforeTypes),
    afterTypes: Int32Array.from(template.afterTypes),
    typeId: template.typeId,
  };
}

/** The single-text template transformers' LlamaTokenizerFast / GemmaTokenizerFast build: [bos] $A [eos], all type 0. */
export function bosEosTemplate(bos, eos) {
  const before = bos === null ? [] : [bos];
  const after = eos === null ? [] : [eos];
  return { before: Int32Array.from(before), after: Int32Array.from(after), beforeTypes: new Int32Array(before.length), afterTypes: new Int32Array(after.length), typeId: 0 };
}
