// aw.Embedder (bindings/embedder.js) and its loading (models.js, checkpoint.js) on small sentence-transformers
// folders written in JS (embedder_checkpoint.mjs): every kind of folder source, the folder's files and the
// options over them, embed() against forward() pooled here in float64 (every pooling mode, concatenations,
// prompts), order and batch size, truncation, empty texts, threads and builds, errors by name, refusals,
// dispose, the event loop, the heap, cosineSimilarity. Exactness against the torch twin: embedder_goldens.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { init, cosineSimilarity } from '../../bindings/index.js';
import { encoderFolder, writeFolder } from './embedder_checkpoint.mjs';
import { lmConfig, lmTensors, safetensors } from './lm_checkpoint.mjs';

const aw = await init({ threads: 1 });
const enc = (x) => new TextEncoder().encode(JSON.stringify(x));
const TEXTS = ['Hello world.', 'The quick brown fox ran', '', 'a cat sat on the mat and the dog ran to the world', 'Cafe is', 'hello', 'searching passages quickly'];

let dir, server, base;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'attnwasm-embedder-'));
  server = createServer(async (req, res) => {
    try {
      const body = await readFile(join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
      res.writeHead(200, { 'Content-Length': body.byteLength }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}/`;
});
after(async () => {
  server?.closeAllConnections?.();
  await new Promise((r) => (server ? server.close(r) : r()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Bitwise equality of two results { data, shape }. */
function sameBits(a, b, what) {
  assert.deepEqual(a.shape, b.shape, `${what}: shape`);
  const x = new Uint32Array(a.data.buffer, a.data.byteOffset, a.data.length), y = new Uint32Array(b.data.buffer, b.data.byteOffset, b.data.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) assert.fail(`${what}: element ${i} differs: ${a.data[i]} vs ${b.data[i]}`);
}
/** max |a − b| / max(1, |b|): float32's rounding relative to the value (mean_sqrt_len's grow with √length). */
function maxDiff(a, b) {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i])));
  return m;
}
/** Rows `rows` of a result (n, d) as a new result. */
const pick = (r, rows) => {
  const d = r.shape[1];
  const data = new Float32Array(rows.length * d);
  rows.forEach((i, k) => data.set(r.data.subarray(i * d, (i + 1) * d), k * d));
  return { data, shape: [rows.length, d] };
};

/**
 * sentence-transformers' Pooling (+ Normalize) in float64 from forward()'s lastHiddenState (B, T, E) and the
 * mask (B, T), its first `skip` tokens masked as include_prompt false does: the reference embed() must meet.
 */
function refPool(hidden, mask, modes, { skip = 0, normalize = false } = {}) {
  const [B, T, E] = hidden.shape;
  const out = [];
  for (let b = 0; b < B; b++) {
    const m = Array.from({ length: T }, (_, t) => (t < skip ? 0 : mask[b * T + t]));
    const h = (t, j) => hidden.data[(b * T + t) * E + j];
    const count = m.reduce((s, x) => s + x, 0);
    let v = [];
    for (const mode of modes.split('+')) {
      for (let j = 0; j < E; j++) {
        if (mode === 'cls') v.push(h(0, j));
        else if (mode === 'max') v.push(Math.max(...m.map((x, t) => (x ? h(t, j) : -1e9))));
        else if (mode === 'mean' || mode === 'mean_sqrt_len') {
          const s = m.reduce((acc, x, t) => acc + x * h(t, j), 0);
          v.push(s / (mode === 'mean' ? Math.max(count, 1e-9) : Math.sqrt(Math.max(count, 1e-9))));
        } else if (mode === 'weightedmean') {
          const w = m.reduce((acc, x, t) => acc + x * (t + 1), 0);
          v.push(m.reduce((acc, x, t) => acc + x * (t + 1) * h(t, j), 0) / Math.max(w, 1e-9));
        } else if (mode === 'lasttoken') {
          const last = mask.slice(b * T, (b + 1) * T).lastIndexOf(1);
          v.push(m[last] ? h(last, j) : 0);
        }
      }
    }
    if (normalize) {
      const n = Math.max(Math.sqrt(v.reduce((s, x) => s + x * x, 0)), 1e-12);
      v = v.map((x) => x / n);
    }
    out.push(...v);
  }
  return Float64Array.from(out);
}

/** Loads a folder's Map (encoderFolder) from disk as a Node path. */
async function loadFolder(name, files, options) {
  return aw.loadModel(writeFolder(join(dir, name), files), options);
}

test('a sentence-transformers folder loads from a Node path, a base URL, a Map and a folder pick, with the same embeddings', async () => {
  const files = encoderFolder({ pooling: { pooling_mode_cls_token: true }, normalize: false, sbert: { max_seq_length: 12, do_lower_case: false } });
  const path = writeFolder(join(dir, 'sources'), files);
  const e = await aw.loadModel(path);
  assert.ok(e instanceof aw.Embedder);
  assert.equal(e.pooling, 'cls');
  assert.equal(e.normalize, false);
  assert.equal(e.maxTokens, 12);
  assert.equal(e.dimension, 32);
  assert.equal(e.hiddenSize, 32);
  assert.equal(e.modelType, 'bert');
  assert.equal(e.hasPooler, true);
  assert.equal(e.includePrompt, true);
  assert.equal(e.tokenizer.vocabSize, 106);
  const want = await e.embed(TEXTS);
  assert.deepEqual(want.shape, [TEXTS.length, 32]);
  e.dispose();
  // A folder pick: Files named by webkitRelativePath below the picked folder; 1_Pooling/config.json must not
  // shadow config.json (both orders), nor config.json 1_Pooling's.
  const picked = (order) => order.map(([name, bytes]) => {
    const f = new File([bytes], name.split('/').pop());
    Object.defineProperty(f, 'webkitRelativePath', { value: `picked/${name}` });
    return f;
  });
  const entries = [...files];
  const sources = {
    'a base URL': `${base}sources/`,
    'a file: URL': new URL(`file://${path}/`).href,
    'a Map': files,
    'a Map with longer paths': new Map(entries.map(([k, v]) => [`ckpt/${k}`, v])),
    'an object': Object.fromEntries(entries),
    'a folder pick': picked(entries),
    'a folder pick, 1_Pooling first': picked([...entries].reverse()),
  };
  for (const [what, source] of Object.entries(sources)) {
    const m = await aw.loadEmbedder(source);
    assert.equal(m.pooling, 'cls', what);
    assert.equal(m.maxTokens, 12, what);
    sameBits(await m.embed(TEXTS), want, what);
    m.dispose();
  }
});

test("the folder's files decide pooling, Normalize, max_seq_length, do_lower_case and prompts; a plain checkpoint is mean, not normalized", async () => {
  const e = await loadFolder('decide', encoderFolder({
    pooling: { pooling_mode_max_tokens: true }, normalize: true, sbert: { max_seq_length: 10, do_lower_case: true },
    extra: { 'config_sentence_transformers.json': { prompts: { query: 'query: ', passage: 'passage: ' }, default_prompt_name: 'query', similarity_fn_name: 'cosine' } },
  }));
  assert.deepEqual([e.pooling, e.normalize, e.maxTokens, e.doLowerCase, e.defaultPromptName], ['max', true, 10, true, 'query']);
  assert.deepEqual(e.prompts, { query: 'query: ', passage: 'passage: ' });
  const r = await e.embed(['HELLO World']);
  sameBits(r, await e.embed(['hello world'], { prompt: 'query: ' }), 'lowercased, the default prompt');
  sameBits(await e.embed(['x'], { promptName: 'passage' }), await e.embed(['passage: x'], { prompt: '' }), 'promptName');
  const norms = r.data.reduce((s, x) => s + x * x, 0);
  assert.ok(Math.abs(norms - 1) < 1e-6, `normalized: ‖x‖² = ${norms}`);
  e.dispose();
  // A 2.0-era Pooling config (fewer keys: Pooling's defaults, mean, for the rest), pooling_mode as a string.
  const old = await loadFolder('old', encoderFolder({ extra: { '1_Pooling/config.json': { word_embedding_dimension: 32, pooling_mode_cls_token: false, pooling_mode_max_tokens: false } } }));
  assert.equal(old.pooling, 'mean');
  old.dispose();
  const byName = await loadFolder('byname', encoderFolder({ extra: { '1_Pooling/config.json': { word_embedding_dimension: 32, pooling_mode: 'lasttoken' } } }));
  assert.equal(byName.pooling, 'lasttoken');
  byName.dispose();
  // No sentence-transformers files: mean, not normalized, truncation at min(positions, model_max_length).
  const plain = await loadFolder('plain', encoderFolder({ st: false }));
  assert.deepEqual([plain.pooling, plain.normalize, plain.maxTokens, plain.includePrompt], ['mean', false, 40, true]);
  plain.dispose();
  // max_seq_length past the model's positions: the positions' limit (sentence-transformers would fail on a long text).
  const long = await loadFolder('long', encoderFolder({ sbert: { max_seq_length: 100 } }));
  assert.equal(long.maxTokens, 40);
  long.dispose();
});

test('loadModel options override the folder: pooling (one mode or several) and normalize; a single file takes them with config and tokenizer', async () => {
  const files = encoderFolder({ pooling: { pooling_mode_mean_tokens: true }, normalize: true });
  const e = await loadFolder('override', files, { pooling: 'cls', normalize: false });
  assert.deepEqual([e.pooling, e.normalize], ['cls', false]);
  const cat = await loadFolder('override', files, { pooling: 'mean+CLS+max' });
  assert.deepEqual([cat.pooling, cat.normalize, cat.dimension], ['cls+max+mean', true, 96]);
  const plain = await loadFolder('override', files, { pooling: 'cls', normalize: false });
  // The folder's Pooling config may name several modes when the option picks one.
  const multi = await loadFolder('multi', encoderFolder({ pooling: { pooling_mode_cls_token: true, pooling_mode_mean_tokens: true } }), { pooling: 'mean' });
  assert.equal(multi.pooling, 'mean');
  const single = await aw.loadModel(files.get('model.safetensors'), {
    config: files.get('config.json'), tokenizer: files.get('tokenizer.json'), tokenizerConfig: files.get('tokenizer_config.json'), pooling: 'cls',
  });
  assert.deepEqual([single.pooling, single.normalize, single.maxTokens], ['cls', false, 40]);
  const a = await e.embed(TEXTS.slice(0, 3)), b = await single.embed(TEXTS.slice(0, 3));
  sameBits(a, b, 'the same model, the same options');
  for (const m of [e, cat, plain, multi, single]) m.dispose();
});

// embed() runs each batch at its own longest length with the padded keys skipped; forward() runs the padded batch
// with them masked. The softmax then sums the same terms in another lane order, and the layers carry that rounding
// to the pooled rows: measured 0.76–0.89e-6 relative with xsimd's erfc in the GELU, 0.98e-6 and 1.37e-6 with two
// branch-free ones (issue 42's stop 56), all within a few ulp of the GELU references. A pooling error (a pad
// counted, a wrong row, a missed Normalize) moves the rows by 1e-3 and more; 4e-6 keeps them apart.
test('embed() is forward() pooled as sentence-transformers pools: every mode, concatenations, Normalize, BERT and XLM-R (within 4e-6 · max(1, |x|))', async () => {
  for (const modelType of ['bert', 'xlm-roberta']) {
    const files = encoderFolder({ modelType, sbert: { max_seq_length: 14 } });
    for (const pooling of ['mean', 'cls', 'max', 'mean_sqrt_len', 'weightedmean', 'lasttoken', 'cls+max+mean', 'max+mean_sqrt_len']) {
      for (const normalize of [false, true]) {
        const e = await aw.loadModel(files, { pooling, normalize });
        const texts = modelType === 'bert' ? TEXTS : ['hello world', 'ภาษาไทย ไม่', '', 'Москва и Київ', 'a'];
        const batch = e.tokenize(texts);
        const { lastHiddenState, poolerOutput } = e.forward(batch);
        assert.deepEqual(lastHiddenState.shape, [texts.length, batch.inputIds.shape[1], 32]);
        assert.deepEqual(poolerOutput.shape, [texts.length, 32]);
        const want = refPool(lastHiddenState, batch.attentionMask.data, pooling, { normalize });
        const got = await e.embed(texts);
        assert.deepEqual(got.shape, [texts.length, e.dimension]);
        const d = maxDiff(got.data, want);
        assert.ok(d <= 4e-6, `${modelType} ${pooling} normalize ${normalize}: max |embed − pooled forward| ${d}`);
        e.dispose();
      }
    }
  }
});

test('a prompt: its tokens left out of the pooling with include_prompt false, kept with true', async () => {
  const files = encoderFolder({ pooling: { pooling_mode_mean_tokens: true, include_prompt: false }, normalize: false });
  const e = await aw.loadModel(files);
  assert.equal(e.includePrompt, false);
  const texts = ['hello world', 'the cat sat'];
  const prompt = 'search query: ';
  // The prompt tokenized alone, [CLS] search query : [SEP], less its [SEP]: 4 tokens.
  const batch = e.tokenize(texts, { prompt });
  const want = refPool(e.forward(batch).lastHiddenState, batch.attentionMask.data, 'mean', { skip: 4 });
  const got = await e.embed(texts, { prompt });
  assert.ok(maxDiff(got.data, want) <= 1e-6, `max diff ${maxDiff(got.data, want)}`);
  const kept = await aw.loadModel(files, { pooling: 'mean' });
  assert.equal(kept.includePrompt, false, 'the pooling option keeps the file\'s include_prompt');
  const plain = await aw.loadModel(encoderFolder({ normalize: false }));
  const all = refPool(plain.forward(plain.tokenize(texts, { prompt })).lastHiddenState, batch.attentionMask.data, 'mean');
  assert.ok(maxDiff((await plain.embed(texts, { prompt })).data, all) <= 1e-6, 'include_prompt true: every token');
  for (const m of [e, kept, plain]) m.dispose();
});

test('results come back in input order: the same bits in any order and batch size (1, 3, 7, 32)', async () => {
  const e = await aw.loadModel(encoderFolder());
  const texts = [...TEXTS, ...TEXTS.map((t) => `${t} again and again`)];
  const want = await e.embed(texts);
  for (const batchSize of [1, 3, 7, 32]) sameBits(await e.embed(texts, { batchSize }), want, `batchSize ${batchSize}`);
  const perm = texts.map((_, i) => (i * 5) % texts.length);
  sameBits(await e.embed(perm.map((i) => texts[i])), pick(want, perm), 'permuted');
  for (let i = 0; i < texts.length; i += 4) sameBits(await e.embed(texts[i]), pick(want, [i]), `text ${i} alone (a string)`);
  // embedIds of the same ids: the same bits.
  const ids = texts.map((t) => e.tokenizer.encodeInputs(t.trim(), { maxLength: e.maxTokens }).inputIds);
  sameBits(await e.embedIds(ids), want, 'embedIds');
  sameBits(await e.embedIds(ids.map((x) => Array.from(x)), { batchSize: 5 }), want, 'embedIds of arrays');
  assert.deepEqual(await e.embed([]), { data: new Float32Array(0), shape: [0, 32] });
  e.dispose();
});

test('truncation at max_seq_length: the special tokens kept, the text cut', async () => {
  const e = await aw.loadModel(encoderFolder({ sbert: { max_seq_length: 8 } }));
  const long = 'the quick brown fox ran on the mat and the cat sat';
  const { inputIds } = e.tokenize([long, 'hello']);
  assert.deepEqual(inputIds.shape, [2, 8]);
  const row = Array.from(inputIds.data.subarray(0, 8));
  assert.deepEqual([row[0], row[7]], [2, 3], '[CLS] … [SEP]');
  assert.deepEqual(row.slice(1, 7), Array.from(e.tokenizer.encode(long, { addSpecialTokens: false }).subarray(0, 6)));
  sameBits(await e.embed([long]), await e.embedIds([row]), 'embed of the long text = embedIds of its 8 tokens');
  sameBits(await e.embed([long]), await e.embed(['the quick brown fox ran on the']), 'the cut text');
  e.dispose();
});

test('empty and whitespace-only texts are [CLS] [SEP]; texts are stripped as Python strips them', async () => {
  const e = await aw.loadModel(encoderFolder());
  const empty = await e.embed(['']);
  sameBits(empty, await e.embedIds([[2, 3]]), 'empty');
  sameBits(await e.embed([' \t\n\u3000\x85\x1c']), empty, 'Python whitespace (\\x85, \\x1c, U+3000) stripped');
  sameBits(await e.embed(['  hello world \n']), await e.embed(['hello world']), 'stripped');
  const bom = e.tokenize(['\ufeffhello']);
  assert.ok(bom.inputIds.shape[1] >= 3, 'U+FEFF is not whitespace to Python: left for the tokenizer');
  assert.ok(empty.data.every(Number.isFinite));
  e.dispose();
});

test('threads and builds: 2 threads give the bits of 1; the relaxed-SIMD build agrees with the baseline within 1e-5', async () => {
  const files = encoderFolder({ pooling: { pooling_mode_mean_tokens: true } });
  const texts = Array.from({ length: 40 }, (_, i) => `${TEXTS[i % TEXTS.length]} ${'the cat '.repeat(i % 5)}`);
  const results = {};
  for (const relaxedSimd of [false, true]) {
    for (const threads of [1, 2]) {
      const rt = await init({ threads, relaxedSimd });
      const caps = rt.capabilities();
      const e = await rt.loadModel(files);
      const r = await e.embed(texts, { batchSize: 16 });
      const f = e.forward(e.tokenize(texts.slice(0, 5))).lastHiddenState;
      results[`${caps.relaxedSimd}/${caps.threads || 1}`] = { r, f };
      await rt.close();
    }
  }
  assert.ok(results['false/1'] && results['false/2'], `the baseline build ran on 1 and 2 threads: ${Object.keys(results)}`);
  if (process.execArgv.includes('--experimental-wasm-relaxed-simd')) assert.ok(results['true/1'] && results['true/2'], `the relaxed build ran: ${Object.keys(results)}`);
  for (const relaxed of ['false', 'true']) {
    const one = results[`${relaxed}/1`], two = results[`${relaxed}/2`];
    if (!one || !two) continue;
    sameBits(two.r, one.r, `relaxed ${relaxed}: embed, 2 threads`);
    sameBits(two.f, one.f, `relaxed ${relaxed}: forward, 2 threads`);
  }
  if (results['true/1']) {
    const d = maxDiff(results['true/1'].r.data, results['false/1'].r.data);
    assert.ok(d <= 1e-5, `relaxed vs baseline: max diff ${d}`);
  }
});

test('errors name the argument; the embedder stays usable', async () => {
  const e = await aw.loadModel(encoderFolder({ sbert: { max_seq_length: 10 } }));
  const rejects = async (p, code, re, ctor) => {
    await assert.rejects(p, (err) => {
      assert.equal(err.code, code, err.message);
      assert.match(err.message, re);
      if (ctor) assert.ok(err instanceof ctor, err.constructor.name);
      return true;
    });
  };
  await rejects(e.embed(5), 'ERR_INVALID_TYPE', /^texts: expected an Array of strings/, TypeError);
  await rejects(e.embed(['a', 7]), 'ERR_INVALID_TYPE', /^texts\[1\]: expected a string, got number/, TypeError);
  await rejects(e.embed(['a'], { batchSize: 0 }), 'ERR_OUT_OF_RANGE', /^batchSize: expected an integer in \[1, /, RangeError);
  await rejects(e.embed(['a'], { batchSize: 1.5 }), 'ERR_INVALID_TYPE', /^batchSize: expected an integer/);
  await rejects(e.embed(['a'], { normalize: 1 }), 'ERR_INVALID_TYPE', /^normalize: expected a boolean/);
  await rejects(e.embed(['a'], { prompt: 3 }), 'ERR_INVALID_TYPE', /^prompt: expected a string/);
  await rejects(e.embed(['a'], { prompt: 'x', promptName: 'q' }), 'ERR_INVALID_TYPE', /^prompt: give prompt or promptName, not both/);
  await rejects(e.embed(['a'], { promptName: 'query' }), 'ERR_INVALID_ARGUMENT', /^promptName: expected no name \(this model has no prompts\), got 'query'/);
  await rejects(e.embed(['a'], { onProgress: 1 }), 'ERR_INVALID_TYPE', /^onProgress: expected a function/);
  await rejects(e.embed(['a'], { batchsize: 3 }), 'ERR_INVALID_TYPE', /^embed options: unknown option 'batchsize'/);
  await rejects(e.embedIds('x'), 'ERR_INVALID_TYPE', /^idsList: expected an Array/);
  await rejects(e.embedIds([[2, 3], 'x']), 'ERR_INVALID_TYPE', /^idsList\[1\]: expected an Int32Array or an array of token ids, got string/);
  await rejects(e.embedIds([[2, 1.5]]), 'ERR_INVALID_TYPE', /^idsList\[0\]\[1\]: expected an integer token id, got 1.5/);
  await rejects(e.embedIds([[2, 3], [2, 500, 3]]), 'ERR_INVALID_ARGUMENT', /^idsList\[1\]\[1\]: id 500 is out of range \[0, 110\)/);
  await rejects(e.embedIds([[2, 3], [2, 3], []]), 'ERR_OUT_OF_RANGE', /^idsList\[2\]: no tokens/);
  await rejects(e.embedIds([[2, 3], new Int32Array(41).fill(5)]), 'ERR_OUT_OF_RANGE', /^idsList\[1\]: 41 tokens, more than the model's 40/);
  await rejects(e.embedIds([[2]], { prompt: 'x' }), 'ERR_INVALID_TYPE', /^embedIds options: unknown option 'prompt'/);
  const ids = { data: Int32Array.of(2, 5, 3, 2, 6, 3), shape: [2, 3] };
  assert.throws(() => e.forward(ids), (err) => err.code === 'ERR_INVALID_TYPE' && /^inputs: expected \{ inputIds, attentionMask\?, tokenTypeIds\? \}, got a tensor \{ data, shape \}: pass it as inputIds$/.test(err.message));
  assert.throws(() => e.forward(null), (err) => err.code === 'ERR_INVALID_TYPE' && /^inputs: expected/.test(err.message));
  assert.throws(() => e.forward({ inputIds: { data: new Float32Array(6), shape: [2, 3] } }), (err) => err.code === 'ERR_DTYPE' && /^inputIds\.data: expected an Int32Array/.test(err.message));
  assert.throws(() => e.forward({ inputIds: ids, attentionMask: { data: new Int32Array(4), shape: [2, 2] } }), (err) => err.code === 'ERR_SHAPE' && /^attentionMask: expected the shape of inputIds \(2, 3\), got \(2, 2\)/.test(err.message));
  assert.throws(() => e.forward({ inputIds: ids, tokenTypeIds: { data: new Int32Array(6).fill(2), shape: [2, 3] } }), (err) => err.code === 'ERR_INVALID_ARGUMENT' && /^tokenTypeIds: id 2/.test(err.message));
  assert.throws(() => e.forward({ inputIds: ids, attentionMask: { data: Int32Array.of(1, 1, 2, 1, 1, 1), shape: [2, 3] } }), (err) => /^attentionMask: expected 0s and 1s/.test(err.message));
  assert.throws(() => e.forward({ inputIds: { data: new Int32Array(41), shape: [1, 41] } }), (err) => err.code === 'ERR_OUT_OF_RANGE' && /^inputIds\.shape\[1\] \(tokens\)/.test(err.message));
  assert.throws(() => e.forward({ inputIds: ids, mask: ids }), (err) => err.code === 'ERR_INVALID_TYPE' && /unknown option 'mask'/.test(err.message));
  // A Uint8Array mask is taken as 0/1.
  const m8 = e.forward({ inputIds: ids, attentionMask: { data: Uint8Array.of(1, 1, 0, 1, 1, 1), shape: [2, 3] } }).lastHiddenState;
  sameBits(m8, e.forward({ inputIds: ids, attentionMask: { data: Int32Array.of(1, 1, 0, 1, 1, 1), shape: [2, 3] } }).lastHiddenState, 'Uint8Array mask');
  // Still usable.
  assert.deepEqual((await e.embed(['hello'])).shape, [1, 32]);
  // No tokenizer: embed and tokenize say so; embedIds and forward work.
  const files = encoderFolder();
  const bare = await aw.loadEmbedder(files.get('model.safetensors'), { config: files.get('config.json') });
  assert.equal(bare.tokenizer, null);
  await rejects(bare.embed(['a']), 'ERR_INVALID_ARGUMENT', /^embed: this model has no tokenizer; pass token ids to embedIds/);
  assert.throws(() => bare.tokenize(['a']), (err) => err.code === 'ERR_INVALID_ARGUMENT' && /^tokenize: this model has no tokenizer/.test(err.message));
  sameBits(await bare.embedIds([[2, 16, 3]]), await e.embedIds([[2, 16, 3]], { normalize: false }), 'the same weights');
  bare.dispose();
  e.dispose();
});

test('loading refuses what it cannot run exactly, naming the file and the key', async () => {
  const refused = async (name, folderOptions, code, re, loadOptions) => {
    await assert.rejects(aw.loadModel(encoderFolder(folderOptions), loadOptions), (err) => {
      assert.equal(err.code, code, `${name}: ${err.message}`);
      assert.match(err.message, re, name);
      return true;
    });
  };
  const pooling = (c) => ({ extra: { '1_Pooling/config.json': { word_embedding_dimension: 32, ...c } } });
  const modules = (m) => ({ extra: { 'modules.json': m } });
  const T = { type: 'sentence_transformers.models.Transformer', path: '' }, P = { type: 'sentence_transformers.models.Pooling', path: '1_Pooling' };
  await refused('LayerNorm', modules([T, P, { type: 'sentence_transformers.models.LayerNorm', path: '2_LayerNorm' }]), 'ERR_UNSUPPORTED', /^modules\.json: \[2\]\.type: expected .* got 'sentence_transformers\.models\.LayerNorm'/);
  await refused('Dense without its folder', modules([T, P, { type: 'sentence_transformers.models.Dense', path: '2_Dense' }]), 'ERR_INVALID_ARGUMENT', /^source: 2_Dense\/config\.json, the Dense module's config named by modules\.json, is not in the folder/);
  await refused('no Pooling', modules([T]), 'ERR_UNSUPPORTED', /^modules\.json: expected the modules Transformer, Pooling, any Dense and optionally Normalize, in that order, got Transformer$/);
  await refused('Transformer in a subfolder', modules([{ ...T, path: '0_Transformer' }, P]), 'ERR_UNSUPPORTED', /^modules\.json: \[0\]\.path: the Transformer's files in a subfolder \('0_Transformer'\)/);
  await refused('not JSON', modules('[{'), 'ERR_INVALID_ARGUMENT', /^modules\.json: not valid JSON/);
  await refused('not an array', modules({}), 'ERR_INVALID_ARGUMENT', /^modules\.json: expected an array of modules, got Object/);
  await refused('no pooling config', { extra: { '1_Pooling/config.json': null } }, 'ERR_INVALID_ARGUMENT', /^source: 1_Pooling\/config\.json, the Pooling module's config named by modules\.json, is not in the folder/);
  await refused('dimension', pooling({ word_embedding_dimension: 31 }), 'ERR_INVALID_ARGUMENT', /^1_Pooling\/config\.json: word_embedding_dimension: expected the model's hidden_size \(32\), got 31/);
  await refused('no mode', pooling({ pooling_mode_mean_tokens: false }), 'ERR_UNSUPPORTED', /^1_Pooling\/config\.json: no pooling mode is set/);
  await refused('unknown key', pooling({ pooling_mode_attention: true }), 'ERR_UNSUPPORTED', /^1_Pooling\/config\.json: pooling_mode_attention: not a key of sentence-transformers' Pooling/);
  await refused('not a boolean', pooling({ pooling_mode_cls_token: 1 }), 'ERR_INVALID_ARGUMENT', /^1_Pooling\/config\.json: pooling_mode_cls_token: expected a boolean, got 1/);
  await refused('pooling_mode', pooling({ pooling_mode: 'attention' }), 'ERR_INVALID_ARGUMENT', /^1_Pooling\/config\.json: pooling_mode: expected one of 'cls', /);
  await refused('max_seq_length', { sbert: { max_seq_length: 0 } }, 'ERR_INVALID_ARGUMENT', /^sentence_bert_config\.json: max_seq_length: expected a positive integer or null, got 0/);
  await refused('do_lower_case', { sbert: { do_lower_case: 'yes' } }, 'ERR_INVALID_ARGUMENT', /^sentence_bert_config\.json: do_lower_case: expected a boolean/);
  await refused('default prompt', { extra: { 'config_sentence_transformers.json': { prompts: { q: 'q: ' }, default_prompt_name: 'query' } } }, 'ERR_INVALID_ARGUMENT', /^config_sentence_transformers\.json: default_prompt_name: expected one of the prompts' names \(q\), got 'query'/);
  await refused('pooling option', {}, 'ERR_INVALID_ARGUMENT', /^pooling: expected one of 'cls', 'max', 'mean', 'mean_sqrt_len', 'weightedmean', 'lasttoken' \(or several joined by '\+'\), got 'avg'/, { pooling: 'avg' });
  await refused('pooling type', {}, 'ERR_INVALID_TYPE', /^pooling: expected one of .*, got number/, { pooling: 1 });
  await refused('normalize type', {}, 'ERR_INVALID_TYPE', /^normalize: expected a boolean, got string/, { normalize: 'yes' });
  await refused('tokenizer too big', { configOverrides: { vocab_size: 100 } }, 'ERR_INVALID_ARGUMENT', /^tokenizer: it has 106 ids, more than the model's vocab_size \(100\)/);
  await refused('an encoder family it has not', { configOverrides: { model_type: 'nomic_bert' } }, 'ERR_INVALID_ARGUMENT', /^config\.model_type: .*got "nomic_bert"/);
  // The encoder's options on other families; the other loaders on an encoder; loadEmbedder on a causal LM.
  const lm = lmConfig();
  const lmBytes = safetensors(lmTensors(lm));
  await assert.rejects(aw.loadModel(lmBytes, { config: lm, pooling: 'mean' }), (err) => err.code === 'ERR_INVALID_ARGUMENT' && /^pooling: only an embedder takes it; this checkpoint loads as a CausalLM \(task: 'embed'/.test(err.message));
  await assert.rejects(aw.loadModel(lmBytes, { config: lm, normalize: true }), (err) => /^normalize: only an embedder takes it/.test(err.message));
  await assert.rejects(aw.loadEmbedder(lmBytes, { config: lm }), (err) => err.code === 'ERR_INVALID_ARGUMENT' && /model_type/.test(err.message));
  await assert.rejects(aw.loadCausalLM(encoderFolder()), (err) => err.code === 'ERR_INVALID_ARGUMENT' && /an encoder: load it with loadModel/.test(err.message));
  await assert.rejects(aw.loadEmbedder(new URL('../../models/vit/vit.safetensors', import.meta.url).pathname),
    (err) => err.code === 'ERR_INVALID_ARGUMENT' && /^config: an encoder is loaded with its Hugging Face config\.json/.test(err.message));
  assert.equal(aw.memory().inUseBytes < 64 << 20, true);
});

test('dispose: idempotent, [Symbol.dispose], later calls ERR_DISPOSED, also between batches; close() too', async () => {
  const e = await aw.loadModel(encoderFolder());
  const running = e.embed(Array.from({ length: 20 }, (_, i) => `text ${i}`), { batchSize: 2 });
  e.dispose();
  await assert.rejects(running, (err) => err.code === 'ERR_DISPOSED' && /^Embedder: used after dispose\(\)/.test(err.message));
  e.dispose();
  e[Symbol.dispose]();
  await assert.rejects(e.embed(['a']), (err) => err.code === 'ERR_DISPOSED');
  await assert.rejects(e.embedIds([[2, 3]]), (err) => err.code === 'ERR_DISPOSED');
  assert.throws(() => e.forward({ inputIds: { data: Int32Array.of(2, 3), shape: [1, 2] } }), (err) => err.code === 'ERR_DISPOSED');
  const rt = await init({ threads: 1 });
  const f = await rt.loadModel(encoderFolder());
  await rt.close();
  await assert.rejects(f.embed(['a']), (err) => err.code === 'ERR_CLOSED');
});

test('embed gives the event loop a turn between batches and reports progress', async () => {
  const e = await aw.loadModel(encoderFolder());
  const texts = Array.from({ length: 50 }, (_, i) => `the cat ${'sat '.repeat(i % 7)}`);
  let ticks = 0;
  const timer = setInterval(() => ticks++, 0);
  const seen = [];
  let turns = 0;
  const spin = (async () => { for (;;) { await new Promise((r) => setImmediate(r)); turns++; if (seen.length === 10) return; } })();
  await e.embed(texts, { batchSize: 5, onProgress: (p) => seen.push(p) });
  await spin;
  clearInterval(timer);
  assert.deepEqual(seen.map((p) => p.done), [5, 10, 15, 20, 25, 30, 35, 40, 45, 50]);
  assert.ok(seen.every((p) => p.total === 50));
  assert.ok(turns >= 9, `other work ran between batches (${turns} turns)`);
  e.dispose();
});

test('the heap stays flat over many calls', async () => {
  const e = await aw.loadModel(encoderFolder());
  await e.embed(TEXTS);
  e.forward(e.tokenize(TEXTS));
  const start = aw.memory().inUseBytes;
  for (let i = 0; i < 50; i++) {
    await e.embed(TEXTS, { batchSize: 3 });
    e.forward(e.tokenize(TEXTS));
    await e.embedIds([[2, 3]]).catch(() => {});
    await e.embedIds([[]]).catch(() => {});
  }
  assert.equal(aw.memory().inUseBytes, start);
  e.dispose();
});

test('cosineSimilarity: vectors → a number, matrices (n, d) × (m, d) → (n, m), in float64; errors by name', async () => {
  assert.equal(cosineSimilarity, aw.cosineSimilarity);
  assert.equal(cosineSimilarity([1, 0], [0, 1]), 0);
  assert.ok(Math.abs(cosineSimilarity([1, 2, 3], Float32Array.of(2, 4, 6)) - 1) < 1e-15);
  assert.equal(cosineSimilarity([0, 0], [1, 1]), 0, 'a zero vector: 0');
  assert.ok(Math.abs(cosineSimilarity({ data: Float32Array.of(3, 4), shape: [2] }, Float64Array.of(4, 3)) - 24 / 25) < 1e-7);
  const e = await aw.loadModel(encoderFolder());
  const a = await e.embed(TEXTS), b = await e.embed(TEXTS.slice(0, 3));
  const s = cosineSimilarity(a, b);
  assert.deepEqual(s.shape, [TEXTS.length, 3]);
  assert.ok(s.data instanceof Float32Array);
  for (let i = 0; i < 3; i++) assert.ok(Math.abs(s.data[i * 3 + i] - 1) < 1e-6, 'a text with itself: 1');
  const row = cosineSimilarity(a.data.subarray(32, 64), b);
  assert.deepEqual(row.shape, [1, 3]);
  assert.deepEqual(Array.from(row.data), Array.from(s.data.subarray(3, 6)));
  assert.throws(() => cosineSimilarity([1, 2], [1, 2, 3]), (err) => err.code === 'ERR_SHAPE' && /^b: expected vectors of a's length 2, got 3/.test(err.message));
  assert.throws(() => cosineSimilarity('x', [1]), (err) => err.code === 'ERR_INVALID_TYPE' && /^a: expected a vector/.test(err.message));
  assert.throws(() => cosineSimilarity([1], [null]), (err) => err.code === 'ERR_INVALID_TYPE' && /^b\[0\]: expected a number/.test(err.message));
  assert.throws(() => cosineSimilarity({ data: new Float32Array(5), shape: [2, 3] }, [1, 2, 3]), (err) => err.code === 'ERR_SHAPE' && /^a: data has 5 elements but shape \(2, 3\) needs 6/.test(err.message));
  assert.throws(() => cosineSimilarity([], []), (err) => err.code === 'ERR_SHAPE');
  e.dispose();
});

test('an encoder takes no generation_config.json: the option is refused by name, a folder\'s file is not read', async () => {
  await assert.rejects(loadFolder('gen-option', encoderFolder(), { generationConfig: { eos_token_id: 1 } }),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.message === 'generationConfig: only a causal LM takes a generation_config.json (an encoder-decoder translator, a speech recognizer too); this checkpoint is an encoder (model_type "bert")');
  // A broken generation_config.json beside an encoder does not matter: it is never read.
  const m = await loadFolder('gen-file', encoderFolder({ extra: { 'generation_config.json': 'not json' } }));
  assert.equal(m.constructor.name, 'Embedder');
  m.dispose();
});
