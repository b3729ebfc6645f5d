// Where the image decoders' npm dependencies (fflate for PNG, @jsquash/jpeg for JPEG) are, when a bare import
// cannot find them: in a module worker of a page without a bundler, which an import map does not reach. The page
// side of 'attnwasm/worker' resolves them through the page's import map (import.meta.resolve) and the worker sets
// them here; decode.js and jpeg.js import from these URLs, else by their package names (Node, bundlers, pages).

const urls = {};

/** Sets the URLs ({ fflate, jsquashJpeg }: the mozjpeg decoder's .js) that the decoders import from. */
export function setDependencyUrls(u) {
  for (const k of ['fflate', 'jsquashJpeg']) if (typeof u?.[k] === 'string') urls[k] = u[k];
}

/** The URL set for `name`, or undefined. */
export const dependencyUrl = (name) => urls[name];

/**
 * In a page: the dependencies' URLs as its import map resolves them ({} where it maps none, or off a page). The
 * specifiers are variables so that bundlers leave them alone (a bundle imports the packages itself).
 */
export function resolvedDependencies() {
  const out = {};
  const specs = { fflate: 'fflate', jsquashJpeg: '@jsquash/jpeg/codec/dec/mozjpeg_dec.js' };
  for (const [k, spec] of Object.entries(specs)) {
    try {
      const url = import.meta.resolve?.(spec);
      if (typeof url === 'string' && /^(https?|blob|data):/.test(url)) out[k] = url;
    } catch {
      // not mapped: the worker imports by name
    }
  }
  return out;
}
