// CausalLM#generate (bindings/causal_lm.js) on the demo model (models/lm):
// the sampler against the distribution it claims (fixed seeds and counts),
// determinism for a seed, stop tokens, maxNewTokens and the context's end,
// an AbortSignal ending it within one token, break freeing the KV cache, the
// event loop getting a turn between tokens, the attention window, one step at
// a time under concurrent next() calls, and argument errors that name the
// option. Torch parity of the steps: causal_lm.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';
import { sampleToken, SeededRandom } from '../../bindings/causal_lm.js';

const aw = await init({ threads: 1 });
const lm = await aw.loadModel(new URL('../../models/lm/lm.safetensors', import.meta.url));
const collect = async (g) => { const out = []; for await (const t of g) out.push(t); return out; };

test('SeededRandom: the same seed gives the same numbers, in [0, 1), uniform', () => {
  const a = new SeededRandom(42), b = new SeededRandom(42), c = new SeededRandom(43);
  const xs = Array.from({ length: 20000 }, () => a.next());
  assert.deepEqual(xs.slice(0, 50), Array.from({ length: 50 }, () => b.next()));
  assert.notEqual(xs[0], c.next());
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  const bins = new Array(10).fill(0);
  for (const x of xs) bins[Math.floor(x * 10)]++;
  for (const n of bins) assert.ok(Math.abs(n - 2000) < 200, `bin ${n}`);  // 4.5 sigma
  assert.notEqual(new SeededRandom(2 ** 32).next(), new SeededRandom(0).next(), 'the high 32 bits count');
});

test('sampleToken: greedy is the first largest; temperature, top-k and top-p give the distributions they claim', () => {
  const logits = Float32Array.of(1, 3, 3, 0.5, 2, -1);
  assert.equal(sampleToken(logits, { temperature: 0, topK: 0, topP: 1 }, null), 1, 'argmax: the first of a tie');
  const draw = (p, n, seed) => {
    const r = new SeededRandom(seed), counts = new Array(logits.length).fill(0);
    for (let i = 0; i < n; i++) counts[sampleToken(logits, p, r)]++;
    return counts.map((c) => c / n);
  };
  const softmax = (xs) => { const m = Math.max(...xs), e = xs.map((x) => Math.exp(x - m)), z = e.reduce((a, b) => a + b); return e.map((x) => x / z); };
  const near = (got, want, what) => got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) < 0.01, `${what}: id ${i}: ${g} vs ${want[i]}`));
  near(draw({ temperature: 1, topK: 0, topP: 1 }, 40000, 1), softmax([...logits]), 'temperature 1');
  near(draw({ temperature: 0.5, topK: 0, topP: 1 }, 40000, 2), softmax([...logits].map((x) => x / 0.5)), 'temperature 0.5');
  // top-k 3: ids 1, 2 (3) and 4 (2) — renormalised.
  near(draw({ temperature: 1, topK: 3, topP: 1 }, 40000, 3), softmax([-Infinity, 3, 3, -Infinity, 2, -Infinity]), 'top-k 3');
  // top-p 0.8: the probabilities sorted are 0.37, 0.37, 0.136, …: the two 3s sum to 0.745 < 0.8, with the 2 to 0.88.
  near(draw({ temperature: 1, topK: 0, topP: 0.8 }, 40000, 4), softmax([-Infinity, 3, 3, -Infinity, 2, -Infinity]), 'top-p 0.8');
  near(draw({ temperature: 1, topK: 0, topP: 0.7 }, 40000, 5), softmax([-Infinity, 3, 3, -Infinity, -Infinity, -Infinity]), 'top-p 0.7');
  // top-k then top-p, as Hugging Face applies them: of (3, 2.5) left by top-k 2, p(3) = 0.62 >= 0.5 alone.
  const r = new SeededRandom(6), two = Float32Array.of(1, 3, 2.5, 0.5, 2, -1);
  for (let i = 0; i < 1000; i++) assert.equal(sampleToken(two, { temperature: 1, topK: 2, topP: 0.5 }, r), 1);
  let seen2 = 0;
  for (let i = 0; i < 1000; i++) seen2 += sampleToken(two, { temperature: 1, topK: 2, topP: 0.7 }, r) === 2;
  assert.ok(seen2 > 300 && seen2 < 460, `top-k 2, top-p 0.7: id 2 drawn ${seen2} of 1000 (p 0.38)`);
});

test('greedy (temperature 0, the default) ignores the seed; a seed gives the same tokens every time, another seed others', async () => {
  const ids = async (o) => (await collect(lm.generate('The ', { maxNewTokens: 40, stopTokens: [], ...o }))).map((t) => t.id);
  assert.deepEqual(await ids({ seed: 1 }), await ids({ seed: 2 }));
  const a = await ids({ temperature: 0.9, seed: 123 });
  assert.deepEqual(await ids({ temperature: 0.9, seed: 123 }), a);
  assert.notDeepEqual(await ids({ temperature: 0.9, seed: 124 }), a);
  const g = lm.generate('The ', { temperature: 0.9 });
  assert.ok(Number.isSafeInteger(g.seed), 'an unseeded generation tells its seed');
  const again = await collect(lm.generate('The ', { temperature: 0.9, seed: g.seed }));
  const first = await collect(g);
  assert.deepEqual(first.map((t) => t.id), again.map((t) => t.id), 'its seed reproduces it');
});

test('the steps after the first copy their logits into the first step\'s array, and give the tokens fresh arrays give', async () => {
  const own = Object.getPrototypeOf(lm)._stepper;
  const run = async (wrap) => {
    lm._stepper = function stepper() { return wrap(own.call(this)); };
    try {
      return (await collect(lm.generate('The ', { maxNewTokens: 24, stopTokens: [], temperature: 0.9, seed: 7 }))).map((t) => t.id);
    } finally {
      delete lm._stepper;
    }
  };
  const intos = [], outs = [];
  const got = await run((s) => ({ ...s, append: (c, ids, p, into) => { intos.push(into); const o = s.append(c, ids, p, into); outs.push(o.logits); return o; } }));
  const want = await run((s) => ({ ...s, append: (c, ids, p) => s.append(c, ids, p, null) }));
  assert.deepEqual(got, want);
  assert.equal(intos[0], null, 'the first step gets no array');
  assert.ok(outs.length > 2 && outs.every((o) => o === outs[0]), 'every step returns the first step\'s array');
  assert.ok(intos.slice(1).every((o) => o === outs[0]), 'and is given it');
});

test('each token: id, text, ms, index; stop tokens end it unyielded; maxNewTokens; the text is the tokens joined', async () => {
  const g = lm.generate('Q: What is ', { maxNewTokens: 300, temperature: 0.8, seed: 5 });
  const toks = await collect(g);
  assert.equal(g.stopReason, 'stop', 'the demo model ends its fortune with <eos> (id 0) within 300 characters at this seed');
  assert.ok(toks.every((t, i) => t.index === i && typeof t.text === 'string' && t.text.length === 1 && t.ms >= 0 && t.id !== 0));
  assert.equal(g.text, toks.map((t) => t.text).join(''));
  assert.deepEqual(g.ids, toks.map((t) => t.id));
  assert.deepEqual([...g.promptIds], [...lm.encode('Q: What is ')]);
  const h = lm.generate('Q: What is ', { maxNewTokens: 7, temperature: 0.8, seed: 5, stopTokens: [] });
  assert.deepEqual((await collect(h)).map((t) => t.id), toks.slice(0, 7).map((t) => t.id));
  assert.equal(h.stopReason, 'length');
  // A stop token of one's own: the first 'e'.
  const e = lm.tokenizer.tokenToId('e');
  const k = lm.generate('Q: What is ', { maxNewTokens: 300, temperature: 0.8, seed: 5, stopTokens: [e] });
  const upToE = await collect(k);
  assert.equal(k.stopReason, 'stop');
  assert.deepEqual(upToE.map((t) => t.id), toks.slice(0, toks.findIndex((t) => t.id === e)).map((t) => t.id));
});

test('the context: generation ends at maxPositions ("context"); a prompt that fills it is refused', async () => {
  const small = await aw.loadModel(new URL('../data/goldens/lm/models/llama_untied_gqa2_hd8/model.safetensors', import.meta.url),
    { config: JSON.parse((await import('node:fs')).readFileSync(new URL('../data/goldens/lm/models/llama_untied_gqa2_hd8/config.json', import.meta.url))) });
  const P = small.maxPositions;
  const g = small.generate(new Array(P - 5).fill(1), { maxNewTokens: 100, stopTokens: [] });
  const toks = await collect(g);
  assert.equal(g.stopReason, 'context');
  assert.equal(toks.length, 6, 'the last token is chosen by position maxPositions − 1');
  assert.throws(() => small.generate(new Array(P).fill(1)), (e) => e.code === 'ERR_OUT_OF_RANGE'
    && e.message === `prompt: expected fewer than maxPositions (${P}) tokens, got ${P}`);
  small.dispose();
});

test('an AbortSignal ends it within one token; break and return() free the KV cache; a finished one holds nothing', async () => {
  const base = aw.memory().inUseBytes;
  const ac = new AbortController();
  const g = lm.generate('The ', { maxNewTokens: 200, stopTokens: [], signal: ac.signal });
  let n = 0;
  for await (const t of g) {
    if (++n === 5) {
      ac.abort();
      assert.ok(aw.memory().inUseBytes > base, 'the KV cache lives while it runs');
    }
    assert.ok(n <= 5, `token ${t.index} after abort()`);
  }
  assert.equal(g.stopReason, 'aborted');
  assert.equal(aw.memory().inUseBytes, base, 'freed on abort');
  for await (const t of lm.generate('The ', { maxNewTokens: 200, stopTokens: [] })) if (t.index === 3) break;
  assert.equal(aw.memory().inUseBytes, base, 'freed on break');
  const done = new AbortController();
  done.abort();
  const none = lm.generate('The ', { signal: done.signal });
  assert.deepEqual(await collect(none), [], 'an aborted signal: no token');
  assert.equal(none.stopReason, 'aborted');
  assert.equal(aw.memory().inUseBytes, base);
  // return() while a step waits for its turn between tokens: the step then ends, no new cache is made.
  const g2 = lm.generate('The ', { maxNewTokens: 200, stopTokens: [] });
  await g2.next();
  const pending = g2.next();
  for (let i = 0; i < 5; i++) await Promise.resolve();  // the step starts and waits for its turn (a macrotask)
  await g2.return();
  assert.deepEqual(await pending, { done: true, value: undefined });
  assert.equal(aw.memory().inUseBytes, base, 'freed when return() came during a step');
});

test('the event loop gets a turn between tokens (a page stays responsive)', async () => {
  const turns = [];
  let immediate = 0;
  for await (const t of lm.generate('The ', { maxNewTokens: 30, stopTokens: [] })) {
    setImmediate(() => { immediate++; });
    turns.push(immediate);
  }
  // Every setImmediate queued while handling token i has run before token i + 1 arrives.
  turns.forEach((v, i) => assert.equal(v, i, `token ${i}`));
});

test('next() calls made before the last settled run one step at a time, in order', async () => {
  const g = lm.generate('The ', { maxNewTokens: 8, stopTokens: [] });
  const all = await Promise.all(Array.from({ length: 10 }, () => g.next()));
  assert.deepEqual(all.map((r) => r.done), [false, false, false, false, false, false, false, false, true, true]);
  assert.deepEqual(all.slice(0, 8).map((r) => r.value.index), [0, 1, 2, 3, 4, 5, 6, 7]);
  const serial = await collect(lm.generate('The ', { maxNewTokens: 8, stopTokens: [] }));
  assert.deepEqual(all.slice(0, 8).map((r) => r.value.id), serial.map((t) => t.id));
});

test('attention: each token carries the attention that chose it; the window limits it to the last keys', async () => {
  const prompt = 'A penny saved is a penny earned, but a penny spent is a penny gone; a penny lent is a penny lost to ' +
    'a friend who had none, and a penny found is a penny earned twice. ';
  const P = lm.encode(prompt).length;
  assert.ok(P > 128);
  const toks = await collect(lm.generate(prompt, { maxNewTokens: 3, stopTokens: [], attention: true }));
  toks.forEach((t, i) => {
    const { layers, heads, positions, data } = t.attention;
    assert.deepEqual([layers, heads, positions], [4, 4, P + i]);
    for (let r = 0; r < layers * heads; r++) {
      const row = data.subarray(r * positions, (r + 1) * positions);
      const behind = row.subarray(0, positions - 128);
      assert.ok(behind.every((x) => x === 0), 'the default window: the file\'s 128 keys');
      assert.ok(Math.abs(row.reduce((a, b) => a + b) - 1) < 1e-5);
    }
  });
  const all = await collect(lm.generate(prompt, { maxNewTokens: 1, stopTokens: [], attention: true, attentionWindow: null }));
  assert.ok(all[0].attention.data.subarray(0, P - 128).some((x) => x > 0), 'attentionWindow null: every key');
  const w8 = await collect(lm.generate(prompt, { maxNewTokens: 1, stopTokens: [], attention: true, attentionWindow: 8 }));
  const row = w8[0].attention.data.subarray(0, P);
  assert.ok(row.subarray(0, P - 8).every((x) => x === 0) && row.subarray(P - 8).every((x) => x > 0));
});

test('generate: options checked before the first token, errors naming the option; the model keeps working', async () => {
  const bad = [
    [{ maxNewTokens: 0 }, 'ERR_OUT_OF_RANGE', /^maxNewTokens: expected an integer in \[1, 1073741824\], got 0$/],
    [{ maxNewTokens: 2.5 }, 'ERR_INVALID_TYPE', /^maxNewTokens: expected an integer, got 2.5$/],
    [{ temperature: -1 }, 'ERR_OUT_OF_RANGE', /^temperature: expected a number in \[0, 1e6\] \(0: greedy\), got -1$/],
    [{ temperature: NaN }, 'ERR_OUT_OF_RANGE', /^temperature:/],
    [{ temperature: '1' }, 'ERR_INVALID_TYPE', /^temperature: expected a number, got string$/],
    [{ topK: -1 }, 'ERR_OUT_OF_RANGE', /^topK:/],
    [{ topP: 0 }, 'ERR_OUT_OF_RANGE', /^topP: expected a number in \(0, 1\] \(1: off\), got 0$/],
    [{ topP: 1.5 }, 'ERR_OUT_OF_RANGE', /^topP:/],
    [{ seed: 1.5 }, 'ERR_INVALID_TYPE', /^seed: expected an integer, got 1.5$/],
    [{ stopTokens: 0 }, 'ERR_INVALID_TYPE', /^stopTokens: expected an Array of token ids, got number$/],
    [{ stopTokens: [98] }, 'ERR_OUT_OF_RANGE', /^stopTokens\[0\]: expected an integer in \[0, 97\], got 98$/],
    [{ signal: {} }, 'ERR_INVALID_TYPE', /^signal: expected an AbortSignal, got Object$/],
    [{ attentionWindow: 0 }, 'ERR_OUT_OF_RANGE', /^attentionWindow: expected an integer in \[1, 2147483647\], got 0$/],
    [{ attention: 1 }, 'ERR_INVALID_TYPE', /^attention: expected a boolean, got number$/],
    [{ max_new_tokens: 5 }, 'ERR_INVALID_TYPE', /^generate options: unknown option 'max_new_tokens' \(expected one of maxNewTokens, /],
    [[], 'ERR_INVALID_TYPE', /^generate options: expected an object, got Array$/],
  ];
  for (const [o, code, re] of bad) assert.throws(() => lm.generate('The ', o), (e) => e.code === code && re.test(e.message), JSON.stringify(o));
  assert.throws(() => lm.generate(42), (e) => e.code === 'ERR_INVALID_TYPE' && /^prompt: expected a string or an Array \/ Int32Array of token ids, got number$/.test(e.message));
  assert.throws(() => lm.generate([]), (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.message === 'prompt: expected at least one token id, got none');
  assert.throws(() => lm.generate([1, 98]), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.message === 'prompt[1]: expected an integer in [0, 97], got 98');
  assert.equal((await collect(lm.generate('The ', { maxNewTokens: 2, stopTokens: [] }))).length, 2, 'still works');
});

test('dispose() or close() during a generation: the next step throws ERR_DISPOSED / ERR_CLOSED and frees the cache', async () => {
  const rt = await init({ threads: 1 });
  const m = await rt.loadModel(new URL('../../models/lm/lm.safetensors', import.meta.url));
  const g = m.generate('The ', { stopTokens: [] });
  await g.next();
  m.dispose();
  await assert.rejects(g.next(), (e) => e.code === 'ERR_DISPOSED');
  assert.equal(g.stopReason, 'error');
  assert.equal((await g.next()).done, true);
  const m2 = await rt.loadModel(new URL('../../models/lm/lm.safetensors', import.meta.url));
  const g2 = m2.generate('The ', { stopTokens: [] });
  await g2.next();
  await rt.close();
  await assert.rejects(g2.next(), (e) => e.code === 'ERR_CLOSED');
});

test.after(() => lm.dispose());
