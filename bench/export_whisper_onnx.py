#!/usr/bin/python3
"""Export random Whisper checkpoints at two hub shapes for bench/whisper.mjs: the same weights as a hub folder
(attnwasm) and as the ONNX graphs transformers.js runs (Optimum's layout, the decoder split as in
bench/export_seq2seq_onnx.py; onnxruntime-web). Not a model converter; inference only.

  tiny  whisper-tiny's shape: d_model 384, 4 + 4 layers, 6 heads, ffn 1536, 80 mels, vocab 51865, 1500 source and
        448 target positions (39 M parameters)
  base  whisper-base's shape: d_model 512, 6 + 6 layers, 8 heads, ffn 2048 (the rest as tiny; 73 M parameters)

Both use the real multilingual vocabulary layout (ids only; the text of the ordinary tokens is made up): 50257
ordinary byte-level BPE tokens, then <|endoftext|> 50257, <|startoftranscript|> 50258, the 99 languages 50259–50357
(<|en|> 50259), <|translate|> 50358, <|transcribe|> 50359, <|startoflm|> 50360, <|startofprev|> 50361,
<|nocaptions|> 50362, <|notimestamps|> 50363, timestamps <|0.00|>…<|30.00|> 50364–51864; generation_config.json as
whisper-tiny's (suppress_tokens, begin_suppress_tokens, lang_to_id, task_to_id, forced_decoder_ids, max_length 448).
Random weights at transformers' init give near-uniform logits; the <|endoftext|> row of the tied embedding / head is
zeroed so that its logit is 0 while the maximum over 51 864 other near-zero logits is positive: greedy decoding
never stops early and every transcription runs its full maxNewTokens (the bench checks the count).

For each, under bench/onnx/whisper/<name>/:
  model/                        save_pretrained (transformers v4.40.2 through tools/hf_env; safetensors, F32) plus
                                generation_config.json, preprocessor_config.json, tokenizer.json
  encoder_model.onnx            input_features (B, 80, 3000) -> last_hidden_state (B, 1500, E)
  decoder_model.onnx            the first step: input_ids (B, 1) int64, encoder_hidden_states (B, 1500, E) ->
                                logits (B, 1, V), present.{i}.decoder.{key,value} (B, H, 1, D),
                                present.{i}.encoder.{key,value} (B, H, 1500, D)
  decoder_with_past_model.onnx  the next steps: input_ids (B, 1), past_key_values.{i}.{decoder,encoder}.{key,value}
                                -> logits (B, 1, V), present.{i}.decoder.{key,value} (B, H, P + 1, D)
  check.json                    seeded input features (1, 80, 3000), 6 teacher-forced decoder ids and torch's logits
                                (1, 6, V): both engines are checked against them
torch.onnx.export (opset 17) of small wrappers around the model; dynamic batch and past axes.
Run: /usr/bin/python3 bench/export_whisper_onnx.py [tiny] [base]
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
from transformers.models.whisper.tokenization_whisper import LANGUAGES, bytes_to_unicode  # noqa: E402

OUT = os.path.join(ROOT, 'bench', 'onnx', 'whisper')
SEED = 20261207
OPSET = 17
V = 51865
CODES = list(LANGUAGES)[:99]  # the multilingual models before large-v3 (which adds <|yue|>)
EOT, SOT, FIRST_LANG = 50257, 50258, 50259
TRANSLATE, TRANSCRIBE, STARTOFLM, STARTOFPREV, NOCAPTIONS, NOTIMESTAMPS, FIRST_TS = range(50358, 50365)
SHAPES = {
    'tiny': dict(d_model=384, encoder_layers=4, decoder_layers=4, encoder_attention_heads=6,
                 decoder_attention_heads=6, encoder_ffn_dim=1536, decoder_ffn_dim=1536),
    'base': dict(d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
                 decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048),
}
# whisper-tiny's generation_config.json suppress_tokens (non-speech symbols and the special tokens but <|endoftext|>).
SUPPRESS = [1, 2, 7, 8, 9, 10, 14, 25, 26, 27, 28, 29, 31, 58, 59, 60, 61, 62, 63, 90, 91, 92, 93, 359, 503, 522, 542,
            873, 893, 902, 918, 922, 931, 1350, 1853, 1982, 2460, 2627, 3246, 3253, 3268, 3536, 3846, 3961, 4183, 4667,
            6585, 6647, 7273, 9061, 9383, 10428, 10929, 11938, 12033, 12331, 12562, 13793, 14157, 14635, 15265, 15618,
            16553, 16604, 18362, 18956, 20075, 21675, 22520, 26130, 26161, 26435, 28279, 29464, 31650, 32302, 32470,
            36865, 42863, 47425, 49870, 50254, 50258, 50358, 50359, 50360, 50361, 50362]


def special_tokens():
    """The 1608 added tokens from 50257 in the hub's order: [(id, content, special)]."""
    names = ['<|endoftext|>', '<|startoftranscript|>'] + [f'<|{code}|>' for code in CODES]
    names += ['<|translate|>', '<|transcribe|>', '<|startoflm|>', '<|startofprev|>', '<|nocaptions|>', '<|notimestamps|>']
    out = [(EOT + i, n, True) for i, n in enumerate(names)]
    assert out[-1][0] == NOTIMESTAMPS and len(CODES) == 99, (out[-1], len(CODES))
    out += [(FIRST_TS + i, f'<|{i * 0.02:.2f}|>', False) for i in range(1501)]
    assert out[-1][0] == V - 1
    return out


def tokenizer_json():
    """A byte-level BPE tokenizer.json of the real id layout: the 256 byte symbols, then made-up ordinary tokens
    ('Ġw<i>', no merges reach them: they only decode) up to 50256, then the added tokens."""
    symbols = list(bytes_to_unicode().values())
    vocab = {s: i for i, s in enumerate(symbols)}
    for i in range(len(vocab), EOT):
        vocab[f'\u0120w{i}'] = i
    added = [{'id': i, 'content': c, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': False,
              'special': s} for i, c, s in special_tokens()]
    return {
        'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': added, 'normalizer': None,
        'pre_tokenizer': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': True},
        'post_processor': {'type': 'TemplateProcessing',
                           'single': [{'SpecialToken': {'id': '<|startoftranscript|>', 'type_id': 0}},
                                      {'SpecialToken': {'id': '<|notimestamps|>', 'type_id': 0}},
                                      {'Sequence': {'id': 'A', 'type_id': 0}},
                                      {'SpecialToken': {'id': '<|endoftext|>', 'type_id': 0}}],
                           'pair': [{'SpecialToken': {'id': '<|startoftranscript|>', 'type_id': 0}},
                                    {'SpecialToken': {'id': '<|notimestamps|>', 'type_id': 0}},
                                    {'Sequence': {'id': 'A', 'type_id': 0}}, {'Sequence': {'id': 'B', 'type_id': 1}},
                                    {'SpecialToken': {'id': '<|endoftext|>', 'type_id': 1}}],
                           'special_tokens': {n: {'id': n, 'ids': [i], 'tokens': [n]} for i, n in
                                              [(SOT, '<|startoftranscript|>'), (NOTIMESTAMPS, '<|notimestamps|>'),
                                               (EOT, '<|endoftext|>')]}},
        'decoder': {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': True, 'use_regex': True},
        'model': {'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': '',
                  'end_of_word_suffix': '', 'fuse_unk': False, 'byte_fallback': False, 'vocab': vocab, 'merges': []},
    }


def generation_config():
    return {
        'begin_suppress_tokens': [220, EOT], 'bos_token_id': EOT, 'decoder_start_token_id': SOT,
        'eos_token_id': EOT, 'forced_decoder_ids': [[1, None], [2, TRANSCRIBE]], 'is_multilingual': True,
        'lang_to_id': {f'<|{code}|>': FIRST_LANG + i for i, code in enumerate(CODES)},
        'max_initial_timestamp_index': 50, 'max_length': 448, 'no_timestamps_token_id': NOTIMESTAMPS,
        'pad_token_id': EOT, 'prev_sot_token_id': STARTOFPREV, 'return_timestamps': False,
        'suppress_tokens': SUPPRESS, 'task_to_id': {'transcribe': TRANSCRIBE, 'translate': TRANSLATE},
        'transformers_version': '4.40.2',
    }


PREPROCESSOR = {'chunk_length': 30, 'feature_extractor_type': 'WhisperFeatureExtractor', 'feature_size': 80,
                'hop_length': 160, 'n_fft': 400, 'n_samples': 480000, 'nb_max_frames': 3000,
                'padding_side': 'right', 'padding_value': 0.0, 'processor_class': 'WhisperProcessor',
                'return_attention_mask': False, 'sampling_rate': 16000}


def make(name):
    cfg = transformers.WhisperConfig(
        vocab_size=V, num_mel_bins=80, max_source_positions=1500, max_target_positions=448, activation_function='gelu',
        bos_token_id=EOT, eos_token_id=EOT, pad_token_id=EOT, decoder_start_token_id=SOT,
        begin_suppress_tokens=[220, EOT], suppress_tokens=SUPPRESS, architectures=['WhisperForConditionalGeneration'],
        **SHAPES[name])
    model = transformers.WhisperForConditionalGeneration(cfg).eval()
    with torch.no_grad():
        model.model.decoder.embed_tokens.weight[EOT].zero_()  # tied with proj_out: <|endoftext|>'s logit is 0
    model.generation_config = transformers.GenerationConfig(**{k: v for k, v in generation_config().items()
                                                               if k != 'transformers_version'})
    return model


def b64(t):
    return {'shape': list(t.shape), 'base64': base64.b64encode(t.detach().float().contiguous().numpy().tobytes()).decode()}


class Encoder(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.enc = m.get_encoder()

    def forward(self, input_features):
        return self.enc(input_features=input_features, return_dict=True).last_hidden_state


class DecoderFirst(torch.nn.Module):
    """The first step: the model's forward on the encoder's states; every layer's self- and cross-attention cache."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, encoder_hidden_states):
        out = self.m(encoder_outputs=(encoder_hidden_states,), decoder_input_ids=input_ids, use_cache=True,
                     return_dict=True)
        return (out.logits, *[t for layer in out.past_key_values for t in layer])


class DecoderWithPast(torch.nn.Module):
    """A step with the cache: cross-attention reads its keys and values from the past (WhisperAttention reuses them
    when the past's length equals the states'), so the encoder's states are not an input; zeros of their shape stand
    in for them and, unused, leave the traced graph."""

    def __init__(self, m, layers):
        super().__init__()
        self.m = m
        self.layers = layers

    def forward(self, input_ids, *past):
        pkv = tuple(tuple(past[4 * i:4 * i + 4]) for i in range(self.layers))
        ek = past[2]  # (B, H, S, D)
        stand_in = ek.new_zeros((ek.shape[0], ek.shape[2], self.m.config.d_model))
        out = self.m(encoder_outputs=(stand_in,), decoder_input_ids=input_ids, past_key_values=pkv, use_cache=True,
                     return_dict=True)
        return (out.logits, *[t for layer in out.past_key_values for t in layer[:2]])


def cache_names(prefix, layers, encoder=True):
    parts = [('decoder', 'key'), ('decoder', 'value')] + ([('encoder', 'key'), ('encoder', 'value')] if encoder else [])
    return [f'{prefix}.{i}.{a}.{b}' for i in range(layers) for a, b in parts]


def export(name):
    torch.manual_seed(SEED)
    model = make(name)
    L = model.config.decoder_layers
    out = os.path.join(OUT, name)
    mdir = os.path.join(out, 'model')
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(mdir, safe_serialization=True)
    for fname, obj in [('generation_config.json', generation_config()), ('preprocessor_config.json', PREPROCESSOR),
                       ('tokenizer.json', tokenizer_json())]:
        with open(os.path.join(mdir, fname), 'w') as f:
            json.dump(obj, f, indent=None if fname == 'tokenizer.json' else 2, ensure_ascii=False)
    g = torch.Generator().manual_seed(SEED)
    # Features in Whisper's range (log-mel clamped to max - 8, scaled: about [-1, 1.5]); 6 teacher-forced ids.
    feats = torch.rand(1, 80, 3000, generator=g) * 2 - 1
    dec = torch.tensor([[SOT, FIRST_LANG, TRANSCRIBE, NOTIMESTAMPS, 1000, 2000]])
    with torch.no_grad():
        logits = model(input_features=feats, decoder_input_ids=dec).logits  # (1, T, V)
        hidden = model.get_encoder()(input_features=feats).last_hidden_state
        torch.onnx.export(Encoder(model), (feats,), os.path.join(out, 'encoder_model.onnx'),
                          input_names=['input_features'], output_names=['last_hidden_state'], opset_version=OPSET,
                          dynamic_axes={'input_features': {0: 'batch'}, 'last_hidden_state': {0: 'batch'}})
        present = cache_names('present', L)
        torch.onnx.export(DecoderFirst(model), (dec[:, :1], hidden), os.path.join(out, 'decoder_model.onnx'),
                          input_names=['input_ids', 'encoder_hidden_states'], output_names=['logits', *present],
                          opset_version=OPSET,
                          dynamic_axes={'input_ids': {0: 'batch', 1: 'target'}, 'encoder_hidden_states': {0: 'batch'},
                                        'logits': {0: 'batch', 1: 'target'},
                                        **{n: {0: 'batch'} if '.encoder.' in n else {0: 'batch', 2: 'target'}
                                           for n in present}})
        # Trace the cached step with a past of 3 positions (run the first steps in torch to get it).
        past = model(encoder_outputs=(hidden,), decoder_input_ids=dec[:, :3], use_cache=True).past_key_values
        flat = [t for layer in past for t in layer]
        past_names = cache_names('past_key_values', L)
        present_dec = cache_names('present', L, encoder=False)
        torch.onnx.export(DecoderWithPast(model, L), (dec[:, 3:4], *flat),
                          os.path.join(out, 'decoder_with_past_model.onnx'),
                          input_names=['input_ids', *past_names], output_names=['logits', *present_dec],
                          opset_version=OPSET,
                          dynamic_axes={'input_ids': {0: 'batch', 1: 'target'}, 'logits': {0: 'batch', 1: 'target'},
                                        **{n: {0: 'batch'} if '.encoder.' in n else {0: 'batch', 2: 'past'}
                                           for n in past_names},
                                        **{n: {0: 'batch', 2: 'past_plus_one'} for n in present_dec}})
    with open(os.path.join(out, 'check.json'), 'w') as f:
        json.dump({'features': b64(feats), 'decoderInputIds': dec.flatten().tolist(), 'decoderShape': list(dec.shape),
                   'logits': b64(logits), 'parameters': model.num_parameters()}, f)
    print(f'{name}: {model.num_parameters()} parameters -> {out}')


def main():
    torch.set_num_threads(2)
    for name in sys.argv[1:] or list(SHAPES):
        if name not in SHAPES:
            raise SystemExit(f'unknown model {name}; known: {" ".join(SHAPES)}')
        export(name)


if __name__ == '__main__':
    main()
