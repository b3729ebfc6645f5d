// Post-processors of tokenizer.json: the special tokens added around one text and around a pair
// (TemplateProcessing, BertProcessing, RobertaProcessing, in a Sequence with ByteLevel, which only
// trims offsets) and the type ids, as the Rust library gives them: a template's $A / $B keep their
// type_id with or without the special tokens; BERT's pair is [CLS] A [SEP] B [SEP], its second text
// type 1; RoBERTa's <s> A </s> </s> B </s>, all type 0; no post-processor (or ByteLevel alone): the
// two texts joined, the second type 1. The pair's shape is pairTemplate's (below); the offsets' trim of
// RobertaProcessing / ByteLevel is trimOffsets (last).
import { MAX_ID, invalid, isObject, phrase, requireArray, requireObject, requireType, show, unsupported } from './json.js';

/**
 * A pair's template: `items` in order, each a text ({ seq: 0 | 1, typeId }) or special tokens
 * ({ ids, typeIds }); `plain`: the two texts' type ids without the special tokens (null: the
 * items' own, in the items' order); `added`: the number of special tokens (num_special_tokens_to_add(pair=True)).
 * @returns {{ items: object[], plain: number[] | null, added: number }}
 */
export function pairTemplate(items, plain = null) {
  return { items, plain, added: items.reduce((n, it) => n + (it.ids ? it.ids.length : 0), 0) };
}

/** A list of special token ids, all of one type. */
export const specials = (ids, typeId) => ({ ids: Int32Array.from(ids), typeIds: new Int32Array(ids.length).fill(typeId) });

/** RoBERTa's and XLM-R's pair (slow classes and RobertaProcessing alike): <s> A </s> </s> B </s>, all type 0. */
export const fairseqPair = (cls, sep) => pairTemplate([specials([cls], 0), { seq: 0, typeId: 0 }, specials([sep, sep], 0), { seq: 1, typeId: 0 }, specials([sep], 0)], [0, 0]);

/**
 * @returns {{ before: Int32Array, after: Int32Array, beforeTypes: Int32Array, afterTypes: Int32Array, typeId: number,
 *   pair: object | null, pairRefusal: string | null }}
 *   typeId: the text's type id (with or without the special tokens); pair: pairTemplate's shape, or
 *   null with pairRefusal the reason (a TemplateProcessing without `pair`, or one without $A or $B)
 */
export function readPostProcessor(config, idOf, types) {
  const template = { before: [], after: [], beforeTypes: [], afterTypes: [], typeId: 0, set: false };
  const trims = []; // the offset trims of RobertaProcessing / ByteLevel, in order: each its add_prefix_space
  const trim = (pp) => {
    if (pp.trim_offsets ?? true) trims.push(pp.add_prefix_space ?? true);
  };
  let pair = pairTemplate([{ seq: 0, typeId: 0 }, { seq: 1, typeId: 1 }]);
  let pairRefusal = null;
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
  const isSpecialItem = (item) => isObject(item) && isObject(item.SpecialToken) && typeof item.SpecialToken.id === 'string';
  const specialOf = (item, itemField, special, field) => {
    const name = item.SpecialToken.id;
    const entry = special[name];
    if (!isObject(entry) || !Array.isArray(entry.ids)) throw invalid(`${field}.special_tokens['${name}'].ids`, `expected the ids of '${name}', got ${show(entry?.ids)}`);
    entry.ids.forEach((id, k) => {
      if (!Number.isSafeInteger(id) || idOf(id) === undefined) throw invalid(`${field}.special_tokens['${name}'].ids[${k}]`, `expected an id of the vocabulary or added_tokens, got ${show(id)}`);
    });
    return specials(entry.ids, typeIdOf(item.SpecialToken, `${itemField}.SpecialToken`));
  };
  // TemplateProcessing.pair: $A and $B once each (in either order), special tokens anywhere.
  const readPair = (list, pairField, special, field) => {
    requireArray(list, pairField);
    const seen = [false, false];
    const items = list.map((item, i) => {
      const itemField = `${pairField}[${i}]`;
      if (isObject(item) && isObject(item.Sequence) && (item.Sequence.id === 'A' || item.Sequence.id === 'B')) {
        const seq = item.Sequence.id === 'A' ? 0 : 1;
        if (seen[seq]) throw unsupported(itemField, `one { Sequence: { id: '${item.Sequence.id}' } }`, phrase('a second one'));
        seen[seq] = true;
        return { seq, typeId: typeIdOf(item.Sequence, `${itemField}.Sequence`) };
      }
      if (isSpecialItem(item)) return specialOf(item, itemField, special, field);
      throw unsupported(itemField, "{ SpecialToken: { id } } or { Sequence: { id: 'A' | 'B' } }", isObject(item) ? phrase(`an item with keys ${Object.keys(item).join(', ')}`) : item);
    });
    // Such a file still encodes one text (written by hand: Rust's builder refuses it): pairs are refused when asked.
    if (!seen[0] || !seen[1]) {
      pairRefusal = `${pairField}: expected { Sequence: { id: 'A' } } and { Sequence: { id: 'B' } } (the two texts), got ${seen[0] ? "no 'B'" : "no 'A'"}`;
      return null;
    }
    return pairTemplate(items);
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
        } else if (isSpecialItem(item)) {
          const { ids, typeIds } = specialOf(item, itemField, special, field);
          template[side].push(...ids);
          template[`${side}Types`].push(...typeIds);
        } else {
          throw unsupported(itemField, "{ SpecialToken: { id } } or one { Sequence: { id: 'A' } }", isObject(item) ? phrase(`an item with keys ${Object.keys(item).join(', ')}`) : item);
        }
      });
      if (side !== 'after') throw invalid(`${field}.single`, "expected one { Sequence: { id: 'A' } } (the text), got none");
      if (pp.pair == null) {
        pair = null;
        pairRefusal = `${field}.pair: this tokenizer.json's TemplateProcessing has no pair template, so it cannot encode a pair of texts`;
      } else pair = readPair(pp.pair, `${field}.pair`, special, field);
    } else if (type === 'BertProcessing' || type === 'RobertaProcessing') {
      one(field, type);
      const cls = tokenPair(pp.cls, `${field}.cls`);
      const sep = tokenPair(pp.sep, `${field}.sep`);
      template.before.push(cls);
      template.after.push(sep);
      template.beforeTypes.push(0);
      template.afterTypes.push(0);
      pair = type === 'BertProcessing'
        ? pairTemplate([specials([cls], 0), { seq: 0, typeId: 0 }, specials([sep], 0), { seq: 1, typeId: 1 }, specials([sep], 1)], [0, 1])
        : fairseqPair(cls, sep);
      if (type === 'RobertaProcessing') trim(pp);
    } else if (type === 'ByteLevel') {
      trim(pp); // ByteLevel as a post-processor only trims offsets: nothing to do for ids
    }
  };
  if (config != null) visit(config, 'post_processor');
  return {
    before: Int32Array.from(template.before),
    after: Int32Array.from(template.after),
    beforeTypes: Int32Array.from(template.beforeTypes),
    afterTypes: Int32Array.from(template.afterTypes),
    typeId: template.typeId,
    pair,
    pairRefusal,
    trims,
  };
}

/**
 * The templates transformers' LlamaTokenizerFast / GemmaTokenizerFast build in update_post_processor:
 * [bos] $A [eos], all type 0; the pair [bos] $A [eos] [bos] $B [eos], the second half type 1.
 */
export function bosEosTemplate(bos, eos) {
  const before = bos === null ? [] : [bos];
  const after = eos === null ? [] : [eos];
  const pair = pairTemplate([specials(before, 0), { seq: 0, typeId: 0 }, specials(after, 0), specials(before, 1), { seq: 1, typeId: 1 }, specials(after, 1)]);
  return { before: Int32Array.from(before), after: Int32Array.from(after), beforeTypes: new Int32Array(before.length), afterTypes: new Int32Array(after.length), typeId: 0, pair, pairRefusal: null };
}

const TRIMMED = /^[\u0120\p{White_Space}]$/u; // 'Ġ' (a space's byte symbol) or White_Space

/**
 * The Rust library's byte_level process_offsets (RobertaProcessing and ByteLevel with trim_offsets):
 * a token's leading and trailing spaces leave its offsets, except one leading space of the first token
 * with add_prefix_space. Rust moves the offsets by characters: here by code points of `text`, which
 * differs from code units where ByteLevel's add_prefix_space put a space on an astral character (the
 * space takes that character's offsets; a token of that space alone ends up empty).
 */
export function trimOffsets(text, offsets, tokens, addPrefixSpace) {
  offsets.forEach((o, i) => {
    const chars = Array.from(tokens[i] ?? '');
    let leading = 0;
    while (leading < chars.length && TRIMMED.test(chars[leading])) leading++;
    let trailing = 0;
    while (trailing < chars.length && TRIMMED.test(chars[chars.length - 1 - trailing])) trailing++;
    if (leading > 0) {
      if ((i === 0 || o[0] === 0) && addPrefixSpace && leading === 1) leading = 0;
      let at = o[0];
      for (; leading > 0 && at < text.length; leading--) at += text.codePointAt(at) > 0xffff ? 2 : 1;
      o[0] = Math.min(at, o[1]);
    }
    if (trailing > 0) {
      let at = o[1];
      for (; trailing > 0 && at > 0; trailing--) at -= at >= 2 && text.codePointAt(at - 2) > 0xffff ? 2 : 1;
      if (trailing === 0) o[1] = Math.max(at, o[0]); // Rust: only when the end is at least `trailing` characters in
    }
  });
}
