// Streams a checkpoint's files into the native loader (src/models/load_model.h ModelLoader, through
// boundary.js loader()): each file's header first (its first 8 + N bytes), then — once the model is built and
// every weight reserved in its type — its data, STAGING bytes at a time through one staging block of wasm
// memory. The file itself is never whole in memory: a load's peak is the weights, the staging block and the
// working memory, whatever the checkpoint's size or number of shards.
import { openSource } from './sources.js';
import * as boundary from './boundary.js';

const STAGING = 4 << 20;  // bytes of wasm memory one chunk passes through (16 MiB until issue 39: a q8 ViT-B/16's peak 1.38 → 1.23 B per parameter)

/**
 * Loads the files of `weights` ([{ name, source }], the shards in order) into a native model handle (owned
 * by the caller). config: config.json's text or ''; index: the shard index's text or ''; dtype: '' (as
 * stored) or a weight type; onProgress({ loaded, total, file }) as bytes arrive; expected: the family's kind
 * or ''; scope: the load's LoadScope (load_scope.js), checked after every step.
 * A failure (a missing or truncated file, a stream that errors, a header that lies), an abort, close() or
 * an onProgress that throws frees what was taken and throws: an error naming the file (and the tensor,
 * where one is incomplete), the abort's reason, ERR_CLOSED, the callback's error.
 * @returns {Promise<{handle: object, metadata: Record<string, string>, bytes: number}>} bytes: read in all
 */
export async function loadFiles(rt, { weights, config, index, dtype, boundedHead = false, expected, onProgress, scope }) {
  const loader = boundary.loader(rt, STAGING);
  const sources = [];
  let handle = null;
  try {
    // Headers: the first 8 bytes give the header's length, then the header itself.
    let total = 0, loaded = 0;
    for (const w of weights) {
      const src = await openSource(w.source, w.name, scope.io);
      scope.check();
      sources.push(src);
      const first = await src.read(8);
      scope.check();
      const known = src.exact ? src.size : -1;  // -1: not known (checked against the header as bytes arrive)
      const rest = await src.read(loader.headerLength(first, known, w.name));
      scope.check();
      const head = new Uint8Array(8 + rest.byteLength);
      head.set(first, 0);
      head.set(rest, 8);
      loader.addFile(w.name, head, known);
      total = total === null || src.size === null ? null : total + src.size;  // null: a stream that does not say
      loaded += head.byteLength;
    }
    const metadata = loader.metadata();
    loader.begin(expected, config, index, dtype, boundedHead);
    // Data: every file in turn, through the staging block.
    const progress = (file) => onProgress && onProgress({ loaded, total, file });
    for (let f = 0; f < sources.length; f++) {
      const src = sources[f];
      let offset = src.loaded, filled = 0;
      const flush = () => {
        if (!filled) return;
        loader.feed(f, offset, filled);
        offset += filled;
        loaded += filled;
        filled = 0;
        progress(src.name);
      };
      // The next chunk is asked for before this one is fed, so the read overlaps the native work.
      const it = src.chunks()[Symbol.asyncIterator]();
      for (let next = it.next(); ;) {
        const r = await next;
        scope.check();
        if (r.done) break;
        next = it.next();
        next.catch(() => {});  // a failed read surfaces at its await above, not as an unhandled rejection
        const c = r.value;
        for (let at = 0; at < c.byteLength;) {
          const take = Math.min(STAGING - filled, c.byteLength - at);
          loader.stage(c.subarray(at, at + take), filled);
          filled += take;
          at += take;
          if (filled === STAGING) flush();
        }
      }
      flush();
      await src.close();
      scope.check();
    }
    handle = loader.finish();
    scope.check();
    const done = handle;
    handle = null;
    return { handle: done, metadata, bytes: loaded };
  } finally {
    // The wasm instance outlives close() while this runs: what was taken goes back to it either way.
    if (handle) handle.delete();
    loader.free();
    for (const s of sources) await s.close().catch(() => {});
  }
}
