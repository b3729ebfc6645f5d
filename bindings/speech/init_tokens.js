// Whisper's decoder prompt as transformers v4.40.2's generate builds it (models/whisper/generation_whisper.py):
// _set_return_timestamps + _set_language_and_task + _retrieve_init_tokens (<|startoftranscript|>, the language, the
// task, <|notimestamps|> unless timestamps), detect_language's choice on the first step's logits, prompt_ids before
// the init tokens, and the tokenizer's get_prompt_ids. Errors carry transformers' own texts after the argument's
// name. Not here: running the model (the caller's detectLanguage callback), the search.
import { AttnWasmError } from '../errors.js';
import { softmaxF32 } from '../torch_f32.js';
import { pyStrip, stringRepr } from '../python_format.js';
import { LANGUAGES, TO_LANGUAGE_CODE } from './languages.js';

const TASK_IDS = ['translate', 'transcribe'];
const has = (o, k) => o != null && o[k] !== undefined;
const fail = (name, text) => new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: ${text}`);
const pyList = (a) => `[${a.map(stringRepr).join(', ')}]`;

/**
 * The init tokens of generate (v4.40.2) from generation_config.json's fields and the call's options, short-form
 * (longForm: true sets returnTimestamps as generate does over 3000 frames, and refuses returnTimestamps false).
 * The language: a token in lang_to_id ('<|en|>'), a name ('english', 'castilian') or a code ('en'), any case; when
 * none is given and lang_to_id exists while the prompt has no language yet, `detectLanguage()` (called once,
 * synchronously) gives the language token's id, as WhisperForConditionalGeneration.detect_language does (see
 * detectLanguageId). forced_decoder_ids (generation config, else `modelConfig`'s) seed the prompt unless a language
 * or task is given.
 * @param {object} config generation_config.json (decoder_start_token_id, lang_to_id, task_to_id, is_multilingual,
 *   no_timestamps_token_id, forced_decoder_ids, language, task)
 * @param {{language?: string | null, task?: string | null, returnTimestamps?: boolean, isMultilingual?: boolean,
 *   longForm?: boolean, modelConfig?: object, detectLanguage?: () => number}} [options]
 * @returns {number[]} the init tokens (new, the caller's); their count is the processors' beginIndex
 */
export function whisperInitTokens(config, options = {}) {
  const gc = { ...config };
  let rt = options.returnTimestamps ?? null;
  if (options.longForm) {
    if (rt === false) {
      throw fail('returnTimestamps', 'You have passed more than 3000 mel input features (> 30 seconds) which automatically enables long-form generation which requires the model to predict timestamp tokens. Please either pass `return_timestamps=True` or make sure to pass no more than 3000 mel input features.');
    }
    rt = true;
  }
  if (rt && !has(gc, 'no_timestamps_token_id')) {
    throw fail('returnTimestamps', 'You are trying to return timestamps, but the generation config is not properly set. Make sure to initialize the generation config with the correct attributes that are needed such as `no_timestamps_token_id`. For more details on how to generate the approtiate config, refer to https://github.com/huggingface/transformers/issues/21878#issuecomment-1451902363');
  }
  // _set_language_and_task
  const { language: lang = null, task: tsk = null, isMultilingual = null } = options;
  if (isMultilingual !== null) {
    if (!has(gc, 'is_multilingual')) throw fail('isMultilingual', 'The generation config is outdated and is thus not compatible with the `is_multilingual` argument to `generate`. Please update the generation config as per the instructions https://github.com/huggingface/transformers/issues/25084#issuecomment-1664398224');
    gc.is_multilingual = isMultilingual;
  }
  if (has(gc, 'is_multilingual') && !gc.is_multilingual && (tsk !== null || lang !== null)) {
    throw fail(lang !== null ? 'language' : 'task', 'Cannot specify `task` or `language` for an English-only model. If the model is intended to be multilingual, pass `is_multilingual=True` to generate, or update the generation config.');
  }
  if (lang !== null) {
    if (!has(gc, 'lang_to_id')) throw fail('language', 'The generation config is outdated and is thus not compatible with the `language` argument to `generate`. Either set the language using the `forced_decoder_ids` in the model config, or update the generation config as per the instructions https://github.com/huggingface/transformers/issues/25084#issuecomment-1664398224');
    gc.language = String(lang).toLowerCase();
  }
  if (tsk !== null) {
    if (!has(gc, 'task_to_id')) throw fail('task', 'The generation config is outdated and is thus not compatible with the `task` argument to `generate`. Either set the task using the `forced_decoder_ids` in the model config, or update the generation config as per the instructions https://github.com/huggingface/transformers/issues/25084#issuecomment-1664398224');
    gc.task = tsk;
  }
  return retrieveInitTokens(gc, rt, options);
}

function retrieveInitTokens(gc, returnTimestamps, options) {
  const task = gc.task ?? null, language = gc.language ?? null;
  let forced = gc.forced_decoder_ids ?? null;
  if (forced === null && options.modelConfig?.forced_decoder_ids != null) forced = options.modelConfig.forced_decoder_ids;
  if (forced !== null && (task !== null || language !== null)) forced = null;
  let init = [gc.decoder_start_token_id];
  if (forced !== null && forced.length > 0 && forced[0][0] === 1) {
    let i = 1;
    while (forced.length > 0 && forced[0][0] === i) { init.push(forced[0][1]); forced = forced.slice(1); i++; }
    if (forced.length > 0) {
      throw fail('forced_decoder_ids', `You are using token ids in \`forced_decoder_ids\` that do not seem to correctly follow the prompt pattern of Whisper. Make sure that ${pyPairs(forced)} has an entry for all indices >= 1 and < ${forced[0][0]}.`);
    }
  }
  const langUndefined = init.length <= 1 || init[1] === null;
  if (language !== null) {
    const table = gc.lang_to_id;
    let token;
    if (Object.hasOwn(table, language)) token = language;
    else if (TO_LANGUAGE_CODE.has(language)) token = `<|${TO_LANGUAGE_CODE.get(language)}|>`;
    else if ([...TO_LANGUAGE_CODE.values()].includes(language)) token = `<|${language}|>`;
    else {
      const isCode = [...language].length === 2;
      throw fail('language', `Unsupported language: ${language}. Language should be one of: ${pyList(isCode ? [...TO_LANGUAGE_CODE.values()] : [...TO_LANGUAGE_CODE.keys()])}.`);
    }
    if (!Object.hasOwn(table, token)) {
      throw fail('language', `${token} is not supported by this specific model as it is not in the \`generation_config.lang_to_id\`.(You should just add it to the generation config)`);
    }
    // replace_or_add: an existing language id is NOT replaced (transformers rebinds a local list), else appended
    const ids = Object.values(table);
    if (!init.some((t) => ids.includes(t))) init.push(table[token]);
  } else if (has(gc, 'lang_to_id') && langUndefined) {
    if (typeof options.detectLanguage !== 'function') {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'detectLanguage: expected a function giving the detected language token id (no language given), got ' + typeof options.detectLanguage);
    }
    const id = options.detectLanguage();
    if (init.length > 1) init[1] = id;
    else init.push(id);
  }
  if (task !== null) {
    if (!TASK_IDS.includes(task)) throw fail('task', `The \`${task}\`task is not supported. The task should be one of \`${pyList(TASK_IDS)}\``);
    init.push(gc.task_to_id[task]);             // replace_or_add after the append finds it: no change
  } else if (language !== null && has(gc, 'task_to_id')) {
    if (!Object.values(gc.task_to_id).some((t) => init.includes(t))) init.push(gc.task_to_id.transcribe);
  }
  const nots = gc.no_timestamps_token_id;
  if (!returnTimestamps && has(gc, 'no_timestamps_token_id') && init[init.length - 1] !== nots) init.push(nots);
  else if (returnTimestamps && init[init.length - 1] === nots) init = init.slice(0, -1);
  return init.filter((t) => t !== null && t !== undefined);
}

const pyPairs = (pairs) => `[${pairs.map((p) => `[${p.map((x) => (x === null ? 'None' : String(x))).join(', ')}]`).join(', ')}]`;

/**
 * Whether whisperInitTokens would call detectLanguage for these arguments (run the model's first step only then).
 * @param {object} config @param {object} [options] as whisperInitTokens @returns {boolean}
 */
export function needsLanguageDetection(config, options = {}) {
  let called = false;
  whisperInitTokens(config, { ...options, detectLanguage: () => { called = true; return null; } });
  return called;
}

function maskedRow(logits, langIds) {
  const row = new Float32Array(logits.length).fill(-Infinity);
  for (const id of langIds) row[id] = logits[id];
  return row;
}

/**
 * detect_language's choice: the first step's logits (after <|startoftranscript|> alone) with every non-language id
 * at −inf, argmax as torch takes it (the first largest in id order; NaN wins).
 * @param {Float32Array} logits one row of V @param {object} langToId generation_config.lang_to_id
 * @returns {number} the language token's id
 */
export function detectLanguageId(logits, langToId) {
  const row = maskedRow(logits, Object.values(langToId));
  let best = 0;
  for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (v !== v) return i;
    if (v > row[best]) best = i;
  }
  return best;
}

/**
 * The languages' probabilities: torch's float32 softmax of that masked row, read at the language ids, most probable
 * first (equal ones in id order). `language` is the code ('en'), `name` LANGUAGES' name.
 * @param {Float32Array} logits @param {object} langToId
 * @returns {{language: string, name: string | undefined, token: string, id: number, probability: number}[]} new
 */
export function languageProbabilities(logits, langToId) {
  const probs = softmaxF32(maskedRow(logits, Object.values(langToId)), logits.length);
  return Object.entries(langToId)
    .map(([token, id]) => {
      const code = token.slice(2, -2);
      return { language: code, name: LANGUAGES.get(code), token, id, probability: probs[id] };
    })
    .sort((a, b) => b.probability - a.probability || a.id - b.id);
}

/**
 * The tokenizer's get_prompt_ids(text): <|startofprev|> then ' ' + text.strip() (Python's whitespace), encoded
 * without special tokens; a prompt whose text holds a special or timestamp token (an id at or above
 * <|endoftext|>'s) is refused with transformers' text.
 * @param {{encode: Function, tokenToId: Function, idToToken: Function}} tokenizer bindings/tokenizer's Tokenizer
 * @param {string} text @returns {number[]} new ids
 */
export function getPromptIds(tokenizer, text) {
  if (typeof text !== 'string') throw new AttnWasmError('ERR_INVALID_ARGUMENT', `text: expected a string, got ${typeof text}`);
  const enc = (s) => Array.from(tokenizer.encode(s, { addSpecialTokens: false }));
  const ids = [...enc('<|startofprev|>'), ...enc(' ' + pyStrip(text, null))];
  const first = tokenizer.tokenToId('<|endoftext|>');
  const bad = ids.slice(1).find((x) => x >= first);
  if (bad !== undefined) {
    throw fail('prompt', `Encountered text in the prompt corresponding to disallowed special token: ${tokenizer.idToToken(bad)}.`);
  }
  return ids;
}

/**
 * The short-form decoder prompt: prompt_ids (getPromptIds) before the init tokens. generate returns the whole
 * sequence, prompt included; the tokenizer's decode with skipSpecialTokens drops it (stripPrompt, whisper_text.js).
 * @param {number[]} initTokens @param {number[] | null} [promptIds] @returns {number[]} new
 */
export function decoderPrompt(initTokens, promptIds = null) {
  return promptIds ? [...promptIds, ...initTokens] : [...initTokens];
}
