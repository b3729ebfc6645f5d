// The family registry, JS side: one row per family, keyed by the kind the native registry gives
// (src/models/family.h; bindings/native_constants.js FAMILIES is generated from it): the face class a loaded model
// gets, what a load reads beside the weights for it (a tokenizer, a chat template, generation_config.json,
// sentence-transformers' files), the load options only it takes, and how its face is made. "Which family is this"
// is answered once: before a load from config.json's model_type (rowOfConfig), after it from the handle's kind
// (info().kind); never from a model's fields. Adding a family: its face's file and one row here
// (docs/architecture.md, "How a family is added").
import { AttnWasmError } from './errors.js';
import { FAMILIES } from './native_constants.js';
import { CausalLM, CharTokenizer } from './causal_lm.js';
import { Embedder } from './embedder.js';
import { DecoderEmbedder } from './decoder_embedder.js';
import { ModernBertHead } from './modernbert_head.js';
import { Translator } from './translator.js';
import { Classifier } from './classifier.js';
import { TextClassifier } from './text_classifier.js';
import { CrossEncoder } from './cross_encoder.js';
import { TokenClassifier } from './token_classifier.js';
import { VisionModel, ImageClassifier } from './vision.js';
import { CLIPModel } from './clip.js';
import { Seq2SeqLM } from './seq2seq.js';
import { SpeechRecognizer } from './speech_recognizer.js';
import { readSentenceTransformers } from './sentence_transformers.js';
import { generationEos } from './generation.js';
import { encoderTask } from './encoder_task.js';

/** What each family-only option is, in messages ("only a causal LM takes a generation_config.json"). */
const OPTION_WHAT = { tokenizer: 'a tokenizer', tokenizerConfig: 'a tokenizer_config.json', generationConfig: 'a generation_config.json', pooling: 'pooling', normalize: 'normalize', task: 'a task', boundedHead: 'boundedHead (a q8 copy of a float32 head for greedy bounds)' };

/** The encoder–decoder rows' one face (the seq2seq and t5 families). */
const SEQ2SEQ = {
  loader: 'loadSeq2SeqLM',
  face: Seq2SeqLM,
  faces: [],
  owner: 'an encoder-decoder translator',
  reads: { tokenizer: true, slowTokenizer: true, generationConfig: true },
  options: ['tokenizer', 'tokenizerConfig', 'generationConfig', 'boundedHead'],
  async make({ rt, handle, info, fileBytes, hfConfig, tokenizer, generation }) {
    checkVocabulary(tokenizer, info.vocabSize);
    return new Seq2SeqLM(rt, handle, { hfConfig, tokenizer, generationConfig: generation }, fileBytes);
  },
};

/** The encoder's tasks: what loadModel's `task` may ask of a checkpoint (its head decides by default). */
export const ENCODER_TASKS = ['embed', 'classify', 'rerank'];
/** info().head: EncoderHead in src/models/encoder_config.h. */
const HEAD_NONE = 0, HEAD_TOKEN = 2, HEAD_IMAGE = 3;

/**
 * kind → { loader (the runtime's load function that insists on this family), face, noun (in messages: the native
 * registry's), owner (in "only … takes"), reads: { tokenizer, chatTemplate, generationConfig, sentenceTransformers },
 * options (the load options only it takes), make(ctx) → the face }. ctx: { rt, handle, info, fileBytes, own (a
 * file's own attnwasm.config, parsed, or null), hfConfig, tokenizer, generation, read(path) (a folder's file's
 * text or undefined), readBytes(path) (its bytes or undefined), options, expected (the family
 * kind the load function insists on: 'causal_lm' for loadCausalLM; '' for loadModel) }.
 */
export const ROWS = Object.freeze({
  causal_lm: {
    loader: 'loadCausalLM',
    face: CausalLM,
    // A sentence-transformers folder (modules.json: Qwen3-Embedding), bidirectional attention (EmbeddingGemma), or
    // task 'embed', is a DecoderEmbedder.
    faces: [DecoderEmbedder],
    owner: 'a causal LM',
    reads: { tokenizer: true, chatTemplate: true, generationConfig: true, sentenceTransformers: true },
    options: ['tokenizer', 'tokenizerConfig', 'generationConfig', 'task', 'pooling', 'normalize'],
    async make({ rt, handle, info, fileBytes, own, hfConfig, tokenizer, generation, read, readBytes, options, expected }) {
      const tok = tokenizer ?? (own?.tokenizer ? new CharTokenizer(own.tokenizer) : null);
      checkVocabulary(tok, info.vocabSize);
      // EmbeddingGemma's attention is bidirectional: it embeds and cannot generate (the native model refuses).
      if (info.bidirectional && (expected === 'causal_lm' || (options.task !== undefined && options.task !== 'embed'))) {
        const asked = expected === 'causal_lm' ? 'loadCausalLM' : `task '${options.task}'`;
        throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${asked}: this checkpoint's attention is bidirectional (config.use_bidirectional_attention, as EmbeddingGemma's): it embeds and does not generate; aw.loadModel gives its DecoderEmbedder`);
      }
      // loadCausalLM asks for the generating face: a sentence-transformers folder is an embedder only by default.
      const task = options.task ?? (info.bidirectional || (expected !== 'causal_lm' && !own && (await read('modules.json')) !== undefined) ? 'embed' : undefined);
      if (task !== undefined && task !== 'embed') {
        throw new AttnWasmError('ERR_INVALID_ARGUMENT', `task: '${task}' needs an encoder with a classification head; a causal LM (model_type "${info.modelType}") loads as a CausalLM, or with task 'embed' as a DecoderEmbedder`);
      }
      if (task === 'embed') {
        if (own) throw new AttnWasmError('ERR_INVALID_ARGUMENT', "task: 'embed' needs a Hugging Face checkpoint (config.json and model.safetensors); this is attnwasm's own causal LM file");
        const st = await readSentenceTransformers(read, info.hiddenSize, { pooling: options.pooling, normalize: options.normalize },
          { readBytes, loadSafetensors: (bytes) => rt.loadSafetensors(bytes) });
        return new DecoderEmbedder(rt, handle, { hfConfig, tokenizer, st }, fileBytes);
      }
      if (options.pooling !== undefined || options.normalize !== undefined) {
        throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${options.pooling !== undefined ? 'pooling' : 'normalize'}: only an embedder takes it; this checkpoint loads as a CausalLM (task: 'embed' loads it as a DecoderEmbedder)`);
      }
      const eos = generation ? generationEos(generation, info.vocabSize) : null;
      return new CausalLM(rt, handle, { hfConfig: hfConfig ?? own.hf_config, tokenizer: tok, generationConfig: generation, eos }, fileBytes);
    },
  },
  encoder: {
    loader: 'loadEmbedder',
    face: Embedder,
    // A checkpoint with a sequence-classification head (config.json architectures: *ForSequenceClassification)
    // is a TextClassifier, or a CrossEncoder when its config names sentence-transformers' CrossEncoder or it has
    // one label (a reranker); with a token-classification head, a TokenClassifier; `task` chooses otherwise
    // ('embed': the encoder alone, as before heads were read).
    faces: [TextClassifier, CrossEncoder, TokenClassifier],
    owner: 'an encoder of the BERT family',
    reads: { tokenizer: true, slowTokenizer: true, sentenceTransformers: true },
    options: ['tokenizer', 'tokenizerConfig', 'pooling', 'normalize', 'task'],
    async make({ rt, handle, info, fileBytes, hfConfig, tokenizer, read, readBytes, options }) {
      checkVocabulary(tokenizer, info.vocabSize);
      const task = options.task ?? (info.head === HEAD_NONE ? 'embed' : info.head === HEAD_TOKEN || encoderTask(hfConfig) !== 'rerank' ? 'classify' : 'rerank');
      if (task !== 'embed') {
        if (info.head === HEAD_NONE || (info.head === HEAD_TOKEN && task === 'rerank')) {
          const has = info.head === HEAD_NONE ? 'no classification head (config.json architectures names no *ForSequenceClassification or *ForTokenClassification class)' : 'a token-classification head';
          throw new AttnWasmError('ERR_INVALID_ARGUMENT', `task: '${task}' needs a sequence-classification checkpoint; this one has ${has}`);
        }
        const face = info.head === HEAD_TOKEN ? TokenClassifier : task === 'rerank' ? CrossEncoder : TextClassifier;
        refuseEmbedderOptions(options, face);
        return new face(rt, handle, { hfConfig, tokenizer }, fileBytes);
      }
      const st = await readSentenceTransformers(read, info.hiddenSize, { pooling: options.pooling, normalize: options.normalize },
        { readBytes, loadSafetensors: (bytes) => rt.loadSafetensors(bytes) });
      return new Embedder(rt, handle, { hfConfig, tokenizer, st }, fileBytes);
    },
  },
  translator: {
    loader: 'loadTranslator',
    face: Translator,
    owner: 'a translator',
    reads: {},
    options: [],
    async make({ rt, handle, fileBytes, own }) { return new Translator(rt, handle, own, fileBytes); },
  },
  // ModernBERT (gte-modernbert, nomic's modernbert-embed): its encoder natively as the bidirectional decoder stack it
  // is (modernbert_family.cpp), its rows pooled as sentence-transformers pools them. aw.loadEmbedder takes it too.
  modernbert: {
    loader: 'loadEmbedder',
    face: Embedder,  // the native row's class_name; the object is a DecoderEmbedder (an Embedder)
    faces: [DecoderEmbedder, TextClassifier, CrossEncoder, TokenClassifier],
    owner: 'a ModernBERT encoder',
    reads: { tokenizer: true, sentenceTransformers: true },
    options: ['tokenizer', 'tokenizerConfig', 'pooling', 'normalize', 'task'],
    async make({ rt, handle, info, fileBytes, hfConfig, tokenizer, read, readBytes, options }) {
      checkVocabulary(tokenizer, info.vocabSize);
      const given = encoderTask(hfConfig);
      if (given === 'token' && options.task === 'rerank') {
        throw new AttnWasmError('ERR_INVALID_ARGUMENT', "task: 'rerank' needs a sequence-classification checkpoint; this one has a token-classification head");
      }
      const task = options.task ?? given;
      if (task !== 'embed') {  // a classifier: TextClassifier, CrossEncoder or TokenClassifier, the head in JS
        if (!info.numLabels) {
          throw new AttnWasmError('ERR_INVALID_ARGUMENT', options.task !== undefined
            ? `task: '${task}' needs a classification checkpoint; this one has no classification head (no classifier.weight)`
            : `config.architectures: ${hfConfig.architectures[0]}, but the checkpoint has no classifier.weight (task: 'embed' loads its encoder)`);
        }
        const face = given === 'token' ? TokenClassifier : task === 'rerank' ? CrossEncoder : TextClassifier;
        refuseEmbedderOptions(options, face);
        const head = new ModernBertHead(rt, handle, hfConfig, info);
        const m = new face(rt, handle, { hfConfig, tokenizer }, fileBytes);
        m._lmHead = head;
        return m;
      }
      const st = await readSentenceTransformers(read, info.hiddenSize, { pooling: options.pooling, normalize: options.normalize },
        { readBytes, loadSafetensors: (bytes) => rt.loadSafetensors(bytes) });
      return new DecoderEmbedder(rt, handle, { hfConfig, tokenizer, st, what: 'a ModernBERT embedder' }, fileBytes);
    },
  },
  // ViT, DeiT, DINOv2 hub folders (vision_family.cpp): a VisionModel, or an ImageClassifier with an
  // image-classification head; images through the folder's preprocessor_config.json.
  vision: {
    loader: 'loadVisionModel',  // aw.loadModel gives it; no loader of its own on the runtime
    face: VisionModel,
    faces: [ImageClassifier],
    owner: 'a vision encoder',
    reads: {},
    options: [],
    async make({ rt, handle, info, fileBytes, hfConfig, read }) {
      const preprocessorConfig = await preprocessorOf(read);
      const face = info.head === HEAD_IMAGE ? ImageClassifier : VisionModel;
      return new face(rt, handle, { hfConfig, preprocessorConfig }, fileBytes);
    },
  },
  // CLIP and SigLIP hub folders and their one-tower models (clip_family.cpp): a CLIPModel; images through the
  // folder's preprocessor_config.json, texts through its tokenizer (tokenizer.json, else the slow one's files).
  clip: {
    loader: 'loadCLIPModel',  // aw.loadModel gives it; no loader of its own on the runtime
    face: CLIPModel,
    faces: [],
    owner: 'an image-text model',
    reads: { tokenizer: true, slowTokenizer: true },
    options: ['tokenizer', 'tokenizerConfig'],
    async make({ rt, handle, info, fileBytes, hfConfig, tokenizer, read }) {
      const preprocessorConfig = await preprocessorOf(read);
      if (info.hasText) checkVocabulary(tokenizer, info.vocabSize);
      return new CLIPModel(rt, handle, { hfConfig, preprocessorConfig, tokenizer: info.hasText ? tokenizer : null }, fileBytes);
    },
  },
  // The hub's encoder–decoders: Marian, BART, mBART and M2M100 / NLLB (seq2seq_family.cpp), T5, Flan-T5 and mT5
  // (t5_family.cpp): a Seq2SeqLM; texts through the folder's tokenizer (tokenizer.json, else its slow files:
  // source.spm / target.spm / vocab.json, sentencepiece.bpe.model, spiece.model), generation_config.json's defaults
  // for generate() and translate().
  seq2seq: { ...SEQ2SEQ },
  t5: { ...SEQ2SEQ },
  // Whisper hub folders (whisper_family.cpp): a SpeechRecognizer; audio through the folder's
  // preprocessor_config.json (attnwasm/audio's feature extractor), text through its tokenizer.json,
  // generation_config.json's languages, tasks and suppressed tokens.
  whisper: {
    loader: 'loadSpeechRecognizer',  // aw.loadModel gives it; no loader of its own on the runtime
    face: SpeechRecognizer,
    faces: [],
    owner: 'a speech recognizer',
    reads: { tokenizer: true, generationConfig: true },
    options: ['tokenizer', 'tokenizerConfig', 'generationConfig'],
    async make({ rt, handle, info, fileBytes, hfConfig, tokenizer, generation, read }) {
      const preprocessorConfig = await preprocessorOf(read);
      checkVocabulary(tokenizer, info.vocabSize);
      return new SpeechRecognizer(rt, handle, { hfConfig, tokenizer, generationConfig: generation, preprocessorConfig }, fileBytes);
    },
  },
  vit: {
    loader: 'loadClassifier',
    face: Classifier,
    owner: 'an image classifier',
    reads: {},
    options: [],
    async make({ rt, handle, fileBytes, own }) { return new Classifier(rt, handle, own, fileBytes); },
  },
});

for (const f of FAMILIES) {
  if (!ROWS[f.kind]) throw new Error(`families.js: no row for the native family '${f.kind}'`);
  ROWS[f.kind].noun = f.noun;
  Object.freeze(ROWS[f.kind]);
}

/** Every option some family takes and others do not. */
export const FAMILY_OPTIONS = Object.freeze([...new Set(Object.values(ROWS).flatMap((r) => r.options))]);

/** The row of a config.json by its model_type (FAMILIES: the native registry's), or null (the loader then names what it takes). */
export function rowOfConfig(config) {
  const type = config?.model_type;
  const f = FAMILIES.find((x) => typeof type === 'string' && x.modelTypes.includes(type));
  return f ? ROWS[f.kind] : null;
}

/** The row of a loaded model's handle: its info().kind. */
export function rowOfKind(kind) {
  const row = ROWS[kind];
  if (!row) throw new AttnWasmError('ERR_INTERNAL', `no face for the native family '${kind}'`);
  return row;
}

/**
 * The family-only options given that `row` does not take: an ERR_INVALID_ARGUMENT naming the first ("pooling:
 * only an encoder (…) takes pooling; this checkpoint is a causal LM"), or null. `what` adds the config's model_type.
 */
export function optionRefusal(row, given, modelType) {
  const opt = FAMILY_OPTIONS.find((k) => given[k] !== undefined && !row.options.includes(k));
  if (!opt) return null;
  const owners = [...new Set(Object.values(ROWS).filter((r) => r.options.includes(opt)).map((r) => r.owner))];
  const also = owners.length > 1 ? ` (${owners.slice(1).join(', ')} too)` : '';
  const type = modelType ? ` (model_type "${modelType}")` : '';
  return new AttnWasmError('ERR_INVALID_ARGUMENT', `${opt}: only ${owners[0]} takes ${OPTION_WHAT[opt] ?? opt}${also}; this checkpoint is ${row.noun}${type}`);
}

/** The folder's preprocessor_config.json parsed, or null. */
async function preprocessorOf(read) {
  const text = await read('preprocessor_config.json');
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `preprocessor_config.json: not valid JSON (${e.message})`);
  }
}

/** pooling / normalize given to a classifier's load: ERR_INVALID_ARGUMENT (the encoder and ModernBERT rows). */
function refuseEmbedderOptions(options, face) {
  if (options.pooling === undefined && options.normalize === undefined) return;
  throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${options.pooling !== undefined ? 'pooling' : 'normalize'}: only an embedder takes it; this checkpoint loads as a ${face.name} (task: 'embed' loads its encoder as an Embedder)`);
}

/** A tokenizer that fits the model's vocabulary, or ERR_INVALID_ARGUMENT. */
function checkVocabulary(tok, vocabSize) {
  if (!tok) return;
  const maxId = tok._maxId ?? tok.vocabSize - 1;
  if (maxId < vocabSize) return;
  // Added tokens past vocab_size are the tokenizer's only (Gemma 3's text checkpoints, EmbeddingGemma among them,
  // ship the tokenizer.json whose <image_soft_token> is 262144 beside vocab_size 262144): a text gives them only
  // by spelling them, and then the model refuses that id, as transformers' embedding does.
  const added = new Set(tok._added ? tok._added.values() : tok._addedDecoder ? tok._addedDecoder.keys() : []);
  const has = (id) => (tok._idToToken ? tok._idToToken[id] !== undefined : tok._hasId ? tok._hasId(id) : true);
  let addedOnly = added.size > 0;
  for (let id = vocabSize; id <= maxId && addedOnly; id++) if (has(id) && !added.has(id)) addedOnly = false;
  if (addedOnly) return;
  const problem = tok.vocabSize > vocabSize ? `it has ${tok.vocabSize} ids, more than the model's vocab_size (${vocabSize})`
    : `its largest id is ${maxId}, past the model's vocab_size (${vocabSize})`;
  throw new AttnWasmError('ERR_INVALID_ARGUMENT', `tokenizer: ${problem}`);
}
