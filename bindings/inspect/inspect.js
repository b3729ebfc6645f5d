// inspect(): a checkpoint described without reading its tensor data — its files and what each is for, its
// family and model_type or the reason the runtime refuses it, its tensors, its parameter count, the bytes its
// weights take in memory for each dtype, and its side files. It takes every source loadModel takes, resolved
// the loader's way (checkpoint.js, hub/hook.js), and reads of each weight file only its first 8 + N bytes
// (head_bytes.js). Two levels: standalone, the header is checked in JS (header.js), the family found by the
// registry's rows (family.js), the checks across files made (shards.js) and the bytes estimated (memory.js);
// with a `native` provider (a runtime's: aw.inspect), the native reader checks each header and a dry run of the
// native loader gives the family, the refusals and the exact bytes.
import { AttnWasmError, typeError, describe } from '../errors.js';
import { checkOptions, checkBool, checkInteger } from '../checks.js';
import { resolveCheckpoint } from '../checkpoint.js';
import { READ_TIMEOUT_MS } from '../sources.js';
import { hubSource } from '../hub/hook.js';
import { FAMILIES } from '../native_constants.js';
import { readHead } from './head_bytes.js';
import { readHeader, FLOAT_DTYPES, elements } from './header.js';
import { findFamily, configOption } from './family.js';
import { checkShards } from './shards.js';
import { encoderTask, TASK_FACES } from '../encoder_task.js';
import { estimateBytes, SIZED } from './memory.js';
import { listFiles, readSmall } from './listing.js';

const DESCRIBE = Symbol.for('attnwasm.describe');
const OPEN = Symbol.for('attnwasm.open');
const OPTIONS = ['config', 'native', 'probe', 'signal', 'readTimeoutMs', 'revision', 'cache', 'host'];
const isSignal = (s) => s !== null && typeof s === 'object' && typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function';

/** { signal, readTimeoutMs } from the options, as loadModel checks them (Infinity: no bound, 0 inside). */
function ioOf({ signal, readTimeoutMs }) {
  if (signal !== undefined && !isSignal(signal)) throw typeError(`signal: expected an AbortSignal, got ${describe(signal)}`);
  const ms = readTimeoutMs === undefined ? READ_TIMEOUT_MS : readTimeoutMs === Infinity ? 0
    : checkInteger(readTimeoutMs, 'readTimeoutMs', { min: 1, max: 2 ** 31 - 1 });
  return { signal: signal ?? null, readTimeoutMs: ms };
}

/** The `native` option: null, or an object with header() and plan() (inspect.d.ts NativeInspector). */
function nativeOf(native) {
  if (native === undefined || native === null) return null;
  if (typeof native !== 'object' || typeof native.header !== 'function' || typeof native.plan !== 'function') {
    throw typeError(`native: expected { header(bytes, size), plan(config, headers, index, dtype) }, got ${describe(native)}`);
  }
  return native;
}

/** An error that says what the checkpoint is (a header the reader refuses), not that it could not be read. */
const isHeaderRefusal = (e) => e instanceof AttnWasmError && e.code === 'ERR_INVALID_ARGUMENT' && /^safetensors: /.test(e.message);

/**
 * Describes a checkpoint without reading its tensor data. Resolves to a plain object (inspect.d.ts
 * CheckpointReport): { source, files, family, modelType, refused, tensors, parameters, memory, memoryExact, side,
 * config, metadata }. A checkpoint the runtime would refuse resolves too, with `refused` ({ code, message }, the
 * loader's code and words) and whatever could be read; it rejects only when the source cannot be read (a path or
 * URL that is not there, a shard the index names that the folder lacks, a name that leaves its folder:
 * ERR_UNSAFE_PATH, an abort, ERR_TIMEOUT) or an argument is wrong (TypeError).
 * @param {unknown} source anything loadModel takes: a folder (Node path, base URL ending in '/', File list or
 *   File[], Map or object of files), an index path or URL, one file (path, URL, bytes, Blob, Response,
 *   ReadableStream: a stream is read as far as its header and cancelled), or a hub id 'organisation/name'
 * @param {{config?: object|string|Uint8Array, native?: object, probe?: boolean, signal?: AbortSignal,
 *   readTimeoutMs?: number, revision?: string, cache?: unknown, host?: string}} [options]
 */
export async function inspect(source, options) {
  const o = checkOptions(options, OPTIONS, 'inspect');
  const io = ioOf(o);
  const native = nativeOf(o.native);
  const probe = checkBool(o.probe, 'probe', true);
  const configGiven = o.config === undefined ? null : configOption(o.config);
  const hub = await hubSource(source, { revision: o.revision, cache: o.cache, host: o.host, signal: io.signal ?? undefined });
  const cp = await resolveCheckpoint(hub ? readOnly(hub.files) : source, io);
  const config = configGiven ?? (cp.side['config.json'] === undefined ? null
    : await readSmall(cp.side['config.json'], 'config.json', io, !!cp.optionalSide));
  const { files, side } = await listFiles(cp, io, probe, configGiven === null ? config : null);

  // Each weight file's header, in order; the first refusal ends the reading, as it ends a load.
  let refused = null;
  const heads = [];
  for (const w of cp.weights) {
    let r;
    try {
      r = await readHead(w.source, w.name, io);
    } catch (e) {
      if (!isHeaderRefusal(e)) throw e;
      refused = { code: e.code, message: `source: ${w.name}: ${e.message}` };
      break;
    }
    const header = native ? nativeHeader(native, r) : tryHeader(r);
    if (header.refused) {
      refused = { code: header.refused.code, message: `source: ${w.name}: ${header.refused.message}` };
      break;
    }
    heads.push({ name: w.name, head: r.head, size: r.size, ...header });
    const listed = files.find((f) => f.role === 'weights' && (f.name === w.name || cp.kind === 'file'));
    if (listed && listed.bytes === null) listed.bytes = r.bytes;
  }
  const complete = !refused;
  const tensors = heads.flatMap((h) => h.tensors.map((t) => ({ name: t.name, dtype: t.dtype, shape: t.shape, file: h.name })));
  const metadata = heads[0]?.metadata ?? null;

  // The family: config.json's model_type, or the first file's own attnwasm.config (its metadata needed).
  const fam = config !== null || metadata ? findFamily(config, metadata ?? {}) : { family: null, modelType: null, config: null, refused: null };
  let family = fam.family, memory = null, memoryExact = false, parameters = complete ? countParameters(tensors) : null;
  if (native && complete) {
    const plan = nativePlan(native, config ?? '', heads, cp.index ?? '');
    family = plan.family ?? family;
    refused = plan.refused;
    memory = plan.memory;
    memoryExact = memory !== null;
    parameters = plan.parameters ?? parameters;
  } else if (complete) {
    refused = fam.refused ?? checkShards(heads, cp.index);
    memory = estimateBytes(tensors);
  }
  return {
    source: hub ? 'hub' : cp.kind,
    files,
    family: family ? { kind: family.kind, className: faceOf(family, fam.config, files), noun: family.noun } : null,
    modelType: fam.modelType,
    refused,
    tensors,
    parameters,
    memory,
    memoryExact,
    side,
    config: fam.config,
    metadata,
  };
}

/**
 * A hub repository's files opened without the cache's writes (hub/folder.js DESCRIBE): each from the cache when
 * it holds it whole, else from its URL. A load downloads them into the cache; inspect only looks.
 */
function readOnly(files) {
  return new Map([...files].map(([path, f]) => [path, !f[DESCRIBE] ? f : {
    [OPEN]: async () => (await f[DESCRIBE].cached()) ?? f[DESCRIBE].url,
    [DESCRIBE]: f[DESCRIBE],
  }]));
}

/** The elements of the float tensors (integer buffers, such as position_ids, are no parameters). */
function countParameters(tensors) {
  return tensors.reduce((a, t) => a + (FLOAT_DTYPES.includes(t.dtype) ? elements(t.shape) : 0), 0);
}

/** The standalone header check: { tensors, metadata } or { refused }. */
function tryHeader(r) {
  try {
    const h = readHeader(r.head, r.size);
    return { tensors: h.tensors, metadata: h.metadata };
  } catch (e) {
    if (!isHeaderRefusal(e)) throw e;
    return { refused: { code: e.code, message: e.message } };
  }
}

/** The provider's header(): { tensors, metadata } or { refused }. */
function nativeHeader(native, r) {
  const h = native.header(r.head, r.size);
  if (h.code) return { refused: { code: h.code, message: h.message } };
  return { tensors: h.tensors, metadata: h.metadata ?? {} };
}

/**
 * The provider's plan() for every dtype: { family (a FAMILIES row or null), refused, memory, parameters }. A
 * refusal as stored ends it (the checkpoint is refused whatever the dtype); one dtype's own refusal leaves that
 * dtype's bytes null.
 */
function nativePlan(native, config, heads, index) {
  const headers = heads.map((h) => ({ name: h.name, bytes: h.head, size: h.size }));
  const memory = {};
  let family = null, parameters = null;
  for (const as of SIZED) {
    const p = native.plan(config, headers, index, as === 'stored' ? '' : as);
    if (as === 'stored') {
      family = FAMILIES.find((f) => f.kind === p.family) ?? null;
      if (p.code) return { family, refused: { code: p.code, message: p.message }, memory: null, parameters: null };
      parameters = p.parameters ?? null;
    }
    memory[as] = p.code ? null : { weightBytes: p.bytes.weightBytes, weightTypes: { ...p.bytes.weightTypes } };
  }
  return { family, refused: null, memory, parameters };
}

/**
 * The face a load gives: the family's; for an encoder or ModernBERT the one its config's architectures name (encoder_task.js);
 * for a causal LM in a sentence-transformers folder (modules.json: Qwen3-Embedding), or one whose attention is
 * bidirectional (EmbeddingGemma), a DecoderEmbedder; a vision encoder's *ForImageClassification an ImageClassifier.
 */
function faceOf(family, config, files) {
  if (family.kind === 'causal_lm' && (files.some((f) => f.name === 'modules.json') || config?.use_bidirectional_attention === true)) {
    return 'DecoderEmbedder';
  }
  // A vision encoder with an image-classification head (vision_config.cpp reads the same architectures).
  if (family.kind === 'vision') {
    const arch = Array.isArray(config?.architectures) ? config.architectures[0] : undefined;
    return typeof arch === 'string' && /ForImageClassification(WithTeacher)?$/.test(arch) ? 'ImageClassifier' : family.className;
  }
  if ((family.kind !== 'encoder' && family.kind !== 'modernbert') || config === null || typeof config !== 'object') return family.className;
  return TASK_FACES[encoderTask(config)] ?? family.className;
}
