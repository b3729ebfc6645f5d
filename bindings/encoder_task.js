// What an encoder checkpoint loads as, from its config.json alone (no runtime: 'attnwasm/inspect' uses it too):
// a *ForSequenceClassification class is a classifier, and a reranker when it has one label or names
// sentence-transformers' CrossEncoder keys; a *ForTokenClassification class has a token head; any other is an
// embedder. families.js makes the face by this rule (the native loader's info() gives the same head and labels).

/** The face of each task. */
export const TASK_FACES = Object.freeze({ embed: 'Embedder', classify: 'TextClassifier', rerank: 'CrossEncoder', token: 'TokenClassifier' });

/**
 * 'embed', 'classify', 'rerank' or 'token' for a parsed config.json (labels: len(id2label), else num_labels, else
 * 2, as transformers counts them).
 */
export function encoderTask(config) {
  const arch = Array.isArray(config?.architectures) && typeof config.architectures[0] === 'string' ? config.architectures[0] : '';
  if (arch.endsWith('ForTokenClassification')) return 'token';
  if (!arch.endsWith('ForSequenceClassification')) return 'embed';
  const id2label = config.id2label !== null && typeof config.id2label === 'object' ? Object.keys(config.id2label).length : null;
  const labels = id2label ?? (Number.isInteger(config.num_labels) ? config.num_labels : 2);
  const st = config.sentence_transformers !== null && typeof config.sentence_transformers === 'object';
  return labels === 1 || st || config.sbert_ce_default_activation_function != null ? 'rerank' : 'classify';
}
