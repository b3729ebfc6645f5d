// Prepended (--extern-pre-js) to the Emscripten ES module. Emscripten 3.1.6's
// ES6 output uses CommonJS globals in Node (require, __dirname, __filename)
// that an ES module does not have; define them, in Node only. Browsers and
// workers skip this block entirely.
/* eslint-disable no-var */
var require, __filename, __dirname;
if (typeof process === 'object' && process.versions && process.versions.node) {
  const { createRequire } = await import('node:module');
  const { fileURLToPath } = await import('node:url');
  require = createRequire(import.meta.url);
  __filename = fileURLToPath(import.meta.url);
  __dirname = fileURLToPath(new URL('.', import.meta.url));
}
