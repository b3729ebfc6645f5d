// The image processors of transformers v4.40.2 that attnwasm/image reproduces, read from a
// preprocessor_config.json: one table row per class (its defaults and how it reads `size`), and the sizes it
// computes. Not here: the pixels (resize.js, crop.js, normalize.js). A key the class does not read is ignored,
// as transformers ignores it (e.g. crop_pct in a DeiT config: only ConvNeXt's processor reads it).
import { AttnWasmError, typeError, describe } from '../errors.js';
import { resampleFilter } from './resize.js';

const IMAGENET_STANDARD = [0.5, 0.5, 0.5];
const OPENAI_CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073];
const OPENAI_CLIP_STD = [0.26862954, 0.26130258, 0.27577711];

/**
 * One row per class. sizeSquare: how an int `size` is read (get_size_dict's default_to_square: (n, n), or
 * {shortest_edge: n}); resize: 'height_width' (the size must have height and width) or 'shortest_edge_or_hw'
 * (CLIP's and BiT's: shortest_edge keeps the aspect ratio, else height and width); crop: does the class
 * center-crop (then doCenterCrop defaults to true).
 */
export const IMAGE_PROCESSORS = Object.freeze({
  ViTImageProcessor: { size: { height: 224, width: 224 }, sizeSquare: true, resize: 'height_width', resample: 2,
    crop: false, mean: IMAGENET_STANDARD, std: IMAGENET_STANDARD },
  DeiTImageProcessor: { size: { height: 256, width: 256 }, sizeSquare: true, resize: 'height_width', resample: 3,
    crop: true, mean: IMAGENET_STANDARD, std: IMAGENET_STANDARD },
  BitImageProcessor: { size: { shortest_edge: 224 }, sizeSquare: false, resize: 'shortest_edge_or_hw', resample: 3,
    crop: true, mean: OPENAI_CLIP_MEAN, std: OPENAI_CLIP_STD },
  CLIPImageProcessor: { size: { shortest_edge: 224 }, sizeSquare: false, resize: 'shortest_edge_or_hw', resample: 3,
    crop: true, mean: OPENAI_CLIP_MEAN, std: OPENAI_CLIP_STD },
  // SigLIP's preprocess reads an int size as {shortest_edge} and then needs height and width: refused below
  SiglipImageProcessor: { size: { height: 224, width: 224 }, sizeSquare: false, resize: 'height_width', resample: 3,
    crop: false, mean: IMAGENET_STANDARD, std: IMAGENET_STANDARD },
});

/** config.json's model_type → the class AutoImageProcessor picks when preprocessor_config.json names none. */
export const PROCESSOR_OF_MODEL_TYPE = Object.freeze({
  vit: 'ViTImageProcessor', vit_mae: 'ViTImageProcessor', vit_msn: 'ViTImageProcessor', deit: 'DeiTImageProcessor',
  bit: 'BitImageProcessor', dinov2: 'BitImageProcessor', clip: 'CLIPImageProcessor', siglip: 'SiglipImageProcessor',
});

const SIZE_KEYS = [['height', 'width'], ['shortest_edge'], ['longest_edge', 'shortest_edge'], ['longest_edge']];
const bad = (message) => new AttnWasmError('ERR_INVALID_ARGUMENT', `preprocessorConfig.${message}`);

function positiveInt(v, name) {
  if (!Number.isInteger(v) || v < 1 || v > 65535) throw bad(`${name}: expected an integer in [1, 65535], got ${JSON.stringify(v)}`);
  return v;
}

/** transformers' get_size_dict: an int, a [height, width] list or a dict of one of the valid key sets. */
function sizeDict(v, name, square) {
  let d;
  if (typeof v === 'number') d = square ? { height: v, width: v } : { shortest_edge: v };
  else if (Array.isArray(v)) {
    if (v.length !== 2) throw bad(`${name}: expected [height, width], got a list of ${v.length}`);
    d = { height: v[0], width: v[1] };
  } else if (v && typeof v === 'object') d = v;
  else throw bad(`${name}: expected an integer, [height, width] or a dict, got ${describe(v)}`);
  const keys = Object.keys(d).sort().join(',');
  if (!SIZE_KEYS.some((k) => k.join(',') === keys)) {
    throw bad(`${name}: expected the keys {height, width}, {shortest_edge}, {shortest_edge, longest_edge} or {longest_edge}, got {${Object.keys(d).join(', ')}}`);
  }
  const out = {};
  for (const k of Object.keys(d)) out[k] = positiveInt(d[k], `${name}.${k}`);
  return out;
}

function flag(config, key, dflt) {
  const v = config[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'boolean') throw bad(`${key}: expected true or false, got ${JSON.stringify(v)}`);
  return v;
}

function channelValues(v, name, dflt, nonZero) {
  if (v === undefined || v === null) return dflt.slice();
  const list = typeof v === 'number' ? [v, v, v] : v;
  if (!Array.isArray(list) || list.length !== 3 || !list.every((x) => typeof x === 'number' && Number.isFinite(x))) {
    throw bad(`${name}: expected a number or 3 numbers (one per RGB channel), got ${JSON.stringify(v)}`);
  }
  if (nonZero && list.some((x) => x === 0)) throw bad(`${name}: expected non-zero values (it divides), got ${JSON.stringify(v)}`);
  return list.slice();
}

/**
 * The class a preprocessor_config.json names: image_processor_type, else feature_extractor_type with
 * "FeatureExtractor" read as "ImageProcessor" (AutoImageProcessor's rule), else `modelType` (config.json's
 * model_type) through PROCESSOR_OF_MODEL_TYPE.
 */
export function processorClassOf(config, modelType) {
  let name = config.image_processor_type;
  let field = 'image_processor_type';
  if (name == null && config.feature_extractor_type != null) {
    field = 'feature_extractor_type';
    name = String(config.feature_extractor_type).replace('FeatureExtractor', 'ImageProcessor');
  }
  if (name == null && modelType != null) {
    field = 'model_type';
    name = PROCESSOR_OF_MODEL_TYPE[modelType];
    if (!name) throw new AttnWasmError('ERR_UNSUPPORTED', `model_type ${JSON.stringify(modelType)} has no image processor here: supported ${Object.keys(PROCESSOR_OF_MODEL_TYPE).join(', ')}`);
  }
  if (name == null) {
    throw bad('image_processor_type: missing (and no feature_extractor_type, and no model type given): the class cannot be chosen');
  }
  if (!Object.hasOwn(IMAGE_PROCESSORS, name)) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `preprocessorConfig.${field}: ${JSON.stringify(config[field] ?? modelType)} is not supported; supported: ${Object.keys(IMAGE_PROCESSORS).join(', ')} (and their *FeatureExtractor names)`);
  }
  return name;
}

/**
 * Reads a preprocessor_config.json (the parsed object, or its JSON text) as its transformers class would. Returns a frozen
 * description: { type, doResize, size, resample, doCenterCrop, cropSize, doRescale, rescaleFactor, doNormalize,
 * imageMean, imageStd }. Throws an AttnWasmError naming the field for what transformers would refuse (or
 * that could not give an image: a size of 0, a std of 0), ERR_UNSUPPORTED for a class not reproduced.
 * @param {object} config @param {{modelType?: string}} [options]
 */
export function imageProcessor(config, options = {}) {
  if (typeof config === 'string') {
    try {
      config = JSON.parse(config);
    } catch (e) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `preprocessorConfig: not valid JSON (${e.message})`, { cause: e });
    }
  }
  if (!config || typeof config !== 'object' || Array.isArray(config)) throw typeError(`preprocessorConfig: expected preprocessor_config.json (parsed, or its text), got ${describe(config)}`);
  const type = processorClassOf(config, options.modelType);
  const row = IMAGE_PROCESSORS[type];
  const doResize = flag(config, 'do_resize', true);
  const doRescale = flag(config, 'do_rescale', true);
  const doNormalize = flag(config, 'do_normalize', true);
  const doCenterCrop = row.crop && flag(config, 'do_center_crop', true);
  let size = null, resample = null, cropSize = null;
  if (doResize) {
    size = sizeDict(config.size ?? row.size, 'size', row.sizeSquare);
    const hw = 'height' in size && 'width' in size;
    if (row.resize === 'height_width' && !hw) throw bad(`size: ${type} resizes to {height, width}, got {${Object.keys(size).join(', ')}}`);
    if (row.resize === 'shortest_edge_or_hw' && !hw && !('shortest_edge' in size)) throw bad(`size: ${type} needs shortest_edge or height and width, got {${Object.keys(size).join(', ')}}`);
    if (config.resample === null) throw bad('resample: null (transformers: "size and resample must be specified if do_resize is True")');
    try {
      resample = resampleFilter(config.resample ?? row.resample, 'preprocessorConfig.resample');
    } catch (e) {
      throw bad(`resample: expected a PIL filter number 0 … 5, got ${JSON.stringify(config.resample)}`);
    }
  }
  if (doCenterCrop) {
    cropSize = sizeDict(config.crop_size ?? { height: 224, width: 224 }, 'crop_size', true);
    if (!('height' in cropSize && 'width' in cropSize)) throw bad(`crop_size: expected height and width, got {${Object.keys(cropSize).join(', ')}}`);
  }
  let rescaleFactor = null;
  if (doRescale) {
    rescaleFactor = config.rescale_factor ?? 1 / 255;
    if (typeof rescaleFactor !== 'number' || !Number.isFinite(rescaleFactor)) throw bad(`rescale_factor: expected a finite number, got ${JSON.stringify(config.rescale_factor)}`);
  }
  const imageMean = doNormalize ? channelValues(config.image_mean, 'image_mean', row.mean, false) : null;
  const imageStd = doNormalize ? channelValues(config.image_std, 'image_std', row.std, true) : null;
  return Object.freeze({ type, doResize, size, resample, doCenterCrop, cropSize, doRescale, rescaleFactor, doNormalize, imageMean, imageStd });
}

/**
 * The (height, width) the processor resizes a height × width image to: {height, width} as given; or
 * shortest_edge s (CLIP, BiT: get_resize_output_image_size with default_to_square=False): the short side
 * becomes s and the long one trunc(s · long / short) in double arithmetic, as Python's int(s * long / short).
 * Any longest_edge beside shortest_edge is not read (transformers' resize does not pass it).
 */
export function resizedSize(processor, height, width) {
  const { size } = processor;
  if ('height' in size && 'width' in size) return [size.height, size.width];
  const s = size.shortest_edge;
  const short = Math.min(width, height), long = Math.max(width, height);
  const newLong = Math.trunc((s * long) / short);
  return width <= height ? [newLong, s] : [s, newLong];
}

