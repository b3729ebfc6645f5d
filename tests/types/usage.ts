// Compiled by tests/js/typings.test.mjs with `tsc --noEmit --strict`: uses the
// whole public API so a typing that drifts from the implementation fails.
import { init, AttnWasmError, CausalBias, cosineSimilarity } from 'attnwasm';
import { init as initInline, AttnWasmError as InlineError } from 'attnwasm/inline';
import type { InlineInitOptions } from 'attnwasm/inline';
import { Tokenizer, SentencePieceProcessor, tokenizerFromFolder } from 'attnwasm/tokenizer';
import type { StreamDecoder, TokenizerEncodeOptions, TokenizerDecodeOptions, EncodedBatch, EncodedInputs, TokenizerBatchOptions, SlowTokenizer, SentencePieceEncoding, TokenOffsets } from 'attnwasm/tokenizer';
import { preprocessImages, loadImage, decodeImage, convertToRgb, exifTranspose, resize, centerCrop, imageProcessor, resizedSize, processImage, pixelTable, writePixelValues, RESAMPLE } from 'attnwasm/image';
import type { PixelValues, RgbImage, DecodedImage, ImageProcessor, ImageInput } from 'attnwasm/image';
import type { Embedder, Embeddings, EmbedOptions, PoolingMode } from 'attnwasm';
import type { SpeechRecognizer, Transcription, SpeechGenerateCallOptions } from 'attnwasm';
import { inspect, readHeader, headerLength, ROLES } from 'attnwasm/inspect';
import type { CheckpointReport, NativeInspector, InspectedFile, FileRole, WeightMemory } from 'attnwasm/inspect';
import type { AttnWasm, Tensor, MaskTensor, StateDict, ErrorCode, Capabilities, MemoryFigures, Translator, Translation, Classifier, Classification, CausalLM, Generation, GeneratedToken, GenerateOptions } from 'attnwasm';

async function main(): Promise<void> {
  const aw: AttnWasm = await init();
  const q: Tensor = { data: new Float32Array(2 * 5 * 8), shape: [2, 5, 8] };
  const mask: MaskTensor = { data: new Uint8Array(5 * 5), shape: [5, 5] };
  const r = aw.scaledDotProductAttention(q, q, q, { attnMask: mask, scale: null, enableGqa: false, needWeights: true });
  const w: Tensor | null = r.weights;
  console.log(r.output.shape, w?.shape);
  aw.scaledDotProductAttention(q, q, q, { isCausal: true, dropoutP: 0 });
  // Small-LM blocks: grouped-query attention with a lower-right causal mask object, RMSNorm, RoPE, SiLU.
  const q4: Tensor = { data: new Float32Array(1 * 4 * 3 * 8), shape: [1, 4, 3, 8] };
  const kv: Tensor = { data: new Float32Array(1 * 2 * 5 * 8), shape: [1, 2, 5, 8] };
  const lower: CausalBias = aw.causalLowerRight(3, 5);
  const variant: 'upperLeft' | 'lowerRight' = lower.variant;
  console.log(variant, lower.seqLenQ + lower.seqLenKv, aw.causalUpperLeft(3, 5) instanceof CausalBias);
  aw.scaledDotProductAttention(q4, kv, kv, { attnMask: lower, enableGqa: true });
  const rms = new aw.RMSNorm([8], { eps: null, elementwiseAffine: true });
  const rms2 = new aw.RMSNorm(8, { eps: 1e-6 });
  const normed: Tensor = rms.forward(rms2.forward(q));
  const eps: number | null = rms.eps;
  const rope = new aw.RotaryPositionalEmbeddings(8, { maxSeqLen: 64, base: 500000, interleaved: false });
  const rotated: Tensor = rope.forward({ data: new Float32Array(2 * 5 * 3 * 8), shape: [2, 5, 3, 8] }, { inputPos: { data: new Int32Array(5), shape: [5] } });
  rope.forward(rotated, { inputPos: null });
  const swish: Tensor = new aw.SiLU().forward(aw.silu(normed));
  new aw.TransformerEncoderLayer(8, 2, { activation: 'silu' }).dispose();
  console.log(eps, rope.dim, rope.maxSeqLen, rope.base, rope.interleaved, rms.normalizedShape, rms.elementwiseAffine, swish.shape);
  rms.dispose(); rms2.dispose(); rope.dispose();

  const mha = new aw.MultiheadAttention(8, 2, { batchFirst: true, bias: true, addBiasKv: false, addZeroAttn: false, kdim: null, vdim: 8, dropout: 0 });
  const shapes: Record<string, number[]> = mha.parameterShapes();
  const sd: StateDict = mha.stateDict();
  mha.loadStateDict(sd);
  mha.loadStateDict(new Map(Object.entries(mha.stateDict())));
  const causal: Tensor = aw.generateSquareSubsequentMask(5);
  const out = mha.forward(q, q, q, { attnMask: causal, isCausal: true, keyPaddingMask: null, needWeights: false, averageAttnWeights: true });
  const n: number = out.output.data.length + mha.headDim + mha.embedDim + mha.numHeads + mha.kdim + mha.vdim;
  console.log(shapes, n, mha.batchFirst, mha.bias, mha.addBiasKv, mha.addZeroAttn, mha.dropout);
  mha.dispose();
  mha[Symbol.dispose]();

  const caps: Capabilities = aw.capabilities();
  const mem: MemoryFigures = aw.memory();
  const peak: number = mem.peakInUseBytes - mem.inUseBytes + mem.heapLimitBytes + mem.workingMemoryBytes;
  aw.resetPeakMemory();
  console.log(peak);
  console.log(caps.simd, caps.threads, caps.threadsReason, caps.crossOriginIsolated, caps.environment, mem.heapBytes);
  const relaxed: boolean = caps.relaxedSimd;
  const relaxedWhy: string | undefined = caps.relaxedSimdReason;
  const baseline: AttnWasm = await init({ relaxedSimd: false, threads: 1 });
  console.log(relaxed, relaxedWhy, baseline.capabilities().build);
  // @ts-expect-error relaxedSimd is a boolean
  await init({ relaxedSimd: 'auto' });
  try {
    aw.scaledDotProductAttention(q, q, q, { dropoutP: 0.5 });
  } catch (e) {
    if (e instanceof AttnWasmError) {
      const code: ErrorCode = e.code;
      console.log(code, e.message);
    }
  }
  // Layers and checkpoints.
  const lin = new aw.Linear(8, 4, { bias: false });
  const ln = new aw.LayerNorm(4, { eps: 1e-6, elementwiseAffine: true });
  const y: Tensor = ln.forward(lin.forward(q));
  const emb = new aw.Embedding(10, 8, { paddingIdx: 0 });
  const e: Tensor = emb.forward({ data: new Int32Array([1, 2, 3]), shape: [3] });
  const act: Tensor = aw.gelu(aw.relu(e), { approximate: 'tanh' });
  new aw.GELU({ approximate: 'none' }).forward(new aw.ReLU().forward(new aw.Dropout(0.1).forward(act)));
  const layer = new aw.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, activation: 'gelu', normFirst: true, batchFirst: true, layerNormEps: 1e-6, dropout: 0, bias: true });
  const enc = new aw.TransformerEncoder(layer, 2, { norm: new aw.LayerNorm(8) });
  const src: Tensor = enc.forward(q, { srcKeyPaddingMask: { data: new Uint8Array(10), shape: [2, 5] }, mask: null, isCausal: false });
  const { output: encOut, attentionWeights } = enc.forwardWithAttention(q);
  const dl = new aw.TransformerDecoderLayer(8, 2, { batchFirst: true });
  const dec = new aw.TransformerDecoder(dl, 1, { norm: null });
  dec.forward(src, encOut, { tgtMask: causal, tgtIsCausal: true, memoryKeyPaddingMask: null, memoryMask: null, tgtKeyPaddingMask: null, memoryIsCausal: false });
  dl.forward(src, encOut);
  const tf = new aw.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 16, batchFirst: true });
  tf.forward(q, q, { srcMask: null, srcKeyPaddingMask: null, srcIsCausal: false, tgtMask: causal });
  const pe = new aw.SinusoidalPositionalEncoding(8, { maxLen: 100, batchFirst: true });
  const lpe = new aw.LearnedPositionalEmbedding(100, 8, { batchFirst: true });
  lpe.forward(pe.forward(q));
  const patch = new aw.PatchEmbedding(1, 8, 4, { classToken: true, bias: true });
  patch.forward({ data: new Float32Array(28 * 28), shape: [1, 1, 28, 28] });
  const sdFile = aw.loadSafetensors(new Uint8Array(0));
  tf.loadStateDict(sdFile);
  const { tensors, metadata } = aw.loadSafetensors(new ArrayBuffer(0), { metadata: true });
  console.log(y.shape, attentionWeights.length, Object.keys(tensors), metadata['attnwasm.config'], lin.inFeatures, ln.eps, layer.config.dModel, enc.numLayers);
  for (const m of [lin, ln, emb, layer, enc, dl, dec, tf, pe, lpe, patch]) m.dispose();

  // Models.
  const tr: Translator = await aw.loadTranslator('models/translator/translator.safetensors', { onProgress: (p) => console.log(p.loaded, p.total) });
  const t: Translation = tr.translate('forty-two', { to: 'de', beamSize: 2, lengthPenalty: 1, maxLength: 20 });
  console.log(t.text, t.input, t.value, t.tokens, t.crossAttention.data.length, t.stepMs, tr.languages, tr.scoreFull('one', [1, 2]).shape);
  try {
    tr.translate('fourty two');
  } catch (e) {
    if (e instanceof AttnWasmError && e.code === 'ERR_NOT_A_NUMBER') console.log(e.input, e.suggestion ?? 'no suggestion');
  }
  tr.dispose();
  const clf: Classifier = await aw.loadClassifier(new Uint8Array(0));
  const c: Classification = clf.classify(new Float32Array(784));
  clf.classify({ data: new Uint8ClampedArray(28 * 28 * 4), width: 28, height: 28 });
  console.log(c.label, c.probabilities[0], c.attention.grid, c.rollout.length, clf.labels);
  clf.dispose();

  await init({ wasmUrl: new URL('https://cdn.example/attnwasm_core.wasm') });
  await init({ wasmBinary: new Uint8Array(0) });
  // A .wasm that does not load: ERR_WASM_LOAD with the URL and the HTTP status.
  try {
    await init({ wasmUrl: '/missing/attnwasm_core.wasm' });
  } catch (e) {
    if (e instanceof AttnWasmError && e.code === 'ERR_WASM_LOAD') {
      const url: string | undefined = e.url;
      const status: number | undefined = e.status;
      console.log(url, status, e.message, e.cause);
    }
  }
  // attnwasm/inline: the same API, the .wasm embedded; init() takes only `threads` and `relaxedSimd`.
  const inlineOptions: InlineInitOptions = { threads: 1, relaxedSimd: false };
  const il: AttnWasm = await initInline(inlineOptions);
  const ilCaps: Capabilities = il.capabilities();
  console.log(ilCaps.build, new InlineError('ERR_WASM_LOAD', 'x') instanceof Error);
  // @ts-expect-error attnwasm/inline has no .wasm to point at
  await initInline({ wasmUrl: 'attnwasm_core.wasm' });

  // Threads.
  const mt: AttnWasm = await init({ threads: 2 });
  await init({ threads: 'auto', wasmUrl: 'https://cdn.example/attnwasm_core_mt.wasm' });
  await init({ threads: 2, threadStartTimeoutMs: 3000 });
  const mtCaps: Capabilities = mt.capabilities();
  const threadCount: number = mtCaps.threads === false ? 1 : mtCaps.threads;
  const why: string = mtCaps.threadsReason ?? 'threads on';
  const build: 'single-thread' | 'pthreads' = mtCaps.build;
  console.log(threadCount, why, build, mtCaps.sharedArrayBuffer, mtCaps.crossOriginIsolated);

  // Memory: a budget, and close().
  const bounded: AttnWasm = await init({ workingMemory: 8 * 2 ** 20 });
  const done: Promise<void> = bounded.close();
  await done;
  // @ts-expect-error workingMemory is a number of bytes
  await init({ workingMemory: '8MB' });
  const closedCode: ErrorCode = 'ERR_CLOSED';
  console.log(closedCode);

  // attnwasm/image: pure JS, no init().
  const pv: PixelValues = await preprocessImages(['a.png', new Uint8Array(0), { data: new Uint8Array(12), width: 2, height: 2 }], { image_processor_type: 'CLIPImageProcessor' }, { exifOrientation: false });
  const [batchN, channels, ph, pw]: [number, number, number, number] = pv.shape;
  const anInput: ImageInput = new Blob([]);
  const rgbImage: RgbImage = await loadImage(anInput);
  const decodedImage: DecodedImage = await decodeImage(new Uint8Array(0), 'images[0]');
  const proc: ImageProcessor = imageProcessor({ size: 224 }, { modelType: 'vit' });
  const [rh, rw] = resizedSize(proc, rgbImage.height, rgbImage.width);
  const resized: RgbImage = centerCrop(resize(exifTranspose(convertToRgb(decodedImage), decodedImage.orientation), { width: rw, height: rh }, RESAMPLE.BICUBIC), { height: 8, width: 8 });
  const table: Float32Array = pixelTable(proc);
  writePixelValues(processImage(resized, proc), table, pv.data, 0);
  resize(resized, { width: 4, height: 4 }, 'lanczos');
  // @ts-expect-error resample names are PIL's
  resize(resized, { width: 4, height: 4 }, 'area');
  console.log(batchN, channels, ph, pw);

  // attnwasm/tokenizer: pure JS, no init().
  const tok: Tokenizer = Tokenizer.fromJSON('{"model": {}}');
  Tokenizer.fromJSON({ model: {} });
  Tokenizer.fromJSON(new Uint8Array(0));
  const withConfig: Tokenizer = Tokenizer.fromJSON('{}', { add_bos_token: true, pad_token: { content: '<pad>' } });
  const batchOptions: TokenizerBatchOptions = { maxLength: 128, truncation: true, padding: 'longest', addSpecialTokens: true };
  const batch: EncodedBatch = withConfig.encodeBatch(['a', 'b c'], batchOptions);
  const [rows, width]: [number, number] = batch.shape;
  const one: EncodedInputs = withConfig.encodeInputs('a', { maxLength: 8 });
  console.log(rows, width, batch.inputIds[0], batch.attentionMask, batch.tokenTypeIds, batch.lengths[0], one.tokenTypeIds, withConfig.config?.chat_template);
  // @ts-expect-error padding is 'longest', 'max_length' or false
  withConfig.encodeBatch(['a'], { padding: true });
  const encOptions: TokenizerEncodeOptions = { addSpecialTokens: false };
  const decOptions: TokenizerDecodeOptions = { skipSpecialTokens: true };
  const ids: Int32Array = tok.encode('Hello world', encOptions);
  const text: string = tok.decode(ids, decOptions) + tok.decode([1, 2, 3]);
  const stream: StreamDecoder = tok.streamDecoder(decOptions);
  const piece: string = stream.push(ids[0]) + stream.end();
  const id: number | undefined = tok.tokenToId('Ġthe');
  const token: string | undefined = tok.idToToken(0);
  const pieces: string[] = tok.preTokenize('Hello world');
  console.log(text, piece, id, token, pieces, tok.vocabSize, tok.isSpecial(0), tok instanceof Tokenizer);
  const withOffsets: TokenOffsets = tok.encode('Hello world', { returnOffsets: true, addSpecialTokens: false });
  const [start, end]: [number, number] = withOffsets.offsets[0];
  console.log(withOffsets.ids[0], 'Hello world'.slice(start, end));
  // @ts-expect-error with returnOffsets the result is { ids, offsets }, not an Int32Array
  const notIds: Int32Array = tok.encode('x', { returnOffsets: true });
  // SentencePiece model files and a folder's slow tokenizer.
  const sp: SentencePieceProcessor = SentencePieceProcessor.fromBytes(new Uint8Array(0), 'spiece.model');
  const spEnc: SentencePieceEncoding = sp.encode('Hello');
  console.log(spEnc.ids[0], spEnc.pieces[0], sp.decodeIds(spEnc.ids), sp.decodePieces(spEnc.pieces), sp.size, sp.modelType, sp.pieceToId('▁a'), sp.withNormalizer({ add_dummy_prefix: false }).normalize('x'));
  const folderTok: Tokenizer | SlowTokenizer = await tokenizerFromFolder(async (name: string) => (name === 'vocab.txt' ? 'a\n' : undefined), { slow: true });
  if (!(folderTok instanceof Tokenizer)) {
    const slowIds: Int32Array = folderTok.encode('Hallo', { srcLang: 'en', tgtLang: 'de', target: true, addSpecialTokens: true });
    const slowOffsets: TokenOffsets = folderTok.encode('Hallo', { returnOffsets: true });
    console.log(slowOffsets.offsets.length);
    const b2: EncodedBatch = folderTok.encodeBatch(['a'], { srcLang: 'eng_Latn', maxLength: 8 });
    console.log(slowIds, b2.shape, folderTok.tokenizerClass, folderTok.tokenize('a'), folderTok.languageId?.('fr'), folderTok.specialTokenId('eos_token'), folderTok.decode(slowIds, { skipSpecialTokens: true }));
  }
  try {
    Tokenizer.fromJSON({ model: { type: 'WordPiece' } });
  } catch (e) {
    if (e instanceof AttnWasmError && e.code === 'ERR_UNSUPPORTED') console.log(e.message);
  }
  // A causal LM: a file with its config, or a Hugging Face checkpoint with config.json and tokenizer.json.
  // A config.json may be a causal LM's or an encoder's: loadModel gives either, loadCausalLM the one.
  const either: CausalLM | Embedder = await aw.loadModel(new Uint8Array(0), { config: { model_type: 'llama' }, tokenizer: tok });
  if (either instanceof aw.Embedder) console.log(either.dimension);
  const lm: CausalLM = await aw.loadCausalLM(new Uint8Array(0), { config: { model_type: 'llama' }, tokenizer: tok });
  await aw.loadModel(new Uint8Array(0), { config: '{}', tokenizer: '{}', onProgress: () => {} });
  await aw.loadModel('x/', { signal: new AbortController().signal, readTimeoutMs: 30000 }).catch((e: AttnWasmError) => {
    if (e.code === 'ERR_UNSAFE_PATH' || e.code === 'ERR_TIMEOUT' || e.code === 'ERR_TEMPLATE_LIMIT') console.log(e.message);
  });
  const logits: Tensor = lm.forward({ data: Int32Array.of(1, 2), shape: [1, 2] }).logits;
  const gopts: GenerateOptions = { maxNewTokens: 20, temperature: 0.8, topK: 40, topP: 0.95, seed: 1, stopTokens: [0], signal: new AbortController().signal, attentionWindow: null, attention: true };
  const gen: Generation = lm.generate('Once upon a time', gopts);
  for await (const t of gen) {
    const tk: GeneratedToken = t;
    console.log(tk.id, tk.text ?? '', tk.ms, tk.index, tk.attention?.data.length);
  }
  lm.generate([1, 2, 3]);
  const lm2: CausalLM = await aw.loadCausalLM('models/lm/lm.safetensors');
  const any = await aw.loadModel('x.safetensors');
  if (any instanceof aw.CausalLM) console.log(any.vocabSize, lm2.numLayers);
  console.log(gen.stopReason, gen.seed, gen.text, gen.ids.length, gen.promptIds.length, logits.shape, lm.maxPositions, lm.tokenizer?.vocabSize, lm.encode('x'), lm.decode([1]));
  // @ts-expect-error maxNewTokens is a number
  lm.generate('x', { maxNewTokens: '5' });
  lm.dispose();
  // A sentence embedder: a sentence-transformers folder (a path, a base URL, a folder pick, a map of paths).
  {
    const emb: Embedder = await aw.loadEmbedder('all-MiniLM-L6-v2/', { dtype: 'q8', onProgress: (p) => console.log(p.loaded) });
    const mode: PoolingMode = 'cls';
    const emb2: Embedder = await aw.loadModel(new Map<string, string | Uint8Array>([['model.safetensors', new Uint8Array(0)], ['1_Pooling/config.json', 'https://x/1_Pooling/config.json']]), { pooling: mode, normalize: true });
    const emb3: Embedder = await aw.loadModel(new Uint8Array(0), { config: '{}', tokenizer: tok, pooling: 'cls+max+mean' });
    const eopts: EmbedOptions = { batchSize: 16, normalize: false, prompt: 'query: ', onProgress: (p) => console.log(p.done / p.total) };
    const vecs: Embeddings = await emb.embed(['A cat.', 'A dog.'], eopts);
    const one: Embeddings = await emb.embed('A bird.', { promptName: 'query' });
    const idsVecs: Embeddings = await emb2.embedIds([Int32Array.of(101, 102), [101, 7, 102]], { batchSize: 1 });
    const batch = emb.tokenize(['A cat.'], { prompt: 'q: ' });
    const out = emb.forward({ inputIds: batch.inputIds, attentionMask: { data: Uint8Array.of(1, 1), shape: [1, 2] }, tokenTypeIds: batch.tokenTypeIds });
    const hidden: Tensor = out.lastHiddenState;
    const pooled: Tensor | null = out.poolerOutput;
    const sims: Tensor = cosineSimilarity(vecs, one);
    const sim: number = aw.cosineSimilarity(vecs.data.subarray(0, emb.dimension), Float32Array.of(1, 2));
    const row: Tensor = aw.cosineSimilarity([1, 2], vecs);
    console.log(emb.pooling, emb.normalize, emb.maxTokens, emb.modelType, emb.hiddenSize, emb.hasPooler, emb.includePrompt, emb.doLowerCase,
      emb.prompts, emb.defaultPromptName, emb.tokenizer?.vocabSize, emb.weightTypes, idsVecs.shape[1], hidden.shape, pooled?.shape, sims.shape, sim, row.data);
    // @ts-expect-error batchSize is a number
    emb.embed(['x'], { batchSize: '8' });
    // @ts-expect-error embed takes texts; ids go to embedIds
    emb.embed([[1, 2]]);
    emb.dispose(); emb2.dispose(); emb3[Symbol.dispose]();
  }
  // A checkpoint described without its data ('attnwasm/inspect': no wasm), and with a runtime's provider.
  {
    const report: CheckpointReport = await inspect('./SmolLM2-135M/', { probe: false, readTimeoutMs: Infinity });
    const first: InspectedFile | undefined = report.files[0];
    const role: FileRole | undefined = first?.role;
    const q4: WeightMemory | null = report.memory?.q4 ?? null;
    console.log(report.family?.className, report.modelType, report.refused?.code, report.tensors[0]?.shape, report.parameters,
      q4?.weightTypes.q4, report.memoryExact, report.side?.chatTemplate, role, ROLES.length);
    const native: NativeInspector = {
      header: (bytes, size) => ({ code: null, message: '', tensors: [{ name: 'w', dtype: 'F32', shape: [bytes.length, size ?? 0] }], metadata: {} }),
      plan: (config, headers, index, dtype) => ({ code: null, message: config + index + dtype, family: 'causal_lm', bytes: { weightBytes: headers.length, weightTypes: {} } }),
    };
    await inspect(new Map([['model.safetensors', new Uint8Array(0)]]), { native, config: { model_type: 'llama' }, revision: 'main' });
    const h = readHeader(new Uint8Array(16), null);
    console.log(h.tensors.length, h.dataStart, headerLength(new Uint8Array(8), 16));
    // @ts-expect-error probe is a boolean
    inspect('x/', { probe: 'no' });
  }
  // Whisper's word-level timestamps: transcribe's 'word' chunks, generate's token times.
  {
    const whisper = (await aw.loadModel('openai/whisper-tiny')) as unknown as SpeechRecognizer;
    const words: Transcription = await whisper.transcribe('talk.wav', { language: 'en', returnTimestamps: 'word', chunkLengthS: 30 });
    const first = words.chunks?.[0];
    console.log(first?.text, first?.timestamp?.[0]);
    const go: SpeechGenerateCallOptions = { returnTokenTimestamps: true, numFrames: 1000, returnTimestamps: true };
    const g = await whisper.generate(new Float32Array(16000), go);
    const t0: number | undefined = g.tokenTimestamps?.[0]?.[1];
    console.log(t0);
    // stream() with 'word': each window's words as it is decoded.
    for await (const w of whisper.stream('talk.wav', { returnTimestamps: 'word' })) console.log(w.text, w.timestamp[0]);
    // @ts-expect-error stream() takes no chunkLengthS
    whisper.stream('talk.wav', { chunkLengthS: 30 });
    // @ts-expect-error returnTimestamps is true, false or 'word'
    await whisper.transcribe('talk.wav', { returnTimestamps: 'words' });
  }
  // @ts-expect-error the tokenizer is not exported by the main entry (it is pure JS: attnwasm/tokenizer)
  import('attnwasm').then((m) => m.Tokenizer);
}
void main;
