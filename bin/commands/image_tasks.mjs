// attnwasm classify-image and attnwasm embed-image: a ViT / DeiT / DINOv2 hub folder (src/models/vision_encoder.cpp)
// or a CLIP / SigLIP one (src/models/clip_model.h: zero-shot labels, image embeddings) on image files (PNG, JPEG),
// each prepared by the folder's preprocessor_config.json as transformers' image processor + PIL prepare it. Each
// reads its own flags (what follows the command).
import { init } from '../../bindings/index.js';
import { UsageError, count, parseArgv, loadOptions } from './shared.mjs';

const CLASSIFY_HELP = `attnwasm classify-image — labels for images (ViT, DeiT, DINOv2 image classifiers;
CLIP and SigLIP zero-shot)

Usage:
  attnwasm classify-image --model <folder> <image>... [--top-k N|all] [--json]
  attnwasm classify-image --model <clip folder> --labels "cat,dog,car" <image>...
      One line per image on stdout: "file<TAB>label<TAB>score<TAB>label<TAB>score…",
      best first (--json: {file, labels: [{label, score}]} per line). The scores
      are transformers' image-classification pipeline's, or with a CLIP / SigLIP
      model its zero-shot-image-classification pipeline's.
      e.g. attnwasm classify-image --model ./vit-base-patch16-224 cat.jpg
           attnwasm classify-image --model ./clip-vit-base-patch32 --labels "cat,dog" cat.jpg

Options:
  --model PATH         the folder (config.json naming *ForImageClassification,
                       model.safetensors, preprocessor_config.json) or a hub id (required)
  --revision REV       with a hub id: a branch, tag or commit (default main)
  --top-k N|all        labels per image (default 5, as the pipeline; zero-shot: all)
  --labels A,B,…       a CLIP / SigLIP model's candidate labels (comma-separated)
  --template T         their hypothesis template (default "This is a photo of {}.")
  --function F         softmax, sigmoid or none (default: as the config says)
  --dtype TYPE         keep the weights as f32, bf16, f16, q8, q4 or q4a16
  --threads N|auto     threads for the model (default 1)
  --json               a JSON object per line
`;

const EMBED_HELP = `attnwasm embed-image — one vector per image (ViT, DeiT, DINOv2, CLIP, SigLIP)

Usage:
  attnwasm embed-image --model <folder> <image>... [--normalize] [--json]
      One line per image on stdout: its vector's numbers separated by spaces
      (--json: a JSON array per line): the model's pooler output (ViT, DeiT
      with a pooler), or the class token's row after the final LayerNorm
      (DINOv2, and models without a pooler); a CLIP / SigLIP model's image
      embedding (get_image_features).
      e.g. attnwasm embed-image --model ./dinov2-small a.png b.jpg > vectors.txt

Options:
  --model PATH         the folder or a hub id (required)
  --revision REV       with a hub id: a branch, tag or commit (default main)
  --normalize          L2-normalized vectors
  --dtype TYPE         keep the weights as f32, bf16, f16, q8, q4 or q4a16
  --threads N|auto     threads for the model (default 1)
  --json               a JSON array per line
`;

const VALUED = ['--model', '--revision', '--dtype', '--threads'];
const FLAGS = { '--json': ['json', true], '--help': ['help', true], '-h': ['help', true] };

/** The model of --model: an ImageClassifier (classify) or any VisionModel, or a CLIPModel with a vision tower. */
async function loadVision(args, command, classifier) {
  if (args.model === undefined) throw new UsageError(`${command}: --model is needed: a folder (or hub id) of a ViT, DeiT, DINOv2, CLIP or SigLIP checkpoint`);
  if (!args._.length) throw new UsageError(`${command}: give one or more image files`);
  const aw = await init({ threads: args.threads === 'auto' ? 'auto' : count(args, 'threads', 1) ?? 1 });
  const m = await aw.loadModel(args.model, await loadOptions(args));
  const clip = m instanceof aw.CLIPModel && m.hasVision && (!classifier || m.hasText);
  const ok = clip || (classifier ? m instanceof aw.ImageClassifier : m instanceof aw.VisionModel);
  if (!ok) {
    const name = m.constructor.name;
    m.dispose();
    throw new UsageError(`${command}: ${args.model} loads as a ${name}; ${classifier ? 'an image classifier (config.json architectures: *ForImageClassification) or a CLIP / SigLIP model with both towers' : 'a ViT, DeiT, DINOv2, CLIP or SigLIP checkpoint'} is needed`);
  }
  if (classifier && clip !== (args.labels !== undefined)) {
    m.dispose();
    throw new UsageError(clip ? `${command}: ${args.model} is a ${m.modelType} model: give its candidate labels with --labels "cat,dog,…"` : `${command}: --labels is for CLIP and SigLIP models (zero-shot); ${args.model} is an image classifier with its own labels`);
  }
  return m;
}

/** classify-image: each image's labels, best first. */
export async function classifyImageCommand(argv) {
  const args = parseArgv(argv, { flags: FLAGS, valued: [...VALUED, '--top-k', '--function', '--labels', '--template'], unknown: (a) => `classify-image: unknown option ${a} (see attnwasm classify-image --help)` });
  if (args.help) {
    process.stdout.write(CLASSIFY_HELP);
    return 0;
  }
  if (args.function !== undefined && !['softmax', 'sigmoid', 'none'].includes(args.function)) throw new UsageError(`--function: expected softmax, sigmoid or none, got '${args.function}'`);
  const labels = args.labels === undefined ? undefined : args.labels.split(',').map((l) => l.trim()).filter((l) => l);
  if (labels && labels.length === 0) throw new UsageError('--labels: expected labels separated by commas, got none');
  const topK = args['top-k'] === 'all' ? null : count(args, 'top-k', 1) ?? (labels ? null : 5);
  const m = await loadVision(args, 'classify-image', true);
  try {
    if (labels && args.function) throw new UsageError('--function: a zero-shot model scores as its pipeline does (softmax for CLIP, sigmoid for SigLIP)');
    const out = labels ? await m.zeroShot(args._, labels, { topK, ...(args.template !== undefined ? { hypothesisTemplate: args.template } : {}) })
      : await m.classify(args._, { topK, ...(args.function ? { functionToApply: args.function } : {}) });
    const lines = out.map((r, i) => (args.json ? JSON.stringify({ file: args._[i], labels: r })
      : [args._[i], ...r.flatMap((x) => [x.label, x.score.toFixed(6)])].join('\t')));
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    m.dispose();
  }
  return 0;
}

/** embed-image: each image's vector. */
export async function embedImageCommand(argv) {
  const args = parseArgv(argv, { flags: { ...FLAGS, '--normalize': ['normalize', true] }, valued: VALUED, unknown: (a) => `embed-image: unknown option ${a} (see attnwasm embed-image --help)` });
  if (args.help) {
    process.stdout.write(EMBED_HELP);
    return 0;
  }
  const m = await loadVision(args, 'embed-image', false);
  try {
    const { data, shape } = m.embedImages ? await m.embedImages(args._, { normalize: !!args.normalize }) : await m.embed(args._, { normalize: !!args.normalize });
    const [n, E] = shape, lines = [];
    for (let i = 0; i < n; i++) {
      const v = Array.from(data.subarray(i * E, (i + 1) * E));
      lines.push(args.json ? JSON.stringify(v) : v.join(' '));
    }
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    m.dispose();
  }
  return 0;
}
