#!/usr/bin/python3
"""Export a random ViT at ViT-B/16's shape (google/vit-base-patch16-224-in21k: hidden 768, 12 layers, 12 heads,
intermediate 3072, 224 x 224, patch 16; 86 M parameters) for bench/vit.mjs: the same weights as a hub folder
(attnwasm) and as ONNX (onnxruntime-web). Not a model converter; inference only.

  bench/onnx/vit/base/        ViTModel.save_pretrained (transformers v4.40.2 through tools/hf_env; F32, with the pooler)
  bench/onnx/vit/base.onnx    ViTModel's forward traced by torch.onnx (opset 17, dynamic batch): pixel_values
                              (B, 3, 224, 224) float32 -> last_hidden_state (B, 197, 768), pooler_output (B, 768)
  bench/onnx/vit/check.json   two seeded images' pixel_values and torch's pooler_output (both engines are checked)
Run: /usr/bin/python3 bench/export_vit_onnx.py
"""
import base64
import json
import os
import sys

import torch

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import transformers  # noqa: E402

OUT = os.path.join(ROOT, 'bench', 'onnx', 'vit')
SEED = 20261205


def b64(t):
    return {'shape': list(t.shape), 'base64': base64.b64encode(t.detach().float().contiguous().numpy().tobytes()).decode()}


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    cfg = transformers.ViTConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                                 image_size=224, patch_size=16, num_channels=3)
    model = transformers.ViTModel(cfg, add_pooling_layer=True).eval()
    os.makedirs(OUT, exist_ok=True)
    model.save_pretrained(os.path.join(OUT, 'base'), safe_serialization=True)
    x = torch.randn(2, 3, 224, 224, generator=torch.Generator().manual_seed(SEED))
    with torch.no_grad():
        pooled = model(pixel_values=x).pooler_output
        torch.onnx.export(model, (x,), os.path.join(OUT, 'base.onnx'), input_names=['pixel_values'],
                          output_names=['last_hidden_state', 'pooler_output'], opset_version=17,
                          dynamic_axes={'pixel_values': {0: 'batch'}, 'last_hidden_state': {0: 'batch'},
                                        'pooler_output': {0: 'batch'}})
    with open(os.path.join(OUT, 'check.json'), 'w') as f:
        json.dump({'pixelValues': b64(x), 'poolerOutput': b64(pooled)}, f)


if __name__ == '__main__':
    main()
