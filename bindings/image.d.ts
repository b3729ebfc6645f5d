// Typings of 'attnwasm/image' (bindings/image/index.js): transformers v4.40.2's image processors with PIL 9.4's
// arithmetic, in plain JS (no init()). docs/images.md describes each step.

/** An 8-bit RGB image: `data` holds width·height·3 bytes, row-major, interleaved R, G, B. */
export interface RgbImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** PIL's image modes as decoding gives them (PngImagePlugin / JpegImagePlugin). */
export type ImageMode = '1' | 'L' | 'LA' | 'I' | 'I;16' | 'P' | 'RGB' | 'RGBA';

/** A decoded file before RGB conversion: `data` interleaved (Uint16Array for mode 'I'); `palette` for mode 'P'. */
export interface DecodedImage {
  format: 'png' | 'jpeg';
  mode: ImageMode;
  width: number;
  height: number;
  data: Uint8Array | Uint16Array;
  /** The PLTE bytes (RGB triples) of a palette image. */
  palette?: Uint8Array;
  /** The EXIF Orientation (1 … 8), 0 when the file has none; not yet applied. */
  orientation: number;
}

/** Raw pixels: RGBA (ImageData's layout) or RGB bytes, told apart by their length. */
export interface RawPixels {
  data: Uint8Array | Uint8ClampedArray;
  width: number;
  height: number;
}

/**
 * An image input. Node and browsers: PNG / JPEG bytes, a Blob or File, a URL (file: URLs read from disk in
 * Node), raw pixels or an ImageData. A string is a file path in Node (http:, https:, data: are fetched) and a
 * URL in a browser. Browsers also: ImageBitmap, HTMLImageElement, HTMLCanvasElement, OffscreenCanvas,
 * HTMLVideoElement, VideoFrame (drawn on a canvas and read back).
 */
export type ImageInput =
  | string | URL | Uint8Array | ArrayBuffer | ArrayBufferView | Blob | RawPixels
  | ImageBitmap | HTMLImageElement | HTMLCanvasElement | OffscreenCanvas | HTMLVideoElement | VideoFrame;

/** The classes reproduced (and their *FeatureExtractor names in old configs). */
export type ImageProcessorType = 'ViTImageProcessor' | 'DeiTImageProcessor' | 'BitImageProcessor' | 'CLIPImageProcessor' | 'SiglipImageProcessor';

/** A size as transformers' get_size_dict returns it. */
export type SizeDict = { height: number; width: number } | { shortest_edge: number } | { shortest_edge: number; longest_edge: number } | { longest_edge: number };

/** A preprocessor_config.json as read (imageProcessor's result); null where the step is off. */
export interface ImageProcessor {
  readonly type: ImageProcessorType;
  readonly doResize: boolean;
  readonly size: SizeDict | null;
  /** PIL's Resampling number: 0 nearest, 1 lanczos, 2 bilinear, 3 bicubic, 4 box, 5 hamming. */
  readonly resample: number | null;
  readonly doCenterCrop: boolean;
  readonly cropSize: { height: number; width: number } | null;
  readonly doRescale: boolean;
  readonly rescaleFactor: number | null;
  readonly doNormalize: boolean;
  readonly imageMean: number[] | null;
  readonly imageStd: number[] | null;
}

/** pixel_values, (n, 3, H, W), owned by the caller. */
export interface PixelValues {
  data: Float32Array;
  shape: [number, number, number, number];
}

export interface PreprocessOptions {
  /** Apply the EXIF orientation as transformers' load_image does (default true). */
  exifOrientation?: boolean;
  /** config.json's model_type: chooses the class when the config names none (AutoImageProcessor's fallback). */
  modelType?: string;
}

/**
 * pixel_values of one image or a batch, as transformers' image processor named by the parsed
 * preprocessor_config.json (or its JSON text) computes them for images opened with load_image. Rejects with a TypeError for a
 * wrong kind of argument; an AttnWasmError naming `images[i]` (with `index`) for an image that cannot be read
 * (ERR_INVALID_ARGUMENT) or is of a format not read (ERR_UNSUPPORTED); naming the config's field for a config
 * transformers refuses; ERR_SHAPE when the images end at different sizes.
 */
export function preprocessImages(images: ImageInput | ImageInput[], preprocessorConfig: object | string, options?: PreprocessOptions): Promise<PixelValues>;

/** One image as load_image gives it: decoded, EXIF orientation applied (unless false), converted to RGB. */
export function loadImage(input: ImageInput, options?: { exifOrientation?: boolean; name?: string }): Promise<RgbImage>;

/** PNG or JPEG bytes as PIL 9.4 opens them; errors name `name` (default 'bytes'). */
export function decodeImage(bytes: Uint8Array | ArrayBuffer | ArrayBufferView, name?: string): Promise<DecodedImage>;

/** PIL's convert("RGB"); an 'RGB' image is returned as it is. */
export function convertToRgb(image: { mode: ImageMode; width: number; height: number; data: Uint8Array | Uint16Array; palette?: Uint8Array }): RgbImage;

/** The Orientation tag of EXIF (TIFF) bytes, 0 when absent. */
export function exifOrientation(tiff: Uint8Array): number;

/** PIL's exif_transpose for an orientation (2 … 8; anything else returns `image`). */
export function exifTranspose(image: RgbImage, orientation: number): RgbImage;

/** PIL's Resampling numbers. */
export const RESAMPLE: Readonly<{ NEAREST: 0; LANCZOS: 1; BILINEAR: 2; BICUBIC: 3; BOX: 4; HAMMING: 5 }>;

/** PIL 9.4's Image.resize((width, height), resample) of an 8-bit RGB (or 1-channel) image. */
export function resize(image: RgbImage, size: { width: number; height: number }, resample?: number | 'nearest' | 'lanczos' | 'bilinear' | 'bicubic' | 'box' | 'hamming'): RgbImage;

/** transformers' center_crop, zero padding included (and its odd-padding quirk: docs/images.md). */
export function centerCrop(image: RgbImage, size: { height: number; width: number }): RgbImage;

/** Where center_crop takes its pixels: output (y, x) is image (y + top, x + left), 0 outside it. */
export function centerCropBox(height: number, width: number, cropHeight: number, cropWidth: number): { height: number; width: number; top: number; left: number };

/** Reads a preprocessor_config.json as its transformers class would (throws naming the field). */
export function imageProcessor(config: object | string, options?: { modelType?: string }): ImageProcessor;

/** The (height, width) the processor resizes a height × width image to. */
export function resizedSize(processor: ImageProcessor, height: number, width: number): [number, number];

/** The processor's resize and center crop of one RGB image (the uint8 image rescale and normalize read). */
export function processImage(image: RgbImage, processor: ImageProcessor): RgbImage;

/** rescale + normalize as a table: entry c·256 + v is the float32 value of byte v in channel c. */
export function pixelTable(processor: ImageProcessor): Float32Array;

/** Writes an RGB image as (3, height, width) planes through the table into `out` at `offset`. */
export function writePixelValues(image: RgbImage, table: Float32Array, out: Float32Array, offset: number): void;

/** The classes reproduced, one table row each (defaults and how they read `size`). */
export const IMAGE_PROCESSORS: Readonly<Record<ImageProcessorType, object>>;

/** config.json's model_type → the class AutoImageProcessor picks. */
export const PROCESSOR_OF_MODEL_TYPE: Readonly<Record<string, ImageProcessorType>>;
