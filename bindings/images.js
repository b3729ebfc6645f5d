// Deprecated entry 'attnwasm/images': the same functions now come from
// 'attnwasm/helpers' (bindings/helpers/). To be removed in 0.2.
/**
 * @deprecated Import from 'attnwasm/helpers' instead; 'attnwasm/images' will be removed in 0.2.
 * @module attnwasm/images
 */
export * from './helpers/images.js';
