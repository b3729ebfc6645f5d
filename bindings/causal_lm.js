// CausalLM: the decoder-only family (src/models/causal_lm.h) — Llama, Qwen2, Qwen3, Mistral, Gemma 3, Phi-3 and
// SmolLM3 checkpoints with Hugging Face's names and config.json (docs/families.md). The forward pass and every
// generation step run natively; JS owns what a user sees: the tokenizer (a file's "chars" vocabulary here, a
// tokenizer.json through 'attnwasm/tokenizer'), and the generation (generation.js: sampling, streaming, stop
// tokens) over this model's step. chat() is generate() on a conversation: the tokenizer's chat template
// (Tokenizer#applyChatTemplate) gives the prompt, the end-of-turn tokens end it (docs/chat.md).
import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { checkInteger, checkOptions, checkTensor, DTYPE } from './checks.js';
import { CharTokenizer } from './char_tokenizer.js';
import { SeededRandom, sampleToken } from './sampling.js';
import { nextTask } from './next_task.js';
import { Model } from './model.js';
import { Generation, ChatTurn, GENERATE_OPTIONS, generateOptions } from './generation.js';
import * as boundary from './boundary.js';

export { CharTokenizer, SeededRandom, sampleToken, nextTask, Generation, ChatTurn };

/** CausalLM#chat's options beside generate()'s. */
const CHAT_OPTIONS = ['tools', 'documents', 'chatTemplate', 'chatTemplateKwargs', 'now'];

/**
 * A decoder-only language model (Llama / Qwen2 architecture), loaded by
 * aw.loadModel from a file exported with export_causal_lm or from a Hugging
 * Face checkpoint with its config.json. Owns native memory: call dispose().
 */
export class CausalLM extends Model {
  /**
   * Internal: built by loadModel from a handle of the native loader (model_loading.js). Every number comes from the handle
   * (the native config as the model runs it: the one source); `hfConfig` is config.json as given, kept for
   * the user to read.
   */
  constructor(rt, handle, { hfConfig, tokenizer, generationConfig = null, eos = null }, fileBytes) {
    super(rt, handle, 'CausalLM', fileBytes);
    const info = this._info;
    /** @readonly the Hugging Face config (config.json's keys, as given or as the file holds it). */
    this.config = hfConfig;
    /** @readonly */ this.modelType = info.modelType;
    /** @readonly */ this.vocabSize = info.vocabSize;
    /** @readonly */ this.numLayers = info.numLayers;
    /** @readonly */ this.numHeads = info.numHeads;
    /** @readonly positions a sequence may reach (max_position_embeddings; HF's default when absent). */
    this.maxPositions = info.maxPositions;
    /** @readonly the number of keys each query attends to by default in generate() (the file's attentionWindow), or null: all. */
    this.attentionWindow = info.attentionWindow;
    /** @readonly a CharTokenizer, an 'attnwasm/tokenizer' Tokenizer, or null (ids in, ids out). */
    this.tokenizer = tokenizer ?? null;
    /** @readonly generation_config.json as given (frozen), or null. */
    this.generationConfig = generationConfig;
    /**
     * @readonly the ids generate() stops at by default: the tokenizer's eos (a character vocabulary), else
     * generation_config.json's eos_token_id (what transformers' generate() stops at), else config.json's.
     */
    this.eosTokenIds = tokenizer instanceof CharTokenizer && tokenizer.eos !== null ? [tokenizer.eos] : eos ?? info.eosTokenIds;
  }

  /**
   * The logits of every position, no cache (the parity path): ids (B, T) →
   * logits (B, T, vocab). Positions 0 … T−1, causal attention over all of them.
   * @param {{data: Int32Array, shape: number[]}} ids
   * @returns {{logits: {data: Float32Array, shape: number[]}}}
   */
  forward(ids) {
    const h = this._handle();
    const t = checkTensor(ids, 'ids', 'ids', this._rt);
    const [logits] = boundary.models.lmForward(this._rt, h, { ids: t }, { hidden: false });
    return { logits };
  }

  /** Text → ids with the model's tokenizer (ERR_INVALID_ARGUMENT when it has none). */
  encode(text, options) {
    return this._tokenizer('encode').encode(text, options);
  }

  /** Ids → text with the model's tokenizer. */
  decode(ids, options) {
    return this._tokenizer('decode').decode(ids, options);
  }

  _tokenizer(what) {
    if (!this.tokenizer) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT',
        `${what}: this model has no tokenizer; pass token ids, or load it with loadModel(bytes, { config, tokenizer })`);
    }
    return this.tokenizer;
  }

  /**
   * Generates tokens after a prompt, one per iteration:
   *
   *   for await (const t of lm.generate('Once upon a time', { maxNewTokens: 50, temperature: 0.8, seed: 1 }))
   *     out.textContent += t.text;
   *
   * The prompt (a string, with a tokenizer; or ids) is prefilled once, then
   * each token is one step against a KV cache of prompt + maxNewTokens
   * positions. Options (checked now, before the first token):
   *   maxNewTokens  1 … (default 64); also ends at maxPositions
   *   temperature   0 = greedy (the default, as HF's generate), > 0 samples
   *   topK          keep the k most likely (0 = all, the default), topP keep the
   *                 most likely summing to p (1 = all, the default): HF's order
   *   seed          an integer: the same seed, the same tokens (default: random; see .seed)
   *   stopTokens    ids that end it, not yielded (default: eosTokenIds)
   *   signal        an AbortSignal: ends it within one token (stopReason 'aborted')
   *   attentionWindow  keys each query attends to (default: the model's, or all)
   *   attention     true: each token carries the attention that chose it
   * Each value: { id, text (with a tokenizer, '' for special tokens), ms (the
   * step's time), index (0, 1, …), attention? }. The returned object also has
   * promptIds, ids, text, seed and stopReason ('stop', 'length', 'context',
   * 'aborted', 'error'; null while running). Breaking out of the loop frees the
   * cache. The options and the prompt are checked here, each error naming its
   * option first ("topP: expected …"); nothing native runs until the first
   * next(), so generate(…).return() is a free check.
   * @returns {Generation}
   */
  generate(prompt, options) {
    this._handle();
    const rt = this._rt;
    const p = generateOptions(options, {
      vocabSize: this.vocabSize, eosTokenIds: this.eosTokenIds, attentionWindow: this.attentionWindow,
      checkWindow: (w) => boundary.rules.attentionWindow(rt, w),  // the rule is native (models/causal_lm.h CheckAttentionWindow)
    });
    const promptIds = this._promptIds(prompt);
    if (promptIds.length >= this.maxPositions) {
      throw rangeError(`prompt: expected fewer than maxPositions (${this.maxPositions}) tokens, got ${promptIds.length}`);
    }
    return new Generation(this._stepper(), promptIds, this.tokenizer, this.maxPositions, p);
  }

  /** The model's step for a Generation: a KV cache of one sequence, prompt then one token at a time. */
  _stepper() {
    const rt = this._rt;
    return {
      begin: (capacity) => boundary.models.lmBegin(rt, this._handle(), 1, capacity),
      append: (cache, feed, p, into) => {
        const out = boundary.models.lmAppend(rt, this._handle(), cache, { ids: { data: feed, shape: [1, feed.length], dtype: DTYPE.I32 } },
          { window: p.window, attention: p.attention }, into);
        return { logits: out[0].data, attention: out[1] };
      },
      free: (cache) => boundary.release(rt, cache),
    };
  }

  /**
   * The assistant's next turn of a conversation, streamed as generate() streams:
   *
   *   const turn = lm.chat([{ role: 'user', content: 'Hi' }], { maxNewTokens: 200 });
   *   for await (const t of turn) out.textContent += t.text;
   *   messages.push(turn.message);   // { role: 'assistant', content: turn.text }
   *
   * The prompt is the tokenizer's chat template rendered with addGenerationPrompt true and
   * tokenized as transformers' apply_chat_template gives it (Tokenizer#applyChatTemplate); the
   * model's tokenizer must be an 'attnwasm/tokenizer' Tokenizer. Options: generate()'s
   * (maxNewTokens, temperature, topK, topP, seed, signal, attentionWindow, attention, stopTokens)
   * and the template's: tools, documents, chatTemplate (a template name or a template's text),
   * chatTemplateKwargs (template variables: { enable_thinking: false } for Qwen3), now (the time
   * strftime_now formats). stopTokens defaults to the end of a turn: the model's eosTokenIds and
   * Tokenizer#chatStopTokens (tokenizer_config.json's eos_token, the template's end-of-turn tokens).
   * The template is rendered and every option checked now (errors as applyChatTemplate and
   * generate throw them); nothing native runs until the first next().
   * @param {{ role: string, content: string | object[] | null }[]} messages
   * @returns {ChatTurn}
   */
  chat(messages, options) {
    this._handle();
    const o = checkOptions(options, [...GENERATE_OPTIONS, ...CHAT_OPTIONS], 'chat');
    const tok = this._tokenizer('chat');
    if (typeof tok.applyChatTemplate !== 'function') {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', "chat: this model's tokenizer is its file's character vocabulary, which has no chat template; "
        + 'load the model with a tokenizer.json and its tokenizer_config.json');
    }
    const { tools, documents, chatTemplate, chatTemplateKwargs, now, ...rest } = o;
    const kwargs = chatTemplateKwargs ?? {};
    if (kwargs === null || typeof kwargs !== 'object' || Array.isArray(kwargs)) {
      throw typeError(`chatTemplateKwargs: expected an object of template variables, got ${describe(kwargs)}`);
    }
    for (const key of Object.keys(kwargs)) {
      if (['addGenerationPrompt', 'tokenize', ...CHAT_OPTIONS].includes(key)) {
        throw typeError(`chatTemplateKwargs.${key}: ${key === 'addGenerationPrompt' || key === 'tokenize' ? 'set by chat' : `pass ${key} as chat's own option`}`);
      }
    }
    const prompt = tok.applyChatTemplate(messages, { ...kwargs, addGenerationPrompt: true, tools, documents, chatTemplate, now, tokenize: false });
    const promptIds = tok.encode(prompt, { addSpecialTokens: false });
    if (promptIds.length === 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'chat: the chat template rendered an empty prompt');
    let stopTokens = rest.stopTokens;
    if (stopTokens === undefined) {
      const ids = new Set([...this.eosTokenIds, ...tok.chatStopTokens({ chatTemplate, tools })]);
      stopTokens = [...ids].filter((id) => id < this.vocabSize).sort((a, b) => a - b);
    }
    const generation = this.generate(promptIds, { ...rest, stopTokens });
    return new ChatTurn(generation, prompt, [...generation._p.stop]);
  }

  _promptIds(prompt) {
    if (typeof prompt === 'string') return this._tokenizer('generate').encode(prompt);
    if (!(Array.isArray(prompt) || prompt instanceof Int32Array)) {
      throw typeError(`prompt: expected a string or an Array / Int32Array of token ids, got ${describe(prompt)}`);
    }
    if (prompt.length === 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'prompt: expected at least one token id, got none');
    return Int32Array.from(prompt, (id, i) => checkInteger(id, `prompt[${i}]`, { min: 0, max: this.vocabSize - 1 }));
  }
}
