// Which chat template file of a repo wins, as transformers' get_chat_template decides: chat_template.jinja, then
// chat_template.json, before tokenizer_config.json's chat_template. Its own module, without the template engine:
// the loader (models.js) asks it of every folder, and only a chat loads @huggingface/jinja (chat_template.js).
import { AttnWasmError, describe } from './errors.js';
import { parseJson } from './tokenizer/json.js';

const isPlainObject = (v) => v !== null && typeof v === 'object' && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);
const invalid = (message) => new AttnWasmError('ERR_INVALID_ARGUMENT', message);

/**
 * A repo's template file, which transformers prefers to tokenizer_config.json's chat_template: { source, value }
 * with chat_template.jinja's text, else chat_template.json's "chat_template" (a template, a list of
 * { name, template } or an object name → template); null when `files` has neither. The loader (models.js) puts the value in the tokenizer's
 * config, where chatTemplateOf finds it.
 * @param {Record<string, string | object>} files by path: 'chat_template.jinja', 'chat_template.json' (text or parsed)
 */
export function templateOfFiles(files) {
  if (files['chat_template.jinja'] !== undefined) return { source: 'chat_template.jinja', value: files['chat_template.jinja'] };
  if (files['chat_template.json'] === undefined) return null;
  let json = files['chat_template.json'];
  if (typeof json === 'string') json = parseJson(json, 'chat_template.json');  // a key given twice is refused, as in config.json
  if (!isPlainObject(json) || json.chat_template == null) throw invalid(`chat_template.json: expected { "chat_template": ... }, got ${isPlainObject(json) ? `keys ${Object.keys(json).join(', ') || 'none'}` : describe(json)}`);
  const t = json.chat_template;
  if (typeof t !== 'string' && !Array.isArray(t) && !isPlainObject(t)) throw invalid(`chat_template.json: expected { "chat_template": a template, a list of { name, template } or an object name → template }, got chat_template ${describe(t)}`);
  return { source: 'chat_template.json', value: t };
}
