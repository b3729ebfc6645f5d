// The 'attnwasm/helpers' entry: the demo and CLI helpers, pure JS, no wasm.
//   preprocess.js  MNIST-style preprocessing of a drawing (inkFromRgba, resizeArea, mnistPreprocess); no DOM
//   images.js      PNG / PGM decoding to grey levels and ink (decodePng needs Node: node:zlib)
export * from './preprocess.js';
export * from './images.js';
