// Chat templates: a Hugging Face model's chat_template (Jinja) rendered as transformers'
// apply_chat_template(..., tokenize=False) renders it. Pure JS: @huggingface/jinja (what
// Transformers.js uses) parses and interprets; jinja_python.js gives it Python's semantics where the
// library has JavaScript's, and transformers' globals (raise_exception, strftime_now). Not here:
// tokenizing the text (the Tokenizer does that), continue_final_message, assistant-token masks
// ({% generation %} renders its body, as in transformers without return_assistant_tokens_mask).
// docs/chat.md: the API, what differs from Python's jinja2, how the goldens are made.
import { Template, Interpreter } from '@huggingface/jinja';
import { AttnWasmError, describe, rangeError, typeError } from './errors.js';
import { checkBool, checkOptions } from './checks.js';
import { makeEnvironment, pythonize } from './jinja_python.js';
import { templateOfFiles } from './chat_template_files.js';

export { templateOfFiles };

/** transformers' SPECIAL_TOKENS_ATTRIBUTES: the special tokens every template sees (when set). */
export const SPECIAL_TOKEN_NAMES = Object.freeze(['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token', 'additional_special_tokens']);

const TEMPLATE_FILES = ['chat_template.jinja', 'chat_template.json'];
const ADDITIONAL = /^additional_chat_templates\/([^/]+)\.jinja$/;

const isPlainObject = (v) => v !== null && typeof v === 'object' && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);
const invalid = (message) => new AttnWasmError('ERR_INVALID_ARGUMENT', message);

/**
 * The templates of one source as a Map name → text: a string is the one template ('default'); a list
 * of { name, template } (tokenizer_config.json's form for several) or an object name → text, named.
 */
function namedTemplates(value, where) {
  if (typeof value === 'string') return new Map([['default', value]]);
  const entries = Array.isArray(value)
    ? value.map((t, i) => {
      if (!isPlainObject(t) || typeof t.name !== 'string' || typeof t.template !== 'string') throw invalid(`${where}[${i}]: expected { name: string, template: string }, got ${describe(t)}`);
      return [t.name, t.template];
    })
    : isPlainObject(value) ? Object.entries(value) : null;
  if (entries === null) throw invalid(`${where}: expected a string, a list of { name, template } or an object name → template, got ${describe(value)}`);
  for (const [name, text] of entries) {
    if (typeof text !== 'string') throw invalid(`${where}['${name}']: expected the template text, got ${describe(text)}`);
  }
  return new Map(entries);
}

/**
 * The chat template to render, chosen as transformers' get_chat_template chooses it. Sources, the
 * first present wins for the default: `files['chat_template.jinja']`, then
 * `files['chat_template.json']` ({ "chat_template": ... }, as text or parsed), then
 * tokenizerConfig.chat_template (a string, or a list of { name, template }); files named
 * 'additional_chat_templates/<name>.jinja' add named templates (newer hub repos save them so).
 * Choice: `name` if given; else 'tool_use' when `tools` is given (not null) and that template exists;
 * else 'default'. A missing template or name throws AttnWasmError ERR_INVALID_ARGUMENT naming what
 * is missing and what there is. Returns a string (the caller's).
 * @param {object | null | undefined} tokenizerConfig the parsed tokenizer_config.json (null: none)
 * @param {{ name?: string, tools?: unknown[] | null,
 *   files?: Record<string, string | object> }} [options] files: the repo's template files by path
 * @returns {string}
 */
export function chatTemplateOf(tokenizerConfig, options) {
  const { name, tools, files = {} } = checkOptions(options, ['name', 'tools', 'files'], 'chatTemplateOf');
  if (tokenizerConfig != null && !isPlainObject(tokenizerConfig)) throw typeError(`tokenizerConfig: expected the parsed tokenizer_config.json (an object) or null, got ${describe(tokenizerConfig)}`);
  if (name !== undefined && (typeof name !== 'string' || name === '')) throw typeError(`name: expected a template name (a non-empty string), got ${describe(name)}`);
  if (!isPlainObject(files)) throw typeError(`files: expected an object of file path → contents, got ${describe(files)}`);
  const additional = new Map();
  for (const [path, text] of Object.entries(files)) {
    const m = ADDITIONAL.exec(path);
    if (!m && !TEMPLATE_FILES.includes(path)) throw typeError(`files: unknown file '${path}' (expected ${TEMPLATE_FILES.join(', ')} or additional_chat_templates/<name>.jinja)`);
    if (typeof text !== 'string' && !(path === 'chat_template.json' && isPlainObject(text))) throw typeError(`files['${path}']: expected the file's text, got ${describe(text)}`);
    if (m) additional.set(m[1], text);
  }
  let templates = new Map();
  let source = 'tokenizer_config.json';
  const file = templateOfFiles(files);
  if (file) {
    source = file.source;
    templates = namedTemplates(file.value, file.source === 'chat_template.json' ? 'chat_template.json chat_template' : file.source);
  } else if (tokenizerConfig?.chat_template != null) {
    templates = namedTemplates(tokenizerConfig.chat_template, 'tokenizer_config.json chat_template');
  }
  for (const [n, text] of additional) templates.set(n, text);
  if (templates.size === 0) {
    throw invalid('no chat template: tokenizer_config.json has no chat_template, and no chat_template.jinja, chat_template.json or additional_chat_templates/*.jinja was given');
  }
  const names = [...templates.keys()].sort().join(', ');
  if (name !== undefined) {
    if (!templates.has(name)) throw invalid(`no chat template named '${name}' (${source} has: ${names})`);
    return templates.get(name);
  }
  if (tools != null && templates.has('tool_use')) return templates.get('tool_use');
  if (templates.has('default')) return templates.get('default');
  throw invalid(`no default chat template: pass { name } with one of: ${names} (${source})`);
}

/** A special token as tokenizer_config.json writes it: a string or an AddedToken { content, ... }. */
function tokenText(value, field) {
  if (typeof value === 'string') return value;
  if (isPlainObject(value) && typeof value.content === 'string') return value.content;
  throw invalid(`${field}: expected a string or { content: string }, got ${describe(value)}`);
}

/** A special token's value as templates see it: its text, or for a list the list of texts; null when unset. */
function specialValue(value, field) {
  if (value == null) return null;
  if (Array.isArray(value)) return value.map((v, i) => tokenText(v, `${field}[${i}]`));
  return tokenText(value, field);
}

/**
 * The special tokens of a tokenizer_config.json as transformers' special_tokens_map gives them to
 * templates: bos_token, eos_token, unk_token, sep_token, pad_token, cls_token, mask_token (each a
 * string, written in the file as a string or as { content: ... }) and additional_special_tokens (a
 * list of them); unset, null, '' and [] are left out, so templates see them undefined. Returns a new
 * object owned by the caller.
 * @param {object} tokenizerConfig the parsed tokenizer_config.json
 * @returns {Record<string, string | string[]>}
 */
export function specialTokensOf(tokenizerConfig) {
  if (!isPlainObject(tokenizerConfig)) throw typeError(`tokenizerConfig: expected the parsed tokenizer_config.json (an object), got ${describe(tokenizerConfig)}`);
  const out = {};
  for (const key of SPECIAL_TOKEN_NAMES) {
    const value = specialValue(tokenizerConfig[key], `tokenizer_config.json ${key}`);
    if (value !== null && value.length > 0) out[key] = value;
  }
  return out;
}

const MAX_DEPTH = 256;

/** Checks that `value` is JSON data (what Python's json would give a template); names the first bad place. */
function checkJson(value, path, ancestors = [], optional = false) {
  if (value === undefined && optional) return;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw rangeError(`${path}: expected a finite number, got ${value}`);
    return;
  }
  if (!Array.isArray(value) && !isPlainObject(value)) throw typeError(`${path}: expected JSON data (a string, number, boolean, null, array or plain object), got ${describe(value)}`);
  if (ancestors.includes(value)) throw typeError(`${path}: contains itself (a cycle)`);
  if (ancestors.length >= MAX_DEPTH) throw rangeError(`${path}: nested deeper than ${MAX_DEPTH} levels`);
  ancestors.push(value);
  if (Array.isArray(value)) value.forEach((v, i) => checkJson(v, `${path}[${i}]`, ancestors));
  else for (const [k, v] of Object.entries(value)) checkJson(v, /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}['${k}']`, ancestors, true);
  ancestors.pop();
}

function checkMessages(messages) {
  if (!Array.isArray(messages)) throw typeError(`messages: expected an array of { role, content } objects, got ${describe(messages)}`);
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (!isPlainObject(m)) throw typeError(`${at}: expected an object { role, content }, got ${describe(m)}`);
    if (typeof m.role !== 'string') throw typeError(`${at}.role: expected a string, got ${describe(m.role)}`);
    const c = m.content;
    if (Array.isArray(c)) {
      c.forEach((part, j) => {
        if (!isPlainObject(part) || typeof part.type !== 'string') throw typeError(`${at}.content[${j}]: expected a part { type: string, ... }, got ${describe(part)}${isPlainObject(part) ? ' without a string type' : ''}`);
      });
    } else if (typeof c !== 'string' && !(c == null && m.tool_calls != null)) {
      throw typeError(`${at}.content: expected a string or an array of parts { type, ... } (null only beside tool_calls), got ${describe(c)}`);
    }
  });
  checkJson(messages, 'messages');
}

/** null for undefined or null, else an array of plain objects (tools, documents). */
function checkList(value, name) {
  if (value == null) return null;
  if (!Array.isArray(value)) throw typeError(`${name}: expected an array of objects or null, got ${describe(value)}`);
  value.forEach((v, i) => {
    if (!isPlainObject(v)) throw typeError(`${name}[${i}]: expected an object (a JSON schema${name === 'documents' ? ': a document { title, text }' : ''}), got ${describe(v)}`);
  });
  checkJson(value, name);
  return value;
}

const OPTIONS = ['messages', 'addGenerationPrompt', 'tools', 'documents', 'specialTokens', 'now', 'templateName'];
const RENAMED = { add_generation_prompt: 'addGenerationPrompt', special_tokens: 'specialTokens', chat_template: 'the template argument' };

class TemplateRaise extends Error {}

/**
 * The work one rendering may do, in steps: one per statement or expression evaluated and per block run (a loop's
 * body, a macro's), 16 per item a loop walks (the library makes a scope, a loop object and closures for each:
 * about as much work as 16 evaluations), and one per 64 characters or items a call, a filter or an operator makes
 * (join, tojson, ~, +, *: their work is linear in what they make). Strings over `length` characters and lists
 * over `items` items are refused outright. The six families' templates take 45-100 steps per message
 * (tests/js/tokenizer_bounds.test.mjs renders 2 000 messages with each), so the budget holds conversations of
 * over 20 000 messages, and two nested range(100000) loops stop within about a second instead of running for
 * hours. Past any bound: ERR_TEMPLATE_LIMIT, naming it.
 */
export const TEMPLATE_LIMITS = Object.freeze({ steps: 2_000_000, length: 1 << 24, items: 1 << 20 });

class TemplateLimit extends Error {}

const MAKES = new Set(['CallExpression', 'FilterExpression', 'BinaryExpression']);
const sizeOf = (v) => (v?.type === 'StringValue' || v?.type === 'ArrayValue' || v?.type === 'TupleValue' ? v.value.length
  : v?.type === 'ObjectValue' ? v.value.size : 0);

/** @huggingface/jinja's interpreter, counting its steps and the sizes of what they make (TEMPLATE_LIMITS). */
class BoundedInterpreter extends Interpreter {
  constructor(env, limits) {
    super(env);
    this.left = limits.steps;
    this.limits = limits;
    this.iterable = false;  // the next evaluation is a for loop's iterable: its items are charged
  }

  charge(n) {
    this.left -= n;
    if (this.left < 0) throw new TemplateLimit(`more than ${this.limits.steps} steps`);
  }

  evaluate(statement, environment) {
    const iterable = this.iterable;
    this.iterable = false;
    this.charge(1);
    const v = super.evaluate(statement, environment);
    const n = sizeOf(v);
    const string = v?.type === 'StringValue';
    if (n > (string ? this.limits.length : this.limits.items)) {
      throw new TemplateLimit(string ? `a string of ${n} characters, over ${this.limits.length}` : `a list of ${n} items, over ${this.limits.items}`);
    }
    if (iterable) this.charge(16 * n);
    else if (statement && MAKES.has(statement.type)) this.charge(n >>> 6);
    return v;
  }

  evaluateFor(node, environment) {
    this.iterable = true;
    return super.evaluateFor(node, environment);
  }

  evaluateBlock(statements, environment) {
    this.charge(1);
    return super.evaluateBlock(statements, environment);
  }
}

const parsed = new Map(); // template text → rewritten program (the 32 most recent: a chat renders one template many times)

function program(template, name) {
  let p = parsed.get(template);
  if (p) {
    parsed.delete(template);
  } else {
    try {
      // Jinja reads \r\n and \r as \n (newline_sequence) in text and string literals alike.
      p = pythonize(new Template(template.replace(/\r\n?/g, '\n')).parsed);
    } catch (e) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name} does not parse: ${e?.message ?? e} (a Jinja syntax error, or a construct @huggingface/jinja does not support: docs/chat.md)`, { cause: e });
    }
    if (parsed.size >= 32) parsed.delete(parsed.keys().next().value);
  }
  parsed.set(template, p);
  return p;
}

/**
 * Renders a chat template as transformers' apply_chat_template(messages, tools=, documents=,
 * add_generation_prompt=, tokenize=False, **kwargs) does: the template sees messages, tools,
 * documents (None when not given), add_generation_prompt, the special tokens and every other option
 * (enable_thinking, date_string, ...; they override a special token of the same name), with
 * transformers' environment (trim_blocks, lstrip_blocks, loop controls, raise_exception,
 * strftime_now, its tojson). Checks its arguments first (TypeError / RangeError naming the argument);
 * a template calling raise_exception(text) throws AttnWasmError ERR_INVALID_ARGUMENT with message
 * text; a template that does not parse, or fails while rendering, throws AttnWasmError
 * ERR_INVALID_ARGUMENT naming it. Nothing given is modified; the string returned is the caller's.
 * @param {string} template the template text (chatTemplateOf gives it)
 * @param {{ messages: { role: string, content: string | object[] | null }[],
 *   addGenerationPrompt?: boolean, tools?: object[] | null, documents?: object[] | null,
 *   specialTokens?: Record<string, string | { content: string } | (string | { content: string })[] | null>,
 *   now?: Date, templateName?: string, [kwarg: string]: unknown }} options
 *   specialTokens: specialTokensOf(config) or the same written as the config writes them; now: the
 *   time strftime_now formats (default: the time of the call; fix it for reproducible prompts and
 *   tests); templateName: how errors name the template (default 'chat template')
 * @returns {string}
 */
export function renderChatTemplate(template, options) {
  if (typeof template !== 'string') throw typeError(`template: expected the template text (a string), got ${describe(template)}`);
  if (!isPlainObject(options)) throw typeError(`renderChatTemplate options: expected an object { messages, ... }, got ${describe(options)}`);
  const kwargs = {};
  for (const [key, value] of Object.entries(options)) {
    if (OPTIONS.includes(key)) continue;
    if (Object.hasOwn(RENAMED, key)) throw typeError(`renderChatTemplate options: '${key}' is set by the renderer (pass ${RENAMED[key]} instead)`);
    checkJson(value, key, [], true);
    kwargs[key] = value;
  }
  const { messages, addGenerationPrompt, specialTokens = {}, now = new Date(), templateName = 'chat template' } = options;
  checkMessages(messages);
  const tools = checkList(options.tools, 'tools');
  const documents = checkList(options.documents, 'documents');
  const generationPrompt = checkBool(addGenerationPrompt, 'addGenerationPrompt', false);
  if (!isPlainObject(specialTokens)) throw typeError(`specialTokens: expected an object name → token, got ${describe(specialTokens)}`);
  if (!(now instanceof Date)) throw typeError(`now: expected a Date, got ${describe(now)}`);
  if (Number.isNaN(now.getTime())) throw rangeError('now: expected a valid Date, got an Invalid Date');
  if (typeof templateName !== 'string') throw typeError(`templateName: expected a string, got ${describe(templateName)}`);
  const tokens = {};
  for (const [key, value] of Object.entries(specialTokens)) {
    const text = specialValue(value, `specialTokens.${key}`);
    if (text !== null && text.length > 0) tokens[key] = text; // as special_tokens_map: unset, '' and [] left out
  }
  const raise = (message) => { throw new TemplateRaise(message); };
  const env = makeEnvironment({ ...tokens, ...kwargs, messages, tools, documents, add_generation_prompt: generationPrompt }, { now, raise });
  const code = program(template, templateName);
  try {
    return new BoundedInterpreter(env, TEMPLATE_LIMITS).run(code).value;
  } catch (e) {
    if (e instanceof TemplateRaise) throw new AttnWasmError('ERR_INVALID_ARGUMENT', e.message);
    if (e instanceof TemplateLimit) {
      throw new AttnWasmError('ERR_TEMPLATE_LIMIT', `${templateName} was stopped: ${e.message} (a rendering may take ${TEMPLATE_LIMITS.steps} steps, `
        + `and make strings of ${TEMPLATE_LIMITS.length} characters and lists of ${TEMPLATE_LIMITS.items} items; docs/chat.md)`);
    }
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${templateName} failed while rendering: ${e?.message ?? e}`, { cause: e });
  }
}
