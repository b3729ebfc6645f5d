// attnwasm/inspect: a checkpoint described without reading its tensor data, with no WebAssembly — its files,
// family and model_type (or why the runtime refuses it), tensors, parameters, bytes in memory per dtype and side
// files (inspect.js). A runtime's aw.inspect(source) gives the same answer with the native reader's checks and
// the loader's exact bytes. Typings: bindings/inspect.d.ts; docs/inspect.md.
export { inspect } from './inspect.js';
export { readHeader, headerLength } from './header.js';
export { ROLES } from './roles.js';
