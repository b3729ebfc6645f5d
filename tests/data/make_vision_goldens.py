#!/usr/bin/python3
"""Goldens of the vision encoders (issue 39): tests/data/goldens/vision/.

Run: /usr/bin/python3 tests/data/make_vision_goldens.py (Debian's torch 1.13, PIL 9.4; transformers v4.40.2 through
tools/hf_env). Deterministic: fixed seed, one thread; two runs write identical bytes.

Small random checkpoints saved by transformers itself (save_pretrained, safetensors, F32), each folder as the hub lays
one out (config.json, model.safetensors, preprocessor_config.json):
  vit_model/       ViTModel with its pooler (keys without a prefix), ViTImageProcessor 32 x 32, bilinear
  vit_classifier/  ViTForImageClassification, 5 labels named in id2label (keys under "vit."), bicubic
  deit_teacher/    DeiTForImageClassificationWithTeacher (the distillation token, two classifiers averaged), 4
                   labels; DeiTImageProcessor: resize 40 x 40 then crop 32 x 32
  deit_model/      DeiTModel with its pooler
  dinov2_model/    Dinov2Model, layerscale_value 0.5 (then randomised), BitImageProcessor shortest edge 32, crop 32
  dinov2_classifier/  Dinov2ForImageClassification, 3 labels: classifier(cat(x[:, 0], mean(x[:, 1:])))
  dinov2_swiglu/   Dinov2Model with use_swiglu_ffn (the giant model's FFN): hidden_features 48 from mlp_ratio 2
hidden 32, 2 layers, 4 heads, intermediate 64 (DINOv2: mlp_ratio 2), patch 8, 3 channels. Every parameter is drawn
again from N(0, 0.3) (LayerNorm weights 1 + N(0, 0.3)) so that no layer is near the identity.

The reference: the transformers model in float64 (model.double()) on each case's float32 pixel_values:
  pixels.bin      float32 pixel_values of every case, concatenated (what the folder's processor made of the images,
                  AutoImageProcessor on load_image(fixture), as tests/data/make_image_goldens.py does)
  expected.json   {cases: [{folder, images, shape, pixels (offset into pixels.bin), last_hidden_state (flattened),
                  pooler_output, logits}], atol, rtol}
ViTModel's case from the images has output_attentions (attentions: (B, layers, heads, T, T), flattened). A DINOv2 case at 48 x 40 pixels (a 6 x 5 grid from the stored 4 x 4) checks interpolate_pos_encoding, and a ViTModel
one with interpolate_pos_encoding=True. Their reference is current transformers' (the mirror's modeling_dinov2.py and
modeling_vit.py, 2026-03): F.interpolate to size=(h / patch, w / patch), bicubic, align_corners False; v4.40.2 used
scale_factor (h / patch + 0.1) / sqrt(N), patched here to the current.
"""
import json
import math
import os
import struct
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import transformers  # noqa: E402
from transformers import AutoImageProcessor  # noqa: E402
from transformers.image_utils import load_image  # noqa: E402
from transformers.models.dinov2 import modeling_dinov2  # noqa: E402
from transformers.models.vit import modeling_vit  # noqa: E402

SEED = 20261207
OUT = os.path.join(ROOT, 'tests', 'data', 'goldens', 'vision')
FIX = os.path.join(ROOT, 'tests', 'data', 'goldens', 'images', 'fixtures')
TOL = (1e-4, 1e-4)
IMAGES = ['rgb8_64x48.png', 'j420_q90.jpg', 'rgba8.png']

torch.set_num_threads(1)
torch.manual_seed(SEED)


def interpolate_current(self, embeddings, height, width):
    """Dinov2Embeddings.interpolate_pos_encoding as current transformers writes it (size=, no + 0.1)."""
    num_patches = embeddings.shape[1] - 1
    num_positions = self.position_embeddings.shape[1] - 1
    if num_patches == num_positions and height == width:
        return self.position_embeddings
    class_pos_embed = self.position_embeddings[:, :1]
    patch_pos_embed = self.position_embeddings[:, 1:]
    dim = embeddings.shape[-1]
    new_height, new_width = height // self.config.patch_size, width // self.config.patch_size
    side = int(num_positions ** 0.5)
    patch_pos_embed = patch_pos_embed.reshape(1, side, side, dim).permute(0, 3, 1, 2)
    patch_pos_embed = torch.nn.functional.interpolate(patch_pos_embed, size=(new_height, new_width), mode='bicubic',
                                                      align_corners=False)
    patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).reshape(1, -1, dim)
    return torch.cat((class_pos_embed, patch_pos_embed), dim=1)


modeling_dinov2.Dinov2Embeddings.interpolate_pos_encoding = interpolate_current
modeling_vit.ViTEmbeddings.interpolate_pos_encoding = interpolate_current  # the same function in current transformers

COMMON = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, image_size=32, patch_size=8,
              num_channels=3)


def randomise(model):
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            noise = torch.randn(p.shape, generator=g, dtype=torch.float64).float() * 0.3
            if ('layernorm' in name or 'norm' in name.split('.')[-2]) and name.endswith('weight'):
                p.copy_(1.0 + noise)
            else:
                p.copy_(noise)
    return model


def labels(n):
    names = ['cat', 'dog', 'bird', 'fish', 'horse'][:n]
    return {i: names[i] for i in range(n)}, {names[i]: i for i in range(n)}


def make_models():
    C = transformers
    id2label5, label2id5 = labels(5)
    id2label4, label2id4 = labels(4)
    id2label3, label2id3 = labels(3)
    vit = C.ViTConfig(intermediate_size=64, **COMMON)
    vitc = C.ViTConfig(intermediate_size=64, id2label=id2label5, label2id=label2id5, **COMMON)
    deit = C.DeiTConfig(intermediate_size=64, id2label=id2label4, label2id=label2id4, **COMMON)
    deitm = C.DeiTConfig(intermediate_size=64, **COMMON)
    dino = C.Dinov2Config(mlp_ratio=2, layerscale_value=0.5, **COMMON)
    dinoc = C.Dinov2Config(mlp_ratio=2, layerscale_value=0.5, id2label=id2label3, label2id=label2id3, **COMMON)
    dinos = C.Dinov2Config(mlp_ratio=2, layerscale_value=0.5, use_swiglu_ffn=True, **COMMON)
    vit_proc = {'image_processor_type': 'ViTImageProcessor', 'do_resize': True, 'size': {'height': 32, 'width': 32},
                'resample': 2, 'do_rescale': True, 'rescale_factor': 1 / 255, 'do_normalize': True,
                'image_mean': [0.5, 0.5, 0.5], 'image_std': [0.5, 0.5, 0.5]}
    vitc_proc = dict(vit_proc, resample=3, image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225])
    deit_proc = {'image_processor_type': 'DeiTImageProcessor', 'do_resize': True, 'size': {'height': 40, 'width': 40},
                 'resample': 3, 'do_center_crop': True, 'crop_size': {'height': 32, 'width': 32}, 'do_rescale': True,
                 'rescale_factor': 1 / 255, 'do_normalize': True, 'image_mean': [0.485, 0.456, 0.406],
                 'image_std': [0.229, 0.224, 0.225]}
    dino_proc = {'image_processor_type': 'BitImageProcessor', 'do_resize': True, 'size': {'shortest_edge': 32},
                 'resample': 3, 'do_center_crop': True, 'crop_size': {'height': 32, 'width': 32}, 'do_rescale': True,
                 'rescale_factor': 1 / 255, 'do_normalize': True, 'image_mean': [0.485, 0.456, 0.406],
                 'image_std': [0.229, 0.224, 0.225], 'do_convert_rgb': True}
    return [
        ('vit_model', C.ViTModel(vit, add_pooling_layer=True), vit_proc),
        ('vit_classifier', C.ViTForImageClassification(vitc), vitc_proc),
        ('deit_teacher', C.DeiTForImageClassificationWithTeacher(deit), deit_proc),
        ('deit_model', C.DeiTModel(deitm, add_pooling_layer=True), deit_proc),
        ('dinov2_model', C.Dinov2Model(dino), dino_proc),
        ('dinov2_classifier', C.Dinov2ForImageClassification(dinoc), dino_proc),
        ('dinov2_swiglu', C.Dinov2Model(dinos), dino_proc),
    ]


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def main():
    os.makedirs(OUT, exist_ok=True)
    cases, pixels = [], bytearray()
    for folder, model, proc in make_models():
        path = os.path.join(OUT, folder)
        randomise(model).eval()
        model.save_pretrained(path, safe_serialization=True)
        with open(os.path.join(path, 'preprocessor_config.json'), 'w') as f:
            json.dump(proc, f, indent=2, sort_keys=True)
            f.write('\n')
        processor = AutoImageProcessor.from_pretrained(path)
        images = [load_image(os.path.join(FIX, name)) for name in IMAGES]
        pv = processor(images, return_tensors='pt', input_data_format='channels_last')['pixel_values'].float()
        runs = [(IMAGES, pv)]
        if folder in ('dinov2_model', 'vit_model'):  # interpolate_pos_encoding: a 6 x 5 grid from the stored 4 x 4
            g = torch.Generator().manual_seed(SEED + 1)
            runs.append((None, torch.randn((2, 3, 48, 40), generator=g, dtype=torch.float64).float()))
        m64 = model.double()
        for names, x in runs:
            with torch.no_grad():
                extra = {'interpolate_pos_encoding': True} if folder == 'vit_model' and names is None else {}
                if folder == 'vit_model' and names is not None:
                    extra = {'output_attentions': True}
                out = m64(pixel_values=x.double(), **extra)
            case = {'folder': folder, 'images': names, 'shape': list(x.shape), 'pixels': len(pixels) // 4,
                    'interpolate': 'interpolate_pos_encoding' in extra}
            if 'output_attentions' in extra:  # (B, layers, heads, T, T)
                case['attentions'] = flat(torch.stack(out.attentions, dim=1))
            pixels += x.numpy().astype('<f4').tobytes()
            if hasattr(out, 'last_hidden_state'):
                case['last_hidden_state'] = flat(out.last_hidden_state)
                case['hidden_shape'] = list(out.last_hidden_state.shape)
                case['pooler_output'] = flat(out.pooler_output) if out.pooler_output is not None else None
            else:
                case['logits'] = flat(out.logits)
                case['logits_shape'] = list(out.logits.shape)
            cases.append(case)
    with open(os.path.join(OUT, 'pixels.bin'), 'wb') as f:
        f.write(bytes(pixels))
    with open(os.path.join(OUT, 'expected.json'), 'w') as f:
        json.dump({'transformers': transformers.__version__, 'torch': torch.__version__, 'atol': TOL[0],
                   'rtol': TOL[1], 'cases': cases}, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
