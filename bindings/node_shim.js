// Prepended (--extern-pre-js) to the Emscripten ES module. Emscripten 3.1.6's
// ES6 output uses CommonJS globals in Node (require, __dirname, __filename)
// that an ES module does not have; define them, in Node only. Browsers and
// workers skip this block entirely.
/* eslint-disable no-var */
// The specifiers are held in variables, and marked to be ignored, so that
// bundlers (Vite, webpack) do not try to resolve Node built-ins for a browser build.
var require, __filename, __dirname;
if (typeof process === 'object' && process.versions && process.versions.node) {
  const nodeModule = 'node:module', nodeUrl = 'node:url', nodePath = 'node:path';
  const { createRequire } = await import(/* webpackIgnore: true */ /* @vite-ignore */ nodeModule);
  const { fileURLToPath } = await import(/* webpackIgnore: true */ /* @vite-ignore */ nodeUrl);
  const { dirname } = await import(/* webpackIgnore: true */ /* @vite-ignore */ nodePath);
  require = createRequire(import.meta.url);
  __filename = fileURLToPath(import.meta.url);
  __dirname = dirname(__filename);
}
