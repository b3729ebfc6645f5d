// Generation, shared by every model that writes tokens (the causal LMs now; the encoder–decoders and Whisper
// next): a generation's options checked once (generateOptions), the tokens as an async iterator (Generation)
// over a model's step — a `stepper` { begin(capacity), append(cache, ids) → { logits, attention }, free(cache) }:
// the prompt prefilled once, then one step per token against the model's cache, sampled (sampling.js: the same
// seed, the same tokens everywhere), stopped at the stop tokens, streamed with a turn for the event loop between
// tokens — an assistant's turn of a chat (ChatTurn), and generation_config.json (readGenerationConfig) with the
// eos ids transformers' generate() stops at (generationEos). Not here: a model's forward (its face's file).
import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { checkBool, checkInteger, checkNumber, checkOptions } from './checks.js';
import { SeededRandom, sampleToken } from './sampling.js';
import { nextTask } from './next_task.js';

const now = () => performance.now();
export const GENERATE_OPTIONS = Object.freeze(['maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'stopTokens', 'signal', 'attentionWindow', 'attention']);

/**
 * generate()'s options checked, each error naming its option first ("topP: expected …"): the sampling, the stop
 * tokens (default `eosTokenIds`), the signal, the attention window (default the model's; its range is the
 * model's rule, `checkWindow`), whether each token carries its attention.
 * @param {object} options @param {{vocabSize: number, eosTokenIds: number[], attentionWindow: number|null,
 *   checkWindow: (w: number) => void}} model
 */
export function generateOptions(options, model) {
  const o = checkOptions(options, GENERATE_OPTIONS, 'generate');
  const maxNewTokens = o.maxNewTokens === undefined ? 64 : checkInteger(o.maxNewTokens, 'maxNewTokens', { min: 1, max: 1 << 30 });
  const temperature = checkNumber(o.temperature, 'temperature', 0);
  if (!(temperature >= 0 && temperature <= 1e6)) throw rangeError(`temperature: expected a number in [0, 1e6] (0: greedy), got ${temperature}`);
  const topK = o.topK === undefined ? 0 : checkInteger(o.topK, 'topK', { min: 0, max: 2 ** 31 - 1 });
  const topP = checkNumber(o.topP, 'topP', 1);
  if (!(topP > 0 && topP <= 1)) throw rangeError(`topP: expected a number in (0, 1] (1: off), got ${topP}`);
  const seed = o.seed === undefined ? Math.floor(Math.random() * 2 ** 32) : checkInteger(o.seed, 'seed', { min: -(2 ** 53 - 1), max: 2 ** 53 - 1 });
  let stop = model.eosTokenIds;
  if (o.stopTokens !== undefined) {
    if (!Array.isArray(o.stopTokens) && !(o.stopTokens instanceof Int32Array)) {
      throw typeError(`stopTokens: expected an Array of token ids, got ${describe(o.stopTokens)}`);
    }
    stop = [...o.stopTokens].map((id, i) => checkInteger(id, `stopTokens[${i}]`, { min: 0, max: model.vocabSize - 1 }));
  }
  const signal = o.signal;
  if (signal !== undefined && !(signal && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function')) {
    throw typeError(`signal: expected an AbortSignal, got ${describe(signal)}`);
  }
  const window = o.attentionWindow === undefined ? (model.attentionWindow ?? 0) : o.attentionWindow ?? 0;
  if (o.attentionWindow != null) {
    checkInteger(window, 'attentionWindow');
    model.checkWindow(window);
  }
  const attention = checkBool(o.attention, 'attention', false);
  return { maxNewTokens, temperature, topK, topP, seed, stop: new Set(stop), signal, window, attention };
}

/**
 * One generation: an async iterator of tokens. Steps run one at a time, in order, even if next() is called again
 * before the last one settled. Made by a model's generate() (CausalLM#generate) with its stepper.
 */
export class Generation {
  /**
   * @param {{begin: (capacity: number) => object, append: (cache: object, ids: Int32Array, p: object, into: Float32Array|null) =>
   *   {logits: Float32Array, attention?: {data: Float32Array, shape: number[]}}, free: (cache: object) => void}} stepper
   *   (append may copy the logits into `into`, an earlier step's logits array, and return it)
   * @param {Int32Array} promptIds @param {object|null} tokenizer @param {number} maxPositions
   * @param {object} p generateOptions' result
   */
  constructor(stepper, promptIds, tokenizer, maxPositions, p) {
    this._stepper = stepper;
    this._p = p;
    /** @private the logits array the steps after the first are copied into */
    this._logits = null;
    this._random = p.temperature > 0 ? new SeededRandom(p.seed) : null;
    this._decoder = tokenizer ? tokenizer.streamDecoder({ skipSpecialTokens: true }) : null;
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
    this._capacity = Math.min(promptIds.length + p.maxNewTokens, maxPositions);
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
    if (this._cache) { this._stepper.free(this._cache); this._cache = null; }
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
      this._cache ??= this._stepper.begin(this._capacity);
      // The first step's logits array is reused for the next steps' (the stepper copies into it: no fresh array
      // of vocabulary size per token for V8 to fault in and collect); sampleToken reads it before the next step.
      out = this._stepper.append(this._cache, this._last === null ? this.promptIds : Int32Array.of(this._last), p, this._logits);
      this._logits = out.logits;
    } catch (e) {
      this.stopReason = 'error';
      this._free();
      throw e;
    }
    const id = sampleToken(out.logits, p, this._random);
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
      const [, layers, heads, positions] = out.attention.shape;
      value.attention = { layers, heads, positions, data: out.attention.data };
    }
    return { done: false, value };
  }
}

/**
 * An assistant's turn (CausalLM#chat): an async iterator of the tokens generate() gives, whose final value
 * (done: true) is the message. Delegates to its Generation.
 */
export class ChatTurn {
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
   * Runs the turn to its end (the tokens not yet taken) and resolves to the assistant's message; rejects with a
   * step's error.
   * @returns {Promise<{ role: 'assistant', content: string }>}
   */
  async finalMessage() {
    while (!(await this.next()).done);
    return this.message;
  }
}

/** generation_config.json (parsed, text or bytes) as a frozen object; a key given twice is refused, as in config.json. */
export async function readGenerationConfig(given) {
  const { parseJson } = await import('./tokenizer/json.js');
  return Object.freeze(structuredClone(parseJson(given, 'generation_config.json')));
}

/**
 * generation_config.json's eos_token_id, which transformers' generate() stops at (it replaces config.json's): the
 * ids as an array, null when it gives none; ids must be integers in [0, vocab) (else ERR_INVALID_ARGUMENT naming it).
 */
export function generationEos(generation, vocab) {
  const v = generation.eos_token_id;
  if (v == null) return null;
  const ids = Array.isArray(v) ? v : [v];
  for (let i = 0; i < ids.length; i++) {
    if (!Number.isInteger(ids[i]) || ids[i] < 0 || ids[i] >= vocab) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `generation_config.json eos_token_id${Array.isArray(v) ? `[${i}]` : ''}: expected a token id (an integer in [0, ${vocab})), got ${JSON.stringify(ids[i])}`);
    }
  }
  return ids.length ? [...new Set(ids)] : null;
}
