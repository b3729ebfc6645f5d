#!/usr/bin/python3
"""Export a random CLIP at ViT-B/32's shape (openai/clip-vit-base-patch32: vision hidden 768, 12 layers, 12 heads,
intermediate 3072, 224 x 224, patch 32; text hidden 512, 12 layers, 8 heads, intermediate 2048, 77 positions, vocab
49408; projection 512; quick_gelu; 151 M parameters) for bench/clip.mjs: the same weights as a hub folder (attnwasm)
and as two ONNX graphs (onnxruntime-web). Not a model converter; inference only.

  bench/onnx/clip/base/         CLIPModel.save_pretrained (transformers v4.40.2 through tools/hf_env; F32)
  bench/onnx/clip/vision.onnx   get_image_features traced by torch.onnx (opset 17, dynamic batch): pixel_values
                                (B, 3, 224, 224) float32 -> image_embeds (B, 512)
  bench/onnx/clip/text.onnx     get_text_features: input_ids, attention_mask (B, T) int64 -> text_embeds (B, 512)
  bench/onnx/clip/check.json    seeded pixel_values and ids and torch's embeddings (both engines are checked)
Run: /usr/bin/python3 bench/export_clip_onnx.py
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

OUT = os.path.join(ROOT, 'bench', 'onnx', 'clip')
SEED = 20261205


def b64(t):
    return {'shape': list(t.shape), 'base64': base64.b64encode(t.detach().float().contiguous().numpy().tobytes()).decode()}


class Vision(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, pixel_values):
        return self.m.get_image_features(pixel_values=pixel_values)


class Text(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask):
        return self.m.get_text_features(input_ids=input_ids, attention_mask=attention_mask)


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    text = transformers.CLIPTextConfig()  # 512, 12 layers, 8 heads, 2048, 77 positions, eos 49407 (first-eos pooling)
    vision = transformers.CLIPVisionConfig()  # 768, 12 layers, 12 heads, 3072, 224, patch 32
    cfg = transformers.CLIPConfig(text_config=text.to_dict(), vision_config=vision.to_dict(), projection_dim=512)
    model = transformers.CLIPModel(cfg).eval()
    os.makedirs(OUT, exist_ok=True)
    model.save_pretrained(os.path.join(OUT, 'base'), safe_serialization=True)
    g = torch.Generator().manual_seed(SEED)
    x = torch.randn(2, 3, 224, 224, generator=g)
    ids = torch.randint(0, 49405, (3, 9), generator=g)
    ids[:, 0] = 49406
    lens = [9, 7, 5]
    mask = torch.zeros(3, 9, dtype=torch.long)
    for i, n in enumerate(lens):
        ids[i, n - 1] = 49407
        ids[i, n:] = 49407  # openai's pad token is <|endoftext|>
        mask[i, :n] = 1
    with torch.no_grad():
        image_embeds = model.get_image_features(pixel_values=x)
        text_embeds = model.get_text_features(input_ids=ids, attention_mask=mask)
        torch.onnx.export(Vision(model), (x,), os.path.join(OUT, 'vision.onnx'), input_names=['pixel_values'],
                          output_names=['image_embeds'], opset_version=17,
                          dynamic_axes={'pixel_values': {0: 'batch'}, 'image_embeds': {0: 'batch'}})
        torch.onnx.export(Text(model), (ids, mask), os.path.join(OUT, 'text.onnx'),
                          input_names=['input_ids', 'attention_mask'], output_names=['text_embeds'], opset_version=17,
                          dynamic_axes={'input_ids': {0: 'batch', 1: 'tokens'},
                                        'attention_mask': {0: 'batch', 1: 'tokens'}, 'text_embeds': {0: 'batch'}})
    with open(os.path.join(OUT, 'check.json'), 'w') as f:
        json.dump({'pixelValues': b64(x), 'imageEmbeds': b64(image_embeds), 'inputIds': ids.flatten().tolist(),
                   'attentionMask': mask.flatten().tolist(), 'idsShape': list(ids.shape), 'textEmbeds': b64(text_embeds)}, f)


if __name__ == '__main__':
    main()
