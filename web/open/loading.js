// Loading the checkpoint chosen in the worker ('attnwasm/worker': it reads the files itself), with its progress
// (a hub id's bytes told apart: downloaded, and read from the cache), then the model's facts and the card that
// runs it: chat and completion for a causal LM (generation.js), sentences for an embedder (embedder.js), texts
// for a classifier or a reranker (text_tasks.js), images for an image classifier, CLIP / SigLIP or a bare vision
// encoder (image_tasks.js), texts to translate for an encoder–decoder (translate.js), audio to transcribe for
// Whisper (transcribe.js), a link
// to its own page for the demo translator and classifier. A refusal shows the runtime's own message.
import { formatBytes } from '../shared/panel.js';
import { $, show } from './dom.js';
import { page, run, emb } from './state.js';
import { renderMode } from './generation.js';
import { showEmbedder } from './embedder.js';
import { showTextTask } from './text_tasks.js';
import { showImageTask } from './image_tasks.js';
import { showTranslate, stopTranslation } from './translate.js';
import { showTranscribe, stopTranscription } from './transcribe.js';
import { hidePatches } from './patch_attention.js';

/** Loads page.chosen with the dtype chosen; body[data-loaded] says 'loading', then 'true' or 'error'. */
export async function load() {
  const { chosen, rt } = page;
  if (!chosen || !rt) return;
  if (run.active) { run.active.controller.abort(); await run.active.finished; }
  await stopTranslation();
  await stopTranscription();
  show($('load-error'), false);
  for (const id of ['model-card', 'lm-card', 'attention-card', 'embed-card', 'token-card', 'classify-card', 'image-card', 'translate-card', 'transcribe-card']) show($(id), false);
  hidePatches();
  Object.assign(emb, { similarity: null, pick: null, seq: emb.seq + 1 });
  if (page.model) { await page.model.dispose(); page.model = null; }
  $('load').disabled = true;
  show($('progress-card'));
  const bar = $('progress-bar');
  const t0 = performance.now();
  const dtype = $('dtype').value;
  document.body.dataset.loaded = 'loading';
  let fromHub = '';  // a hub id's bytes: downloaded, and read from the cache
  try {
    page.model = await rt.loadModel(chosen.arg, {
      ...(dtype ? { dtype } : {}), ...chosen.options,
      onProgress: ({ loaded, total, file, cached, downloaded }) => {
        if (total) { bar.max = total; bar.value = loaded; } else bar.removeAttribute('value');
        const s = (performance.now() - t0) / 1000;
        $('progress-text').textContent = `Loading ${file}: ${formatBytes(loaded)}${total ? ` of ${formatBytes(total)}` : ''}`
          + (fromHub = cached === undefined ? '' : ` (${formatBytes(downloaded)} downloaded, ${formatBytes(cached)} from the cache)`);
        $('progress-rate').textContent = `${(loaded / 2 ** 20 / Math.max(s, 1e-3)).toFixed(0)} MB/s · ${s.toFixed(1)} s`;
      },
    });
  } catch (e) {
    show($('progress-card'), false);
    $('load-error').textContent = `Cannot run this checkpoint: ${e.message}`;
    $('load-error').dataset.code = e.code ?? '';
    show($('load-error'));
    $('load').disabled = false;
    document.body.dataset.loaded = 'error';
    return;
  }
  const { model } = page;
  const seconds = (performance.now() - t0) / 1000;
  $('progress-text').textContent = `Loaded ${formatBytes(model.fileBytes)} in ${seconds.toFixed(1)} s${fromHub}`;
  $('progress-rate').textContent = `${(model.fileBytes / 2 ** 20 / seconds).toFixed(0)} MB/s`;
  bar.max = 1;
  bar.value = 1;
  page.panel.setModelSize(model.weightBytes);
  $('load').disabled = false;
  showModel(seconds);
  page.refresh();
  document.body.dataset.loaded = 'true';
}

/** The loaded model's facts, and the card that runs it. */
function showModel(seconds) {
  const { model } = page;
  const facts = [['kind', model.kind], ['weights in memory', `${formatBytes(model.weightBytes)} (${Object.keys(model.weightTypes ?? {}).join(', ')})`],
    ['read', `${formatBytes(model.fileBytes)} in ${seconds.toFixed(1)} s`]];
  const tokenizer = ['tokenizer', model.tokenizer ? `${model.tokenizer.kind}, ${model.tokenizer.vocabSize} ids` : 'none (ids only)'];
  if (model.kind === 'CausalLM') {
    facts.push(['model_type', model.modelType], ['layers × heads', `${model.numLayers} × ${model.numHeads}`], ['vocabulary', String(model.vocabSize)],
      ['positions', String(model.maxPositions)], tokenizer);
  } else if (model.kind === 'Embedder' || model.kind === 'DecoderEmbedder') {
    facts.push(['model_type', model.modelType], ['layers × heads', `${model.numLayers} × ${model.numHeads}`],
      ['vectors', `${model.dimension} numbers, ${model.pooling} pooling${model.normalize ? ', normalized' : ''}`],
      ['tokens a sentence', `at most ${model.maxTokens}${model.doLowerCase ? ', lowercased' : ''}`], ['vocabulary', String(model.vocabSize)], tokenizer);
  } else if (model.kind === 'TextClassifier' || model.kind === 'CrossEncoder' || model.kind === 'TokenClassifier') {
    facts.push(['model_type', model.modelType], ['labels', model.labels.join(', ')], ['tokens an input', `at most ${model.maxTokens}`],
      ...(model.kind === 'CrossEncoder' ? [['activation', model.activation.split('.').pop()]] : []), ['vocabulary', String(model.vocabSize)], tokenizer);
  } else if (model.kind === 'ImageClassifier' || model.kind === 'VisionModel') {
    facts.push(['model_type', model.modelType], ['layers', String(model.numLayers)],
      ['images', `${model.anySize ? 'any size' : `${model.imageSize} × ${model.imageSize}`}, patches of ${model.patchSize}, ${model.extraTokens} extra token(s)`],
      model.kind === 'ImageClassifier' ? ['labels', model.labels.join(', ')] : ['vectors', `${model.hiddenSize} numbers (${model.pooling})`]);
  } else if (model.kind === 'CLIPModel') {
    facts.push(['model_type', model.modelType], ['towers', [model.hasVision && 'vision', model.hasText && 'text'].filter(Boolean).join(' and ')],
      ['vectors', `${model.imageEmbedDim ?? model.textEmbedDim} numbers`], ['images', model.imageSize ? `${model.imageSize} × ${model.imageSize}` : 'none'],
      ...(model.hasText && model.hasVision ? [['logit scale, bias', `${model.logitScale.toFixed(3)}, ${model.logitBias.toFixed(3)}`]] : []),
      ...(model.hasText ? [['tokenizer', model.tokenizer ? `${model.tokenizer.kind}, ${model.tokenizer.vocabSize} ids` : 'none']] : []));
  } else if (model.kind === 'Seq2SeqLM') {
    const codes = model.tokenizer?.languageCodes;
    const d = model.generationConfig ?? model.config;
    facts.push(['model_type', model.modelType], ['layers', `${model.encoderLayers} encoder + ${model.decoderLayers} decoder, width ${model.dModel}`],
      ['vocabulary', model.outputVocabSize === model.vocabSize ? String(model.vocabSize) : `${model.vocabSize} (source), ${model.outputVocabSize} (target)`],
      ['languages', codes?.length ? `${codes.length}${model.tokenizer.srcLang ? `, ${model.tokenizer.srcLang} → ${model.tokenizer.tgtLang ?? '…'} by default` : ' target codes'}` : 'none to choose (one pair, or named in the text)'],
      ['generation', `${d?.num_beams ?? 1} beam(s), ${d?.max_new_tokens != null ? `${d.max_new_tokens} new tokens` : `max_length ${d?.max_length ?? 20}`} (${model.generationConfig ? 'generation_config.json' : 'config.json'})`],
      tokenizer);
  } else if (model.kind === 'SpeechRecognizer') {
    const g = model.generationConfig ?? {};
    const langs = g.is_multilingual === false || !g.lang_to_id ? 0 : Object.keys(g.lang_to_id).length;
    facts.push(['model_type', model.modelType], ['layers', `${model.encoderLayers} encoder + ${model.decoderLayers} decoder, width ${model.dModel}`],
      ['audio', `30-second windows of ${model.numMelBins} mel bins × ${model.frames} frames`],
      ['languages', langs ? `${langs}, detected or chosen; transcribe or translate to English` : 'English only'],
      ['tokens a window', `at most ${model.maxTargetPositions}`], ['vocabulary', String(model.vocabSize)], tokenizer);
  }
  $('facts').replaceChildren(...facts.flatMap(([k, v]) => {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v;
    return [dt, dd];
  }));
  $('model-title').textContent = model.kind === 'CausalLM' ? `A ${model.modelType} language model`
    : model.kind === 'Embedder' ? `A ${model.modelType} sentence embedder`
      : model.kind === 'DecoderEmbedder' ? `A ${model.modelType} sentence embedder${model.modelType === 'modernbert' ? '' : ' (decoder)'}`
      : model.kind === 'CrossEncoder' ? `A ${model.modelType} reranker (cross-encoder)`
        : model.kind === 'TextClassifier' ? `A ${model.modelType} text classifier`
          : model.kind === 'TokenClassifier' ? `A ${model.modelType} entity tagger (token classifier)`
            : model.kind === 'ImageClassifier' ? `A ${model.modelType} image classifier`
              : model.kind === 'VisionModel' ? `A ${model.modelType} image encoder`
                : model.kind === 'CLIPModel' ? `A ${model.modelType} ${model.siglip ? 'SigLIP' : 'CLIP'} model`
                  : model.kind === 'Seq2SeqLM' ? `A ${model.modelType} translator (encoder–decoder)`
                    : model.kind === 'SpeechRecognizer' ? `A ${model.modelType} speech recognizer` : `A ${model.kind}`;
  const card = { Embedder: showEmbedder, DecoderEmbedder: showEmbedder, TextClassifier: showTextTask, CrossEncoder: showTextTask, TokenClassifier: showTextTask,
    ImageClassifier: showImageTask, VisionModel: showImageTask, CLIPModel: showImageTask, Seq2SeqLM: showTranslate,
    SpeechRecognizer: showTranscribe }[model.kind];
  if (card) {
    $('other-note').textContent = '';
    show($('other-note'), false);
    show($('model-card'));
    card();
    return;
  }
  const other = model.kind !== 'CausalLM';
  const [href, name] = model.kind === 'Translator' ? ['/web/translate/', 'Translate'] : ['/web/digits/', 'Digits'];
  $('other-note').innerHTML = other ? `This page runs language models, sentence embedders, text classifiers, rerankers, entity taggers, image models, hub translators and Whisper; see this model at work on the <a href="${href}">${name} page</a>.` : '';
  show($('other-note'), other);
  show($('model-card'));
  if (other) return;
  const canChat = typeof model.chat === 'function' && !!model.tokenizer?.config?.chat_template;
  $('mode-chat').disabled = !canChat;
  $('mode-note').textContent = canChat ? '' : !model.tokenizer ? 'No tokenizer: nothing to chat or write with.'
    : typeof model.chat !== 'function' ? 'This runtime has no CausalLM#chat.' : 'No chat template in tokenizer_config.json: plain completion only.';
  if (!canChat) $('mode-complete').checked = true;
  $('send').disabled = !model.tokenizer;
  $('layer').replaceChildren(...Array.from({ length: model.numLayers }, (_, i) => new Option(String(i + 1), String(i))));
  $('head').replaceChildren(...Array.from({ length: model.numHeads }, (_, i) => new Option(String(i + 1), String(i))));
  $('max-tokens').max = String(Math.min(4096, model.maxPositions - 1));
  run.messages = [];
  renderMode();
  show($('lm-card'));
}
