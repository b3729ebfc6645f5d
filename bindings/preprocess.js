// Deprecated entry 'attnwasm/preprocess': the same functions now come from
// 'attnwasm/helpers' (bindings/helpers/). To be removed in 0.2.
/**
 * @deprecated Import from 'attnwasm/helpers' instead; 'attnwasm/preprocess' will be removed in 0.2.
 * @module attnwasm/preprocess
 */
export * from './helpers/preprocess.js';
