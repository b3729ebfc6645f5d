// Chat on the Tokenizer: Tokenizer#applyChatTemplate (transformers' apply_chat_template: the template
// of tokenizer_config.json, or a chat_template.jinja's text, rendered by ../chat_template.js, then
// tokenized without the post-processor's tokens) and Tokenizer#chatStopTokens (the ids that end an
// assistant's turn). Not here: rendering (chat_template.js), generation (causal_lm.js CausalLM#chat).
// The renderer and its dependency @huggingface/jinja are imported when this module loads, and a
// failure is kept, not thrown: a page whose import map lacks @huggingface/jinja still tokenizes; only
// applyChatTemplate then throws, saying what to map.
import { AttnWasmError, describe, typeError } from '../errors.js';
import { checkBool, checkOptions } from '../checks.js';

let renderer = null;
let loadError = null;
try {
  renderer = await import('../chat_template.js');
} catch (e) {
  loadError = e;
}

/** The renderer module, or ERR_UNSUPPORTED saying why it did not load. */
function chatModule(where) {
  if (renderer) return renderer;
  throw new AttnWasmError('ERR_UNSUPPORTED', `${where}: chat templates need the package's dependency @huggingface/jinja, which did not load `
    + `(${loadError?.message ?? loadError}); in a page without a bundler, map it in the import map: `
    + '"@huggingface/jinja": "/node_modules/@huggingface/jinja/dist/index.js"', { cause: loadError });
}

/** applyChatTemplate's own options; every other key is a template variable. */
const OPTIONS = ['addGenerationPrompt', 'tools', 'documents', 'chatTemplate', 'tokenize', 'now'];
/** Keys refused: set here (renderChatTemplate's own), written as Python names them, or not offered. */
const REFUSED = {
  messages: 'messages is the first argument',
  specialTokens: "the special tokens come from tokenizer_config.json (a template variable of the same name, e.g. bos_token, overrides one)",
  templateName: 'the template is named by chatTemplate',
  chat_template: 'pass chatTemplate',
  add_generation_prompt: 'pass addGenerationPrompt',
  continue_final_message: 'not offered (docs/chat.md)',
  continueFinalMessage: 'not offered (docs/chat.md)',
  return_assistant_tokens_mask: 'not offered (docs/chat.md)',
  return_dict: 'not offered: the ids are returned (an Int32Array)',
};

/**
 * End-of-turn tokens of the published chat formats (Llama 3 <|eot_id|> and, after a tool call,
 * <|eom_id|>; ChatML <|im_end|> of Qwen and SmolLM3; Gemma <end_of_turn>; Phi-3 <|end|>): they end
 * a turn when the template writes them and the vocabulary has them as special tokens.
 */
export const END_OF_TURN_TOKENS = Object.freeze(['<|eot_id|>', '<|eom_id|>', '<|im_end|>', '<end_of_turn>', '<|end|>']);
/** End-of-text tokens: they end a turn whenever the vocabulary has them as special tokens. */
export const END_OF_TEXT_TOKENS = Object.freeze(['<|endoftext|>', '<|end_of_text|>', '</s>', '<eos>']);

/** A name of tokenizer_config.json's templates ('default', 'tool_use', 'rag'), not a template's text. */
const isName = (s) => /^[\w.-]+$/.test(s);

/**
 * The template to render and how errors name it: `chatTemplate` (a name of tokenizer_config.json's
 * templates, or a template's text) or the config's, chosen as transformers' get_chat_template does.
 * @returns {{ template: string, name: string }}
 */
export function chosenTemplate(tokenizer, { chatTemplate, tools } = {}, where = 'applyChatTemplate') {
  const chat = chatModule(where);
  const config = tokenizer.config;
  if (chatTemplate !== undefined) {
    if (typeof chatTemplate !== 'string' || chatTemplate === '') throw typeError(`chatTemplate: expected a template name or a template's text (a non-empty string), got ${describe(chatTemplate)}`);
    if (!isName(chatTemplate)) return { template: chatTemplate, name: 'chatTemplate' };
  }
  if (config === null) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${where}: no chat template: this Tokenizer was made without a tokenizer_config.json `
      + `(Tokenizer.fromJSON(tokenizerJson, tokenizerConfig), or loadModel's tokenizerConfig)${chatTemplate === undefined ? '' : `, so it has no template named '${chatTemplate}'`}; `
      + "pass it, or a template's text as { chatTemplate } (a repo's chat_template.jinja)");
  }
  if (config.chat_template == null) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${where}: no chat template: tokenizer_config.json has no chat_template`
      + `${chatTemplate === undefined ? '' : `, so no template named '${chatTemplate}'`} (newer repos keep it in chat_template.jinja): pass that file's text as { chatTemplate }`);
  }
  try {
    const template = chat.chatTemplateOf(config, { name: chatTemplate, tools });
    return { template, name: chatTemplate === undefined ? 'chat template' : `chat template '${chatTemplate}'` };
  } catch (e) {
    if (e instanceof AttnWasmError) e.message = `${where}: ${e.message}`;
    throw e;
  }
}

/**
 * Tokenizer#applyChatTemplate: renders `messages` as transformers' apply_chat_template does and, with
 * tokenize (default true), returns the ids transformers gives (the text encoded with
 * add_special_tokens=False: the template writes the BOS token itself).
 * @returns {Int32Array | string} a new array or string owned by the caller
 */
export function applyChatTemplate(tokenizer, messages, options) {
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    throw typeError(`applyChatTemplate options: expected an object, got ${describe(options)}`);
  }
  const o = options ?? {};
  const variables = {};
  for (const [key, value] of Object.entries(o)) {
    if (OPTIONS.includes(key)) continue;
    if (Object.hasOwn(REFUSED, key)) throw typeError(`applyChatTemplate options: '${key}': ${REFUSED[key]}`);
    variables[key] = value;
  }
  const tokenize = checkBool(o.tokenize, 'tokenize', true);
  const { template, name } = chosenTemplate(tokenizer, { chatTemplate: o.chatTemplate, tools: o.tools });
  const chat = chatModule('applyChatTemplate');
  const render = {
    ...variables, messages, addGenerationPrompt: o.addGenerationPrompt, tools: o.tools, documents: o.documents,
    specialTokens: tokenizer.config ? chat.specialTokensOf(tokenizer.config) : {}, templateName: name,
  };
  if (o.now !== undefined) render.now = o.now;
  const text = chat.renderChatTemplate(template, render);
  return tokenize ? tokenizer.encode(text, { addSpecialTokens: false }) : text;
}

/**
 * Tokenizer#chatStopTokens: the ids that end an assistant's turn, ascending: tokenizer_config.json's
 * eos_token, the END_OF_TURN_TOKENS the chosen template writes and the END_OF_TEXT_TOKENS, each when
 * it is a special token of this vocabulary.
 * @returns {number[]} a new array owned by the caller
 */
export function chatStopTokens(tokenizer, options) {
  const { chatTemplate, tools } = checkOptions(options, ['chatTemplate', 'tools'], 'chatStopTokens');
  const { template } = chosenTemplate(tokenizer, { chatTemplate, tools }, 'chatStopTokens');
  const ids = new Set();
  const special = (token) => {
    const id = tokenizer.tokenToId(token);
    return id !== undefined && tokenizer.isSpecial(id) ? id : undefined;
  };
  const eos = tokenizer.config?.eos_token;
  const eosText = typeof eos === 'string' ? eos : typeof eos?.content === 'string' ? eos.content : null;
  if (eosText) {
    const id = tokenizer.tokenToId(eosText);  // the eos token ends a turn even when not marked special
    if (id !== undefined) ids.add(id);
  }
  for (const t of END_OF_TURN_TOKENS) if (template.includes(t) && special(t) !== undefined) ids.add(special(t));
  for (const t of END_OF_TEXT_TOKENS) if (special(t) !== undefined) ids.add(special(t));
  return [...ids].sort((a, b) => a - b);
}
