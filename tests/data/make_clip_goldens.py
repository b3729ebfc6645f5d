#!/usr/bin/python3
"""Goldens of the two-tower models (issue 39): tests/data/goldens/clip/.

Run: /usr/bin/python3 tests/data/make_clip_goldens.py (Debian's torch 1.13, PIL 9.4; transformers v4.40.2 through
tools/hf_env). Deterministic: fixed seed, one thread; two runs write identical bytes.

Small random checkpoints saved by transformers itself (save_pretrained, safetensors, F32), each folder as the hub lays
one out (config.json, model.safetensors, preprocessor_config.json):
  clip_model/      CLIPModel: text tower vocab 99, 16 positions, eos_token_id 98 (pools at the first eos), quick_gelu;
                   vision tower 32 x 32, patch 8; projection_dim 24; CLIPImageProcessor shortest edge 32, crop 32
  clip_old/        CLIPModel as configs before transformers 4.31 wrote it: eos_token_id 2 (pools at argmax(ids)),
                   and text_config_dict / vision_config_dict (hidden_act gelu) next to text_config / vision_config
                   (quick_gelu, layer_norm_eps 0.5): CLIPConfig completes the dict with defaults and lays it over
  clip_vision_proj/  CLIPVisionModelWithProjection (image_embeds)
  clip_text/       CLIPTextModel (pooler_output, no projection)
  siglip_model/    SiglipModel: gelu_pytorch_tanh, no causal mask, text pooled at the last position through its head,
                   the vision tower's attention-pooling head, logit_bias; SiglipImageProcessor 32 x 32
  siglip_vision/   SiglipVisionModel (pooler_output)
  clip_zero_shot/  CLIPModel with a tokenizer: a small byte-level BPE vocabulary in CLIP's form (the 256 byte
                   characters, each also with "</w>", merges spelling a few words, <|startoftext|>,
                   <|endoftext|> as bos, eos and pad: 546 ids), saved by CLIPTokenizer (vocab.json, merges.txt; run
                   without ftfy, as here: its BasicTokenizer fallback); the reference of zeroShot is the zero-shot-image-classification
                   pipeline's arithmetic in float64 (template, padding=True, softmax), checked here against the
                   pipeline itself run in float32
  siglip_zero_shot/  SiglipModel with SiglipTokenizer's spiece.model (the unigram model make_clip_tokenizer_goldens.py
                   trains: 400 pieces), max_position_embeddings 64: padding="max_length", sigmoid scores
hidden 32, 2 layers, 4 heads, intermediate 37 (text) / 64 (vision). Every parameter is drawn again from N(0, 0.3)
(LayerNorm weights 1 + N(0, 0.3)); logit_scale 1.5 and logit_bias -0.7 so that the logits are of ordinary size.

The reference: the transformers model in float64 (model.double()) on each case's float32 pixel_values (the folder's
processor on the image fixtures, as make_vision_goldens.py) and input ids:
  pixels.bin      float32 pixel_values of every case, concatenated
  expected.json   {cases: [{folder, images, shape, pixels, input_ids, attention_mask, text_embeds, image_embeds
                  (get_text_features / get_image_features: not normalized), logits_per_image, text_embeds_each (each
                  text's unpadded ids alone), vision_attentions (clip_model: (B, layers, heads, T, T))}], atol, rtol}
Text cases: right-padded with an attention mask (CLIP: pad id 1, and a row whose eos is its last token), a left-padded
row (CLIP runs it with the padding mask under the causal one, not trimmed), and SigLIP's max_length padding with the
mask its tokenizer returns (pooled at the last, padded, position).
"""
import json
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import transformers  # noqa: E402
from transformers import AutoImageProcessor  # noqa: E402
from transformers.image_utils import load_image  # noqa: E402

SEED = 20261205
OUT = os.path.join(ROOT, 'tests', 'data', 'goldens', 'clip')
FIX = os.path.join(ROOT, 'tests', 'data', 'goldens', 'images', 'fixtures')
TOL = (1e-4, 1e-4)
IMAGES = ['rgb8_64x48.png', 'j420_q90.jpg', 'rgba8.png']

torch.set_num_threads(1)
torch.manual_seed(SEED)

TEXT = dict(vocab_size=99, hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=16)
VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=32,
              patch_size=8, num_channels=3)
CLIP_PROC = {'image_processor_type': 'CLIPImageProcessor', 'do_resize': True, 'size': {'shortest_edge': 32},
             'resample': 3, 'do_center_crop': True, 'crop_size': {'height': 32, 'width': 32}, 'do_rescale': True,
             'rescale_factor': 1 / 255, 'do_normalize': True, 'image_mean': [0.48145466, 0.4578275, 0.40821073],
             'image_std': [0.26862954, 0.26130258, 0.27577711], 'do_convert_rgb': True}
SIGLIP_PROC = {'image_processor_type': 'SiglipImageProcessor', 'do_resize': True, 'size': {'height': 32, 'width': 32},
               'resample': 3, 'do_rescale': True, 'rescale_factor': 1 / 255, 'do_normalize': True,
               'image_mean': [0.5, 0.5, 0.5], 'image_std': [0.5, 0.5, 0.5]}


def randomise(model):
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            noise = torch.randn(p.shape, generator=g, dtype=torch.float64).float() * 0.3
            last = name.split('.')
            if name in ('logit_scale',):
                p.fill_(1.5)
            elif name == 'logit_bias':
                p.fill_(-0.7)
            elif ('norm' in last[-2] or 'layrnorm' in last[-2]) and name.endswith('weight'):
                p.copy_(1.0 + noise)
            else:
                p.copy_(noise)
    return model


def make_models():
    C = transformers
    clip_text = C.CLIPTextConfig(eos_token_id=98, bos_token_id=97, pad_token_id=1, **TEXT)
    clip_vision = C.CLIPVisionConfig(**VISION)
    clip = C.CLIPConfig(text_config=clip_text.to_dict(), vision_config=clip_vision.to_dict(), projection_dim=24)
    old_text = C.CLIPTextConfig(eos_token_id=2, bos_token_id=97, pad_token_id=1, **TEXT)
    old = C.CLIPConfig(text_config=old_text.to_dict(), vision_config=clip_vision.to_dict(), projection_dim=24)
    sig_text = C.SiglipTextConfig(pad_token_id=1, eos_token_id=98, **TEXT)
    sig_vision = C.SiglipVisionConfig(**VISION)
    sig = C.SiglipConfig(text_config=sig_text.to_dict(), vision_config=sig_vision.to_dict())
    proj_vision = C.CLIPVisionConfig(projection_dim=24, **VISION)
    return [
        ('clip_model', C.CLIPModel(clip), CLIP_PROC),
        ('clip_old', C.CLIPModel(old), CLIP_PROC),
        ('clip_vision_proj', C.CLIPVisionModelWithProjection(proj_vision), CLIP_PROC),
        ('clip_text', C.CLIPTextModel(clip_text), None),
        ('siglip_model', C.SiglipModel(sig), SIGLIP_PROC),
        ('siglip_vision', C.SiglipVisionModel(sig_vision), SIGLIP_PROC),
    ]


def old_style(path):
    """config.json as pre-4.31 CLIP saves had it: *_config_dict laid over *_config, gelu under quick_gelu."""
    with open(os.path.join(path, 'config.json')) as f:
        cfg = json.load(f)
    # CLIPConfig completes *_config_dict with the tower config's defaults and lays the whole of it over *_config:
    # the dict's keys decide, and an absent one is the default, not *_config's value.
    cfg['text_config_dict'] = dict(TEXT, hidden_act='gelu', eos_token_id=2, bos_token_id=97, pad_token_id=1)
    cfg['vision_config_dict'] = dict(VISION, hidden_act='gelu')
    cfg['text_config']['hidden_act'] = 'quick_gelu'
    cfg['vision_config']['hidden_act'] = 'quick_gelu'
    cfg['text_config']['layer_norm_eps'] = 0.5  # not in the dict: CLIPTextConfig's 1e-5 wins
    with open(os.path.join(path, 'config.json'), 'w') as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write('\n')


WORDS = ['this', 'is', 'a', 'photo', 'of', 'cat', 'dog', 'red', 'car', 'bird', 'sketch']
ZERO_SHOT = {'labels': ['cat', 'dog', 'red car', 'bird'], 'template': 'This is a photo of {}.',
             'other_template': 'a sketch of a {}'}


def bytes_to_unicode():
    """GPT-2's byte-to-character table, as CLIP's tokenizer builds its vocabulary from it."""
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) + list(range(ord('®'), ord('ÿ') + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def write_clip_tokenizer(path):
    """vocab.json + merges.txt in CLIP's form, spelling WORDS by left-to-right merges (the slow tokenizer's files: the
    Rust `tokenizers` that would convert them to tokenizer.json is a stand-in here)."""
    chars = bytes_to_unicode()
    vocab = chars + [c + '</w>' for c in chars]
    merges = []
    for w in WORDS:
        parts = list(w[:-1]) + [w[-1] + '</w>']
        while len(parts) > 1:
            pair = (parts[0], parts[1])
            if ' '.join(pair) not in merges:
                merges.append(' '.join(pair))
                vocab.append(pair[0] + pair[1])
            parts = [pair[0] + pair[1]] + parts[2:]
    vocab += ['<|startoftext|>', '<|endoftext|>']
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, 'vocab_src.json'), 'w') as f:
        json.dump({t: i for i, t in enumerate(vocab)}, f)
    with open(os.path.join(path, 'merges_src.txt'), 'w') as f:
        f.write('#version: 0.2\n' + '\n'.join(merges) + '\n')
    slow = transformers.CLIPTokenizer(os.path.join(path, 'vocab_src.json'), os.path.join(path, 'merges_src.txt'),
                                      pad_token='<|endoftext|>')
    os.remove(os.path.join(path, 'vocab_src.json'))
    os.remove(os.path.join(path, 'merges_src.txt'))
    slow.save_pretrained(path)
    return len(vocab)


def zero_shot_case(path, model, folder='clip_zero_shot'):
    """The zero-shot pipeline's scores in float64, and the pipeline itself (float32) as a check of the arithmetic."""
    siglip = folder.startswith('siglip')
    tok = transformers.AutoTokenizer.from_pretrained(path, use_fast=False)  # CLIPTokenizer (without ftfy), SiglipTokenizer
    processor = AutoImageProcessor.from_pretrained(path)
    images = [load_image(os.path.join(FIX, name)) for name in IMAGES]
    pipe = transformers.pipeline('zero-shot-image-classification', model=model.float(), tokenizer=tok,
                                 image_processor=processor)
    case = {'folder': folder, 'images': IMAGES, 'input_ids': None, 'zero_shot': []}
    for template in (ZERO_SHOT['template'], ZERO_SHOT['other_template']):
        texts = [template.format(label) for label in ZERO_SHOT['labels']]
        enc = tok(texts, padding='max_length' if siglip else True, return_tensors='pt')  # as the pipeline pads
        pv = processor(images, return_tensors='pt', input_data_format='channels_last')['pixel_values']
        torch.set_default_dtype(torch.float64)
        with torch.no_grad():
            logits = model.double()(input_ids=enc['input_ids'], attention_mask=enc['attention_mask'],
                                    pixel_values=pv.double()).logits_per_image
        torch.set_default_dtype(torch.float32)
        probs = torch.sigmoid(logits) if siglip else logits.softmax(-1)
        model.float()
        ranked = []
        for i in range(len(images)):
            row = sorted(zip(probs[i].tolist(), ZERO_SHOT['labels']), key=lambda x: -x[0])
            ranked.append([{'label': label, 'score': score} for score, label in row])
            got = pipe(images[i], candidate_labels=ZERO_SHOT['labels'], hypothesis_template=template)
            assert [g['label'] for g in got] == [r['label'] for r in ranked[-1]], (got, ranked[-1])
            assert all(abs(g['score'] - r['score']) < 1e-5 for g, r in zip(got, ranked[-1]))
        case['zero_shot'].append({'template': template, 'labels': ZERO_SHOT['labels'], 'ids': enc['input_ids'].tolist(),
                                  'ranked': ranked})
    return case


def text_inputs(folder):
    """(input_ids, attention_mask) of a case, padded as its processor pads."""
    if folder == 'clip_old':  # argmax(ids) finds each row's 96 (in the second row, past its mask: a padded row)
        ids = [[3, 5, 96, 7, 2, 1, 1], [3, 44, 3, 2, 96, 1, 1], [3, 12, 13, 14, 15, 16, 96]]
    elif folder.startswith('clip'):
        ids = [[97, 5, 6, 7, 98, 1, 1], [97, 44, 3, 98, 1, 1, 1], [97, 12, 13, 14, 15, 16, 98]]
    else:  # SigLIP: padded to max_length (16) with its pad id, eos appended by the tokenizer
        rows = [[5, 6, 7, 98], [44, 3, 98], list(range(20, 35)) + [98]]
        ids = [r + [1] * (16 - len(r)) for r in rows]
    if folder.startswith('siglip'):
        lens = [4, 3, 16]
        mask = [[1 if j < n else 0 for j in range(16)] for n in lens]
    else:
        lens = [5, 4, 7]
        mask = [[1 if j < n else 0 for j in range(len(ids[0]))] for n in lens]
    return torch.tensor(ids), torch.tensor(mask)


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def main():
    os.makedirs(OUT, exist_ok=True)
    cases, pixels = [], bytearray()
    for folder, model, proc in make_models():
        path = os.path.join(OUT, folder)
        randomise(model).eval()
        model.save_pretrained(path, safe_serialization=True)
        if folder == 'clip_old':
            old_style(path)
            model = type(model).from_pretrained(path).eval()
        if proc:
            with open(os.path.join(path, 'preprocessor_config.json'), 'w') as f:
                json.dump(proc, f, indent=2, sort_keys=True)
                f.write('\n')
        m64 = model.double()
        case = {'folder': folder, 'images': None, 'input_ids': None}
        x = None
        if proc:
            processor = AutoImageProcessor.from_pretrained(path)
            images = [load_image(os.path.join(FIX, name)) for name in IMAGES]
            x = processor(images, return_tensors='pt', input_data_format='channels_last')['pixel_values'].float()
            case.update(images=IMAGES, shape=list(x.shape), pixels=len(pixels) // 4)
            pixels += x.numpy().astype('<f4').tobytes()
        ids = mask = None
        if 'vision' not in folder:
            ids, mask = text_inputs(folder)
            case.update(input_ids=ids.tolist(), attention_mask=mask.tolist())
        # float64 throughout: transformers' causal mask is torch.full(..., finfo(float64).min) in the default dtype.
        torch.set_default_dtype(torch.float64)
        with torch.no_grad():
            if isinstance(model, (transformers.CLIPModel, transformers.SiglipModel)):
                out = m64(input_ids=ids, attention_mask=mask, pixel_values=x.double())
                case['logits_per_image'] = flat(out.logits_per_image)
                if folder == 'clip_model':  # the vision tower's attentions: (B, layers, heads, T, T)
                    att = m64.vision_model(pixel_values=x.double(), output_attentions=True).attentions
                    case['vision_attentions'] = flat(torch.stack(att, dim=1))
                case['text_embeds'] = flat(m64.get_text_features(input_ids=ids, attention_mask=mask))
                case['image_embeds'] = flat(m64.get_image_features(pixel_values=x.double()))
                # The same texts without a mask (the unpadded rows alone, one by one).
                case['text_embeds_each'] = [flat(m64.get_text_features(input_ids=ids[i:i + 1, :int(mask[i].sum())]))
                                            for i in range(ids.shape[0])]
            elif isinstance(model, transformers.CLIPVisionModelWithProjection):
                out = m64(pixel_values=x.double())
                case['image_embeds'] = flat(out.image_embeds)
            elif isinstance(model, transformers.CLIPTextModel):
                case['text_embeds'] = flat(m64(input_ids=ids, attention_mask=mask).pooler_output)
                left = torch.tensor([[1, 1, 97, 5, 6, 7, 98]]), torch.tensor([[0, 0, 1, 1, 1, 1, 1]])
                case['left_padded'] = {'input_ids': left[0].tolist(), 'attention_mask': left[1].tolist(),
                                       'text_embeds': flat(m64(input_ids=left[0], attention_mask=left[1]).pooler_output)}
            else:  # SiglipVisionModel
                out = m64(pixel_values=x.double())
                case['image_embeds'] = flat(out.pooler_output)
        torch.set_default_dtype(torch.float32)
        cases.append(case)
    path = os.path.join(OUT, 'clip_zero_shot')
    n = write_clip_tokenizer(path)
    text = transformers.CLIPTextConfig(eos_token_id=n - 1, bos_token_id=n - 2, pad_token_id=n - 1,
                                       **dict(TEXT, vocab_size=n))
    cfg = transformers.CLIPConfig(text_config=text.to_dict(), vision_config=transformers.CLIPVisionConfig(**VISION).to_dict(),
                                  projection_dim=24)
    model = randomise(transformers.CLIPModel(cfg)).eval()
    model.save_pretrained(path, safe_serialization=True)
    with open(os.path.join(path, 'preprocessor_config.json'), 'w') as f:
        json.dump(CLIP_PROC, f, indent=2, sort_keys=True)
        f.write('\n')
    cases.append(zero_shot_case(path, model))
    # SigLIP with its slow tokenizer: the unigram spiece.model trained by make_clip_tokenizer_goldens.py (400 pieces).
    path = os.path.join(OUT, 'siglip_zero_shot')
    os.makedirs(path, exist_ok=True)
    spm = os.path.join(ROOT, 'tests', 'data', 'goldens', 'clip_tokenizer', 'siglip.model')
    transformers.SiglipTokenizer(spm).save_pretrained(path)
    n = len(transformers.SiglipTokenizer(spm))
    text = transformers.SiglipTextConfig(pad_token_id=1, eos_token_id=1, **dict(TEXT, vocab_size=n, max_position_embeddings=64))
    cfg = transformers.SiglipConfig(text_config=text.to_dict(), vision_config=transformers.SiglipVisionConfig(**VISION).to_dict())
    model = randomise(transformers.SiglipModel(cfg)).eval()
    model.save_pretrained(path, safe_serialization=True)
    with open(os.path.join(path, 'preprocessor_config.json'), 'w') as f:
        json.dump(SIGLIP_PROC, f, indent=2, sort_keys=True)
        f.write('\n')
    cases.append(zero_shot_case(path, model, 'siglip_zero_shot'))
    with open(os.path.join(OUT, 'pixels.bin'), 'wb') as f:
        f.write(bytes(pixels))
    with open(os.path.join(OUT, 'expected.json'), 'w') as f:
        json.dump({'transformers': transformers.__version__, 'torch': torch.__version__, 'atol': TOL[0],
                   'rtol': TOL[1], 'cases': cases}, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
