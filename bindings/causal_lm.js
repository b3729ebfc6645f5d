// CausalLM: the decoder-only family (src/models/causal_lm.h) — Llama, Qwen2,
// Qwen3, Mistral, Gemma 3, Phi-3 and SmolLM3 checkpoints with Hugging Face's
// names and config.json (docs/families.md). The forward
// pass and every generation step run natively; JS owns what a user sees:
// the tokenizer (a file's "chars" vocabulary here, a tokenizer.json through
// 'attnwasm/tokenizer'), sampling (temperature, top-k, top-p with a seeded
// generator, so a seed gives the same text everywhere) and the streaming
// loop: generate() is an async iterator that prefills the prompt once, then
// runs one step per token against a KV cache sized to prompt + maxNewTokens,
// and gives the event loop a turn between tokens. chat() is generate() on a
// conversation: the tokenizer's chat template (Tokenizer#applyChatTemplate)
// gives the prompt, the end-of-turn tokens end it (docs/chat.md).
// The tokenizer of a file's own config (char_tokenizer.js), sampling (sampling.js) and the scheduler
// (next_task.js) are modules of their own; this one is the model and its generation.
import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { checkBool, checkInteger, checkNumber, checkOptions, checkTensor, DTYPE } from './checks.js';
import { CharTokenizer } from './char_tokenizer.js';
import { SeededRandom, sampleToken } from './sampling.js';
import { nextTask } from './next_task.js';

export { CharTokenizer, SeededRandom, sampleToken, nextTask };

const now = () => performance.now();
const GENERATE_OPTIONS = ['maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'stopTokens', 'signal', 'attentionWindow', 'attention'];
/** CausalLM#chat's options beside generate()'s. */
const CHAT_OPTIONS = ['tools', 'documents', 'chatTemplate', 'chatTemplateKwargs', 'now'];

export function makeCausalLm(rt, classes) {

  /**
   * A decoder-only language model (Llama / Qwen2 architecture), loaded by
   * aw.loadModel from a file exported with export_causal_lm or from a Hugging
   * Face checkpoint with its config.json. Owns native memory: call dispose().
   */
  class CausalLM extends classes.Module {
    /**
     * Internal: built by loadModel from a handle of the native loader (model_loading.js). Every number comes from the handle
     * (the native config as the model runs it: the one source); `hfConfig` is config.json as given, kept for
     * the user to read.
     */
    constructor(handle, { hfConfig, tokenizer, generationConfig = null, eos = null }, fileBytes) {
      super();
      this._adopt(handle, 'CausalLM');
      const info = JSON.parse(handle.info());
      /** @readonly the Hugging Face config (config.json's keys, as given or as the file holds it). */
      this.config = hfConfig;
      /** @readonly bytes read from the files */ this.fileBytes = fileBytes;
      /** @readonly bytes the weights take in memory (as stored, or in the dtype asked for) */
      this.weightBytes = info.weightBytes;
      /** @readonly the same by type: { bf16: …, f32: … } */
      this.weightTypes = info.weightTypes;
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
      const t = checkTensor(ids, 'ids', 'ids', rt);
      const [logits] = rt._run({ ids: t }, {}, (a) => rt._take(rt._core.lmForward(h, a)));
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
      const o = checkOptions(options, GENERATE_OPTIONS, 'generate');
      const maxNewTokens = o.maxNewTokens === undefined ? 64 : checkInteger(o.maxNewTokens, 'maxNewTokens', { min: 1, max: 1 << 30 });
      const temperature = checkNumber(o.temperature, 'temperature', 0);
      if (!(temperature >= 0 && temperature <= 1e6)) throw rangeError(`temperature: expected a number in [0, 1e6] (0: greedy), got ${temperature}`);
      const topK = o.topK === undefined ? 0 : checkInteger(o.topK, 'topK', { min: 0, max: 2 ** 31 - 1 });
      const topP = checkNumber(o.topP, 'topP', 1);
      if (!(topP > 0 && topP <= 1)) throw rangeError(`topP: expected a number in (0, 1] (1: off), got ${topP}`);
      const seed = o.seed === undefined ? Math.floor(Math.random() * 2 ** 32) : checkInteger(o.seed, 'seed', { min: -(2 ** 53 - 1), max: 2 ** 53 - 1 });
      let stop = this.eosTokenIds;
      if (o.stopTokens !== undefined) {
        if (!Array.isArray(o.stopTokens) && !(o.stopTokens instanceof Int32Array)) {
          throw typeError(`stopTokens: expected an Array of token ids, got ${describe(o.stopTokens)}`);
        }
        stop = [...o.stopTokens].map((id, i) => checkInteger(id, `stopTokens[${i}]`, { min: 0, max: this.vocabSize - 1 }));
      }
      const signal = o.signal;
      if (signal !== undefined && !(signal && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function')) {
        throw typeError(`signal: expected an AbortSignal, got ${describe(signal)}`);
      }
      let window = o.attentionWindow === undefined ? (this.attentionWindow ?? 0) : o.attentionWindow ?? 0;
      if (o.attentionWindow != null) {
        checkInteger(window, 'attentionWindow');
        rt._take(rt._core.checkAttentionWindow(window));  // the rule is native (models/causal_lm.h CheckAttentionWindow)
      }
      const attention = checkBool(o.attention, 'attention', false);
      const promptIds = this._promptIds(prompt);
      if (promptIds.length >= this.maxPositions) {
        throw rangeError(`prompt: expected fewer than maxPositions (${this.maxPositions}) tokens, got ${promptIds.length}`);
      }
      return new Generation(this, promptIds, {
        maxNewTokens, temperature, topK, topP, seed, stop: new Set(stop), signal, window, attention,
      });
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

  /**
   * One generation (CausalLM#generate): an async iterator of tokens. Steps
   * run one at a time, in order, even if next() is called again before the
   * last one settled.
   */
  class Generation {
    constructor(lm, promptIds, p) {
      this._lm = lm;
      this._p = p;
      this._random = p.temperature > 0 ? new SeededRandom(p.seed) : null;
      this._decoder = lm.tokenizer ? lm.tokenizer.streamDecoder({ skipSpecialTokens: true }) : null;
      this._cache = null;
      this._last = null;     // the id to feed next
      this._queue = Promise.resolve();
      /** @readonly the prompt's ids (after the tokenizer). */
      this.promptIds = promptIds;
      /** @readonly the ids generated so far (stop tokens not included). */
      this.ids = [];
      /** @readonly the text generated so far (with a tokenizer). */
      this.text = '';
      /** @readonly the sampling seed (the one given, or the random one drawn). */
      this.seed = p.seed;
      /** 'stop' | 'length' | 'context' | 'aborted', or null while running. */
      this.stopReason = null;
      this._capacity = Math.min(promptIds.length + p.maxNewTokens, lm.maxPositions);
    }

    [Symbol.asyncIterator]() { return this; }

    next() {
      const step = this._queue.then(() => this._step());
      this._queue = step.catch(() => {});
      return step;
    }

    /** Ends it now (what `break` in a for-await loop calls): frees the cache. */
    async return() {
      if (!this.stopReason) this.stopReason = 'aborted';
      this._free();
      return { done: true, value: undefined };
    }

    _free() {
      if (this._cache) { rt._release(this._cache); this._cache = null; }
    }

    _end(reason) {
      if (!this.stopReason) this.stopReason = reason;
      if (this._decoder) { this.text += this._decoder.end(); this._decoder = null; }
      this._free();
      return { done: true, value: undefined };
    }

    async _step() {
      if (this.stopReason) return { done: true, value: undefined };
      const p = this._p;
      if (p.signal?.aborted) return this._end('aborted');
      if (this.ids.length === p.maxNewTokens) return this._end('length');
      // The last token is fed at position prompt + ids − 1: it must be inside the cache.
      if (this._cache && this.promptIds.length + this.ids.length > this._capacity) return this._end('context');
      if (this.ids.length > 0 || this._cache) await nextTask();  // a turn for the page between tokens
      // return() may have ended it during that turn (a `break` while this step waited): no new cache then.
      if (this.stopReason) return { done: true, value: undefined };
      if (p.signal?.aborted) return this._end('aborted');
      const t0 = now();
      let out;
      try {
        const h = this._lm._handle();
        if (!this._cache) {
          const c = rt._checked(rt._core.lmBegin(h, 1, this._capacity));
          rt._own(c);
          this._cache = c;
        }
        const feed = this._last === null ? this.promptIds : Int32Array.of(this._last);
        out = rt._run({ ids: { data: feed, shape: [1, feed.length], dtype: DTYPE.I32 } }, { window: p.window, attention: p.attention },
          (a) => rt._take(rt._core.lmAppend(h, this._cache, a)));
      } catch (e) {
        this.stopReason = 'error';
        this._free();
        throw e;
      }
      const id = sampleToken(out[0].data, p, this._random);
      const ms = now() - t0;
      if (p.stop.has(id)) return this._end('stop');
      if (p.signal?.aborted) return this._end('aborted');
      this._last = id;
      const value = { id, ms, index: this.ids.length };
      this.ids.push(id);
      if (this._decoder) {
        value.text = this._decoder.push(id);
        this.text += value.text;
      }
      if (p.attention) {
        const [, layers, heads, positions] = out[1].shape;
        value.attention = { layers, heads, positions, data: out[1].data };
      }
      return { done: false, value };
    }
  }

  /**
   * An assistant's turn (CausalLM#chat): an async iterator of the tokens generate() gives, whose
   * final value (done: true) is the message. Delegates to its Generation.
   */
  class ChatTurn {
    constructor(generation, prompt, stopTokens) {
      this._g = generation;
      /** @readonly the prompt as the template rendered it (the text the model was given). */
      this.prompt = prompt;
      /** @readonly the ids that end the turn (not yielded). */
      this.stopTokens = stopTokens;
    }

    /** The prompt's ids (the rendered text encoded without the post-processor's tokens). */
    get promptIds() { return this._g.promptIds; }
    /** The ids generated so far (stop tokens not included). */
    get ids() { return this._g.ids; }
    /** The assistant's text so far (special tokens left out). */
    get text() { return this._g.text; }
    /** The sampling seed. */
    get seed() { return this._g.seed; }
    /** 'stop' (an end-of-turn token) | 'length' | 'context' | 'aborted' | 'error', or null while running. */
    get stopReason() { return this._g.stopReason; }
    /** The assistant's message so far, a new object: { role: 'assistant', content: text }. */
    get message() { return { role: 'assistant', content: this._g.text }; }

    [Symbol.asyncIterator]() { return this; }

    async next() {
      const r = await this._g.next();
      return r.done ? { done: true, value: this.message } : r;
    }

    /** Ends it now (what `break` in a for-await loop calls): frees the cache. */
    async return() {
      await this._g.return();
      return { done: true, value: this.message };
    }

    /**
     * Runs the turn to its end (the tokens not yet taken) and resolves to the assistant's message;
     * rejects with a step's error.
     * @returns {Promise<{ role: 'assistant', content: string }>}
     */
    async finalMessage() {
      while (!(await this.next()).done);
      return this.message;
    }
  }

  return { CausalLM, Generation, ChatTurn };
}
