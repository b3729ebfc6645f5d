#!/usr/bin/python3
"""Goldens of the encoder-decoder translation families (Marian, BART, mBART, M2M100/NLLB, T5/mT5):
tests/data/goldens/seq2seq/, made by Hugging Face transformers v4.40.2 itself.

Run: /usr/bin/python3 tests/data/make_seq2seq_goldens.py (Debian's torch 1.13; transformers through tools/hf_env).
Deterministic: fixed seeds, one thread; two runs write identical bytes. This docstring is also written out as
tests/data/goldens/seq2seq/README.md. `--search NAME [FIRST:]END SCALES` (e.g. --search t5 0:30 1,1.5,2) prints
how each seed and eos_scale behave.

FOLDERS: small random checkpoints saved by transformers (save_pretrained(..., safe_serialization=True), F32):
config.json, generation_config.json (all but marian_old), model.safetensors. d_model 16, 4 heads (head dim 4),
2 encoder and 3 decoder layers, encoder_ffn_dim 32 / decoder_ffn_dim 24 (T5: d_ff 32 in both stacks), vocabulary 96,
max_position_embeddings 64. d_model is 16 and the FFNs small so that the directory stays under 1.4 MB: with d_model 32
and FFNs 48 / 40 the ten safetensors files alone would take about 2 MB.
Every parameter and final_logits_bias is drawn from N(0, 0.3), LayerNorm / T5LayerNorm weights 1 + N(0, 0.3), then
the eos row of the output projection (the shared embedding's row where the head is tied) is multiplied by the
folder's eos_scale (1.0 = untouched). Random models rarely stop: seeds and eos_scale were chosen with --search so that
greedy outputs differ between the three sources, some reach eos before max_length, and every margin below clears
MIN_MARGIN at least threefold (seed, eos_scale per folder in FOLDERS and in expected.json). The sinusoidal tables
(marian, m2m100) are not drawn: transformers computes them.
  marian           MarianMTModel as opus-mt: shared vocabulary (model.shared, tied lm_head), swish, scale_embedding
                   (x sqrt(16) = 4), post-norm, no layernorm_embedding, sinusoidal positions (not in the file),
                   final_logits_bias; pad 95 = decoder_start, eos 0 = bos. Generation parameters both in config.json
                   (as opus-mt's) and in generation_config.json: bad_words_ids [[95]], forced_eos_token_id 0,
                   num_beams 4, max_length 24
  marian_separate  share_encoder_decoder_embeddings false, vocab_size 96, decoder_vocab_size 80, pad 79 = decoder_start,
                   tie_word_embeddings false (tied, with two vocabulary sizes, transformers itself fails: the head
                   would be 96 wide and final_logits_bias 80). transformers builds BOTH embeddings as copies of a
                   (vocab_size, d) table: model.decoder.embed_tokens.weight is (96, 16) while lm_head.weight is
                   (80, 16) and final_logits_bias (1, 80); logits are 80 wide
  marian_tied_dec  share_encoder_decoder_embeddings false, both vocabularies 96, tie_word_embeddings true (opus-mt-tc
                   models with separate vocabularies): the head is the DECODER's embedding; the file has
                   model.encoder.embed_tokens.weight and model.decoder.embed_tokens.weight, no model.shared, no lm_head.
                   Forward cases only (to save space: its generation path is marian's)
  marian_old       marian's weights written as older saves are: every tied copy present (model.shared.weight,
                   model.encoder.embed_tokens.weight, model.decoder.embed_tokens.weight, lm_head.weight) and the
                   sinusoidal tables model.{encoder,decoder}.embed_positions.weight (64, 16) (transformers' own float32
                   values, which it loads from the file); no generation_config.json, so transformers builds the
                   generation config from config.json. Its forward and generate goldens equal marian's (checked)
  bart             BartForConditionalGeneration: post-norm, gelu, layernorm_embedding in both stacks, learned positions
                   (66, 16) = max_position_embeddings + offset 2, scale_embedding false, final_logits_bias; pad 1,
                   bos 0, eos 2 = decoder_start; generation config as bart-large-cnn's: forced_bos 0, forced_eos 2,
                   num_beams 4, length_penalty 2.0, early_stopping true, no_repeat_ngram_size 3, min_length 4,
                   max_length 24
  mbart            MBartForConditionalGeneration: pre-norm, layernorm_embedding and a final layer_norm in both stacks,
                   scale_embedding true, learned positions offset 2, gelu, final_logits_bias; decoder_start = eos 2
                   (mBART-50); sources [90 (source language), ..., 2]; generation config: forced_bos_token_id 92 (the
                   target language), forced_eos 2, num_beams 4, early_stopping true, max_length 24
  m2m100           M2M100ForConditionalGeneration: sinusoidal positions from the ids, pre-norm, relu, scale_embedding
                   true, a final layer_norm in both stacks, no layernorm_embedding, no final_logits_bias; sources
                   [90, ..., 2]; generation config as NLLB's (decoder_start = eos 2, pad 1, bos 0, greedy) plus
                   forced_bos_token_id 93 and max_length 24
  t5               T5ForConditionalGeneration v1.0: relu, tied head (shared.weight only in the file), d_kv 6 so
                   num_heads * d_kv = 24 != d_model 16, relative_attention_num_buckets 8, max_distance 20, d_ff 32 in
                   both stacks; pad 0 = decoder_start, eos 1; generation config: only those ids (max_length 20 default)
  t5_gated         T5 v1.1 / Flan-T5: feed_forward_proj "gated-gelu", tie_word_embeddings false (lm_head.weight in the
                   file). Its config.json is cut to what google/t5-v1_1-* configs hold: no dense_act_fn / is_gated_act
                   (transformers derives them from feed_forward_proj: "gated-gelu" means gelu_new, the tanh form)
  mt5              MT5ForConditionalGeneration: gated-gelu, untied, config.json as transformers writes it (with
                   "dense_act_fn": "gelu_new", "is_gated_act": true, which win over feed_forward_proj when present)

CASES and FORMAT: expected.json = {transformers, torch, atol, rtol, min_margin, generation_defaults (GenerationConfig()
as a dict), folders: [...]}; one entry per folder: {folder, class, model_type, seed, eos_scale, n_tensors (in
model.safetensors), keys ({name: shape} of its tensors outside the layers / blocks), forward: [...],
generate_inputs, generate: [...]}. marian_old has no forward / generate_inputs / generate but "same_goldens_as":
"marian": run marian's cases on it. marian_tied_dec has no generate_inputs / generate. The file holds one case per
line.
  forward case {name, input_ids (B, S), attention_mask (B, S), decoder_input_ids (B, T), decoder_lengths (B),
    encoder_shape [B, S, d], encoder_last_hidden_state (flat, row-major), logits_shape [B, T, V], logits (flat)}:
    "padded": B 3, source lengths 7, 12, 3 right-padded with the pad id (mask 0), decoder rows of 9, 6, 4 tokens
      starting with decoder_start_token_id, right-padded with the pad id to T 9;
    "long" (t5 only): B 1, a source of 40 tokens and a decoder row of 35: relative distances past max_distance 20.
    The decoder runs WITHOUT a decoder_attention_mask (causal only, as transformers' teacher forcing does), so rows
    below decoder_lengths[b] never see the padding; rows past it are recorded as transformers computes them too. Every
    source position is recorded, pad positions included (they attend with the source mask like any other row; m2m100
    gives them the zero position vector). Tolerance |engine - ref| <= atol + rtol * |ref|, atol = rtol = 1e-4
    (values stored to 5 decimals).
  generate_inputs {sources: three source rows (6, 10 and 4 tokens, as the tokenizers lay them out: marian [..., eos],
    bart [bos, ..., eos], mbart / m2m100 [language 90, ..., eos], t5 [..., eos]), input_ids (3, 10) and
    attention_mask (3, 10): the sources right-padded with the pad id}. Every case runs each source alone (input_ids
    [source], attention_mask all ones) and then the padded batch.
  generate case {name, kwargs, generation_config, single: [3 runs], batch: run, margins}; run = {sequences,
    sequences_scores}.
    kwargs: what was passed to generate(input_ids, attention_mask=..., return_dict_in_generate=True,
      output_scores=True, **kwargs), under transformers' names.
    generation_config: the GenerationConfig that generate() actually ran with, as to_diff_dict() (keys not listed
      there have their generation_defaults value): the folder's generation_config.json (or config.json for
      marian_old) updated with kwargs, with max_length already rewritten to max_new_tokens + 1 where max_new_tokens
      is set, and return_dict_in_generate / output_scores true.
    sequences (rows * num_return_sequences, L): including the decoder start token, as generate() returns them (rows
      done early filled with pad_token_id; beam rows grouped per source, best first). sequences_scores: beam search
      only (null for greedy), float32 as transformers keeps them (7 significant digits here): the sum of processed
      log-probs / generated_len ** length_penalty (generated_len counts the eos, not the start token). Each batch
      row equals its single run up to trailing pads (checked).
    The cases (all folders): greedy (num_beams 1, do_sample false); beam4 (the generation config's own
      length_penalty / early_stopping); beam4 with length_penalty 1.0 / 0.6 / 2.0; early_stopping true / false /
      "never" (and "never" with length_penalty 0.6); num_return_sequences 2; no_repeat_ngram_size 2 (greedy, beam4);
      repetition_penalty 1.3 (greedy, beam4); min_length 8 (greedy, beam4); max_new_tokens 12; max_length 10;
      max_new_tokens 12 with max_length 10 (beam4: max_new_tokens wins); forced_eos_token_id = eos with max_length 10
      (greedy, beam4); forced_bos_token_id: where the generation config has one, None (off, greedy) and another
      language (greedy, beam4), elsewhere a token id (greedy); bad_words_ids (greedy, beam4): the generation
      config's list plus [the first generated token of the longest greedy output] and a pair [a, b] that a greedy
      output holds.
    margins (float64 reference, the smallest over all runs of the case), so that a test can trust the sequences:
      greedy: top-1 minus top-2 processed score of every unfinished row at every step;
      select (beams): at every step the gap, in summed log-prob, between the last candidate kept and the next one of
        transformers' sorted 2 * num_beams candidates, and across rank num_beams where an eos sits on either side
        (an eos at rank >= num_beams, counting from 0, is skipped);
      final (beams): relative gap between consecutive returned hypotheses and the next-best kept one;
      done (beams, early_stopping false / "never"): relative gap |worst_score - best attainable| of the stopping test.
        Exact ties there are structural, not margins: an eos candidate that is the best candidate and becomes the
        worst kept hypothesis gives worst_score == best attainable (the same division): "done", in float32 as in
        float64; an engine must compute both the same way and compare with >=.
      float32_diff (beams): the largest |sequences_scores float64 - float32| (transformers' own float32 model).
      All at least MIN_MARGIN (greedy / select 1e-4, final / done 1e-5 relative). Every case was also run with the
      float32 model: same sequences, sequences_scores within 1e-4.

TRANSFORMERS' BEHAVIOUR an engine must replicate (v4.40.2, read from its source and checked by these goldens):
  positions   marian: sinusoidal, arange(past, past + len) (no offset, pads not special), table built in float64 numpy
              and rounded to float32: column j < d/2 is sin(pos / 10000**(2j/d)), column d/2 + j the cos of the same
              angle (not interleaved). m2m100: position = padding_idx + cumsum(id != pad) for non-pad ids and
              padding_idx (a zero row) for pad ids; while decoding with a cache the new token's position is
              padding_idx + 1 + past_len (the cumsum sees only the new token); frequencies exp(-i * ln(10000) /
              (d/2 - 1)), sin half then cos half, computed in float32. bart / mbart: learned table, row pos + 2.
              t5: relative buckets (bidirectional in the encoder, causal in the decoder), the bias from block 0 of each
              stack reused in every block, none in cross-attention.
  scaling     scale_embedding multiplies token embeddings by sqrt(d_model) (marian, mbart, m2m100); bart does not.
              BART-likes scale q by head_dim**-0.5 (after the bias); T5 does not scale scores at all. T5's tied head
              multiplies the decoder output by d_model**-0.5 before the head (untied heads: no rescale).
  norms       marian / bart: post-norm; mbart / m2m100: pre-norm with a final layer_norm; layernorm_embedding in
              bart and mbart. T5LayerNorm: x * rsqrt(mean(x^2) + 1e-6) * weight, no mean, no bias.
  activations swish = silu; gelu = erf form; gated-gelu = gelu_new (tanh form) * the linear wi_1 branch (wi_0 takes
              the activation).
  logits      lm_head (+ final_logits_bias where present: marian, bart, mbart).
  masks       padded source keys get finfo(dtype).min added (encoder self-attention and cross-attention).
  generate    the encoder runs once; decoding starts from decoder_start_token_id (length 1). Processors, in this
              order, on log-softmax(logits) for beam search and on raw logits for greedy: repetition_penalty (score
              < 0 ? score * p : score / p for every id in the decoder ids so far, decoder start included),
              no_repeat_ngram_size (n-grams over the decoder ids, start included), bad_words_ids (single ids always
              -inf, longer ones when the ids end with their prefix; a word equal to [eos] is dropped), min_length (eos
              -inf while the length including the start token < min_length), forced_bos_token_id (at length 1 every
              other id -inf, the forced one 0), forced_eos_token_id (at length max_length - 1, the same for eos).
              Greedy: argmax; done rows are filled with pad_token_id; stop at max_length or when every row has
              produced eos. Beam search: beam scores start 0 for beam 0 and -1e9 for the others; candidates =
              topk(processed log-probs + beam score, 2 * num_beams) over (num_beams * V), sorted; walking them in
              order, an eos candidate at rank < num_beams becomes a hypothesis (stored without its eos) scored sum /
              n ** length_penalty (n = tokens generated, this eos included), an eos at rank >= num_beams is skipped,
              other candidates fill the next beams until there are num_beams. A source is done when it holds
              num_beams hypotheses and: early_stopping true: at once; false: worst kept score >= best / n **
              length_penalty (best = the top candidate's sum, n as above); "never": the same with n = max_length - 1
              when length_penalty > 0. At max_length the open beams of sources not done are added as hypotheses (n =
              their length - 1). The best num_return_sequences per source are returned, best first; hypotheses that
              ended with eos get it back, rows are padded with pad_token_id to the longest.
              max_new_tokens sets max_length = max_new_tokens + 1 and wins over max_length. A kwarg replaces the
              generation config's value (bad_words_ids included); kwargs None switch a processor off.
  configs     transformers reads generation_config.json when present; otherwise (marian_old) the generation
              fields of config.json. T5: dense_act_fn / is_gated_act in config.json win over feed_forward_proj.
"""
import copy
import json
import os
import re
import shutil
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import transformers  # noqa: E402
from transformers import GenerationConfig  # noqa: E402
from transformers.generation import beam_search as hf_beam  # noqa: E402
from transformers.generation import utils as hf_gen  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402  (tools/hf_env's stand-in)

SEED = 20261206
OUT = os.path.join(ROOT, 'tests', 'data', 'goldens', 'seq2seq')
TOL = (1e-4, 1e-4)
# Every recorded choice is at least this far from flipping: greedy / select in logit or summed log-prob units, final /
# done relative to the scores compared. float32 moves sequences_scores by ~1e-6 here (float32_diff in the margins).
MIN_MARGIN = {'greedy': 1e-4, 'select': 1e-4, 'final': 1e-5, 'done': 1e-5}

torch.set_num_threads(1)

D = 16
BART_LIKE = dict(vocab_size=96, d_model=D, encoder_layers=2, decoder_layers=3, encoder_attention_heads=4,
                 decoder_attention_heads=4, encoder_ffn_dim=32, decoder_ffn_dim=24, max_position_embeddings=64)
T5_LIKE = dict(vocab_size=96, d_model=D, d_kv=6, d_ff=32, num_layers=2, num_decoder_layers=3, num_heads=4,
               relative_attention_num_buckets=8, relative_attention_max_distance=20, pad_token_id=0, eos_token_id=1,
               decoder_start_token_id=0)
T5_GEN = dict(decoder_start_token_id=0, eos_token_id=1, pad_token_id=0)
MARIAN_GEN = dict(bos_token_id=0, eos_token_id=0, forced_eos_token_id=0, max_length=24, num_beams=4)

# name, class, config, generation config, source prefix / suffix, content id range [lo, hi), languages (forced_bos,
# another), seed and eos_scale (chosen with --search, see the docstring), config_drop (keys removed from config.json),
# long (the long forward case), forward_only (no generate cases); same_as: marian_old, written from marian's weights
FOLDERS = [
    dict(name='marian', cls='MarianMTModel',
         config=dict(BART_LIKE, activation_function='swish', scale_embedding=True, pad_token_id=95,
                     decoder_start_token_id=95, bad_words_ids=[[95]], **MARIAN_GEN),
         gen=dict(MARIAN_GEN, pad_token_id=95, decoder_start_token_id=95, bad_words_ids=[[95]]),
         prefix=[], suffix=[0], ids=(3, 95), seed=3, eos_scale=3.0),
    dict(name='marian_separate', cls='MarianMTModel',
         config=dict(BART_LIKE, activation_function='swish', scale_embedding=True, pad_token_id=79,
                     decoder_start_token_id=79, bad_words_ids=[[79]], share_encoder_decoder_embeddings=False,
                     decoder_vocab_size=80, tie_word_embeddings=False, **MARIAN_GEN),
         gen=dict(MARIAN_GEN, pad_token_id=79, decoder_start_token_id=79, bad_words_ids=[[79]]),
         prefix=[], suffix=[0], ids=(3, 79), seed=19, eos_scale=3.0),
    dict(name='marian_tied_dec', cls='MarianMTModel',
         config=dict(BART_LIKE, activation_function='swish', scale_embedding=True, pad_token_id=95,
                     decoder_start_token_id=95, bad_words_ids=[[95]], share_encoder_decoder_embeddings=False,
                     **MARIAN_GEN),
         gen=dict(MARIAN_GEN, pad_token_id=95, decoder_start_token_id=95, bad_words_ids=[[95]]),
         prefix=[], suffix=[0], ids=(3, 95), seed=27, eos_scale=1.5, forward_only=True),
    dict(name='marian_old', same_as='marian'),
    dict(name='bart', cls='BartForConditionalGeneration',
         config=dict(BART_LIKE, activation_function='gelu', scale_embedding=False, pad_token_id=1, bos_token_id=0,
                     eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2),
         gen=dict(bos_token_id=0, eos_token_id=2, pad_token_id=1, decoder_start_token_id=2, forced_bos_token_id=0,
                  forced_eos_token_id=2, early_stopping=True, length_penalty=2.0, max_length=24, min_length=4,
                  no_repeat_ngram_size=3, num_beams=4),
         prefix=[0], suffix=[2], ids=(3, 90), seed=2, eos_scale=1.5),
    dict(name='mbart', cls='MBartForConditionalGeneration',
         config=dict(BART_LIKE, activation_function='gelu', scale_embedding=True, pad_token_id=1, bos_token_id=0,
                     eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2),
         gen=dict(bos_token_id=0, eos_token_id=2, pad_token_id=1, decoder_start_token_id=2, forced_bos_token_id=92,
                  forced_eos_token_id=2, early_stopping=True, max_length=24, num_beams=4),
         prefix=[90], suffix=[2], ids=(3, 90), lang=(92, 94), seed=7, eos_scale=2.0),
    dict(name='m2m100', cls='M2M100ForConditionalGeneration',
         config=dict(BART_LIKE, activation_function='relu', scale_embedding=True, pad_token_id=1, bos_token_id=0,
                     eos_token_id=2, decoder_start_token_id=2),
         gen=dict(bos_token_id=0, eos_token_id=2, pad_token_id=1, decoder_start_token_id=2, forced_bos_token_id=93,
                  max_length=24),
         prefix=[90], suffix=[2], ids=(3, 90), lang=(93, 91), seed=9, eos_scale=3.0),
    dict(name='t5', cls='T5ForConditionalGeneration', config=dict(T5_LIKE, feed_forward_proj='relu'),
         gen=T5_GEN, prefix=[], suffix=[1], ids=(2, 96), seed=43, eos_scale=2.0, long=True),
    dict(name='t5_gated', cls='T5ForConditionalGeneration',
         config=dict(T5_LIKE, feed_forward_proj='gated-gelu', tie_word_embeddings=False),
         gen=T5_GEN, prefix=[], suffix=[1], ids=(2, 96), seed=7, eos_scale=1.5,
         config_drop=['dense_act_fn', 'is_gated_act']),
    dict(name='mt5', cls='MT5ForConditionalGeneration',
         config=dict(T5_LIKE, feed_forward_proj='gated-gelu', tie_word_embeddings=False),
         gen=T5_GEN, prefix=[], suffix=[1], ids=(2, 96), seed=7, eos_scale=1.5),
]
CONFIGS = {'MarianMTModel': 'MarianConfig', 'BartForConditionalGeneration': 'BartConfig',
           'MBartForConditionalGeneration': 'MBartConfig', 'M2M100ForConditionalGeneration': 'M2M100Config',
           'T5ForConditionalGeneration': 'T5Config', 'MT5ForConditionalGeneration': 'MT5Config'}


def generate_cases(spec, gen):
    """(name, kwargs) of every generate case of a folder; bad_words needs the greedy output (bad_words_for)."""
    eos = gen['eos_token_id']
    cases = [
        ('greedy', dict(num_beams=1, do_sample=False)),
        ('beam4', dict(num_beams=4, do_sample=False)),
        ('beam4_lp1.0', dict(num_beams=4, length_penalty=1.0)),
        ('beam4_lp0.6', dict(num_beams=4, length_penalty=0.6)),
        ('beam4_lp2.0', dict(num_beams=4, length_penalty=2.0)),
        ('beam4_es_true', dict(num_beams=4, early_stopping=True)),
        ('beam4_es_false', dict(num_beams=4, early_stopping=False)),
        ('beam4_es_never', dict(num_beams=4, early_stopping='never')),
        ('beam4_es_never_lp0.6', dict(num_beams=4, early_stopping='never', length_penalty=0.6)),
        ('beam4_nrs2', dict(num_beams=4, num_return_sequences=2)),
        ('greedy_ngram2', dict(num_beams=1, no_repeat_ngram_size=2)),
        ('beam4_ngram2', dict(num_beams=4, no_repeat_ngram_size=2)),
        ('greedy_rep1.3', dict(num_beams=1, repetition_penalty=1.3)),
        ('beam4_rep1.3', dict(num_beams=4, repetition_penalty=1.3)),
        ('greedy_min8', dict(num_beams=1, min_length=8)),
        ('beam4_min8', dict(num_beams=4, min_length=8)),
        ('greedy_maxnew12', dict(num_beams=1, max_new_tokens=12)),
        ('greedy_maxlen10', dict(num_beams=1, max_length=10)),
        ('beam4_maxnew12_maxlen10', dict(num_beams=4, max_new_tokens=12, max_length=10)),
        ('greedy_forced_eos', dict(num_beams=1, forced_eos_token_id=eos, max_length=10)),
        ('beam4_forced_eos', dict(num_beams=4, forced_eos_token_id=eos, max_length=10)),
    ]
    if 'forced_bos_token_id' in gen:
        other = spec['lang'][1] if 'lang' in spec else gen['forced_bos_token_id'] + 1
        cases += [('greedy_no_forced_bos', dict(num_beams=1, forced_bos_token_id=None)),
                  ('greedy_forced_bos_other', dict(num_beams=1, forced_bos_token_id=other)),
                  ('beam4_forced_bos_other', dict(num_beams=4, forced_bos_token_id=other))]
    else:
        cases += [('greedy_forced_bos', dict(num_beams=1, forced_bos_token_id=spec['ids'][0] + 5))]
    cases += [('greedy_bad_words', None), ('beam4_bad_words', None)]
    return cases


def randomise(model, seed):
    """Every parameter (and final_logits_bias) from N(0, 0.3); norm weights 1 + N(0, 0.3); sinusoids untouched."""
    g = torch.Generator().manual_seed(seed)
    tensors = dict(model.named_parameters())
    tensors.update({k: v for k, v in model.named_buffers() if k == 'final_logits_bias'})
    with torch.no_grad():
        for name in sorted(tensors):
            p = tensors[name]
            if isinstance(model, transformers.MarianMTModel) and 'embed_positions' in name:
                continue  # MarianSinusoidalPositionalEmbedding: not saved, computed at load
            noise = torch.randn(p.shape, generator=g, dtype=torch.float64).float() * 0.3
            parts = name.split('.')
            if len(parts) > 1 and 'norm' in parts[-2] and parts[-1] == 'weight':
                p.copy_(1.0 + noise)
            else:
                p.copy_(noise)
    return model


# ---------------------------------------------------------------------------------------------------------------------
# Probes: the margins of beam search, taken from inside transformers' BeamSearchScorer without changing it.
PROBE = None


def _process(self, input_ids, next_scores, next_tokens, next_indices, pad_token_id=None, eos_token_id=None, **kw):
    if PROBE is not None:
        eos = [eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id or [])
        k = self.group_size
        for b in range(next_scores.shape[0]):
            if self._done[b]:
                continue
            s = next_scores[b].tolist()
            t = next_tokens[b].tolist()
            kept, last = 0, None
            for rank, tok in enumerate(t):
                if tok in eos:
                    if rank >= k:
                        continue
                else:
                    kept += 1
                if kept == k:
                    last = rank
                    break
            gaps = []
            if t[k - 1] in eos or t[k] in eos:  # an eos on either side of rank num_beams: accepted or not
                gaps.append(s[k - 1] - s[k])
            if last is not None and last + 1 < len(s):  # the last candidate kept against the next one
                gaps.append(s[last] - s[last + 1])
            PROBE['select'] = min([PROBE['select']] + [g for g in gaps if g == g and abs(g) != float('inf')])
    return _orig_process(self, input_ids, next_scores, next_tokens, next_indices, pad_token_id=pad_token_id,
                         eos_token_id=eos_token_id, **kw)


def _finalize(self, *args, **kw):
    out = _orig_finalize(self, *args, **kw)
    if PROBE is not None:
        for hyp in self._beam_hyps:
            scores = sorted((s for s, _, _ in hyp.beams), reverse=True)
            n = self.num_beam_hyps_to_keep  # the returned ones, in their order, and the next one
            for a, b in zip(scores[:n], scores[1:n + 1]):
                PROBE['final'] = min(PROBE['final'], (a - b) / max(abs(a), abs(b)))
    return out


def _is_done(self, best_sum_logprobs, cur_len, decoder_prompt_len=0):
    done = _orig_is_done(self, best_sum_logprobs, cur_len, decoder_prompt_len)
    if PROBE is not None and len(self) >= self.num_beams and self.early_stopping is not True:
        if self.early_stopping is False or self.length_penalty <= 0.0:
            best = best_sum_logprobs / (cur_len - decoder_prompt_len) ** self.length_penalty
        else:
            best = best_sum_logprobs / (self.max_length - decoder_prompt_len) ** self.length_penalty
        # An eos candidate that is the best one and becomes the worst hypothesis gives worst_score == best exactly (the
        # same division): done, in float32 as in float64. Not a margin.
        if self.worst_score != best:
            PROBE['done'] = min(PROBE['done'], abs(self.worst_score - best) / max(abs(self.worst_score), abs(best)))
    return done


def _logits_processor(self, generation_config, *args, **kw):
    if PROBE is not None:
        d = generation_config.to_diff_dict()
        d.pop('transformers_version', None)
        d.pop('_from_model_config', None)  # marian_old: built from config.json (no generation_config.json)
        PROBE['config'] = d
    return _orig_logits_processor(self, generation_config, *args, **kw)


_orig_process = hf_beam.BeamSearchScorer.process
_orig_finalize = hf_beam.BeamSearchScorer.finalize
_orig_is_done = hf_beam.BeamHypotheses.is_done
_orig_logits_processor = hf_gen.GenerationMixin._get_logits_processor
hf_beam.BeamSearchScorer.process = _process
hf_beam.BeamSearchScorer.finalize = _finalize
hf_beam.BeamHypotheses.is_done = _is_done
hf_gen.GenerationMixin._get_logits_processor = _logits_processor


# ---------------------------------------------------------------------------------------------------------------------
def r7(v):
    """7 significant digits (margins, sequences_scores)."""
    return float('%.7g' % v)


def flat(t):
    """Forward tensors to 5 decimals: an error of at most 5e-6, a twentieth of atol, in few bytes."""
    return [round(v, 5) + 0.0 for v in t.detach().reshape(-1).tolist()]  # + 0.0: no -0.0


def pad_rows(rows, pad):
    """(input_ids, attention_mask) of rows right-padded with pad."""
    n = max(len(r) for r in rows)
    ids = torch.tensor([r + [pad] * (n - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (n - len(r)) for r in rows])
    return ids, mask


def sources(spec, lengths, g):
    """Source rows of the given total lengths: prefix + random content ids + suffix (eos), as tokenizers make them."""
    lo, hi = spec['ids']
    rows = []
    for n in lengths:
        k = n - len(spec['prefix']) - len(spec['suffix'])
        rows.append(spec['prefix'] + torch.randint(lo, hi, (k,), generator=g).tolist() + spec['suffix'])
    return rows


def forward_case(name, m64, spec, src_lengths, dec_lengths, g):
    """Teacher-forced forward in float64: right-padded sources and decoder rows, no decoder_attention_mask."""
    cfg = m64.config
    pad, start = cfg.pad_token_id, cfg.decoder_start_token_id
    src = sources(spec, src_lengths, g)
    lo, hi = spec['ids']
    hi = min(hi, getattr(cfg, 'decoder_vocab_size', None) or cfg.vocab_size)
    dec = [[start] + torch.randint(lo, hi, (n - 1,), generator=g).tolist() for n in dec_lengths]
    ids, mask = pad_rows(src, pad)
    dids, _ = pad_rows(dec, pad)
    torch.set_default_dtype(torch.float64)
    with torch.no_grad():
        out = m64(input_ids=ids, attention_mask=mask, decoder_input_ids=dids)
    torch.set_default_dtype(torch.float32)
    enc, logits = out.encoder_last_hidden_state, out.logits
    return {'name': name, 'input_ids': ids.tolist(), 'attention_mask': mask.tolist(),
            'decoder_input_ids': dids.tolist(), 'decoder_lengths': list(dec_lengths),
            'encoder_shape': list(enc.shape), 'encoder_last_hidden_state': flat(enc),
            'logits_shape': list(logits.shape), 'logits': flat(logits)}


def run_generate(model, ids, mask, kwargs, dtype):
    """generate() with the probes on: (sequences, sequences_scores or None, the probe's margins and config)."""
    global PROBE
    probe = {'select': float('inf'), 'final': float('inf'), 'done': float('inf'), 'config': None}
    PROBE = probe
    torch.set_default_dtype(dtype)
    try:
        with torch.no_grad():
            out = model.generate(ids, attention_mask=mask, return_dict_in_generate=True, output_scores=True, **kwargs)
    finally:
        torch.set_default_dtype(torch.float32)
        PROBE = None
    seq = out.sequences
    scores = getattr(out, 'sequences_scores', None)
    if scores is None:  # greedy: top-1 minus top-2 of the processed scores of each unfinished row
        eos = probe['config'].get('eos_token_id')
        eos = [eos] if isinstance(eos, int) else list(eos or [])
        greedy = float('inf')
        for step, s in enumerate(out.scores):
            top = torch.topk(s, 2, dim=-1).values
            for r in range(seq.shape[0]):
                if any(int(t) in eos for t in seq[r, 1:step + 1]):
                    continue
                gap = float(top[r, 0] - top[r, 1])
                if gap == gap and gap != float('inf'):
                    greedy = min(greedy, gap)
        probe['greedy'] = greedy
    return seq, scores, probe


def same_up_to_pads(a, b, pad):
    n = max(len(a), len(b))
    return a + [pad] * (n - len(a)) == b + [pad] * (n - len(b))


def generate_case(name, kwargs, m64, m32, src, pad):
    """One case on each source alone and on the padded batch, float64 (recorded) and float32 (checked)."""
    runs, margins, config = [], {}, None
    inputs = [pad_rows([row], pad) for row in src] + [pad_rows(src, pad)]
    for ids, mask in inputs:
        seq, scores, probe = run_generate(m64, ids, mask, kwargs, torch.float64)
        seq32, scores32, _ = run_generate(m32, ids, mask, kwargs, torch.float32)
        if seq.tolist() != seq32.tolist():
            raise SystemExit(f'{name}: float32 and float64 sequences differ:\n{seq.tolist()}\n{seq32.tolist()}')
        if scores is not None:
            diff = float((scores.double() - scores32.double()).abs().max())
            if diff > 1e-4:
                raise SystemExit(f'{name}: sequences_scores differ: {scores.tolist()} {scores32.tolist()}')
            margins['float32_diff'] = max(margins.get('float32_diff', 0.0), diff)
        if config is not None and probe['config'] != config:
            raise SystemExit(f'{name}: the effective generation config changed between runs')
        config = probe['config']
        for k in ('greedy', 'select', 'final', 'done'):
            if k in probe and probe[k] != float('inf'):
                margins[k] = min(margins.get(k, float('inf')), probe[k])
        runs.append({'sequences': seq.tolist(),
                     'sequences_scores': None if scores is None else [r7(v) for v in scores.float().tolist()]})
    if m64.config.model_type == 'm2m_100':  # a pad id generated mid-sequence would get the zero position row, and
        # transformers gives it different positions with and without a cache: keep the goldens off that path
        eos = config.get('eos_token_id')
        for r in runs:
            for q in r['sequences']:
                body = q[1:q.index(eos, 1)] if eos in q[1:] else q[1:]
                if pad in body:
                    raise SystemExit(f'{name}: m2m100 generated the pad id: {q}')
    nrs = kwargs.get('num_return_sequences', 1)
    for i in range(len(src)):
        for j in range(nrs):
            a, b = runs[i]['sequences'][j], runs[-1]['sequences'][i * nrs + j]
            if not same_up_to_pads(a, b, config.get('pad_token_id', pad)):
                raise SystemExit(f'{name}: batch row {i} differs from its single run: {a} {b}')
    low = {k: v for k, v in margins.items() if k in MIN_MARGIN and v < MIN_MARGIN[k]}
    if low:
        raise SystemExit(f'{name}: margins below MIN_MARGIN: {low}')
    return {'name': name, 'kwargs': kwargs, 'generation_config': config, 'single': runs[:-1], 'batch': runs[-1],
            'margins': {k: r7(v) for k, v in sorted(margins.items())}}


def bad_words_for(gen, greedy_case):
    """bad_words_ids that change greedy outputs: the first generated token of the longest greedy output alone, and a
    pair that a greedy output holds (its second token banned after its first); the generation config's own list
    (marian's [[pad]]) is kept, as a kwarg replaces it."""
    special = {gen['eos_token_id'], gen['pad_token_id'], gen['decoder_start_token_id'], gen.get('forced_bos_token_id')}
    seqs = [r['sequences'][0][1:] for r in greedy_case['single']]
    toks = [t for t in max(seqs, key=len) if t not in special]
    words = [[toks[0]]] if toks else []
    pairs = [[a, b] for q in seqs for a, b in zip(q, q[1:])
             if a not in special and b not in special and [b] not in words]
    words += pairs[:1]
    return (gen.get('bad_words_ids') or []) + words


def keys_of(path):
    return {k: list(v.shape) for k, v in sorted(load_file(os.path.join(path, 'model.safetensors')).items())}


def write_old_marian(src_path, path, model):
    """marian_old: every tied copy and the sinusoidal tables in the file, no generation_config.json."""
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    shutil.copy(os.path.join(src_path, 'config.json'), os.path.join(path, 'config.json'))
    state = {k: v.detach().clone().float().contiguous() for k, v in model.state_dict().items()}
    want = ['model.shared.weight', 'model.encoder.embed_tokens.weight', 'model.decoder.embed_tokens.weight',
            'lm_head.weight', 'model.encoder.embed_positions.weight', 'model.decoder.embed_positions.weight']
    missing = [k for k in want if k not in state]
    if missing:
        raise SystemExit(f'marian_old: state_dict lacks {missing}')
    save_file(state, os.path.join(path, 'model.safetensors'), metadata={'format': 'pt'})


def make_model(spec, seed=None, eos_scale=None):
    """The folder's model in memory: drawn, its eos row scaled, its generation config set."""
    seed = spec['seed'] if seed is None else seed
    eos_scale = spec['eos_scale'] if eos_scale is None else eos_scale
    cfg = getattr(transformers, CONFIGS[spec['cls']])(**spec['config'])
    model = getattr(transformers, spec['cls'])(cfg)
    randomise(model, SEED + 1000 * seed + sum(map(ord, spec['name']))).eval()
    with torch.no_grad():  # the shared embedding's row where the head is tied
        model.get_output_embeddings().weight[spec['gen']['eos_token_id']] *= eos_scale
    model.generation_config = GenerationConfig(**spec['gen'])
    return model


def build(spec):
    path = os.path.join(OUT, spec['name'])
    if os.path.isdir(path):
        shutil.rmtree(path)
    make_model(spec).save_pretrained(path, safe_serialization=True)
    if spec.get('config_drop'):  # as older hub configs: keys transformers derives when they are absent
        with open(os.path.join(path, 'config.json')) as f:
            cfg = json.load(f)
        for k in spec['config_drop']:
            del cfg[k]
        with open(os.path.join(path, 'config.json'), 'w') as f:
            f.write(json.dumps(cfg, indent=2, sort_keys=True) + '\n')  # as transformers writes it
    return path


def goldens(spec, m64, m32):
    """forward and generate cases of a folder's model (m64: float64, m32: float32)."""
    g = torch.Generator().manual_seed(SEED + sum(map(ord, spec.get('base', spec['name']))))
    forward = [forward_case('padded', m64, spec, [7, 12, 3], [9, 6, 4], g)]
    if spec.get('long'):  # relative positions past the buckets' exact range (max_distance 20)
        forward.append(forward_case('long', m64, spec, [40], [35], g))
    pad = m64.config.pad_token_id
    src = sources(spec, [6, 10, 4], g)
    gen = m64.generation_config.to_dict()
    cases = []
    for case_name, kwargs in ([] if spec.get('forward_only') else generate_cases(spec, spec['gen'])):
        if kwargs is None:
            greedy = next(c for c in cases if c['name'] == 'greedy')
            kwargs = dict(num_beams=4 if case_name.startswith('beam') else 1,
                          bad_words_ids=bad_words_for(gen, greedy))
        cases.append(generate_case(case_name, kwargs, m64, m32, src, pad))
    return forward, cases, src


def folder_goldens(spec, path):
    cls = getattr(transformers, spec['cls'])
    m64 = cls.from_pretrained(path).eval().double()
    m32 = cls.from_pretrained(path).eval()
    forward, cases, src = goldens(spec, m64, m32)
    ids, mask = pad_rows(src, m64.config.pad_token_id)
    keys = keys_of(path)
    return {'folder': spec['name'], 'class': spec['cls'], 'model_type': m64.config.model_type, 'seed': spec['seed'],
            'eos_scale': spec['eos_scale'], 'n_tensors': len(keys),
            'keys': {k: v for k, v in keys.items() if '.layers.' not in k and '.block.' not in k},
            'forward': forward,
            **({} if spec.get('forward_only') else {
                'generate_inputs': {'sources': src, 'input_ids': ids.tolist(), 'attention_mask': mask.tolist()},
                'generate': cases})}


def search(name, seeds, scales):
    """Prints, per seed and eos_scale, how lively greedy decoding is and the smallest margin of all cases: the
    FOLDERS table's seed / eos_scale were chosen from this (3 distinct outputs, eos reached before max_length, the
    largest smallest margin)."""
    spec = next(s for s in FOLDERS if s['name'] == name)
    eos = spec['gen']['eos_token_id']
    for seed in seeds:
        for scale in scales:
            m32 = make_model(spec, seed, scale)
            m64 = copy.deepcopy(m32).double()
            g = torch.Generator().manual_seed(SEED + sum(map(ord, name)))
            forward_case('padded', m64, spec, [7, 12, 3], [9, 6, 4], g)
            if spec.get('long'):
                forward_case('long', m64, spec, [40], [35], g)
            outs = []
            for row in sources(spec, [6, 10, 4], g):
                with torch.no_grad():
                    outs.append(m32.generate(torch.tensor([row]), num_beams=1)[0].tolist())
            limit = m32.generation_config.max_length
            ends = [len(o) for o in outs if eos in o[1:-1] or (o[-1] == eos and len(o) < limit)]
            tokens = len(set(sum(outs, [])))
            distinct = len(set(map(tuple, outs)))
            line = f'{name} seed {seed} eos_scale {scale}: distinct {distinct} tokens {tokens} eos at {ends}'
            if distinct == 3 and ends:
                try:
                    _, cases, _ = goldens(spec, m64, m32)
                    low = min((v / MIN_MARGIN[k] for c in cases for k, v in c['margins'].items() if k in MIN_MARGIN),
                              default=float('inf'))
                    ended = sum(1 for c in cases for r in c['single'] for q in r['sequences']
                                if len(q) < c['generation_config'].get('max_length', 20))
                    runs = sum(len(r['sequences']) for c in cases for r in c['single'])
                    line += f' margin/MIN {low:.3g} ended early {ended}/{runs}'
                except SystemExit as e:
                    line += f' FAILS {str(e)[:80]}'
            print(line, flush=True)


README = __doc__.split('\n\n', 1)[1]


def main():
    if sys.argv[1:2] == ['--search']:
        first, _, last = sys.argv[3].rpartition(':')
        return search(sys.argv[2], range(int(first or 0), int(last)), [float(v) for v in sys.argv[4].split(',')])
    os.makedirs(OUT, exist_ok=True)
    folders = []
    by_name = {}
    for spec in FOLDERS:
        if 'same_as' in spec:
            base = by_name[spec['same_as']]
            path = os.path.join(OUT, spec['name'])
            model = getattr(transformers, base['cls']).from_pretrained(os.path.join(OUT, base['name']))
            write_old_marian(os.path.join(OUT, base['name']), path, model)
            spec = dict(base, name=spec['name'], base=base['name'])
            entry = folder_goldens(spec, path)
            ref = next(f for f in folders if f['folder'] == base['name'])
            for k in ('forward', 'generate_inputs', 'generate'):
                if json.dumps(entry.pop(k)) != json.dumps(ref[k]):
                    raise SystemExit(f'{spec["name"]}: {k} differs from {base["name"]}')
            entry['same_goldens_as'] = base['name']
        else:
            path = build(spec)
            entry = folder_goldens(spec, path)
        by_name[spec['name']] = spec
        folders.append(entry)
        worst = min([(v / MIN_MARGIN[k], c['name'], k) for c in entry.get('generate', [])
                     for k, v in c['margins'].items() if k in MIN_MARGIN], default=None)
        print(spec['name'], 'ok; smallest margin / MIN_MARGIN:', worst, file=sys.stderr)
    defaults = GenerationConfig().to_dict()
    defaults.pop('transformers_version', None)
    defaults.pop('_from_model_config', None)
    # One line per case (and per small table): diffs stay readable, the file small.
    lines = {}

    def line(x):
        lines[f'@{len(lines)}@'] = json.dumps(x, separators=(',', ':'))
        return f'@{len(lines) - 1}@'

    for f in folders:
        for k in ('keys', 'generate_inputs'):
            if k in f:
                f[k] = line(f[k])
        for k in ('forward', 'generate'):
            if k in f:
                f[k] = [line(c) for c in f[k]]
    text = json.dumps({'transformers': transformers.__version__, 'torch': torch.__version__, 'atol': TOL[0],
                       'rtol': TOL[1], 'min_margin': line(MIN_MARGIN), 'generation_defaults': line(defaults),
                       'folders': folders}, indent=1)
    text = re.sub(r'"(@\d+@)"', lambda m: lines[m.group(1)], text)
    with open(os.path.join(OUT, 'expected.json'), 'w') as f:
        f.write(text + '\n')
    with open(os.path.join(OUT, 'README.md'), 'w') as f:
        f.write('# seq2seq goldens\n\nMade by tests/data/make_seq2seq_goldens.py; its docstring, repeated here.\n\n')
        f.write('```text\n')
        f.write(README.strip() + '\n```\n')


if __name__ == '__main__':
    main()
