// The causal LM family through the JS API (bindings/causal_lm.js, models.js):
// aw.loadModel of Hugging Face checkpoints with their config.json and of
// files exported with export_causal_lm, against the PyTorch goldens of
// tests/data/make_lm_goldens.py (logits of every position ≤ 1e-4 + 1e-4·|x|,
// the last token's attention, greedy continuations); the refusals of
// refusals/cases.json by name, the runtime still working after each; the demo
// model (models/lm) against its reference.json; text in and out with a
// tokenizer.json (a checkpoint written here over the GPT-2 test tokenizer);
// and forward's argument errors. Generation's own behaviour (sampling,
// abort, the event loop, memory): generate.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../bindings/index.js';
import { Tokenizer } from '../../bindings/tokenizer.js';

const LM = new URL('../data/goldens/lm/', import.meta.url);
const aw = await init({ threads: 1 });
const read = (rel) => readFileSync(new URL(rel, LM));
const MODELS = ['llama_bias_gqa4_hd64', 'llama_tied_bias_gqa8_hd8', 'llama_tied_gqa2_hd128_bf16',
  'llama_untied_gqa2_hd8', 'qwen2_tied_gqa3_hd16_bf16', 'qwen2_untied_gqa1_hd32_f16',
  // Issue 28: random RoPE bases written where transformers 5.x writes them (rope_parameters) and 4.x (rope_theta).
  'llama_v5_rope_parameters', 'qwen2_v5_rope_parameters', 'llama_v4_random_base'];

/** { tensors: name → {data, shape}, case } of an expected.safetensors. */
function golden(name) {
  const { tensors, metadata } = aw.loadSafetensors(read(`models/${name}/expected.safetensors`), { metadata: true });
  return { t: tensors, spec: JSON.parse(metadata.case) };
}

/** Loads a golden checkpoint as a user would: with its config.json unless the file carries its config. */
async function loadGolden(name, spec) {
  const bytes = read(`models/${name}/model.safetensors`);
  return spec.checkpoint.attnwasmMetadata ? aw.loadModel(bytes)
    : aw.loadModel(bytes, { config: JSON.parse(read(`models/${name}/config.json`)) });
}

/** max over i of |got − want| / (atol + rtol·|want|): ≤ 1 passes. */
function ratio(got, want, atol, rtol) {
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const r = Math.abs(got[i] - want[i]) / (atol + rtol * Math.abs(want[i]));
    worst = Math.max(worst, Number.isNaN(r) ? Infinity : r);
  }
  return worst;
}

test('the goldens cover what issue 24 asks: head dims 8–128, GQA 1–8, BF16/F16/F32, tied and untied, biases, both families', () => {
  const shapes = MODELS.map((n) => golden(n).spec);
  const s = (k) => shapes.map((c) => c.shape[k]);
  assert.deepEqual([Math.min(...s('headDim')), Math.max(...s('headDim'))], [8, 128]);
  assert.deepEqual([Math.min(...s('gqaRatio')), Math.max(...s('gqaRatio'))], [1, 8]);
  assert.deepEqual(new Set(shapes.map((c) => c.checkpoint.dtype)), new Set(['F32', 'F16', 'BF16']));
  assert.deepEqual(new Set(s('tied')), new Set([true, false]));
  assert.deepEqual(new Set(s('qkvBias')), new Set([true, false]));
  assert.deepEqual(new Set(s('modelType')), new Set(['llama', 'qwen2']));
  assert.deepEqual(new Set(shapes.map((c) => c.checkpoint.attnwasmMetadata)), new Set([true, false]));
});

for (const name of MODELS) {
  test(`${name}: forward's logits, the KV-cache steps' logits and attention, greedy ids equal torch`, async () => {
    const { t, spec } = golden(name);
    const lm = await loadGolden(name, spec);
    try {
      assert.equal(lm.constructor.name, 'CausalLM');
      assert.equal(lm.modelType, spec.shape.modelType);
      const ids = t['input.ids'];
      const [B, T] = ids.shape;
      const want = t['expected.logits'].data;
      const { logits } = lm.forward(ids);
      assert.deepEqual(logits.shape, [B, T, lm.vocabSize]);
      const r = ratio(logits.data, want, spec.atol, spec.rtol);
      assert.ok(r <= 1, `forward: ${r.toFixed(3)} of the tolerance`);
      // Each sequence through generate: the prompt's last logits choose token 1 (greedy), whose attention is the
      // golden's last_attention; then the continuation's logits at every later position (teacher-forced: the
      // golden's own ids as prompts of growing length equal forward's rows, checked above).
      const V = lm.vocabSize;
      const att = t['expected.last_attention'];
      const [L, , H] = att.shape;
      for (let b = 0; b < B; b++) {
        const row = ids.data.subarray(b * T, (b + 1) * T);
        const g = lm.generate(row, { maxNewTokens: 1, stopTokens: [], attention: true });
        const { value } = await g.next();
        const last = want.subarray((b * T + T - 1) * V, (b * T + T) * V);
        let best = 0;
        for (let i = 1; i < V; i++) if (last[i] > last[best]) best = i;
        assert.equal(value.id, best, `sequence ${b}: greedy token after the prompt`);
        assert.deepEqual([value.attention.layers, value.attention.heads, value.attention.positions], [L, H, T]);
        for (let l = 0; l < L; l++) {
          for (let h = 0; h < H; h++) {
            const got = value.attention.data.subarray((l * H + h) * T, (l * H + h + 1) * T);
            const exp = att.data.subarray(((l * B + b) * H + h) * T, ((l * B + b) * H + h + 1) * T);
            assert.ok(ratio(got, exp, spec.atol, spec.rtol) <= 1, `sequence ${b} layer ${l} head ${h}: attention`);
          }
        }
        assert.equal((await g.next()).done, true);
        assert.equal(g.stopReason, 'length');
      }
      for (const gr of spec.greedy) {
        const prompt = t[gr.prompt].data, ids2 = t[gr.ids].data, margins = t[gr.margins].data;
        const got = [];
        for await (const tok of lm.generate(prompt, { maxNewTokens: ids2.length, stopTokens: [] })) got.push(tok.id);
        const n = margins.findIndex((m) => m < spec.greedyMinMargin);
        const upTo = n < 0 ? ids2.length : n;
        assert.deepEqual(got.slice(0, upTo), [...ids2.slice(0, upTo)], `${gr.prompt}: greedy ids`);
      }
    } finally {
      lm.dispose();
    }
  });
}

test('refusals/cases.json: what the family cannot run exactly is refused by the key or tensor name; the runtime keeps working', async () => {
  const { cases } = JSON.parse(read('refusals/cases.json'));
  assert.ok(cases.length >= 15);
  for (const c of cases) {
    const bytes = read(`${c.checkpoint}/model.safetensors`);
    const config = read(`${c.checkpoint}/config.json`);  // bytes: loadModel takes them too
    if (c.expect === 'accepted') {
      const lm = await aw.loadModel(bytes, { config });
      assert.equal(lm.constructor.name, 'CausalLM', c.name);
      lm.dispose();
    } else {
      await assert.rejects(aw.loadModel(bytes, { config }), (e) => {
        assert.ok(e.message.includes(c.errorMentions), `${c.name}: ${e.message}`);
        assert.ok(['ERR_INVALID_ARGUMENT', 'ERR_STATE_DICT', 'ERR_SHAPE'].includes(e.code), `${c.name}: ${e.code}`);
        return true;
      });
    }
  }
  const lm = await loadGolden('llama_untied_gqa2_hd8', golden('llama_untied_gqa2_hd8').spec);
  assert.equal(lm.forward({ data: Int32Array.of(1, 2, 3), shape: [1, 3] }).logits.shape[2], lm.vocabSize);
  lm.dispose();
});

test('config.json is read one way: a key given twice, a token id that is not one, a base in both places are refused by name', async () => {
  const bytes = read('models/llama_untied_gqa2_hd8/model.safetensors');
  const text = read('models/llama_untied_gqa2_hd8/config.json').toString();
  const config = JSON.parse(text);
  // vocab_size twice (JSON.parse keeps the last, the native reader the first): refused, as text or bytes.
  const twice = text.replace('"vocab_size": 61', '"vocab_size": 61, "vocab_size": 100');
  assert.notEqual(twice, text);
  for (const c of [twice, new TextEncoder().encode(twice)]) {
    await assert.rejects(aw.loadModel(bytes, { config: c }),
      (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.message === 'config: expected unique keys, got "vocab_size" more than once');
  }
  const refused = [
    [{ eos_token_id: 'two' }, 'config.eos_token_id: expected an id in [0, 60] (vocab_size 61) or null, or a list of ids, got "two"'],
    [{ eos_token_id: 61 }, 'config.eos_token_id: expected an id in [0, 60] (vocab_size 61) or null, or a list of ids, got 61'],
    [{ eos_token_id: [2, 61] }, 'config.eos_token_id[1]: expected an id in [0, 60] (vocab_size 61), got 61'],
    [{ bos_token_id: -1 }, 'config.bos_token_id: expected an id in [0, 60] (vocab_size 61) or null, got -1'],
    [{ rope_parameters: { rope_theta: 0, rope_type: 'default' } }, 'config.rope_parameters.rope_theta: expected a finite number > 0, got 0'],
    [{ rope_parameters: { rope_theta: 5e5, rope_type: 'default' } },
      'config.rope_parameters.rope_theta: expected the same base as rope_theta (10000) when both are given, got 500000'],
  ];
  for (const [patch, message] of refused) {
    await assert.rejects(aw.loadModel(bytes, { config: { ...config, ...patch } }),
      (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.message === message, JSON.stringify(patch));
  }
  // The edges pass: the last id of the vocabulary, a list of them, null.
  const lm = await aw.loadModel(bytes, { config: { ...config, eos_token_id: [0, 60], bos_token_id: null, pad_token_id: 60 } });
  assert.deepEqual(lm.eosTokenIds, [0, 60]);
  lm.dispose();
});

test('config and tokenizer options: types, kinds and mismatches are errors that name them', async () => {
  const bytes = read('models/llama_untied_gqa2_hd8/model.safetensors');
  const config = JSON.parse(read('models/llama_untied_gqa2_hd8/config.json'));
  await assert.rejects(aw.loadModel(bytes), (e) => e.code === 'ERR_INVALID_ARGUMENT'
    && /no "attnwasm.config" metadata .*pass a Hugging Face checkpoint's config.json: loadModel\(bytes, \{ config \}\)/.test(e.message));
  await assert.rejects(aw.loadModel(bytes, { config: 42 }), (e) => e.code === 'ERR_INVALID_TYPE' && /^config: expected a Hugging Face config.json/.test(e.message));
  await assert.rejects(aw.loadModel(bytes, { config: '' }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /^config:/.test(e.message));
  await assert.rejects(aw.loadModel(bytes, { config: '{"model_type": "llama",' }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /^config: not valid JSON/.test(e.message));
  await assert.rejects(aw.loadModel(bytes, { config: { ...config, rope_scaling: { rope_type: 'llama3', factor: 8 } } }),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && /^config\.rope_scaling\.low_freq_factor: expected a finite number > 0, got nothing/.test(e.message));
  await assert.rejects(aw.loadModel(bytes, { config: { ...config, hidden_size: 64 } }),
    (e) => e.code === 'ERR_STATE_DICT' && /model\.embed_tokens\.weight/.test(e.message));
  await assert.rejects(aw.loadTranslator(bytes, { config }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /^config: only a causal LM/.test(e.message));
  await assert.rejects(aw.loadModel(bytes, { config, tokenizer: 7 }), (e) => e.code === 'ERR_INVALID_TYPE' && /^tokenizer: expected a tokenizer.json/.test(e.message));
  await assert.rejects(aw.loadModel(bytes, { config, tokenizer: { model: { type: 'WordPiece' } } }), (e) => e.code === 'ERR_UNSUPPORTED');
  const gpt2 = readFileSync(new URL('../data/goldens/tokenizer/gpt2_3k.json', import.meta.url), 'utf8');
  await assert.rejects(aw.loadModel(bytes, { config, tokenizer: gpt2 }),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && /^tokenizer: it has \d+ ids, more than the model's vocab_size \(\d+\)$/.test(e.message));
  await assert.rejects(aw.loadModel(new URL('../../models/translator/translator.safetensors', import.meta.url), { tokenizer: gpt2 }),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && /only a causal LM takes a tokenizer/.test(e.message));
});

test('forward: ids must be an Int32Array tensor (B, T) of ids in the vocabulary, T ≤ maxPositions', async () => {
  const { spec } = golden('qwen2_untied_gqa1_hd32_f16');
  const lm = await loadGolden('qwen2_untied_gqa1_hd32_f16', spec);
  const V = lm.vocabSize;
  assert.throws(() => lm.forward(Int32Array.of(1, 2)), (e) => e.code === 'ERR_INVALID_TYPE' && /^ids: expected a tensor object/.test(e.message));
  assert.throws(() => lm.forward({ data: Float32Array.of(1, 2), shape: [1, 2] }), (e) => e.code === 'ERR_DTYPE' && /^ids.data: expected an Int32Array/.test(e.message));
  assert.throws(() => lm.forward({ data: Int32Array.of(1, 2), shape: [2] }), (e) => e.code === 'ERR_SHAPE' && e.message === 'ids: expected (batch, tokens), got (2,)');
  assert.throws(() => lm.forward({ data: Int32Array.of(1, V), shape: [1, 2] }), (e) => /ids/.test(e.message) && new RegExp(`${V}`).test(e.message));
  assert.throws(() => lm.forward({ data: Int32Array.of(1, -1), shape: [1, 2] }), (e) => /ids/.test(e.message));
  const T = lm.maxPositions + 1;
  assert.throws(() => lm.forward({ data: new Int32Array(T), shape: [1, T] }), (e) => e.code === 'ERR_OUT_OF_RANGE' && /^ids.shape\[1\] \(tokens\)/.test(e.message));
  assert.equal(lm.forward({ data: Int32Array.of(3, 1, 4, 1, 5, 9), shape: [2, 3] }).logits.data.length, 6 * V, 'still works');
  lm.dispose();
  assert.throws(() => lm.forward({ data: Int32Array.of(1), shape: [1, 1] }), (e) => e.code === 'ERR_DISPOSED');
});

test('the demo model (models/lm): reference.json greedy ids and first logits from torch, its tokenizer and window', async () => {
  const lm = await aw.loadCausalLM(new URL('../../models/lm/lm.safetensors', import.meta.url));
  assert.ok(lm instanceof aw.CausalLM && !(lm instanceof aw.Translator));
  await assert.rejects(aw.loadCausalLM(new URL('../../models/vit/vit.safetensors', import.meta.url)),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.message === 'source: attnwasm.config: expected a "causal_lm" model, got "vit"');
  const ref = JSON.parse(readFileSync(new URL('../../models/lm/reference.json', import.meta.url), 'utf8'));
  assert.equal(lm.attentionWindow, 128);
  assert.deepEqual(lm.eosTokenIds, [0]);
  assert.equal(lm.tokenizer.constructor.name, 'CharTokenizer');
  for (const it of ref.items) {
    const ids = lm.encode(it.prompt);
    assert.deepEqual([...ids], it.promptIds, `${JSON.stringify(it.prompt)}: prompt ids (<eos> first)`);
    const { logits } = lm.forward({ data: ids, shape: [1, ids.length] });
    const last = logits.data.subarray((ids.length - 1) * lm.vocabSize);
    assert.ok(ratio(last, it.firstLogits, 1e-4, 1e-4) <= 1, 'first logits');
    const g = lm.generate(it.prompt, { maxNewTokens: it.greedyIds.length, stopTokens: [] });
    const got = [];
    for await (const t of g) got.push(t.id);
    const n = it.margins.findIndex((m) => m < 1e-3);
    assert.deepEqual(got.slice(0, n < 0 ? undefined : n), it.greedyIds.slice(0, n < 0 ? undefined : n), JSON.stringify(it.prompt));
    assert.equal(g.text, it.greedyText);
    assert.equal(lm.decode(got), it.greedyText);
  }
  assert.throws(() => lm.encode('naïve'), (e) => e.code === 'ERR_INVALID_ARGUMENT'
    && e.message === "text: this model's vocabulary has no 'ï' (U+00EF, character 2); it writes printable ASCII, tab and newline only");
  assert.throws(() => lm.generate('A ☃ snowman'), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /no '☃' \(U\+2603, character 2\)/.test(e.message));
  // Ids at the edge of the vocabulary: the last decodes, the first past it (vocabSize) is ERR_OUT_OF_RANGE
  // everywhere an id goes in — never the text 'undefined'.
  const V = lm.vocabSize;
  assert.equal(lm.decode([V - 1]).length > 0, true);
  assert.throws(() => lm.decode([V]), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.message === `ids[0]: expected an id in [0, ${V - 1}], got ${V}`);
  assert.equal(typeof lm.tokenizer.streamDecoder().push(V - 1), 'string');
  assert.throws(() => lm.tokenizer.streamDecoder().push(V), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.message.includes(`got ${V}`));
  assert.throws(() => lm.generate([1, V]), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.message === `prompt[1]: expected an integer in [0, ${V - 1}], got ${V}`);
  assert.throws(() => lm.generate([1], { stopTokens: [V] }), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.message.startsWith('stopTokens[0]:'));
  await lm.generate([V - 1], { maxNewTokens: 1 }).next();
  assert.equal(lm.decode([0, 40, 41]), '<eos>EF');
  assert.equal(lm.decode([0, 40, 41], { skipSpecialTokens: true }), 'EF');
  lm.dispose();
});

// ---- text in, text out: a Hugging Face checkpoint with a tokenizer.json ----

/** Safetensors bytes of F32 tensors (name → {data, shape}), metadata {"format": "pt"} as HF writes it. */
function safetensors(tensors) {
  const header = { __metadata__: { format: 'pt' } };
  let off = 0;
  for (const [k, t] of Object.entries(tensors)) {
    header[k] = { dtype: 'F32', shape: t.shape, data_offsets: [off, off + t.data.byteLength] };
    off += t.data.byteLength;
  }
  let h = JSON.stringify(header);
  h += ' '.repeat((8 - (h.length % 8)) % 8);
  const out = new Uint8Array(8 + h.length + off);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(new TextEncoder().encode(h), 8);
  let at = 8 + h.length;
  for (const t of Object.values(tensors)) { out.set(new Uint8Array(t.data.buffer), at); at += t.data.byteLength; }
  return out;
}

test('loadModel(weights, { config, tokenizer }): generate(text) yields text; the stream joins to decode(ids)', async () => {
  const tokJson = readFileSync(new URL('../data/goldens/tokenizer/gpt2_3k.json', import.meta.url), 'utf8');
  const tok = Tokenizer.fromJSON(tokJson);
  const config = {
    model_type: 'qwen2', vocab_size: tok.vocabSize + 3, hidden_size: 32, intermediate_size: 48, num_hidden_layers: 2,
    num_attention_heads: 4, num_key_value_heads: 2, max_position_embeddings: 64, tie_word_embeddings: true,
    rms_norm_eps: 1e-6, rope_theta: 1e6, eos_token_id: tok.tokenToId('<|endoftext|>'),
  };
  // Random weights (a seeded generator): an HF-named state dict for this config, made with the runtime's own modules.
  let s = 12345;
  const rnd = (n, scale) => Float32Array.from({ length: n }, () => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return ((s >>> 8) / 2 ** 24 - 0.5) * scale; });
  const E = 32, KD = 16, I = 48, V = config.vocab_size;
  const sd = { 'model.embed_tokens.weight': { data: rnd(V * E, 2), shape: [V, E] } };
  for (let l = 0; l < 2; l++) {
    const p = `model.layers.${l}.`;
    Object.assign(sd, {
      [`${p}self_attn.q_proj.weight`]: { data: rnd(E * E, 0.6), shape: [E, E] }, [`${p}self_attn.q_proj.bias`]: { data: rnd(E, 0.2), shape: [E] },
      [`${p}self_attn.k_proj.weight`]: { data: rnd(KD * E, 0.6), shape: [KD, E] }, [`${p}self_attn.k_proj.bias`]: { data: rnd(KD, 0.2), shape: [KD] },
      [`${p}self_attn.v_proj.weight`]: { data: rnd(KD * E, 0.6), shape: [KD, E] }, [`${p}self_attn.v_proj.bias`]: { data: rnd(KD, 0.2), shape: [KD] },
      [`${p}self_attn.o_proj.weight`]: { data: rnd(E * E, 0.6), shape: [E, E] },
      [`${p}mlp.gate_proj.weight`]: { data: rnd(I * E, 0.6), shape: [I, E] }, [`${p}mlp.up_proj.weight`]: { data: rnd(I * E, 0.6), shape: [I, E] },
      [`${p}mlp.down_proj.weight`]: { data: rnd(E * I, 0.6), shape: [E, I] },
      [`${p}input_layernorm.weight`]: { data: rnd(E, 0.5).map((x) => 1 + x), shape: [E] },
      [`${p}post_attention_layernorm.weight`]: { data: rnd(E, 0.5).map((x) => 1 + x), shape: [E] },
    });
  }
  sd['model.norm.weight'] = { data: rnd(E, 0.5).map((x) => 1 + x), shape: [E] };
  const lm = await aw.loadModel(safetensors(sd), { config, tokenizer: tokJson });
  assert.equal(lm.tokenizer.constructor.name, 'Tokenizer');
  assert.deepEqual(lm.eosTokenIds, [config.eos_token_id]);
  const prompt = 'Hello wörld 🙂 1234';
  assert.deepEqual([...lm.encode(prompt)], [...tok.encode(prompt)]);
  const g = lm.generate(prompt, { maxNewTokens: 24, temperature: 1.5, seed: 7, stopTokens: [] });
  let streamed = '';
  for await (const t of g) {
    assert.equal(typeof t.text, 'string');
    streamed += t.text;
  }
  assert.equal(g.ids.length, 24);
  assert.ok(g.text.startsWith(streamed) && g.text.length - streamed.length <= 1, 'the stream is the text (an unfinished UTF-8 tail at most)');
  assert.equal(g.text, tok.decode(g.ids, { skipSpecialTokens: true }), 'the streamed text is decode(ids)');
  // Greedy generation = argmax of forward's last row at every step (the KV cache against the parity path).
  const greedy = [];
  for await (const t of lm.generate(prompt, { maxNewTokens: 6, stopTokens: [] })) greedy.push(t.id);
  const seq = [...tok.encode(prompt)];
  for (const id of greedy) {
    const { logits } = lm.forward({ data: Int32Array.from(seq), shape: [1, seq.length] });
    const last = logits.data.subarray((seq.length - 1) * V);
    let best = 0;
    for (let i = 1; i < V; i++) if (last[i] > last[best]) best = i;
    assert.equal(id, best);
    seq.push(id);
  }
  lm.dispose();
});
