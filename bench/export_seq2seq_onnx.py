#!/usr/bin/python3
"""Export random encoder-decoders at two hub shapes for bench/seq2seq.mjs: the same weights as a hub folder (attnwasm)
and as the three ONNX graphs transformers.js runs (Optimum's layout; onnxruntime-web). Not a model converter;
inference only. Random weights at transformers' default init give near-uniform logits: fine for timing, and the
bench checks that both engines pick the same tokens.

  marian  opus-mt-en-de's shape: MarianMTModel, vocab 58101, d_model 512, 6 + 6 layers, 8 heads, ffn 2048, 512
          positions, swish, scale_embedding, pad = decoder start = 58100, eos 0, tied; generation_config as
          opus-mt's (num_beams 4, max_length 512, bad_words_ids [[58100]], forced_eos_token_id 0)
  t5      t5-small's shape: T5ForConditionalGeneration, vocab 32128, d_model 512, d_kv 64, d_ff 2048, 6 + 6 layers,
          8 heads, relu, tied, decoder start 0, eos 1, pad 0

For each, under bench/onnx/seq2seq/<name>/:
  model/                        save_pretrained (transformers v4.40.2 through tools/hf_env; safetensors, F32)
  encoder_model.onnx            input_ids, attention_mask (B, S) int64 -> last_hidden_state (B, S, E)
  decoder_model.onnx            the first step: input_ids (B, 1) int64, encoder_hidden_states (B, S, E),
                                encoder_attention_mask (B, S) int64 -> logits (B, 1, V), present.{i}.decoder.{key,value}
                                (B, H, 1, D), present.{i}.encoder.{key,value} (B, H, S, D)
  decoder_with_past_model.onnx  the next steps: input_ids (B, 1), encoder_attention_mask (B, S),
                                past_key_values.{i}.{decoder,encoder}.{key,value} -> logits (B, 1, V),
                                present.{i}.decoder.{key,value} (B, H, P + 1, D)
  check.json                    a seeded padded batch of 2 sources, teacher-forced decoder ids, torch's logits
                                (B, T, V): both engines are checked against them
torch.onnx.export (opset 17) of small wrappers around the model; dynamic batch, sequence and past axes.
Run: /usr/bin/python3 bench/export_seq2seq_onnx.py [marian] [t5]
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

OUT = os.path.join(ROOT, 'bench', 'onnx', 'seq2seq')
SEED = 20261205
OPSET = 17


def marian():
    gen = dict(num_beams=4, max_length=512, bad_words_ids=[[58100]], forced_eos_token_id=0, bos_token_id=0,
               eos_token_id=0, pad_token_id=58100, decoder_start_token_id=58100)
    # opus-mt's config.json carries the generation keys too (written before generation_config.json existed).
    cfg = transformers.MarianConfig(
        vocab_size=58101, decoder_vocab_size=58101, d_model=512, encoder_layers=6, decoder_layers=6,
        encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048,
        max_position_embeddings=512, activation_function='swish', scale_embedding=True,
        share_encoder_decoder_embeddings=True, tie_word_embeddings=True, architectures=['MarianMTModel'], **gen)
    model = transformers.MarianMTModel(cfg).eval()
    model.generation_config = transformers.GenerationConfig(**gen)
    return model


def t5():
    cfg = transformers.T5Config(
        vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=6, num_heads=8,
        feed_forward_proj='relu', tie_word_embeddings=True, decoder_start_token_id=0, eos_token_id=1, pad_token_id=0,
        architectures=['T5ForConditionalGeneration'])
    return transformers.T5ForConditionalGeneration(cfg).eval()


MODELS = {'marian': marian, 't5': t5}


def b64(t):
    return {'shape': list(t.shape), 'base64': base64.b64encode(t.detach().float().contiguous().numpy().tobytes()).decode()}


class Encoder(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.enc = m.get_encoder()

    def forward(self, input_ids, attention_mask):
        return self.enc(input_ids=input_ids, attention_mask=attention_mask, return_dict=True).last_hidden_state


class DecoderFirst(torch.nn.Module):
    """The first step: the model's forward on the encoder's states; every layer's self- and cross-attention cache."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, encoder_hidden_states, encoder_attention_mask):
        out = self.m(encoder_outputs=(encoder_hidden_states,), attention_mask=encoder_attention_mask,
                     decoder_input_ids=input_ids, use_cache=True, return_dict=True)
        return (out.logits, *[t for layer in out.past_key_values for t in layer])


class DecoderWithPast(torch.nn.Module):
    """A step with the cache: cross-attention reads its keys and values from the past, so the encoder's states are
    not an input. The model still wants a tensor of their shape (it compares the past's length with it, and T5 sizes
    its cross-attention bias by it): zeros of that shape, made from the past's shape in the graph."""

    def __init__(self, m, layers):
        super().__init__()
        self.m = m
        self.layers = layers

    def forward(self, input_ids, encoder_attention_mask, *past):
        pkv = tuple(tuple(past[4 * i:4 * i + 4]) for i in range(self.layers))
        ek = past[2]  # (B, H, S, D)
        stand_in = ek.new_zeros((ek.shape[0], ek.shape[2], self.m.config.d_model))
        out = self.m(encoder_outputs=(stand_in,), attention_mask=encoder_attention_mask, decoder_input_ids=input_ids,
                     past_key_values=pkv, use_cache=True, return_dict=True)
        return (out.logits, *[t for layer in out.past_key_values for t in layer[:2]])


def cache_names(prefix, layers, encoder=True):
    parts = [('decoder', 'key'), ('decoder', 'value')] + ([('encoder', 'key'), ('encoder', 'value')] if encoder else [])
    return [f'{prefix}.{i}.{a}.{b}' for i in range(layers) for a, b in parts]


def export(name):
    torch.manual_seed(SEED)
    model = MODELS[name]()
    cfg = model.config
    out = os.path.join(OUT, name)
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(os.path.join(out, 'model'), safe_serialization=True)
    L = cfg.decoder_layers if name == 'marian' else cfg.num_decoder_layers
    V = cfg.vocab_size
    pad = cfg.pad_token_id
    start = cfg.decoder_start_token_id
    g = torch.Generator().manual_seed(SEED)
    # A padded batch of 2 (lengths 11 and 7; pad ids under a zero mask), 6 teacher-forced decoder ids each.
    B, S, T = 2, 11, 6
    lens = [11, 7]
    ids = torch.randint(2, V - 1, (B, S), generator=g)
    mask = torch.zeros(B, S, dtype=torch.long)
    for i, n in enumerate(lens):
        ids[i, n - 1] = cfg.eos_token_id
        ids[i, n:] = pad
        mask[i, :n] = 1
    dec = torch.randint(2, V - 1, (B, T), generator=g)
    dec[:, 0] = start
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask, decoder_input_ids=dec).logits  # (B, T, V)
        hidden = model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
        torch.onnx.export(Encoder(model), (ids, mask), os.path.join(out, 'encoder_model.onnx'),
                          input_names=['input_ids', 'attention_mask'], output_names=['last_hidden_state'],
                          opset_version=OPSET,
                          dynamic_axes={'input_ids': {0: 'batch', 1: 'source'}, 'attention_mask': {0: 'batch', 1: 'source'},
                                        'last_hidden_state': {0: 'batch', 1: 'source'}})
        first = DecoderFirst(model)
        start_ids = dec[:, :1]
        present = cache_names('present', L)
        torch.onnx.export(first, (start_ids, hidden, mask), os.path.join(out, 'decoder_model.onnx'),
                          input_names=['input_ids', 'encoder_hidden_states', 'encoder_attention_mask'],
                          output_names=['logits', *present], opset_version=OPSET,
                          dynamic_axes={'input_ids': {0: 'batch', 1: 'target'},
                                        'encoder_hidden_states': {0: 'batch', 1: 'source'},
                                        'encoder_attention_mask': {0: 'batch', 1: 'source'},
                                        'logits': {0: 'batch', 1: 'target'},
                                        **{n: {0: 'batch', 2: 'source' if '.encoder.' in n else 'target'} for n in present}})
        # Trace the cached step with a past of 3 positions (run the first steps in torch to get it).
        past = model(encoder_outputs=(hidden,), attention_mask=mask, decoder_input_ids=dec[:, :3], use_cache=True).past_key_values
        flat = [t for layer in past for t in layer]
        past_names = cache_names('past_key_values', L)
        present_dec = cache_names('present', L, encoder=False)
        torch.onnx.export(DecoderWithPast(model, L), (dec[:, 3:4], mask, *flat),
                          os.path.join(out, 'decoder_with_past_model.onnx'),
                          input_names=['input_ids', 'encoder_attention_mask', *past_names],
                          output_names=['logits', *present_dec], opset_version=OPSET,
                          dynamic_axes={'input_ids': {0: 'batch', 1: 'target'},
                                        'encoder_attention_mask': {0: 'batch', 1: 'source'},
                                        'logits': {0: 'batch', 1: 'target'},
                                        **{n: {0: 'batch', 2: 'source' if '.encoder.' in n else 'past'} for n in past_names},
                                        **{n: {0: 'batch', 2: 'past_plus_one'} for n in present_dec}})
    with open(os.path.join(out, 'check.json'), 'w') as f:
        json.dump({'inputIds': ids.flatten().tolist(), 'attentionMask': mask.flatten().tolist(), 'idsShape': [B, S],
                   'decoderInputIds': dec.flatten().tolist(), 'decoderShape': [B, T], 'logits': b64(logits),
                   'parameters': model.num_parameters()}, f)
    print(f'{name}: {model.num_parameters()} parameters -> {out}')


def main():
    torch.set_num_threads(2)
    for name in sys.argv[1:] or list(MODELS):
        if name not in MODELS:
            raise SystemExit(f'unknown model {name}; known: {" ".join(MODELS)}')
        export(name)


if __name__ == '__main__':
    main()
