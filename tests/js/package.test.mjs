// The npm package as a user gets it: `npm pack` (tests/tarball.mjs), install
// the tarball into a fresh project, then import it by name from Node and run
// the CLI through npx. The tarball must hold the built module, the JS, the
// typings, the models, README and LICENSE — and nothing else of the build tree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, statSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packedTarball } from '../tarball.mjs';

const npm = (args, cwd) => execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8' });

test('npm pack → install → import attnwasm and run the CLI', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'attnwasm-pkg-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const packed = await packedTarball();
  const { files } = packed;
  t.diagnostic(`tarball ${packed.filename}: ${packed.size} bytes packed, ${packed.unpackedSize} unpacked, ${files.length} files`);
  // Every module the entries import, statically or dynamically (found by reading them), and the rest by name.
  const imported = new Set();
  const visit = (rel) => {
    if (imported.has(rel)) return;
    imported.add(rel);
    const src = readFileSync(new URL(`../../${rel}`, import.meta.url), 'utf8');
    for (const m of src.matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+\.js)'/g)) visit(join(dirname(rel), m[1]));
  };
  for (const entry of ['bindings/index.js', 'bindings/inline.js', 'bindings/inspect/index.js', 'bindings/tokenizer.js', 'bindings/helpers/index.js', 'bindings/images.js', 'bindings/preprocess.js', 'bindings/image/index.js', 'bindings/audio/index.js', 'bin/attnwasm.mjs']) visit(entry);
  assert.ok(imported.has('bindings/causal_lm.js') && imported.has('bindings/models.js'), [...imported].join());
  for (const f of [...imported, 'bindings/index.d.ts', 'bindings/inline.d.ts', 'bindings/inspect.d.ts', 'bindings/tokenizer.d.ts', 'bindings/image.d.ts', 'bindings/audio/index.d.ts', 'dist/attnwasm_core.mjs', 'dist/attnwasm_core.wasm', 'dist/attnwasm_inline.mjs',
    'dist/attnwasm_core_mt.mjs', 'dist/attnwasm_core_mt.wasm', 'dist/attnwasm_core_mt.worker.js', 'dist/package.json',
    'dist/attnwasm_core_rs.mjs', 'dist/attnwasm_core_rs.wasm', 'dist/attnwasm_core_mt_rs.mjs', 'dist/attnwasm_core_mt_rs.wasm', 'dist/attnwasm_core_mt_rs.worker.js',
    'models/translator/translator.safetensors', 'models/vit/vit.safetensors', 'models/lm/lm.safetensors', 'README.md', 'LICENSE', 'package.json']) {
    assert.ok(files.includes(f), `the tarball lacks ${f}`);
  }
  for (const f of files) assert.ok(!/^(build|src|tests|tools|web|node_modules)\//.test(f), `the tarball should not hold ${f}`);

  const app = join(dir, 'app');
  execFileSync('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', type: 'module', private: true }));
  npm(['install', '--prefer-offline', packed.path], app);
  writeFileSync(join(app, 'main.js'), `
    import { init } from 'attnwasm';
    import { decodePgm, mnistPreprocess } from 'attnwasm/helpers';
    import * as images from 'attnwasm/images';
    import * as preprocess from 'attnwasm/preprocess';
    import { Tokenizer } from 'attnwasm/tokenizer';
    import { preprocessImages } from 'attnwasm/image';
    import { WhisperFeatureExtractor, readAudio } from 'attnwasm/audio';
    import { inspect } from 'attnwasm/inspect';
    import { readFileSync } from 'node:fs';
    const aw = await init();
    const mha = new aw.MultiheadAttention(8, 2, { batchFirst: true });
    const x = { data: new Float32Array(2 * 3 * 8).fill(0.5), shape: [2, 3, 8] };
    const { output } = mha.forward(x, x, x);
    mha.dispose();
    const tr = await aw.loadTranslator(new URL('./node_modules/attnwasm/models/translator/translator.safetensors', import.meta.url));
    let refused = null;
    try { tr.translate('twenty twenty'); } catch (e) { refused = e.code; }
    const helpers = [typeof mnistPreprocess, images.decodePgm === decodePgm, preprocess.mnistPreprocess === mnistPreprocess];
    // attnwasm/tokenizer with its dependency (@huggingface/tokenizers) installed by npm.
    const tok = Tokenizer.fromJSON(readFileSync(process.argv[2]));
    const ids = tok.encode('Hello world 😀');
    const tokenizer = [ids.length, tok.decode(ids)];
    // attnwasm/image with its dependencies (fflate, @jsquash/jpeg and its .wasm) installed by npm.
    const pixels = (await preprocessImages([process.argv[3], readFileSync(process.argv[4])],
      { image_processor_type: 'CLIPImageProcessor', size: { shortest_edge: 8 }, crop_size: { height: 8, width: 8 } })).shape;
    // attnwasm/audio with its FLAC decoder (@wasm-audio-decoders/flac) installed by npm.
    const samples = await readAudio(process.argv[5]);
    const audio = [samples.length, new WhisperFeatureExtractor({ feature_size: 128 }).features(samples).shape];
    // attnwasm/inspect: the installed translator's file described from its header, as the runtime loaded it.
    const report = await inspect(new URL('./node_modules/attnwasm/models/translator/translator.safetensors', import.meta.url));
    const inspected = [report.family.className, report.refused, report.tensors.length > 0];
    console.log(JSON.stringify({ shape: output.shape, fr: tr.translate('forty-two').text, typed: tr.translate('Forty  Two').text, refused, helpers, tokenizer, pixels, audio, inspected }));
    tr.dispose();`);
  const gpt2 = fileURLToPath(new URL('../data/goldens/tokenizer/gpt2_3k.json', import.meta.url));
  const fixture = (f) => fileURLToPath(new URL(`../data/goldens/images/fixtures/${f}`, import.meta.url));
  const flac = fileURLToPath(new URL('../data/goldens/whisper_features/flac/flac_s24_stereo_16k.flac', import.meta.url));
  const out = JSON.parse(execFileSync(process.execPath, ['main.js', gpt2, fixture('rgba16_i.png'), fixture('j420_q90.jpg'), flac], { cwd: app, encoding: 'utf8' }));
  // 'attnwasm/helpers', and its deprecated aliases 'attnwasm/images' and 'attnwasm/preprocess' (the same functions).
  assert.deepEqual(out, { shape: [2, 3, 8], fr: 'quarante-deux', typed: 'quarante-deux', refused: 'ERR_NOT_A_NUMBER', helpers: ['function', true, true],
    tokenizer: [9, 'Hello world 😀'], pixels: [2, 3, 8, 8], audio: [800, [1, 128, 3000]], inspected: ['Translator', null, true] });
  // The pthreads builds from the installed package: their CommonJS .worker.js
  // loads under the "type": "module" package, and the process exits on its
  // own; with --experimental-wasm-relaxed-simd the relaxed-SIMD ones
  // (dist/attnwasm_core_mt_rs.*, dist/attnwasm_core_rs.*) run.
  writeFileSync(join(app, 'threads.js'), `
    import { init } from 'attnwasm';
    const caps = [];
    for (const threads of [2, 1]) {
      const aw = await init({ threads });
      const mha = new aw.MultiheadAttention(64, 4);
      const x = { data: new Float32Array(96 * 64).fill(0.5), shape: [96, 1, 64] };
      const { output } = mha.forward(x, x, x);
      mha.dispose();
      const c = aw.capabilities();
      caps.push({ threads: c.threads, relaxedSimd: c.relaxedSimd, n: output.data.length });
    }
    console.log(JSON.stringify(caps));`);
  for (const flags of [['--experimental-wasm-relaxed-simd'], []]) {
    // Whether Node runs relaxed SIMD with these flags (Node 20: only with the flag).
    const relaxedSimd = JSON.parse(execFileSync(process.execPath, [...flags, '--input-type=module', '-e',
      `import { RELAXED_SIMD_SUPPORTED } from ${JSON.stringify(new URL('../../bindings/wasm_load.js', import.meta.url).href)}; console.log(RELAXED_SIMD_SUPPORTED);`], { encoding: 'utf8' }));
    if (flags.length) assert.equal(relaxedSimd, true);
    const mt = JSON.parse(execFileSync(process.execPath, [...flags, 'threads.js'], { cwd: app, encoding: 'utf8', timeout: 30000 }));
    assert.deepEqual(mt, [{ threads: 2, relaxedSimd, n: 96 * 64 }, { threads: false, relaxedSimd, n: 96 * 64 }]);
  }
  const cli = execFileSync('npx', ['--no-install', 'attnwasm', 'translate', 'seventy-one', '--to', 'de'], { cwd: app, encoding: 'utf8' });
  assert.equal(cli, 'einundsiebzig\n');
  assert.ok(statSync(join(app, 'node_modules/attnwasm/dist/attnwasm_core.wasm')).size > 0);
});
