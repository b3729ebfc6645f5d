// What the digits page's modules share: the runtime, the classifier and the runtime panel (main.js), the input
// classified last (results.js, read by attention.js), and whether the pad shows a held-out digit (set by
// heldout.js, cleared by pad.js). One object each, written by the module named beside each field.

/** The model's input side: it takes N × N pixels (MNIST's 28 × 28). */
export const N = 28;

/** The page: aw (the runtime from init()), classifier (the loaded ViT), panel (the runtime panel). */
export const page = { aw: null, classifier: null, panel: null };

/**
 * What shows: last is what was classified last ({ input: Float32Array(784), result, truth: number|null }, or
 * null); fromHeldout is whether the pad holds a held-out digit rather than a drawing.
 */
export const shown = { last: null, fromHeldout: false };
