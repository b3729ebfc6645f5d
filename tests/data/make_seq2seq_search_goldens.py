#!/usr/bin/python3
"""Goldens of seq2seq generation's search (bindings/seq2seq_generate.js): tests/data/goldens/seq2seq_search.json.

Run: /usr/bin/python3 tests/data/make_seq2seq_search_goldens.py (Debian's torch 1.13, CPU capability AVX2;
transformers v4.40.2 through tools/hf_env). Deterministic: fixed seeds, one thread; two runs write identical bytes.

transformers' own generate() drives a toy encoder–decoder (ToyS2S: a PreTrainedModel with is_encoder_decoder, an
encoder, Seq2SeqLMOutput), so the real encoder–decoder path runs: decoder_start_token_id, max_length counting the
start token, _expand_inputs_for_generation, the processors, BeamSearchScorer. Its next-token logits are a float32
function of the decoder's ids that JS recomputes bit for bit:
    logits = (A[src, last % R] + B[t - 1]) + C[prev % R]      (the C term from the second step on; float32 adds)
with t the decoder length, last/prev the last two decoder ids and src the source (the encoder passes its id
through). Models (tables stored in the JSON, drawn with a fixed seed):
  rand  V 16: normal tables, an eos bias growing with the position, a per-source eos offset (rows end at
        different steps)
  ints  V 16: small integers (ties everywhere: torch.topk's order among equal scores decides the beams)
  pos   V 12: B alone, integers (every row the same logits: ties across beams)
  wide  V 160, R 8: integers; numBeams x V >= 64 k, so topk takes its partial_sort path
Each case: config.json, generation_config.json (or none), generate()'s keyword arguments (the JS options are their
camelCase names), the sources, an optional decoder prompt; expected: `sequences`, `sequences_scores` (beam search),
and the generation config generate() ran with (captured at _get_logits_processor: lengths prepared, pad defaulted).

Also, for torch_f32.js: torch.topk indices of tie-heavy rows (values from an LCG both sides compute), log_softmax
and softmax of LCG rows (the per-row constants: log_softmax's log-sum and softmax's 1/sum, after checking that every
element is (x - max) - logsum, resp. exp(x - max) * inv), and the warpers (Temperature: the outputs; TopK, TopP: the
ids they set to -inf) on LCG rows. Floats are written as the shortest decimals that round back to the same float32.
"""
import json
import os
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import transformers  # noqa: E402
from transformers import GenerationConfig, PretrainedConfig, PreTrainedModel  # noqa: E402
from transformers.generation.logits_process import (  # noqa: E402
    TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper)
from transformers.modeling_outputs import BaseModelOutput, Seq2SeqLMOutput  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

hf_logging.set_verbosity_error()
import warnings  # noqa: E402

warnings.filterwarnings('ignore')
torch.set_num_threads(1)

OUT = os.path.join(ROOT, 'tests', 'data', 'goldens', 'seq2seq_search.json')
SEED = 20261206
MAX_POS = 40


class ToyConfig(PretrainedConfig):
    model_type = 'toy-s2s'

    def __init__(self, vocab_size=16, **kwargs):
        kwargs.setdefault('is_encoder_decoder', True)
        super().__init__(**kwargs)
        self.vocab_size = vocab_size


class ToyEncoder(torch.nn.Module):
    main_input_name = 'input_ids'

    def forward(self, input_ids=None, attention_mask=None, return_dict=True, **kwargs):
        return BaseModelOutput(last_hidden_state=input_ids[:, :, None].float())


class ToyS2S(PreTrainedModel):
    config_class = ToyConfig
    main_input_name = 'input_ids'

    def __init__(self, config, tables):
        super().__init__(config)
        self.encoder = ToyEncoder()
        self.A = torch.nn.Parameter(tables['A'], requires_grad=False)  # (S, R, V)
        self.B = torch.nn.Parameter(tables['B'], requires_grad=False)  # (MAX_POS, V)
        self.C = torch.nn.Parameter(tables['C'], requires_grad=False)  # (R, V)
        self.R = tables['A'].shape[1]

    def get_encoder(self):
        return self.encoder

    def forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None, encoder_outputs=None,
                past_key_values=None, use_cache=None, return_dict=True, output_attentions=None,
                output_hidden_states=None, **kwargs):
        src = encoder_outputs.last_hidden_state[:, 0, 0].long()
        t = decoder_input_ids.shape[1]
        logits = self.A[src, decoder_input_ids[:, -1] % self.R] + self.B[t - 1]
        if t >= 2:
            logits = logits + self.C[decoder_input_ids[:, -2] % self.R]
        return Seq2SeqLMOutput(logits=logits[:, None, :])

    def prepare_inputs_for_generation(self, decoder_input_ids, past_key_values=None, attention_mask=None,
                                      encoder_outputs=None, **kwargs):
        return {'decoder_input_ids': decoder_input_ids, 'encoder_outputs': encoder_outputs,
                'attention_mask': attention_mask}


def f32(x):
    return torch.tensor(np.asarray(x, dtype=np.float32))


def make_models():
    g = torch.Generator().manual_seed(SEED)
    models = {}
    V, S = 16, 3
    A = torch.randn(S, V, V, generator=g) * 1.5
    for s, off in enumerate([-0.5, 0.3, 1.0]):
        A[s, :, 1] += off
    B = torch.randn(MAX_POS, V, generator=g) * 0.5
    B[:, 1] += 0.45 * (torch.arange(MAX_POS) - 4.0)
    C = torch.randn(V, V, generator=g) * 0.8
    models['rand'] = {'V': V, 'R': V, 'A': A.float(), 'B': B.float(), 'C': C.float()}

    A = torch.randint(-3, 4, (S, V, V), generator=g).float()
    B = torch.randint(-1, 2, (MAX_POS, V), generator=g).float()
    B[5:, 1] += 2
    C = torch.randint(-1, 2, (V, V), generator=g).float()
    models['ints'] = {'V': V, 'R': V, 'A': A, 'B': B, 'C': C}

    V = 12
    B = torch.randint(0, 4, (MAX_POS, V), generator=g).float()
    B[4:, 1] += 2
    models['pos'] = {'V': V, 'R': V, 'A': torch.zeros(S, V, V), 'B': B, 'C': torch.zeros(V, V)}

    V, R = 160, 8
    A = torch.randint(-2, 3, (S, R, V), generator=g).float()
    A[:, :, 1] += torch.tensor([0.0, 1.0, 2.0])[:, None]
    B = torch.randint(-1, 2, (MAX_POS, V), generator=g).float()
    B[6:, 1] += 2
    C = torch.randint(-1, 2, (R, V), generator=g).float()
    models['wide'] = {'V': V, 'R': R, 'A': A, 'B': B, 'C': C}
    return models


BASE_CONFIG = {'is_encoder_decoder': True, 'pad_token_id': 0, 'eos_token_id': 1, 'bos_token_id': 2,
               'decoder_start_token_id': 2}


def camel(name):
    head, *rest = name.split('_')
    return head + ''.join(w[:1].upper() + w[1:] for w in rest)


def cases():
    out = []

    def add(name, model='rand', opts=None, config=None, gen=None, sources=(0, 1, 2), prompt=None):
        cfg = dict(BASE_CONFIG)
        cfg.update(config or {})
        cfg = {k: v for k, v in cfg.items() if v is not None or k == 'eos_token_id'}
        out.append({'name': name, 'model': model, 'config': cfg, 'generation_config': gen, 'opts': opts or {},
                    'sources': list(sources), 'decoder_input_ids': prompt})

    # greedy
    add('greedy max_length', opts={'max_length': 12})
    add('greedy max_new_tokens', opts={'max_new_tokens': 6})
    add('greedy max_new_tokens over max_length', opts={'max_new_tokens': 5, 'max_length': 30})
    add('greedy eos list', opts={'eos_token_id': [1, 5], 'max_length': 15})
    add('greedy repetition_penalty 1.3', opts={'repetition_penalty': 1.3, 'max_length': 20})
    add('greedy repetition_penalty 0.8', opts={'repetition_penalty': 0.8, 'max_length': 20})
    add('greedy no_repeat_ngram_size 2', opts={'no_repeat_ngram_size': 2, 'max_length': 20})
    add('greedy no_repeat_ngram_size 3', opts={'no_repeat_ngram_size': 3, 'max_length': 24})
    add('greedy bad_words single', opts={'bad_words_ids': [[4], [7], [1]], 'max_length': 15})
    add('greedy bad_words multi', opts={'bad_words_ids': [[3, 4], [5, 6, 7], [2, 9]], 'max_length': 15})
    add('greedy forced bos and eos', opts={'forced_bos_token_id': 9, 'forced_eos_token_id': 1, 'max_length': 8})
    add('greedy forced eos list', opts={'forced_eos_token_id': [1, 5], 'eos_token_id': [1, 5], 'max_length': 7})
    add('greedy min_length', opts={'min_length': 8, 'max_length': 16})
    add('greedy min_new_tokens', opts={'min_new_tokens': 6, 'max_length': 16})
    add('greedy no eos', opts={'eos_token_id': None, 'max_length': 10})
    add('greedy pad from eos', config={'pad_token_id': None}, opts={'max_length': 14})
    add('greedy start is pad', config={'decoder_start_token_id': 0}, opts={'max_length': 12})
    add('greedy decoder prompt', opts={'max_new_tokens': 5}, prompt=[[2, 7, 4]] * 3)
    add('greedy decoder prompt without start', opts={'max_length': 10}, prompt=[[7, 4]] * 3)
    add('greedy one source', opts={'max_length': 14}, sources=(1,))
    add('greedy ints', model='ints', opts={'max_length': 12})
    add('greedy pos', model='pos', opts={'max_length': 10})
    add('greedy wide', model='wide', opts={'max_length': 12})

    # beam search: numBeams x length_penalty x early_stopping
    for nb in (2, 4, 5):
        for lp in (0.6, 1.0, 2.0):
            for es in (True, False, 'never'):
                nrs = nb if (nb + int(lp * 10)) % 3 == 0 else (2 if nb > 2 and lp == 1.0 else 1)
                add(f'beams {nb} lp {lp} early_stopping {es} return {nrs}', opts={
                    'num_beams': nb, 'length_penalty': lp, 'early_stopping': es, 'num_return_sequences': nrs,
                    'max_length': 14})
    add('beams 1 is greedy', opts={'num_beams': 1, 'max_length': 12})
    add('beams 4 length_penalty -0.5', opts={'num_beams': 4, 'length_penalty': -0.5, 'max_length': 12})
    add('beams 4 length_penalty 0 never', opts={'num_beams': 4, 'length_penalty': 0.0, 'early_stopping': 'never',
                                                 'max_length': 12})
    add('beams 4 repetition_penalty 1.3', opts={'num_beams': 4, 'repetition_penalty': 1.3, 'max_length': 16})
    add('beams 4 repetition_penalty 0.8', opts={'num_beams': 4, 'repetition_penalty': 0.8, 'max_length': 16})
    add('beams 4 no_repeat_ngram_size 2', opts={'num_beams': 4, 'no_repeat_ngram_size': 2, 'max_length': 20,
                                                'num_return_sequences': 3})
    add('beams 3 no_repeat_ngram_size 3', opts={'num_beams': 3, 'no_repeat_ngram_size': 3, 'max_length': 22})
    add('beams 4 bad_words single', opts={'num_beams': 4, 'bad_words_ids': [[4], [7], [1]], 'max_length': 14})
    add('beams 4 bad_words multi', opts={'num_beams': 4, 'bad_words_ids': [[3, 4], [5, 6, 7], [2, 9]],
                                         'max_length': 14, 'num_return_sequences': 4})
    add('beams 4 forced bos and eos', opts={'num_beams': 4, 'forced_bos_token_id': 9, 'forced_eos_token_id': 1,
                                            'max_length': 9, 'num_return_sequences': 2})
    add('beams 4 renormalize_logits, bad words, forced eos (opus-mt)', opts={
        'num_beams': 4, 'renormalize_logits': True, 'bad_words_ids': [[4]], 'forced_eos_token_id': 1, 'max_length': 12})
    add('greedy renormalize_logits', opts={'num_beams': 1, 'renormalize_logits': True, 'bad_words_ids': [[4]], 'max_length': 10})
    add('beams 3 min_length', opts={'num_beams': 3, 'min_length': 8, 'max_length': 16})
    add('beams 3 min_new_tokens', opts={'num_beams': 3, 'min_new_tokens': 6, 'max_length': 16})
    add('beams 4 max_new_tokens over max_length', opts={'num_beams': 4, 'max_new_tokens': 6, 'max_length': 30})
    add('beams 4 eos list', opts={'num_beams': 4, 'eos_token_id': [1, 5], 'max_length': 14,
                                  'num_return_sequences': 4})
    add('beams 3 eos list never', opts={'num_beams': 3, 'eos_token_id': [5, 1, 6], 'early_stopping': 'never',
                                        'max_length': 12, 'num_return_sequences': 3})
    add('beams 3 decoder prompt', opts={'num_beams': 3, 'max_new_tokens': 6}, prompt=[[2, 7, 4]] * 3)
    add('beams 3 no eos', opts={'num_beams': 3, 'eos_token_id': None, 'max_length': 8,
                                'num_return_sequences': 3})
    add('beams 4 one source', opts={'num_beams': 4, 'max_length': 14, 'num_return_sequences': 4}, sources=(2,))
    add('beams 5 long', opts={'num_beams': 5, 'max_length': 30, 'early_stopping': False, 'length_penalty': 1.5,
                              'num_return_sequences': 5})
    for model, ml in (('ints', 12), ('pos', 10), ('wide', 12)):
        for nb in (2, 4, 5):
            for es in (True, False, 'never'):
                add(f'beams {nb} {model} early_stopping {es}', model=model, opts={
                    'num_beams': nb, 'early_stopping': es, 'num_return_sequences': nb, 'max_length': ml,
                    'length_penalty': 0.6 if es == 'never' else 1.0})
    add('beams 4 ints forced bos', model='ints', opts={'num_beams': 4, 'forced_bos_token_id': 9, 'max_length': 10,
                                                       'num_return_sequences': 4})

    # where the settings come from
    gen_base = {'decoder_start_token_id': 2, 'eos_token_id': 1, 'pad_token_id': 0, 'bos_token_id': 2,
                'transformers_version': '4.40.2'}
    add('config.json only', config={'num_beams': 4, 'max_length': 10, 'no_repeat_ngram_size': 2,
                                     'early_stopping': True, 'length_penalty': 2.0, 'num_return_sequences': 2})
    add('generation_config.json over config.json', config={'num_beams': 5, 'max_length': 20},
        gen={**gen_base, 'num_beams': 3, 'max_length': 11, 'num_return_sequences': 3})
    add('legacy: config.json over a from-model-config generation_config.json',
        config={'num_beams': 3, 'max_length': 9}, gen={**gen_base, '_from_model_config': True})
    add('from-model-config generation_config.json, config.json at defaults',
        config={}, gen={**gen_base, '_from_model_config': True, 'max_length': 11})
    add('options over generation_config.json', gen={**gen_base, 'num_beams': 3, 'max_length': 12},
        opts={'num_beams': 2, 'length_penalty': 0.6, 'max_new_tokens': 7})
    add('bos when no decoder_start_token_id', config={'decoder_start_token_id': None, 'bos_token_id': 3},
        opts={'max_length': 10})
    add('decoder sub-config', config={'decoder': {'max_length': 9, 'num_beams': 2, 'vocab_size': 16}})
    add('max_new_tokens in the file over max_length given', gen={**gen_base, 'max_new_tokens': 6},
        opts={'max_length': 20})
    add('generation_config.json eos list and bad words', gen={**gen_base, 'eos_token_id': [1, 5],
                                                              'bad_words_ids': [[0]], 'num_beams': 2},
        opts={'max_length': 12})
    return out


class Capture:
    def __init__(self, model):
        self.gc = None
        original = model._get_logits_processor

        def wrapped(generation_config, *args, **kwargs):
            self.gc = generation_config
            return original(generation_config, *args, **kwargs)

        model._get_logits_processor = wrapped


RESOLVED = ['max_length', 'min_length', 'min_new_tokens', 'num_beams', 'do_sample', 'early_stopping',
            'length_penalty', 'num_return_sequences', 'no_repeat_ngram_size', 'repetition_penalty', 'bad_words_ids',
            'forced_bos_token_id', 'forced_eos_token_id', 'eos_token_id', 'pad_token_id', 'decoder_start_token_id',
            'bos_token_id']


def run_case(case, models, tmp):
    m = models[case['model']]
    tables = {'A': m['A'], 'B': m['B'], 'C': m['C']}
    folder = os.path.join(tmp, case['name'].replace(' ', '_').replace(':', '').replace('.', ''))
    os.makedirs(folder, exist_ok=True)
    config_json = {'model_type': 'toy-s2s', 'vocab_size': m['V'], **case['config']}
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(config_json, f)
    if case['generation_config'] is not None:
        with open(os.path.join(folder, 'generation_config.json'), 'w') as f:
            json.dump(case['generation_config'], f)
    config = ToyConfig.from_pretrained(folder)
    model = ToyS2S(config, tables).eval()
    try:  # what PreTrainedModel.from_pretrained does after building the model
        model.generation_config = GenerationConfig.from_pretrained(folder)
    except OSError:
        pass
    cap = Capture(model)
    src = torch.tensor(case['sources'])[:, None]
    kwargs = dict(case['opts'])
    if case['decoder_input_ids'] is not None:
        kwargs['decoder_input_ids'] = torch.tensor(case['decoder_input_ids'])
    with torch.no_grad():
        out = model.generate(src, attention_mask=torch.ones_like(src), return_dict_in_generate=True,
                             output_scores=True, **kwargs)
    gc = cap.gc
    resolved = {k: getattr(gc, k) for k in RESOLVED}
    scores = getattr(out, 'sequences_scores', None)
    return {
        'name': case['name'], 'model': case['model'], 'config': config_json,
        'generation_config': case['generation_config'],
        'options': {camel(k): v for k, v in case['opts'].items()},
        'sources': case['sources'], 'decoder_input_ids': case['decoder_input_ids'],
        'resolved': resolved,
        'sequences': out.sequences.tolist(),
        'sequences_scores': None if scores is None else [float(x) for x in scores.float()],
    }


# ---- torch_f32.js: topk, log_softmax, softmax, warpers on LCG rows ------------------------------------------------

def lcg_ints(seed, n, m, neg_inf_every=0, nan_at=()):
    """Integers (x >> 16) % m from x = (x * 1103515245 + 12345) mod 2^31; -inf where the draw % every == 0."""
    x, out = seed, []
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        v = float((x >> 16) % m)
        if neg_inf_every and (x >> 8) % neg_inf_every == 0:
            v = float('-inf')
        if i in nan_at:
            v = float('nan')
        out.append(v)
    return out


def lcg_floats(seed, n, scale):
    """float32(((x >> 8) / 2^23 - 0.5) * scale): the same doubles in JS, then rounded to float32."""
    x, out = seed, []
    for _ in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out.append(float(np.float32(((x >> 8) / 8388608 - 0.5) * scale)))
    return out


def short(t):
    """A float32 tensor as nested lists of the shortest decimals that round back to the same float32 (ints as ints)."""
    if t.dim() > 0:
        return [short(x) for x in t]
    v = np.float32(t.item())
    return int(v) if float(v).is_integer() else float(repr(v))


def enc(v):
    """JSON has no infinities or NaN: those as strings."""
    if isinstance(v, list):
        return [enc(x) for x in v]
    if v != v:
        return 'nan'
    if v in (float('inf'), float('-inf')):
        return 'inf' if v > 0 else '-inf'
    return v


def topk_cases():
    out = []
    seed = 1
    for n in (5, 10, 17, 63, 64, 65, 100, 128, 500, 640, 641, 1000, 5000):
        for k in (1, 2, 3, 8, 10, 15, 16, 17, 20, 40):
            if k > n:
                continue
            for m, every in ((2, 0), (3, 5), (10, 0)):
                seed += 1
                nan_at = (3, n // 2) if seed % 5 == 0 else ()
                row = lcg_ints(seed, n, m, every, nan_at)
                idx = torch.topk(torch.tensor(row, dtype=torch.float32)[None], k, dim=1, largest=True,
                                 sorted=True).indices[0].tolist()
                out.append({'seed': seed, 'n': n, 'k': k, 'm': m, 'every': every, 'nan_at': list(nan_at),
                            'indices': idx})
    return out


def softmax_cases():
    out = []
    seed = 1000
    for n in (1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 1000, 32000):
        for scale in (3.0, 20.0):
            seed += 1
            row = lcg_floats(seed, n, scale)
            if n > 20:
                for i in range(0, n, 7):
                    row[i] = float('-inf')
            x = torch.tensor(row, dtype=torch.float32)[None]
            am = int(torch.argmax(x))
            ls = torch.log_softmax(x, dim=-1)[0]
            logsum = -float(ls[am])
            mx = x.max()
            assert torch.equal(ls, (x[0] - mx) - torch.tensor(logsum, dtype=torch.float32)), 'log_softmax shape'
            sm = torch.softmax(x, dim=-1)[0]
            inv = float(sm[am])
            assert torch.equal(sm, torch.exp(x[0] - mx) * torch.tensor(inv, dtype=torch.float32)), 'softmax shape'
            out.append({'seed': seed, 'n': n, 'scale': scale, 'logsum': logsum, 'inv': inv})
    return out


def warper_cases():
    out = []
    seed = 5000
    for n, scale in ((50, 6.0), (50, 1.0), (300, 10.0)):
        for kind, arg in (('temperature', 0.7), ('temperature', 1.3), ('top_k', 5), ('top_k', 1), ('top_p', 0.8),
                          ('top_p', 0.3), ('top_p', 0.95)):
            seed += 1
            row = lcg_floats(seed, n, scale)
            x = torch.tensor(row, dtype=torch.float32)[None]
            w = {'temperature': TemperatureLogitsWarper, 'top_k': TopKLogitsWarper, 'top_p': TopPLogitsWarper}[kind]
            y = w(arg)(None, x.clone())[0]
            case = {'seed': seed, 'n': n, 'scale': scale, 'kind': kind, 'arg': arg}
            if kind == 'temperature':
                case['out'] = short(y)
            else:  # the ids set to -inf; the others are left as they were
                assert torch.equal(y[y != float('-inf')], x[0][y != float('-inf')])
                case['removed'] = torch.nonzero(y == float('-inf'))[:, 0].tolist()
            out.append(case)
    return out


def main():
    assert torch.__config__.show().find('CPU capability usage: AVX2') >= 0, 'goldens are made on the AVX2 kernels'
    models = make_models()
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_case(c, models, tmp) for c in cases()]
    doc = {
        'transformers': transformers.__version__, 'torch': torch.__version__.split('+')[0],
        'max_positions': MAX_POS,
        'models': {name: {'V': m['V'], 'R': m['R'], 'A': short(m['A']), 'B': short(m['B']), 'C': short(m['C'])}
                   for name, m in models.items()},
        'cases': results,
        'topk': topk_cases(),
        'softmax': softmax_cases(),
        'warpers': warper_cases(),
    }
    text = json.dumps(doc, separators=(',', ':'), allow_nan=False)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, 'w') as f:
        f.write(text + '\n')
    print(f'{OUT}: {len(results)} cases, {len(doc["topk"])} topk rows, {len(text)} bytes')


if __name__ == '__main__':
    main()
