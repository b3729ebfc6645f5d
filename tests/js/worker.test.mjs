// 'attnwasm/worker' in Node (bindings/worker.js, worker_main.js): a checkpoint folder read by the worker
// itself (a path: the bytes never pass through this thread), forward logits bit-identical to the same
// build in this process, generate's ids and attention equal (greedy and seeded sampling), chat through the
// worker, an embedder, the translator and the classifier giving the same bits as here, an AbortSignal and
// break ending the worker's loop within a token, a load ending when asked (a throwing onProgress, a signal,
// close()), errors with their class, code
// and message, close() ending the worker (its 'exit') and returning its memory (RSS in a child process),
// and a script that forgets close() still exiting.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init, AttnWasmError } from '../../bindings/index.js';
import { createWorker, AttnWasmError as WorkerError } from '../../bindings/worker.js';
import { writeCheckpoint } from '../../tools/make_checkpoint.mjs';
import { writeTokenizer } from '../../tools/make_tokenizer.mjs';
import { sampleIds, sameBits } from './lm_checkpoint.mjs';
import { encoderFolder, writeFolder } from './embedder_checkpoint.mjs';

const WORKER = fileURLToPath(new URL('../../bindings/worker.js', import.meta.url));
let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'attnwasm-worker-'));
  writeCheckpoint('tiny', dir, { shards: 2 });
  writeTokenizer(dir, 300);
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** What a call threw: { name, code, message }, or null. */
async function thrown(fn) {
  try {
    await fn();
    return null;
  } catch (e) {
    return { name: e.name, code: e.code, message: e.message, page: e instanceof Error };
  }
}

for (const threads of [1, 2]) {
  test(`${threads} thread(s): forward bit-identical, generate equal, the same build as in this process`, async () => {
    const rt = await createWorker({ threads });
    const aw = await init({ threads });
    try {
      assert.equal(rt.startCapabilities.build, threads > 1 ? 'pthreads' : 'single-thread');
      assert.equal(rt.startCapabilities.environment, 'node');
      const progress = [];
      const lm = await rt.loadModel(dir, { onProgress: (p) => progress.push(p) });
      const ref = await aw.loadModel(dir);
      assert.equal(lm.kind, 'CausalLM');
      for (const k of ['modelType', 'vocabSize', 'numLayers', 'numHeads', 'maxPositions', 'eosTokenIds', 'fileBytes', 'weightBytes', 'weightTypes', 'config']) {
        assert.deepEqual(lm[k], ref[k], k);
      }
      assert.equal(lm.tokenizer.vocabSize, 300);
      assert.ok(progress.length >= 2 && progress.at(-1).loaded === progress.at(-1).total, JSON.stringify(progress.at(-1)));
      assert.deepEqual([...new Set(progress.map((p) => p.file))], ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);

      const ids = sampleIds(300, 2, 9);
      const { logits } = await lm.forward(ids);
      assert.equal(sameBits(logits.data, ref.forward(ids).logits.data), null);
      assert.deepEqual(logits.shape, [2, 9, 300]);

      // The tokenizer through the model and as its own proxy.
      const text = 'the attention of a model';
      assert.deepEqual([...await lm.encode(text)], [...ref.encode(text)]);
      assert.equal(await lm.tokenizer.decode([104, 111, 260]), ref.tokenizer.decode([104, 111, 260]));

      for (const options of [{ maxNewTokens: 12, stopTokens: [] }, { maxNewTokens: 12, temperature: 0.9, topP: 0.9, seed: 7, stopTokens: [], attention: true }]) {
        const g = lm.generate(text, options);
        const got = [];
        for await (const t of g) got.push(t);
        const want = [];
        const rg = ref.generate(text, options);
        for await (const t of rg) want.push(t);
        assert.deepEqual(got.map((t) => t.id), want.map((t) => t.id));
        assert.deepEqual(got.map((t) => t.text), want.map((t) => t.text));
        assert.equal(g.text, rg.text);
        assert.equal(g.stopReason, 'length');
        assert.deepEqual(g.ids, rg.ids);
        assert.deepEqual([...g.promptIds], [...rg.promptIds]);
        if (options.seed !== undefined) assert.equal(g.seed, rg.seed);
        if (options.attention) {
          for (let i = 0; i < got.length; i++) {
            assert.equal(sameBits(got[i].attention.data, want[i].attention.data), null, `token ${i}'s attention`);
            assert.equal(got[i].attention.positions, want[i].attention.positions);
          }
        }
      }
      // await first, then iterate: the same generation.
      const g2 = await lm.generate([5, 6, 7], { maxNewTokens: 3, stopTokens: [] });
      const ids2 = [];
      for await (const t of g2) ids2.push(t.id);
      assert.equal(ids2.length, 3);

      const m = await rt.memory();
      assert.ok(m.inUseBytes >= lm.weightBytes, JSON.stringify(m));
      await lm.dispose();
      assert.equal((await thrown(() => lm.forward(ids))).code, 'ERR_DISPOSED');
      ref.dispose();
    } finally {
      await rt.close();
      await aw.close();
    }
  });
}

test('chat through the worker (when CausalLM#chat exists): the same prompt, tokens and message', async (t) => {
  const rt = await createWorker({ threads: 1 });
  const aw = await init({ threads: 1 });
  try {
    const lm = await rt.loadModel(dir);
    const ref = await aw.loadModel(dir);
    if (typeof ref.chat !== 'function') {
      t.skip('CausalLM#chat is not in this tree yet');
      return;
    }
    const messages = [{ role: 'user', content: 'What is attention?' }];
    const turn = lm.chat(messages, { maxNewTokens: 10, stopTokens: [] });
    const got = [];
    for await (const tok of turn) got.push(tok.id);
    const rturn = ref.chat(messages, { maxNewTokens: 10, stopTokens: [] });
    const want = [];
    for await (const tok of rturn) want.push(tok.id);
    assert.deepEqual(got, want);
    assert.equal(turn.prompt, rturn.prompt);
    assert.deepEqual(turn.message, rturn.message);
    assert.deepEqual(turn.message, { role: 'assistant', content: rturn.text });
    // finalMessage: the tokens left, then the worker's own.
    const f = await lm.chat(messages, { maxNewTokens: 4, stopTokens: [] });
    assert.deepEqual(await f.finalMessage(), await ref.chat(messages, { maxNewTokens: 4, stopTokens: [] }).finalMessage());
  } finally {
    await rt.close();
    await aw.close();
  }
});

test('an embedder, the translator and the classifier through the worker: the bits of the same build here', async () => {
  const rt = await createWorker({ threads: 1 });
  const aw = await init({ threads: 1 });
  try {
    const folder = writeFolder(join(dir, 'embedder'), encoderFolder());
    const emb = await rt.loadModel(folder, { dtype: 'q8' });
    const ref = await aw.loadModel(folder, { dtype: 'q8' });
    assert.equal(emb.kind, 'Embedder');
    const texts = ['Hello world.', '', 'a cat sat on the mat'];
    const got = await emb.embed(texts, { batchSize: 2 });
    const want = await ref.embed(texts, { batchSize: 2 });
    assert.deepEqual(got.shape, want.shape);
    assert.equal(sameBits(got.data, want.data), null);
    const err = await thrown(() => emb.embed([42]));
    assert.ok(err && err.code, JSON.stringify(err));
    assert.deepEqual(err, await thrown(() => ref.embed([42])));
    await emb.dispose();
    ref.dispose();

    const root = fileURLToPath(new URL('../../models/', import.meta.url));
    const tr = await rt.loadTranslator(join(root, 'translator/translator.safetensors'));
    const trRef = await aw.loadTranslator(join(root, 'translator/translator.safetensors'));
    assert.equal(tr.kind, 'Translator');
    const untimed = ({ stepMs, totalMs, ...rest }) => rest;  // the same tokens and attention; the clock differs
    assert.deepEqual(untimed(await tr.translate('forty two', { to: 'fr' })), untimed(trRef.translate('forty two', { to: 'fr' })));
    const cl = await rt.loadClassifier(join(root, 'vit/vit.safetensors'));
    const clRef = await aw.loadClassifier(join(root, 'vit/vit.safetensors'));
    const image = () => new Float32Array(28 * 28).map((_, i) => (i % 29) / 29);
    const classified = clRef.classify(image());
    assert.deepEqual(untimed(await cl.classify(image())), untimed(classified));
    await rt.close();
    assert.equal((await thrown(() => tr.translate('one'))).code, 'ERR_CLOSED');
  } finally {
    await rt.close();
    await aw.close();
  }
});

test('a CLIP model through the worker: image files and bytes in, the bits of the same build here', async () => {
  const rt = await createWorker({ threads: 1 });
  const aw = await init({ threads: 1 });
  try {
    const folder = fileURLToPath(new URL('../data/goldens/clip/clip_model/', import.meta.url));
    const fix = fileURLToPath(new URL('../data/goldens/images/fixtures/', import.meta.url));
    const m = await rt.loadModel(folder);
    const ref = await aw.loadModel(folder);
    assert.equal(m.kind, 'CLIPModel');
    const images = [join(fix, 'rgb8_64x48.png'), readFileSync(join(fix, 'j420_q90.jpg'))];
    const got = await m.embedImages(images, { batchSize: 1 });
    const want = await ref.embedImages(images, { batchSize: 1 });
    assert.deepEqual(got.shape, want.shape);
    assert.equal(sameBits(got.data, want.data), null);
    const err = await thrown(() => m.embedImages([join(fix, 'missing.png')]));
    assert.match(err.message, /images\[0\]/);
    await m.dispose();
    ref.dispose();
  } finally {
    await rt.close();
    await aw.close();
  }
});

test('an AbortSignal and break end the worker\'s loop within a token; the cache is freed', async () => {
  const rt = await createWorker({ threads: 1 });
  try {
    const lm = await rt.loadModel(dir);
    for await (const tok of lm.generate('the', { maxNewTokens: 2 })) void tok;  // the scratch a generation keeps
    const base = (await rt.memory()).inUseBytes;
    // Aborted after 5 tokens: the worker computes at most the tokens it was ahead by, plus the one in flight.
    const controller = new AbortController();
    const g = lm.generate('the', { maxNewTokens: 400, stopTokens: [], signal: controller.signal });
    let n = 0;
    for await (const tok of g) {
      void tok;
      if (++n === 5) controller.abort();
    }
    assert.equal(n, 5);
    assert.equal(g.stopReason, 'aborted');
    const end = await (await g)._ended();
    assert.ok(end.produced <= n + 3, `the worker computed ${end.produced} tokens for ${n} taken`);
    assert.equal(end.stopReason, 'aborted');
    // A signal aborted while the page waits: the pending next() ends.
    const c2 = new AbortController();
    const g2 = lm.generate('the', { maxNewTokens: 400, stopTokens: [], signal: c2.signal });
    await g2.next();
    c2.abort();
    assert.deepEqual(await g2.next(), { done: true, value: undefined });
    assert.equal(g2.stopReason, 'aborted');
    // Aborted before it starts: no token.
    const g3 = lm.generate('the', { maxNewTokens: 5, signal: AbortSignal.abort() });
    assert.deepEqual(await g3.next(), { done: true, value: undefined });
    assert.equal(g3.stopReason, 'aborted');
    // break: return() ends it in the worker.
    const g4 = lm.generate('the', { maxNewTokens: 400, stopTokens: [] });
    let k = 0;
    for await (const tok of g4) { void tok; if (++k === 3) break; }
    assert.equal(g4.stopReason, 'aborted');
    const end4 = await (await g4)._ended();
    assert.ok(end4.produced <= 3 + 3, `after break the worker computed ${end4.produced}`);
    assert.equal((await rt.memory()).inUseBytes, base, 'every KV cache freed');
  } finally {
    await rt.close();
  }
});

test('errors cross with their class, code and message', async () => {
  const rt = await createWorker({ threads: 1 });
  const aw = await init({ threads: 1 });
  try {
    const lm = await rt.loadModel(dir);
    const ref = await aw.loadModel(dir);
    const same = async (what, inWorker, inPage) => {
      const a = await thrown(inWorker);
      const b = await thrown(inPage);
      assert.ok(a && b, `${what}: both throw`);
      assert.deepEqual(a, b, what);
      return a;
    };
    const e1 = await same('forward with a wrong shape', () => lm.forward({ data: new Int32Array(3), shape: [2, 2] }), () => ref.forward({ data: new Int32Array(3), shape: [2, 2] }));
    assert.equal(e1.name, 'AttnWasmError');
    const e2 = await same('a generate option out of range', async () => { for await (const x of lm.generate('a', { topP: 7 })) void x; }, () => ref.generate('a', { topP: 7 }));
    assert.equal(e2.name, 'RangeError');
    assert.equal(e2.code, 'ERR_OUT_OF_RANGE');
    await same('an unknown option', () => lm.generate('a', { nope: 1 }), () => ref.generate('a', { nope: 1 }));
    const missing = join(dir, 'nothing-here');
    await same('a missing checkpoint', () => rt.loadModel(missing), () => aw.loadModel(missing));
    const gpt2 = mkdtempSync(join(tmpdir(), 'attnwasm-worker-gpt2-'));
    try {
      writeCheckpoint('tiny', gpt2);
      writeFileSync(join(gpt2, 'config.json'), JSON.stringify({ model_type: 'gpt2', vocab_size: 300, n_embd: 72, n_layer: 2, n_head: 4 }));
      const e3 = await same('an unsupported model_type', () => rt.loadModel(gpt2), () => aw.loadModel(gpt2));
      assert.match(e3.message, /gpt2/);
    } finally {
      rmSync(gpt2, { recursive: true, force: true });
    }
    // The error is the page's own class: instanceof works with either entry's AttnWasmError.
    const e = await lm.forward({ data: new Int32Array(3), shape: [2, 2] }).catch((x) => x);
    assert.ok(e instanceof AttnWasmError && e instanceof WorkerError);
    // An argument that cannot cross is a TypeError before anything is sent.
    const e4 = await thrown(() => lm.encode('x', { addSpecialTokens: new (class Foo {})() }));
    assert.equal(e4.name, 'TypeError');
    // The runtime stays usable.
    assert.equal((await lm.forward(sampleIds(300, 1, 3))).logits.shape[2], 300);
    // init()'s own errors, from the worker.
    const e5 = await thrown(() => createWorker({ workingMemory: 5 }));
    const e6 = await thrown(() => init({ workingMemory: 5 }));
    assert.deepEqual(e5, e6);
    // A worker script that is not there: ERR_WASM_LOAD naming it.
    const bad = new URL('./no_such_worker.js', import.meta.url);
    const e7 = await createWorker({ workerUrl: bad }).catch((x) => x);
    assert.equal(e7.code, 'ERR_WASM_LOAD');
    assert.equal(e7.url, String(bad));
    assert.match(e7.message, /no_such_worker\.js did not start/);
  } finally {
    await rt.close();
    await aw.close();
  }
});

test('a load through the worker ends when asked: a throwing onProgress rejects it with its error (no uncaught exception), a signal, close()', async () => {
  // The folder served with its last shard stalling halfway: an abort or a close() always comes before the end.
  const files = readdirSync(dir);
  const shards = files.filter((f) => /^model-\d+-of-\d+\.safetensors$/.test(f)).sort();
  const server = createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1));
    if (!files.includes(name)) return res.writeHead(404).end();
    const body = readFileSync(join(dir, name));
    res.writeHead(200, { 'Content-Length': String(body.byteLength) });
    if (name === shards.at(-1)) res.write(body.subarray(0, body.byteLength >> 1));  // then nothing
    else res.end(body);
    return undefined;
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const stalling = `http://127.0.0.1:${server.address().port}/`;
  const rt = await createWorker({ threads: 1 });
  const uncaught = [];
  const onUncaught = (e) => uncaught.push(e);
  process.on('uncaughtException', onUncaught);
  try {
    const inUse = (await rt.memory()).inUseBytes;
    const boom = new RangeError('progress bar broke');
    for (let i = 0; i < 3; i++) {
      await assert.rejects(rt.loadModel(dir, { onProgress: () => { throw boom; } }), (e) => e === boom);
    }
    const c = new AbortController();
    await assert.rejects(rt.loadModel(stalling, { signal: c.signal, onProgress: () => c.abort() }), (e) => e.name === 'AbortError');
    await new Promise((r) => setTimeout(r, 100));  // a model the worker made after the page gave up is released
    assert.equal((await rt.memory()).inUseBytes, inUse, 'nothing kept in the worker');
    const lm = await rt.loadModel(dir);
    assert.equal(lm.kind, 'CausalLM');
    await lm.dispose();
    await assert.rejects(rt.loadModel(stalling, { onProgress: () => { rt.close(); } }), (e) => e.code === 'ERR_CLOSED');
    assert.deepEqual(uncaught, [], 'no uncaught exception in this process');
  } finally {
    process.off('uncaughtException', onUncaught);
    await rt.close();
    server.closeAllConnections();
    server.close();
  }
});

test('close() ends the worker; every later call rejects ERR_CLOSED; idempotent', async () => {
  const rt = await createWorker({ threads: 2 });
  const lm = await rt.loadModel(dir);
  const exited = new Promise((r) => rt.worker.once('exit', r));
  const g = lm.generate('the', { maxNewTokens: 400, stopTokens: [] });
  await g.next();
  await rt.close();
  await exited;
  const closed = (e) => e.code === 'ERR_CLOSED' && e instanceof AttnWasmError;
  await assert.rejects(rt.memory(), closed);
  await assert.rejects(lm.forward(sampleIds(300, 1, 3)), closed);
  await assert.rejects(rt.loadModel(dir), closed);
  await assert.rejects(g.next(), closed);
  await rt.close();
});

test('close() gives the worker\'s memory back (RSS in a child process)', () => {
  // A child grows the worker's heap past 300 MB (three 100 MB inputs copied in), then closes.
  const code = `
    import { createWorker } from ${JSON.stringify(WORKER)};
    const rss = () => process.memoryUsage().rss;
    const before = rss();
    const rt = await createWorker({ threads: 1 });
    async function grow() {
      const shape = [48828, 8, 64];
      const t = () => ({ data: new Float32Array(48828 * 8 * 64), shape });
      const { output } = await rt.scaledDotProductAttention(t(), t(), t());
      return output.data.length;
    }
    const n = await grow();
    const heap = (await rt.memory()).heapBytes;
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 300));
    const during = rss();
    await rt.close();
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 300));
    console.log(JSON.stringify({ before, during, after: rss(), heap, n }));`;
  const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', code], { encoding: 'utf8' });
  const { before, during, after, heap } = JSON.parse(out);
  const MiB = 2 ** 20;
  assert.ok(heap >= 300 * MiB, `the worker's heap should pass 300 MiB, got ${(heap / MiB).toFixed(0)} MiB`);
  assert.ok(during - before >= 250 * MiB, `RSS grows with the worker's heap: +${((during - before) / MiB).toFixed(0)} MiB`);
  assert.ok(after - before <= 96 * MiB, `RSS after close(): +${((after - before) / MiB).toFixed(0)} MiB (during: +${((during - before) / MiB).toFixed(0)} MiB)`);
});

test('a script that never calls close() still exits', () => {
  const code = `
    import { createWorker } from ${JSON.stringify(WORKER)};
    const rt = await createWorker({ threads: 2 });
    const lm = await rt.loadModel(${JSON.stringify(dir)});
    let n = 0;
    for await (const t of lm.generate('the', { maxNewTokens: 4, stopTokens: [] })) n++;
    console.log(n);`;
  const t0 = performance.now();
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(out.trim(), '4');
  assert.ok(performance.now() - t0 < 20_000);
});

test('the typings (bindings/worker.d.ts) compile under tsc --strict through the package\'s "exports"', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const work = join(root, 'build', `worker-types-${process.pid}`);
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'nodenext',
    moduleResolution: 'nodenext', lib: ['es2022', 'esnext.disposable', 'dom'], types: [] }, files: ['usage.ts'] }));
  writeFileSync(join(work, 'usage.ts'), `
import { createWorker, AttnWasmError } from 'attnwasm/worker';
import type { Remote, RemoteCausalLM, WorkerRuntime } from 'attnwasm/worker';
import { cosineSimilarity } from 'attnwasm';
import type { Embedder } from 'attnwasm';
export async function main(): Promise<void> {
  const rt: WorkerRuntime = await createWorker({ threads: 1, workingMemory: 1 << 24, workerUrl: new URL('https://x/worker_main.js') });
  const lm: RemoteCausalLM = await rt.loadCausalLM('/x/', { config: {}, onProgress: (p) => { const n: number = p.loaded; void n; } });
  const any = await rt.loadModel('/x/', { config: {} });
  if (any.kind === 'CausalLM') void any;
  const emb: Remote<Embedder> = await rt.loadEmbedder('/e/', { dtype: 'q8' });
  const v = await emb.embed(['a', 'b'], { batchSize: 8 });
  const rows: number = v.shape[0];
  const sim: number = cosineSimilarity(v.data.subarray(0, v.shape[1]), v.data.subarray(v.shape[1]));
  const pooled: Remote<Embedder> = await rt.loadModel('/e/', { pooling: 'mean' });
  void rows; void sim; void pooled;
  const vocab: number = lm.vocabSize;
  const ids: Int32Array = await lm.encode('hi');
  const { logits } = await lm.forward({ data: ids, shape: [1, ids.length] });
  const f: Float32Array = logits.data;
  const c = new AbortController();
  const g = lm.generate('hi', { maxNewTokens: 4, signal: c.signal, attention: true });
  for await (const t of g) { const id: number = t.id; const a: Float32Array | undefined = t.attention?.data; void id; void a; }
  const reason: string | null = g.stopReason;
  const text: string = (await g).text;
  if (lm.tokenizer) { const d: string = await lm.tokenizer.decode([1, 2]); void d; }
  const heap: number = (await rt.memory()).heapBytes;
  const threads: number | false = rt.startCapabilities.threads;
  await lm.dispose();
  await rt.close();
  const e: unknown = null;
  if (e instanceof AttnWasmError) { const code: string = e.code; void code; }
  void vocab; void f; void reason; void text; void heap; void threads;
}
`);
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(work, 'tsconfig.json')], { cwd: root, encoding: 'utf8' });
  } catch (e) {
    assert.fail(`tsc failed:\n${e.stdout}${e.stderr}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
