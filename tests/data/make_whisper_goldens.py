#!/usr/bin/python3
"""Goldens of the Whisper family (WhisperForConditionalGeneration, its generate() and the ASR pipeline):
tests/data/goldens/whisper/, made by Hugging Face transformers v4.40.2 itself.

Run: /usr/bin/python3 tests/data/make_whisper_goldens.py (Debian's torch 1.13; transformers through tools/hf_env).
Deterministic: fixed seeds, one thread; two runs write identical bytes. This docstring is also written out as
tests/data/goldens/whisper/README.md. `--search NAME [FIRST:]END EOS_SCALES TS_SCALES` (e.g. --search tiny 0:10 1,2
1,0.5) prints how each seed / eos_scale / ts_scale behaves. `--words [FOLDER...]` writes only words.json / words.bin
(word-level timestamps: make_whisper_word_goldens.py) from the folders as they are.

FOLDERS: tiny random checkpoints saved by transformers (save_pretrained(..., safe_serialization=True), F32):
config.json, generation_config.json, model.safetensors, preprocessor_config.json (WhisperFeatureExtractor's
save_pretrained), and the tokenizer: vocab.json, merges.txt, tokenizer_config.json, special_tokens_map.json,
added_tokens.json as the slow WhisperTokenizer saves them, plus a hub-style tokenizer.json (ByteLevel pre-tokenizer and
decoder, BPE model with the same vocab and merges, every added token with special true except the 1501 timestamps
(special false), TemplateProcessing <|startoftranscript|> <|notimestamps|> $A <|endoftext|>).
tests/data/check_whisper_tokenizers.mjs checks with npm `tokenizers` 0.23.2 (HF's Rust library) that tokenizer.json
gives the slow tokenizer's ids and text on the `tokenizer` texts of every folder.
Vocabulary: the 256 byte symbols in GPT-2's bytes_to_unicode order (ids 0-255, so ' ' = 'Ġ' = 220 as in Whisper),
then the merges of a plain BPE loop over BPE_TEXT (most frequent pair, ties by the pair's strings; it stops when no
pair occurs twice), then <|endoftext|> (in vocab.json, as the hub's), then in Whisper's order <|startoftranscript|>,
the language tokens (transformers' LANGUAGES order: 99, or 100 with <|yue|> for v3), <|translate|>, <|transcribe|>,
<|startoflm|>, <|startofprev|>, <|nocaptions|>, <|notimestamps|>, <|0.00|> ... <|30.00|>. Each folder's expected.json
entry lists the ids (special_ids) and config.vocab_size.
Model: d_model 16, 4 heads, encoder_ffn_dim = decoder_ffn_dim 32, max_source_positions 1500 (so 3000 input frames,
which v4.40 requires), max_target_positions 64, gelu, scale_embedding false. Parameters from N(0, 0.3), LayerNorm
weights 1 + N(0, 0.3); the encoder's embed_positions are transformers' sinusoid (saved in the file, not drawn); then
the eos row of the output projection times eos_scale, plus eos_boost * b / |b|^2 (b = model.decoder.layer_norm.bias:
eos's logit rises by about eos_boost at every step), the timestamp rows times ts_scale (all recorded per folder).
Chosen by trial (the --search mode and a few runs) so that every margin clears MIN_MARGIN: tiny and v3 seed 0 without
boost (their outputs mostly run to max_length 40); en seed 0 with eos_boost 4 (its plain outputs stop on eos at
different lengths; with timestamps it stops right after the first timestamp, so its long-form windows are one
segment each). Without the boost en's long-form had a greedy margin of 1.8e-5; with eos_boost 5 every output ended
at once.
generation_config.json as the hub's openai/whisper-* with this vocabulary's ids: alignment_heads, begin_suppress_tokens
[220, eot], bos = eos = pad = <|endoftext|>, decoder_start <|startoftranscript|>, max_initial_timestamp_index 50,
max_length 40, no_timestamps_token_id, prev_sot_token_id, return_timestamps false, suppress_tokens (some byte ids and
translate / transcribe / startoflm / startofprev / nocaptions, as the hub's list ends), and
  tiny    multilingual (80 mels, 2 + 2 layers): is_multilingual true, lang_to_id (99), task_to_id, forced_decoder_ids
          [[1, null], [2, <|transcribe|>]] (as whisper-tiny's)
  en      English-only (.en): is_multilingual false, forced_decoder_ids [[1, <|notimestamps|>]], no lang_to_id /
          task_to_id (as whisper-tiny.en's), so no language detection and no language / task tokens
  v3      as large-v3: feature_size 128 (preprocessor_config.json, num_mel_bins 128), 100 languages with <|yue|>, so
          every id from <|translate|> on is one higher than tiny's
  distil  2 encoder layers, 1 decoder layer, tie_word_embeddings false: proj_out.weight is in the file (drawn on its
          own); alignment_heads on layer 0

SIGNALS (not stored: tests/data/whisper_signals.mjs makes them bit for bit; each record holds the spec, the number of
samples and the FNV-1a hash of the float32 bytes): tones3 (3 s: tones + quiet noise), noise7 (7 s noise), chirp05
(0.5 s chirp), silence2 (unused by cases so far), long75 (75 s: chirp + noise), long40 (40 s: tones + noise). Features:
WhisperFeatureExtractor's numpy path (attnwasm/audio's twin, docs/speech.md), padded / trimmed to 3000 frames; the
long-form cases use padding='longest', truncation=False, return_attention_mask=True (feature_kwargs in the case).

CASES and FORMAT: expected.json = {transformers, torch, atol, rtol, min_margin, sampling_rate, signals ({name: spec}),
folders: [...]}; one entry per folder: {folder, seed, eos_scale, ts_scale, config (model.config essentials),
parameters (total count, tied weights once), n_tensors, keys ({name: shape} of the tensors outside the layers),
special_ids, tokenizer, forward, detect_language (not en), generate, longform, pipeline (tiny, en)}. One case a line.
A signal record is {name, spec, samples, fnv1a}.
  tokenizer case {text, ids (slow tokenizer, add_special_tokens false), ids_with_special (default: the prefix
    <|startoftranscript|> <|notimestamps|> and <|endoftext|> around), decoded (decode(ids))}.
  forward case {inputs: [2 signals], decoder_input_ids (2, 6): <|startoftranscript|> <|en|> <|transcribe|>
    <|notimestamps|> + 2 text ids (en: <|startoftranscript|> <|notimestamps|> + 4 text ids), encoder_shape [2, 1500,
    16], encoder_rows, encoder_row_values (2, len(rows), 16) flat, encoder_mean (2, 16) over all rows,
    encoder_block_mean (2, 30, 16) (means of blocks of 50 rows), logits_shape [2, 6, V], logit_columns (sorted ids:
    every 17th id, the special ids, each row's top 5), logits (2, 6, len(cols)) flat, logsumexp (2, 6) over all V,
    argmax (2, 6)}. Teacher forcing as transformers' forward (no decoder mask); the float64 model; each batch row equals
    its single run (checked). Values to 5 decimals; |engine - ref| <= atol + rtol |ref|, 1e-4 each.
  detect_language case {inputs: [1 or 2 signals], language_ids (model.detect_language(input_features=...)),
    languages (their tokens), probs (B, number of languages): softmax over the language tokens only of the first
    step's logits (decoder input [<|startoftranscript|>]), in id order, margins.language (top-1 minus top-2 logit)}.
  generate case {name, inputs, kwargs, [feature_kwargs], processors, sequences, [segments], text, [text_from_lists],
    [text_with_timestamps, offsets, asr], margins, [detect_language_calls]} or, where transformers refuses,
    {name, inputs, kwargs, error: {type, message}}.
    kwargs: passed as model.generate(input_features, **kwargs); prompt_ids is a list here (a tensor in the call);
      "attention_mask": true means the feature extractor's attention_mask is passed.
    processors: the LogitsProcessorList generate() ran with, in order (class names).
    sequences: what generate() returns (no return_dict_in_generate), float32 and float64 equal (checked).
    segments (return_segments): per input, [{start, end, tokens}] (start / end: float32 tensors in transformers,
      from the float32 run, stored as their float64 value; the float64 run's agree to 1e-5).
    text: tokenizer.batch_decode(sequences tensor, skip_special_tokens=True); text_from_lists only where decoding the
      rows as lists differs (the prompt strip below).
    text_with_timestamps: decode(row, decode_with_timestamps=True); offsets: decode(row, skip_special_tokens=True,
      output_offsets=True)['offsets'] ([{text, timestamp: [start, end]}]); asr: the ASR pipeline's
      tokenizer._decode_asr([{'tokens': row}], return_timestamps=True, return_language=False, time_precision 0.02) as
      {text, chunks} (where return_timestamps is set or segments are returned).
    margins (float64 run, smallest over all steps): greedy (top-1 minus top-2 processed score of each unfinished row),
      select / final / done (beam search, as make_seq2seq_goldens.py), language (detect_language inside generate),
      timestamp (|logsumexp of timestamp log-probs - max text log-prob| in WhisperTimeStampLogitsProcessor, computed in
      float32 there). All at least MIN_MARGIN.
  Cases (tiny): greedy on each of tones3 / noise7 / chirp05 (language detected); language 'en', 'fr', 'french',
    '<|fr|>', 'French'; task translate (with 'de', and detected); return_timestamps (3 inputs); num_beams 2 and 3, 3 with
    timestamps; prompt_ids (get_prompt_ids('the sea shells')) without and with timestamps; no_repeat_ngram_size 2;
    max_new_tokens 5; batch of 2 (language en; with timestamps; language detected); refusals: language 'xx',
    'klingon', 'yue' (not in lang_to_id), task 'summarize', max_new_tokens 62 (+ the prompt > max_target_positions).
    en: greedy and timestamps on the 3 inputs, beam 2, batch 2, and the refusal of language='en'. v3: greedy on the 3
    inputs, language en, timestamps.
  What these random models say: tiny and v3 run every generate case to max_length 40 (no eos; often a language
    token or one text token repeated), en stops on eos (14-31 tokens; with timestamps at once: [sot, <|t|>, eos]).
    Texts are mostly byte tokens that do not form UTF-8: decoded with errors='replace' (U+FFFD), as the slow
    tokenizer does.
  longform cases: generate cases on the 75 s input (and 75 s + 40 s batched) with feature_kwargs padding='longest':
    tiny: language en with return_segments; the same without return_segments; language detected; no attention_mask;
    batch 2; num_beams 2; refusal of return_timestamps False. en: one case and the refusal.
  pipeline case {name, input, call_kwargs, output (what the pipeline returns: {text, [chunks: [{timestamp, text}]]}),
    margins}: transformers.pipeline('automatic-speech-recognition', model, tokenizer, feature_extractor) called as
    pipe(samples, **call_kwargs); float64 model recorded (torch_dtype float64: features cast), float32 equal (checked).
    tiny: chunk_length_s 30 (timestamps false / true), stride_length_s [4, 2], chunk_length_s 10 (false / true),
    unchunked (long-form inside the pipeline; timestamps true, and false: refused), a short input, language detected
    with return_language. en: chunk 30 without and with timestamps. The pipeline on another sampling rate is not
    here: it needs torchaudio, which this machine lacks.

TRANSFORMERS' BEHAVIOUR an engine must replicate (v4.40.2, WhisperGenerationMixin.generate; read from its source and
checked by these goldens):
  init tokens  [decoder_start] + forced_decoder_ids' tokens at positions 1, 2, ... (tiny: [[1, null], [2,
              transcribe]] gives [sot, None, transcribe]); language (lower-cased first, so 'French' works) accepted as
              a lang_to_id key ('<|fr|>'), a name of TO_LANGUAGE_CODE ('french') or a code ('fr'), else ValueError
              "Unsupported language: ..." (codes listed when the string has 2 characters, names otherwise); a
              language transformers knows but lang_to_id lacks ('yue' on tiny): "<|yue|> is not supported by this
              specific model ...". It replaces the language slot; with no language and lang_to_id present (and the
              slot undefined) detect_language runs on the first 3000 frames (argmax of the first step's logits over
              the language tokens; a batch whose rows detect different languages is refused). task replaces or adds
              the task token; language without task adds <|transcribe|> where none is present. Without
              return_timestamps <|notimestamps|> is appended; with it a trailing <|notimestamps|> is dropped. None
              slots are removed. An English-only config (is_multilingual false) refuses language / task.
  short form   (<= 3000 frames) decoder_input_ids = prompt_ids + init tokens; sequences returned INCLUDE them (the
              prompt and the init tokens, then the generated tokens; eos kept; batch rows padded with pad =
              <|endoftext|>). max_new_tokens + len(decoder_input_ids) > max_target_positions is refused; max_length
              counts the prompt and init tokens.
  processors  generation config's own (e.g. NoRepeatNGram) first, then SuppressTokensAtBegin (begin_suppress_tokens,
              at input length == begin_index), SuppressTokens, WhisperTimeStamp (return_timestamps): see each case's
              `processors`. begin_index = len(init tokens) in short form even with prompt_ids (so with a prompt the
              begin-suppression and the initial-timestamp rule, which test input length == begin_index, never fire,
              and the timestamp rules look at input_ids[begin_index:], prompt tail included); in long form
              set_begin_index(len(decoder_input_ids)) per window. Beam search: log_softmax first, then processors.
  timestamps  WhisperTimeStampLogitsProcessor, over the tokens since begin_index: <|notimestamps|> -inf; if the last
              token is a timestamp and so is the one before (or there is no token before it): every timestamp -inf;
              if the last is a timestamp after a text token: every id below eos -inf; timestamps below the last one
              -inf (below last + 1 unless the last token is a lone timestamp, which may repeat); at input length ==
              begin_index every text id -inf and timestamps above <|0.00|> + max_initial_timestamp_index (50: 1.00 s)
              -inf; then, if logsumexp of the timestamp log-probs (float32 log_softmax of these scores) > the
              largest text log-prob, every text id -inf.
  decode      batch_decode(skip_special_tokens=True) drops special ids and the timestamp text; the prompt
              (<|startofprev|> ... up to <|startoftranscript|>) is stripped only when a row is a Python list: a tensor
              row keeps the prompt's text (see text_from_lists).
  long form   (> 3000 frames; return_timestamps must not be False): seek = 0; per window: features[seek : seek +
              min(3000, max_frames - seek)] zero-padded to 3000 (max_frames = attention_mask.sum() for a batch, the
              whole length for one input); time_offset = seek * 0.02 / 2 (float32); decoder input = init tokens (+
              prompt); max_length = min(max_length + min(max_target_positions // 2 - 1, len(decoder input) - 1),
              max_target_positions); the window's generated tokens (decoder input cut off) lose a final eos when
              seek + 3000 < max_frames, and trailing pads. Segments: split after every pair of consecutive timestamps;
              with such pairs, a sequence ending in a lone timestamp (text ts) keeps its tail as a segment and seek
              moves by the window's frames, otherwise the tail after the last pair is dropped and seek moves by (last
              pair's timestamp - <|0.00|>) * 2 frames; with no pair the whole window is one segment ending at its last
              timestamp (or the window's end) and seek moves by the window's frames. start / end = time_offset +
              (ts - <|0.00|>) * 0.02. Returned sequences: each input's segments' tokens concatenated (no init tokens,
              no prompt), right-padded with pad_token_id; return_segments adds the segments.
"""
import copy
import json
import math
import os
import re
import shutil
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import transformers  # noqa: E402
from transformers import GenerationConfig, WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration  # noqa: E402
from transformers import WhisperTokenizer  # noqa: E402
from transformers.generation import beam_search as hf_beam  # noqa: E402
from transformers.generation import logits_process as hf_lp  # noqa: E402
from transformers.generation import utils as hf_gen  # noqa: E402
from transformers.models.whisper import generation_whisper as hf_wg  # noqa: E402
from transformers.models.whisper.tokenization_whisper import LANGUAGES, bytes_to_unicode  # noqa: E402
import transformers.models.whisper.feature_extraction_whisper as fxw  # noqa: E402
from safetensors.torch import load_file  # noqa: E402  (tools/hf_env's stand-in)
from tokenizers import AddedToken  # noqa: E402  (tools/hf_env's stand-in)

SEED = 20261207
OUT = os.environ.get('AW_WHISPER_GOLDENS_OUT') or os.path.join(ROOT, 'tests', 'data', 'goldens', 'whisper')  # another: a rerun to compare
TOL = (1e-4, 1e-4)
# Every recorded choice is at least this far from flipping (greedy / select / language / timestamp in logit or log-prob
# units, final / done relative), so that float32 differences of ~1e-5 cannot change a token.
MIN_MARGIN = {'greedy': 1e-4, 'select': 1e-4, 'final': 1e-5, 'done': 1e-5, 'language': 1e-4, 'timestamp': 1e-4}
SR = 16000

torch.set_num_threads(1)
fxw.is_torch_available = lambda: False  # the numpy path of the feature extractor everywhere (attnwasm/audio's twin)

# ---- the tokenizer ----------------------------------------------------------------------------------------------------
BPE_TEXT = (
    "The quick brown fox jumps over the lazy dog. She sells sea shells by the sea shore, and the shells she sells are "
    "surely sea shells. Peter Piper picked a peck of pickled peppers; how many pickled peppers did Peter Piper pick? "
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness. "
    "Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse, and "
    "nothing particular to interest me on shore, I thought I would sail about a little and see the watery part of the "
    "world. In the beginning the Universe was created. This has made a lot of people very angry and been widely "
    "regarded as a bad move. We're going, they've said, you'll see, I'm sure it's the one that'd do. 1 2 3 10 20 100 "
    "2024 3.14 Hello, world! Whisper transcribes speech into text, and translates it into English.")
N_MERGES = 300
LANG99 = list(LANGUAGES)[:99]  # transformers' LANGUAGES order: the multilingual checkpoints' 99 tokens
LANG100 = list(LANGUAGES)[:100]  # large-v3: <|yue|> as the 100th
assert LANG100[-1] == 'yue', LANG100[-1]


def train_bpe(text, n_merges):
    """A byte-level BPE trained by the plain loop (GPT-2's pre-tokenizer regex, bytes_to_unicode symbols): each round
    merges the most frequent adjacent pair, ties broken by the pair's strings; stops early when no pair occurs twice."""
    import regex
    pat = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
    b2u = bytes_to_unicode()
    words = {}
    for w in pat.findall(text):
        key = tuple(b2u[b] for b in w.encode('utf-8'))
        words[key] = words.get(key, 0) + 1
    merges = []
    for _ in range(n_merges):
        pairs = {}
        for w, n in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + n
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < 2:
            break
        merges.append(best)
        new = {}
        for w, n in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] = new.get(tuple(out), 0) + n
        words = new
    return merges


def special_tokens(langs):
    """Whisper's special tokens after <|endoftext|>, in Whisper's order, and the timestamps."""
    specials = ['<|startoftranscript|>'] + [f'<|{c}|>' for c in langs] + [
        '<|translate|>', '<|transcribe|>', '<|startoflm|>', '<|startofprev|>', '<|nocaptions|>', '<|notimestamps|>']
    stamps = ['<|%.2f|>' % (i * 0.02) for i in range(1501)]
    return specials, stamps


MERGES = train_bpe(BPE_TEXT, N_MERGES)


def write_tokenizer(path, langs):
    """vocab.json / merges.txt / tokenizer_config.json / special_tokens_map.json / added_tokens.json as the slow
    WhisperTokenizer saves them, and a hub-style tokenizer.json. Returns the ids: {token: id} of the specials."""
    b2u = bytes_to_unicode()
    vocab = {u: i for i, u in enumerate(b2u.values())}
    for a, b in MERGES:
        vocab[a + b] = len(vocab)
    eot = len(vocab)
    vocab['<|endoftext|>'] = eot
    tmp = os.path.join(path, '_tmp')
    os.makedirs(tmp, exist_ok=True)
    with open(os.path.join(tmp, 'vocab.json'), 'w', encoding='utf-8') as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(tmp, 'merges.txt'), 'w', encoding='utf-8') as f:
        f.write('#version: 0.2\n' + ''.join(f'{a} {b}\n' for a, b in MERGES))
    tok = WhisperTokenizer(os.path.join(tmp, 'vocab.json'), os.path.join(tmp, 'merges.txt'),
                           pad_token='<|endoftext|>', model_max_length=1024)
    specials, stamps = special_tokens(langs)
    tok.add_special_tokens({'additional_special_tokens': ['<|endoftext|>'] + specials})
    tok.add_tokens([AddedToken(s, lstrip=False, rstrip=False, normalized=False, special=False) for s in stamps])
    tok.save_pretrained(path)
    shutil.rmtree(tmp)
    for name in ('tokenizer_config.json',):  # as the hub's: the processor class named
        p = os.path.join(path, name)
        with open(p) as f:
            cfg = json.load(f)
        cfg['processor_class'] = 'WhisperProcessor'
        with open(p, 'w') as f:
            f.write(json.dumps(cfg, indent=2, sort_keys=True, ensure_ascii=False) + '\n')
    tok = WhisperTokenizer.from_pretrained(path)
    ids = {t: tok.convert_tokens_to_ids(t) for t in ['<|endoftext|>'] + specials + stamps}
    want = list(range(eot, eot + 1 + len(specials) + len(stamps)))
    if list(ids.values()) != want:
        raise SystemExit(f'{path}: special ids are not consecutive after <|endoftext|>')
    # tokenizer.json: as openai/whisper-*'s (ByteLevel BPE; the added tokens with their special flags; the template
    # <|startoftranscript|> <|notimestamps|> $A <|endoftext|>)
    added = [{'id': i, 'content': t, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': False,
              'special': t not in stamps} for t, i in ids.items()]

    def tmpl(*seqs):
        return ([{'SpecialToken': {'id': '<|startoftranscript|>', 'type_id': 0}},
                 {'SpecialToken': {'id': '<|notimestamps|>', 'type_id': 0}}]
                + [{'Sequence': {'id': s, 'type_id': 0}} for s in seqs]
                + [{'SpecialToken': {'id': '<|endoftext|>', 'type_id': 0}}])
    fast = {
        'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': added, 'normalizer': None,
        'pre_tokenizer': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': True},
        'post_processor': {'type': 'TemplateProcessing', 'single': tmpl('A'), 'pair': tmpl('A', 'B'),
                           'special_tokens': {t: {'id': t, 'ids': [ids[t]], 'tokens': [t]} for t in
                                              ('<|endoftext|>', '<|notimestamps|>', '<|startoftranscript|>')}},
        'decoder': {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': True, 'use_regex': True},
        'model': {'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': '',
                  'end_of_word_suffix': '', 'fuse_unk': False, 'byte_fallback': False, 'ignore_merges': False,
                  'vocab': vocab, 'merges': [f'{a} {b}' for a, b in MERGES]}}
    with open(os.path.join(path, 'tokenizer.json'), 'w', encoding='utf-8') as f:
        f.write(json.dumps(fast, ensure_ascii=False, separators=(',', ':')) + '\n')
    return tok, ids, eot + 1 + len(specials) + len(stamps)


# ---- folders ----------------------------------------------------------------------------------------------------------
D = 16
ARCH = dict(d_model=D, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
            encoder_ffn_dim=32, decoder_ffn_dim=32, max_source_positions=1500, max_target_positions=64)
# name, langs (None: English-only), mels, arch overrides, seed / eos_scale / ts_scale (chosen with --search)
FOLDERS = [
    dict(name='tiny', langs=LANG99, mels=80, arch={}, seed=0, eos_scale=1.0, ts_scale=1.0),
    dict(name='en', langs=None, mels=80, arch={}, seed=0, eos_scale=1.0, ts_scale=1.0, eos_boost=4.0),
    dict(name='v3', langs=LANG100, mels=128, arch={}, seed=0, eos_scale=1.0, ts_scale=1.0),
    # distil (2 encoder layers, 1 decoder layer, untied proj_out) works (generate_cases has its cases) but is left out:
    # each folder costs ~0.8 MB (tokenizer files ~0.5 MB, model ~0.3 MB) and three already pass 2.5 MB
    # dict(name='distil', langs=LANG99, mels=80, arch=dict(decoder_layers=1), seed=0, eos_scale=1.0, ts_scale=1.0,
    #      untied=True),
]
SUPPRESS = [1, 2, 7, 8, 9, 10, 14, 25, 26, 27, 28, 29, 31, 58, 59, 60, 61, 62, 63, 90, 91, 92, 93, 359, 503, 522]


def generation_config(spec, ids):
    """generation_config.json as the hub's openai/whisper-* (tiny / tiny.en / large-v3) with this vocabulary's ids."""
    eot = ids['<|endoftext|>']
    task = ['<|translate|>', '<|transcribe|>', '<|startoflm|>', '<|startofprev|>', '<|nocaptions|>']
    gen = dict(
        alignment_heads=[[1, 0], [1, 2], [1, 3]] if spec['arch'].get('decoder_layers', 2) > 1 else [[0, 0], [0, 2]],
        begin_suppress_tokens=[220, eot], bos_token_id=eot, decoder_start_token_id=ids['<|startoftranscript|>'],
        eos_token_id=eot, max_initial_timestamp_index=50, max_length=40,
        no_timestamps_token_id=ids['<|notimestamps|>'], pad_token_id=eot,
        prev_sot_token_id=ids['<|startofprev|>'], return_timestamps=False,
        suppress_tokens=SUPPRESS + [ids[t] for t in task])
    if spec['langs'] is None:
        gen.update(forced_decoder_ids=[[1, ids['<|notimestamps|>']]], is_multilingual=False)
    else:
        gen.update(forced_decoder_ids=[[1, None], [2, ids['<|transcribe|>']]], is_multilingual=True,
                   lang_to_id={f'<|{c}|>': ids[f'<|{c}|>'] for c in spec['langs']},
                   task_to_id={'transcribe': ids['<|transcribe|>'], 'translate': ids['<|translate|>']})
    return gen


def randomise(model, seed, spec, eot, ts_begin):
    """Every parameter from N(0, 0.3), LayerNorm weights 1 + N(0, 0.3); the encoder's embed_positions (the sinusoid
    transformers fills in) kept; then the eos row of the output projection x eos_scale, the timestamp rows x ts_scale."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):  # tied proj_out: listed once, as the decoder's embed_tokens
            if name == 'model.encoder.embed_positions.weight':
                continue
            noise = torch.randn(p.shape, generator=g, dtype=torch.float64).float() * 0.3
            parts = name.split('.')
            p.copy_(1.0 + noise if 'layer_norm' in parts[-2] and parts[-1] == 'weight' else noise)
        w = model.get_output_embeddings().weight
        w[eot] *= spec['eos_scale']
        # eos_boost: the eos row gains eos_boost * b / |b|^2 (b: the decoder's final LayerNorm bias, a component every
        # decoder output carries), so eos's logit rises by about eos_boost at every step: random models rarely stop
        b = model.model.decoder.layer_norm.bias.detach()
        w[eot] += spec.get('eos_boost', 0.0) * b / (b * b).sum()
        w[ts_begin:] *= spec['ts_scale']
    return model


def make_model(spec, ids, vocab_size, seed=None, eos_scale=None, ts_scale=None, eos_boost=None):
    spec = dict(spec, **{k: v for k, v in (('seed', seed), ('eos_scale', eos_scale), ('ts_scale', ts_scale),
                                           ('eos_boost', eos_boost)) if v is not None})
    eot = ids['<|endoftext|>']
    cfg = WhisperConfig(vocab_size=vocab_size, num_mel_bins=spec['mels'], **dict(ARCH, **spec['arch']),
                        pad_token_id=eot, bos_token_id=eot, eos_token_id=eot,
                        decoder_start_token_id=ids['<|startoftranscript|>'], begin_suppress_tokens=[220, eot],
                        tie_word_embeddings=not spec.get('untied'))
    torch.manual_seed(0)
    model = WhisperForConditionalGeneration(cfg)
    randomise(model, SEED + 1000 * spec['seed'] + sum(map(ord, spec['name'])), spec, eot,
              ids['<|notimestamps|>'] + 1).eval()
    model.generation_config = GenerationConfig(**generation_config(spec, ids))
    return model


# ---- inputs -----------------------------------------------------------------------------------------------------------
# signal() / fnv1a(): copied from make_whisper_feature_goldens.py (which needs torchaudio), the twins of
# tests/data/whisper_signals.mjs.
def signal(spec, rate=SR):
    n = spec['samples'] if 'samples' in spec else int(round(spec['seconds'] * rate))
    kind = spec['kind']
    if kind == 'silence':
        return np.zeros(n, np.float32)
    if kind == 'noise':
        x, out = spec['seed'] & 0xFFFFFFFF, np.empty(n, np.float32)
        scale = 2.0 ** spec['ampLog2'] / 2.0 ** 23
        for i in range(n):
            x ^= (x << 13) & 0xFFFFFFFF
            x ^= x >> 17
            x ^= (x << 5) & 0xFFFFFFFF
            out[i] = ((x >> 8) - 2 ** 23) * scale
        return out
    if kind in ('tone', 'chirp'):
        out = np.empty(n, np.float32)
        for i in range(n):
            if kind == 'tone':
                v = sum(math.sin(2 * math.pi * ((f * i) % rate) / rate) for f in spec['freqs']) / len(spec['freqs'])
            else:
                t, T = i / rate, n / rate
                v = math.sin(2 * math.pi * (spec['f0'] * t + (spec['f1'] - spec['f0']) * t * t / (2 * T)))
            q = min(32767, max(-32768, math.floor(spec['amp'] * 32767 * v + 0.5)))
            out[i] = q / 32768
        return out
    if kind == 'mix':
        return (signal(spec['parts'][0], rate) + signal(spec['parts'][1], rate)).astype(np.float32)
    raise ValueError(kind)


def fnv1a(a):
    h = 0x811C9DC5
    for b in np.ascontiguousarray(a).tobytes():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return f'{h:08x}'


SIGNALS = {
    'tones3': {'kind': 'mix', 'seconds': 3, 'parts': [
        {'kind': 'tone', 'seconds': 3, 'freqs': [440, 660, 1250], 'amp': 0.5},
        {'kind': 'noise', 'seconds': 3, 'seed': 7, 'ampLog2': -6}]},
    'noise7': {'kind': 'noise', 'seconds': 7, 'seed': 11, 'ampLog2': -3},
    'chirp05': {'kind': 'chirp', 'seconds': 0.5, 'f0': 200, 'f1': 4000, 'amp': 0.6},
    'silence2': {'kind': 'silence', 'seconds': 2},
    'long75': {'kind': 'mix', 'seconds': 75, 'parts': [
        {'kind': 'chirp', 'seconds': 75, 'f0': 100, 'f1': 6000, 'amp': 0.4},
        {'kind': 'noise', 'seconds': 75, 'seed': 5, 'ampLog2': -4}]},
    'long40': {'kind': 'mix', 'seconds': 40, 'parts': [
        {'kind': 'tone', 'seconds': 40, 'freqs': [300, 2200], 'amp': 0.7},
        {'kind': 'noise', 'seconds': 40, 'seed': 9, 'ampLog2': -5}]},
}
_AUDIO = {}
_FEATS = {}


def audio(name):
    if name not in _AUDIO:
        x = signal(SIGNALS[name])
        _AUDIO[name] = (x, fnv1a(x))
    return _AUDIO[name][0]


def signal_record(name):
    x = audio(name)
    return {'name': name, 'spec': SIGNALS[name], 'samples': len(x), 'fnv1a': _AUDIO[name][1]}


def features(fe, names, **kw):
    """WhisperFeatureExtractor's numpy path; a list of names gives a batch."""
    key = (fe.feature_size, tuple(names), tuple(sorted(kw.items())))
    if key not in _FEATS:
        out = fe([audio(n) for n in names], sampling_rate=SR, return_tensors='np', **kw)
        _FEATS[key] = {k: torch.from_numpy(np.asarray(v)) for k, v in out.items()}
    return _FEATS[key]


# ---- probes: margins from inside transformers' generate, without changing what it computes --------------------------
PROBE = None


def _min(key, v):
    if PROBE is not None and v == v and abs(v) != float('inf'):
        PROBE[key] = min(PROBE.get(key, float('inf')), v)


def _lp_call(self, input_ids, scores, **kwargs):
    out = _orig_lp_call(self, input_ids, scores, **kwargs)
    if PROBE is not None and PROBE.get('num_beams', 1) == 1:  # greedy: top-1 minus top-2 of each unfinished row
        top = torch.topk(out, 2, dim=-1).values
        for r in range(out.shape[0]):
            if PROBE['eos'] not in input_ids[r, PROBE.get('begin', 0):].tolist():
                _min('greedy', float(top[r, 0] - top[r, 1]))
    return out


def _ts_call(self, input_ids, scores):
    if PROBE is not None:  # the log-prob comparison, on the scores as the processor has them before it
        saved = self._detect_timestamp_from_logprob
        self._detect_timestamp_from_logprob = False
        try:
            pre = _orig_ts_call(self, input_ids, scores)
        finally:
            self._detect_timestamp_from_logprob = saved
        logprobs = torch.nn.functional.log_softmax(pre.float(), dim=-1)
        for k in range(input_ids.shape[0]):
            if PROBE.get('num_beams', 1) == 1 and PROBE['eos'] in input_ids[k, self.begin_index:].tolist():
                continue
            ts = float(logprobs[k, self.timestamp_begin:].logsumexp(dim=-1))
            text = float(logprobs[k, :self.timestamp_begin].max())
            _min('timestamp', abs(ts - text))
    return _orig_ts_call(self, input_ids, scores)


def _logits_processor(self, generation_config, *args, **kw):
    out = _orig_logits_processor(self, generation_config, *args, **kw)
    if PROBE is not None:
        PROBE['num_beams'] = generation_config.num_beams
        PROBE['processors'] = [type(p).__name__ for p in out]
    return out


def _process(self, input_ids, next_scores, next_tokens, next_indices, pad_token_id=None, eos_token_id=None, **kw):
    if PROBE is not None:  # as make_seq2seq_goldens.py: the last candidate kept against the next one
        eos = [eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id or [])
        k = self.group_size
        for b in range(next_scores.shape[0]):
            if self._done[b]:
                continue
            s, t = next_scores[b].tolist(), next_tokens[b].tolist()
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
            if t[k - 1] in eos or t[k] in eos:
                _min('select', s[k - 1] - s[k])
            if last is not None and last + 1 < len(s):
                _min('select', s[last] - s[last + 1])
    return _orig_process(self, input_ids, next_scores, next_tokens, next_indices, pad_token_id=pad_token_id,
                         eos_token_id=eos_token_id, **kw)


def _finalize(self, *args, **kw):
    out = _orig_finalize(self, *args, **kw)
    if PROBE is not None:
        for hyp in self._beam_hyps:
            scores = sorted((s for s, _, _ in hyp.beams), reverse=True)
            n = self.num_beam_hyps_to_keep
            for a, b in zip(scores[:n], scores[1:n + 1]):
                _min('final', (a - b) / max(abs(a), abs(b)))
    return out


def _is_done(self, best_sum_logprobs, cur_len, decoder_prompt_len=0):
    done = _orig_is_done(self, best_sum_logprobs, cur_len, decoder_prompt_len)
    if PROBE is not None and len(self) >= self.num_beams and self.early_stopping is not True:
        if self.early_stopping is False or self.length_penalty <= 0.0:
            best = best_sum_logprobs / (cur_len - decoder_prompt_len) ** self.length_penalty
        else:
            best = best_sum_logprobs / (self.max_length - decoder_prompt_len) ** self.length_penalty
        if self.worst_score != best:
            _min('done', abs(self.worst_score - best) / max(abs(self.worst_score), abs(best)))
    return done


def _detect_language(self, *args, **kw):
    if PROBE is not None:  # the language logits' top-1 minus top-2, as detect_language masks them
        PROBE['detect_calls'] = PROBE.get('detect_calls', 0) + 1
        inputs = kw.get('input_features')
        gc = kw.get('generation_config') or self.generation_config
        n = kw.get('num_segment_frames', 3000)
        if inputs is not None:
            given = {'input_features': inputs[:, :, :n]}
        else:  # the pipeline passes the encoder's output
            given = {'encoder_outputs': kw['encoder_outputs']}
        batch = (inputs if inputs is not None else kw['encoder_outputs'][0]).shape[0]
        start = torch.full((batch, 1), gc.decoder_start_token_id)
        with torch.no_grad():
            logits = self(**given, decoder_input_ids=start).logits[:, -1]
        lang = logits[:, sorted(gc.lang_to_id.values())]
        top = torch.topk(lang, 2, dim=-1).values
        for r in range(lang.shape[0]):
            _min('language', float(top[r, 0] - top[r, 1]))
    return _orig_detect_language(self, *args, **kw)


_orig_lp_call = hf_lp.LogitsProcessorList.__call__
_orig_ts_call = hf_lp.WhisperTimeStampLogitsProcessor.__call__
_orig_logits_processor = hf_gen.GenerationMixin._get_logits_processor
_orig_process = hf_beam.BeamSearchScorer.process
_orig_finalize = hf_beam.BeamSearchScorer.finalize
_orig_is_done = hf_beam.BeamHypotheses.is_done
_orig_detect_language = hf_wg.WhisperGenerationMixin.detect_language
hf_lp.LogitsProcessorList.__call__ = _lp_call
hf_lp.WhisperTimeStampLogitsProcessor.__call__ = _ts_call
hf_gen.GenerationMixin._get_logits_processor = _logits_processor
hf_beam.BeamSearchScorer.process = _process
hf_beam.BeamSearchScorer.finalize = _finalize
hf_beam.BeamHypotheses.is_done = _is_done
hf_wg.WhisperGenerationMixin.detect_language = _detect_language


# ---- records ----------------------------------------------------------------------------------------------------------
class default_dtype:
    """torch's default dtype for a float64 run (transformers builds its masks with it)."""
    def __init__(self, dtype):
        self.dtype = dtype

    def __enter__(self):
        torch.set_default_dtype(self.dtype)

    def __exit__(self, *exc):
        torch.set_default_dtype(torch.float32)


def r7(v):
    return float('%.7g' % v)


def flat(t):
    """Forward values to 5 decimals: an error of at most 5e-6, a twentieth of atol."""
    return [round(v, 5) + 0.0 for v in t.detach().reshape(-1).tolist()]


ENC_ROWS = [0, 1, 2, 3, 4, 99, 100, 500, 749, 750, 1000, 1496, 1497, 1498, 1499]


def forward_case(m64, tok, ids, names, fe, prompt):
    """Teacher-forced forward in float64 on a batch of inputs; every row equals its single run (checked)."""
    feats = features(fe, names)['input_features']
    dids = torch.tensor([prompt] * len(names))
    with torch.no_grad(), default_dtype(torch.float64):
        out = m64(input_features=feats.double(), decoder_input_ids=dids)
        for b, n in enumerate(names):
            one = m64(input_features=features(fe, [n])['input_features'].double(), decoder_input_ids=dids[:1])
            if (one.logits[0] - out.logits[b]).abs().max() > 1e-9:
                raise SystemExit(f'forward: batch row {b} differs from its single run')
    enc, logits = out.encoder_last_hidden_state, out.logits
    B, S, d = enc.shape
    V = logits.shape[-1]
    cols = set(range(0, V, 17)) | {ids[t] for t in ('<|endoftext|>', '<|startoftranscript|>', '<|en|>', '<|fr|>',
                                                    '<|translate|>', '<|transcribe|>', '<|startofprev|>',
                                                    '<|notimestamps|>', '<|0.00|>', '<|0.02|>', '<|30.00|>')}
    cols |= set(torch.topk(logits, 5, dim=-1).indices.reshape(-1).tolist())
    cols = sorted(cols)
    return {'inputs': [signal_record(n) for n in names], 'decoder_input_ids': dids.tolist(),
            'encoder_shape': [B, S, d], 'encoder_rows': ENC_ROWS,
            'encoder_row_values': flat(enc[:, ENC_ROWS]),                       # (B, len(rows), d)
            'encoder_mean': flat(enc.mean(dim=1)),                              # (B, d) over all 1500 rows
            'encoder_block_mean': flat(enc.reshape(B, 30, 50, d).mean(dim=2)),  # (B, 30, d): blocks of 50 rows
            'logits_shape': [B, len(prompt), V], 'logit_columns': cols,
            'logits': flat(logits[:, :, cols]),                                # (B, T, len(cols))
            'logsumexp': flat(torch.logsumexp(logits, dim=-1)),                 # (B, T) over the whole vocabulary
            'argmax': logits.argmax(-1).tolist()}


def detect_case(m64, m32, ids, names, fe):
    global PROBE
    feats = features(fe, names)['input_features']
    PROBE = {'eos': ids['<|endoftext|>']}
    try:
        with default_dtype(torch.float64):
            got = m64.detect_language(input_features=feats.double()).tolist()
    finally:
        probe, PROBE = PROBE, None
    got32 = m32.detect_language(input_features=feats).tolist()
    if got != got32:
        raise SystemExit(f'detect_language: float32 {got32} != float64 {got}')
    gc = m64.generation_config
    lang_ids = sorted(gc.lang_to_id.values())
    start = torch.full((len(names), 1), gc.decoder_start_token_id)
    with torch.no_grad(), default_dtype(torch.float64):
        logits = m64(input_features=feats.double(), decoder_input_ids=start).logits[:, -1]
    probs = torch.softmax(logits[:, lang_ids], dim=-1)
    inv = {v: k for k, v in gc.lang_to_id.items()}
    return {'inputs': [signal_record(n) for n in names], 'language_ids': got, 'languages': [inv[i] for i in got],
            'probs': [[r7(v) for v in row] for row in probs.tolist()],  # (B, number of languages), in id order
            'margins': {'language': r7(probe['language'])}}


def to_call(kwargs):
    kw = dict(kwargs)
    if 'prompt_ids' in kw:
        kw['prompt_ids'] = torch.tensor(kw['prompt_ids'])
    return kw


def run_generate(model, feats, kwargs, dtype, eos):
    global PROBE
    PROBE = {'eos': eos}
    kw = to_call(kwargs)
    if kw.pop('attention_mask', False):
        kw['attention_mask'] = feats['attention_mask']
    try:
        with torch.no_grad(), default_dtype(dtype):
            out = model.generate(feats['input_features'].to(dtype), **kw)
    finally:
        probe, PROBE = PROBE, None
    return out, probe


def plain(x):
    """JSON-able: tensors to lists / floats (float32 values as their shortest float64 repr)."""
    if isinstance(x, torch.Tensor):
        return x.tolist() if x.dim() else (x.item() if x.dtype != torch.float32 else float(np.float32(x.item())))
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return x


def decoded(tok, seqs, timestamps):
    rec = {'text': tok.batch_decode(torch.tensor(seqs), skip_special_tokens=True)}
    as_lists = tok.batch_decode(seqs, skip_special_tokens=True)
    if as_lists != rec['text']:
        rec['text_from_lists'] = as_lists
    if timestamps:
        rec['text_with_timestamps'] = [tok.decode(q, skip_special_tokens=False, decode_with_timestamps=True)
                                       for q in seqs]
        rec['offsets'] = [plain(tok.decode(q, skip_special_tokens=True, output_offsets=True)['offsets'])
                          for q in seqs]
        rec['asr'] = []
        for q in seqs:
            text, extra = tok._decode_asr([{'tokens': np.array([q])}], return_timestamps=True, return_language=False,
                                          time_precision=0.02)
            rec['asr'].append({'text': text, 'chunks': plain(extra['chunks'])})
    return rec


def generate_case(name, m64, m32, tok, fe, names, kwargs, feat_kw=None):
    eos = m64.generation_config.eos_token_id
    feats = features(fe, names, **(feat_kw or {}))
    rec = {'name': name, 'inputs': [signal_record(n) for n in names], 'kwargs': kwargs}
    if feat_kw:
        rec['feature_kwargs'] = feat_kw
    try:
        out, probe = run_generate(m64, {k: v.double() if v.is_floating_point() else v for k, v in feats.items()},
                                  kwargs, torch.float64, eos)
    except ValueError as e:
        try:
            run_generate(m32, feats, kwargs, torch.float32, eos)
        except ValueError as e32:
            if str(e32) != str(e):
                raise SystemExit(f'{name}: float32 error differs')
        else:
            raise SystemExit(f'{name}: float32 did not fail')
        rec['error'] = {'type': type(e).__name__, 'message': str(e)}
        return rec
    out32, _ = run_generate(m32, feats, kwargs, torch.float32, eos)
    segments = None
    if isinstance(out, dict) and 'segments' in out:
        segments = [[{'start': plain(s['start']), 'end': plain(s['end']), 'tokens': plain(s['tokens'])} for s in row]
                    for row in out['segments']]
        segs32 = [[{'start': plain(s['start']), 'end': plain(s['end']), 'tokens': plain(s['tokens'])} for s in row]
                  for row in out32['segments']]
        # start / end: seek * 0.02 / 2 in torch's default dtype (float64 in the float64 run): the float32 run's
        # values are recorded (what transformers gives with its default dtype)
        same = [[(a['tokens'], round(a['start'], 5), round(a['end'], 5)) for a in row] for row in segments] == \
            [[(a['tokens'], round(a['start'], 5), round(a['end'], 5)) for a in row] for row in segs32]
        if not same:
            raise SystemExit(f'{name}: float32 segments differ:\n{segments}\n{segs32}')
        segments = segs32
        out, out32 = out['sequences'], out32['sequences']
    seqs = out.tolist()
    if out32.tolist() != seqs:
        raise SystemExit(f'{name}: float32 and float64 sequences differ:\n{seqs}\n{out32.tolist()}')
    rec['processors'] = probe.get('processors')
    rec['sequences'] = seqs
    if segments is not None:
        rec['segments'] = segments
    rec.update(decoded(tok, seqs, kwargs.get('return_timestamps') or segments is not None))
    rec['margins'] = {k: r7(v) for k, v in sorted(probe.items())
                      if k in MIN_MARGIN and v != float('inf')}
    if 'detect_calls' in probe:
        rec['detect_language_calls'] = probe['detect_calls']
    low = {k: v for k, v in rec['margins'].items() if v < MIN_MARGIN[k]}
    if low:
        raise SystemExit(f'{name}: margins below MIN_MARGIN: {low}')
    return rec


def generate_cases(spec, tok):
    """(name, input names, kwargs, feature kwargs) of a folder's generate cases."""
    S = [('tones3',), ('noise7',), ('chirp05',)]
    if spec['name'] == 'en':
        return [(f'greedy_{n[0]}', n, {}, None) for n in S] + [
            (f'timestamps_{n[0]}', n, {'return_timestamps': True}, None) for n in S] + [
            ('beam2', ('tones3',), {'num_beams': 2}, None),
            ('batch2', ('tones3', 'noise7'), {}, None),
            ('refused_language', ('tones3',), {'language': 'en'}, None)]
    if spec['name'] in ('v3', 'distil'):
        return [(f'greedy_{n[0]}', n, {}, None) for n in S] + [
            ('language_en', ('tones3',), {'language': 'en'}, None),
            ('timestamps', ('noise7',), {'return_timestamps': True, 'language': 'en'}, None)]
    prompt = tok.get_prompt_ids('the sea shells').tolist()
    return [(f'greedy_{n[0]}', n, {}, None) for n in S] + [
        ('language_en', ('tones3',), {'language': 'en'}, None),
        ('language_fr_code', ('tones3',), {'language': 'fr'}, None),
        ('language_french_name', ('tones3',), {'language': 'french'}, None),
        ('language_fr_token', ('tones3',), {'language': '<|fr|>'}, None),
        ('language_French_capital', ('tones3',), {'language': 'French'}, None),
        ('translate', ('tones3',), {'task': 'translate', 'language': 'de'}, None),
        ('translate_detected', ('noise7',), {'task': 'translate'}, None),
        ('timestamps_tones3', ('tones3',), {'return_timestamps': True, 'language': 'en'}, None),
        ('timestamps_noise7', ('noise7',), {'return_timestamps': True}, None),
        ('timestamps_chirp05', ('chirp05',), {'return_timestamps': True, 'language': 'en'}, None),
        ('beam2', ('tones3',), {'num_beams': 2, 'language': 'en'}, None),
        ('beam3', ('noise7',), {'num_beams': 3, 'language': 'en'}, None),
        ('beam3_timestamps', ('tones3',), {'num_beams': 3, 'language': 'en', 'return_timestamps': True}, None),
        ('prompt', ('tones3',), {'prompt_ids': prompt, 'language': 'en'}, None),
        ('prompt_timestamps', ('noise7',), {'prompt_ids': prompt, 'language': 'en', 'return_timestamps': True},
         None),
        ('no_repeat_ngram2', ('noise7',), {'no_repeat_ngram_size': 2, 'language': 'en'}, None),
        ('max_new_tokens5', ('tones3',), {'max_new_tokens': 5, 'language': 'en'}, None),
        ('batch2', ('tones3', 'noise7'), {'language': 'en'}, None),
        ('batch2_timestamps', ('tones3', 'chirp05'), {'language': 'en', 'return_timestamps': True}, None),
        ('batch2_detect', ('tones3', 'noise7'), {}, None),
        ('refused_language_xx', ('tones3',), {'language': 'xx'}, None),
        ('refused_language_klingon', ('tones3',), {'language': 'klingon'}, None),
        ('refused_language_yue', ('tones3',), {'language': 'yue'}, None),
        ('refused_task', ('tones3',), {'task': 'summarize', 'language': 'en'}, None),
        ('refused_max_new_tokens', ('tones3',), {'max_new_tokens': 62, 'language': 'en'}, None),
    ]


TOKENIZER_TEXTS = [
    'The quick brown fox jumps over the lazy dog.', ' she sells sea shells', "We're sure it's 3.14 -- isn't it?",
    'naïve café, 2024!  Two  spaces\nand a line', '<|en|> the sea<|0.00|>',
    '<|startoftranscript|><|fr|><|transcribe|><|notimestamps|> Bonjour<|1.24|><|endoftext|>',
    '<|startofprev|> prompt<|30.00|>x']


LONG = dict(padding='longest', truncation=False, return_attention_mask=True)


def longform_cases(spec):
    """(name, input names, kwargs) of the long-form cases: the whole 75 s (and 40 s) as one padding='longest' input;
    kwargs attention_mask True = the feature extractor's attention mask is passed."""
    base = {'return_timestamps': True, 'attention_mask': True, 'return_segments': True}
    if spec['langs'] is None:
        return [('longform', ('long75',), base),
                ('refused_no_timestamps', ('long75',), {'return_timestamps': False, 'attention_mask': True})]
    en = dict(base, language='en')
    return [('longform', ('long75',), en),
            ('longform_sequences_only', ('long75',), {'return_timestamps': True, 'attention_mask': True,
                                                      'language': 'en'}),
            ('longform_detect', ('long75',), base),
            ('longform_no_mask', ('long75',), {'return_timestamps': True, 'return_segments': True, 'language': 'en'}),
            ('longform_batch2', ('long75', 'long40'), en),
            ('longform_beam2', ('long75',), dict(en, num_beams=2)),
            ('refused_no_timestamps', ('long75',), {'return_timestamps': False, 'attention_mask': True,
                                                    'language': 'en'})]


def pipeline_case(name, m64, m32, tok, fe, sig, call_kw):
    """transformers.pipeline('automatic-speech-recognition') on a signal, float64 recorded, float32 checked."""
    global PROBE
    outs = []
    for model, dtype in ((m64, torch.float64), (m32, torch.float32)):
        pipe = transformers.pipeline('automatic-speech-recognition', model=model, tokenizer=tok, feature_extractor=fe,
                                     torch_dtype=dtype, device='cpu')
        PROBE = {'eos': m64.generation_config.eos_token_id}
        try:
            with torch.no_grad(), default_dtype(dtype):
                out = pipe(audio(sig).copy(), **copy.deepcopy(call_kw))
        except ValueError as e:
            outs.append(({'error': {'type': type(e).__name__, 'message': str(e)}}, {}))
            continue
        finally:
            probe, PROBE = PROBE, None
        outs.append((plain(out), probe))
    if outs[0][0] != outs[1][0]:
        raise SystemExit(f'pipeline {name}: float32 differs:\n{outs[0][0]}\n{outs[1][0]}')
    out, probe = outs[0]
    rec = {'name': name, 'input': signal_record(sig), 'call_kwargs': call_kw, 'output': out}
    if probe:
        rec['margins'] = {k: r7(v) for k, v in sorted(probe.items()) if k in MIN_MARGIN and v != float('inf')}
        low = {k: v for k, v in rec['margins'].items() if v < MIN_MARGIN[k]}
        if low:
            raise SystemExit(f'pipeline {name}: margins below MIN_MARGIN: {low}')
    return rec


def pipeline_cases(spec):
    gk = {} if spec['langs'] is None else {'generate_kwargs': {'language': 'en'}}
    cases = [('chunk30', 'long75', dict(gk, chunk_length_s=30)),
             ('chunk30_timestamps', 'long75', dict(gk, chunk_length_s=30, return_timestamps=True))]
    if spec['name'] == 'tiny':
        cases += [('chunk30_stride4_2_timestamps', 'long75', dict(gk, chunk_length_s=30, stride_length_s=[4, 2],
                                                                  return_timestamps=True)),
                  ('chunk10', 'long75', dict(gk, chunk_length_s=10)),
                  ('chunk10_timestamps', 'long75', dict(gk, chunk_length_s=10, return_timestamps=True)),
                  ('unchunked_timestamps', 'long75', dict(gk, return_timestamps=True)),
                  ('unchunked_no_timestamps', 'long75', dict(gk)),
                  ('short_timestamps', 'tones3', dict(gk, return_timestamps=True)),
                  ('chunk30_language_detected', 'long75', dict(chunk_length_s=30, return_language=True))]
    return cases


def prompt_for(spec, ids, tok):
    words = tok(' the sea', add_special_tokens=False)['input_ids'][:2]
    if spec['langs'] is None:
        head = ['<|startoftranscript|>', '<|notimestamps|>']
        words = tok(' the sea shells', add_special_tokens=False)['input_ids'][:4]
    else:
        head = ['<|startoftranscript|>', '<|en|>', '<|transcribe|>', '<|notimestamps|>']
    return [ids[t] for t in head] + words


def build(spec):
    path = os.path.join(OUT, spec['name'])
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    tok, ids, vocab_size = write_tokenizer(path, spec['langs'] or LANG99)
    model = make_model(spec, ids, vocab_size)
    model.save_pretrained(path, safe_serialization=True)
    fe = WhisperFeatureExtractor(feature_size=spec['mels'])
    fe.save_pretrained(path)
    return path, tok, ids


def folder_goldens(spec, path, tok, ids, quick=False):
    m64 = WhisperForConditionalGeneration.from_pretrained(path).eval().double()
    m32 = WhisperForConditionalGeneration.from_pretrained(path).eval()
    fe = WhisperFeatureExtractor.from_pretrained(path)
    keys = {k: list(v.shape) for k, v in sorted(load_file(os.path.join(path, 'model.safetensors')).items())}
    cfg = m64.config
    entry = {'folder': spec['name'], 'seed': spec['seed'], 'eos_scale': spec['eos_scale'], 'ts_scale': spec['ts_scale'],
             'eos_boost': spec.get('eos_boost', 0.0),
             'config': {k: getattr(cfg, k) for k in (
                 'vocab_size', 'num_mel_bins', 'd_model', 'encoder_layers', 'decoder_layers',
                 'encoder_attention_heads', 'decoder_attention_heads', 'encoder_ffn_dim', 'decoder_ffn_dim',
                 'max_source_positions', 'max_target_positions', 'activation_function', 'scale_embedding',
                 'tie_word_embeddings', 'pad_token_id', 'decoder_start_token_id', 'eos_token_id')},
             'parameters': sum(p.numel() for p in m32.parameters()),
             'n_tensors': len(keys), 'keys': {k: v for k, v in keys.items() if '.layers.' not in k},
             'special_ids': {t: ids[t] for t in ('<|endoftext|>', '<|startoftranscript|>', '<|en|>', '<|translate|>',
                                                 '<|transcribe|>', '<|startoflm|>', '<|startofprev|>',
                                                 '<|nocaptions|>', '<|notimestamps|>', '<|0.00|>', '<|30.00|>')}}
    entry['tokenizer'] = [{'text': t, 'ids': tok(t, add_special_tokens=False)['input_ids'],
                           'ids_with_special': tok(t)['input_ids'],
                           'decoded': tok.decode(tok(t, add_special_tokens=False)['input_ids'])} for t in TOKENIZER_TEXTS]
    prompt = prompt_for(spec, ids, tok)
    entry['forward'] = [forward_case(m64, tok, ids, ['tones3', 'noise7'], fe, prompt)]
    if spec['langs'] is not None:
        entry['detect_language'] = [detect_case(m64, m32, ids, [n], fe) for n in ('tones3', 'noise7', 'chirp05')]
        entry['detect_language'].append(detect_case(m64, m32, ids, ['tones3', 'noise7'], fe))
    cases = generate_cases(spec, tok)
    entry['generate'] = [generate_case(n, m64, m32, tok, fe, list(names), kw, fk)
                         for n, names, kw, fk in (cases[:3] if quick else cases)]
    if not quick and spec['name'] in ('tiny', 'en'):
        entry['longform'] = [generate_case(n, m64, m32, tok, fe, list(names), kw, LONG)
                             for n, names, kw in longform_cases(spec)]
        if spec['name'] in ('tiny', 'en'):
            entry['pipeline'] = []
            for n, sig, kw in pipeline_cases(spec):
                try:
                    entry['pipeline'].append(pipeline_case(n, m64, m32, tok, fe, sig, kw))
                except SystemExit as e:  # kept out of the goldens, said why (README: "left out")
                    entry['pipeline'].append({'name': n, 'input': signal_record(sig), 'call_kwargs': kw,
                                              'left_out': str(e).split('\n')[0]})
    return entry


def search(name, seeds, eos_scales, ts_scales):
    """Per seed / eos_scale / ts_scale: distinct greedy outputs, how many stop on eos, the smallest margin / MIN."""
    spec = next(s for s in FOLDERS if s['name'] == name)
    path = os.path.join(OUT, '_search')
    os.makedirs(path, exist_ok=True)
    tok, ids, vocab_size = write_tokenizer(path, spec['langs'] or LANG99)
    fe = WhisperFeatureExtractor(feature_size=spec['mels'])
    for seed in seeds:
        for es in eos_scales:
            for ts in ts_scales:
                m32 = make_model(spec, ids, vocab_size, seed, es, ts)
                m64 = copy.deepcopy(m32).double()
                line = f'{name} seed {seed} eos_scale {es} ts_scale {ts}:'
                try:
                    recs = [generate_case(n, m64, m32, tok, fe, list(names), kw, fk)
                            for n, names, kw, fk in generate_cases(spec, tok)]
                    ok = [r for r in recs if 'sequences' in r]
                    outs = [tuple(q) for r in ok for q in r['sequences']]
                    eos = ids['<|endoftext|>']
                    ended = sum(1 for q in outs if q[-1] == eos or eos in q[:-1])
                    low = min((v / MIN_MARGIN[k] for r in ok for k, v in r['margins'].items()), default=float('inf'))
                    line += (f' distinct {len(set(outs))}/{len(outs)} eos {ended} margin/MIN {low:.3g} '
                             f'lengths {[len(q) for q in outs]}')
                except SystemExit as e:
                    line += f' FAILS {str(e)[:100]}'
                print(line, flush=True)
    shutil.rmtree(path)


def write_json(folders):
    lines = {}

    def line(x):
        lines[f'@{len(lines)}@'] = json.dumps(x, separators=(',', ':'), ensure_ascii=False)
        return f'@{len(lines) - 1}@'

    for f in folders:
        for k in ('keys', 'config', 'special_ids'):
            f[k] = line(f[k])
        for k in ('tokenizer', 'forward', 'detect_language', 'generate', 'longform', 'pipeline'):
            if k in f:
                f[k] = [line(c) for c in f[k]]
    defaults = GenerationConfig().to_dict()
    defaults.pop('transformers_version', None)
    text = json.dumps({'transformers': transformers.__version__, 'torch': torch.__version__, 'atol': TOL[0],
                       'rtol': TOL[1], 'min_margin': line(MIN_MARGIN), 'sampling_rate': SR,
                       'signals': line({n: SIGNALS[n] for n in SIGNALS}), 'folders': folders}, indent=1,
                      ensure_ascii=False)
    text = re.sub(r'"(@\d+@)"', lambda m: lines[m.group(1)], text)
    with open(os.path.join(OUT, 'expected.json'), 'w') as f:
        f.write(text + '\n')


def main():
    if sys.argv[1:2] == ['--search']:
        first, _, last = sys.argv[3].rpartition(':')
        return search(sys.argv[2], range(int(first or 0), int(last)), [float(v) for v in sys.argv[4].split(',')],
                      [float(v) for v in sys.argv[5].split(',')])
    if sys.argv[1:2] == ['--words']:  # only words.json / words.bin, from the folders as they are
        import make_whisper_word_goldens
        make_whisper_word_goldens.run(sys.modules[__name__], sys.argv[2:])
        return write_readme()
    only = sys.argv[1:]
    os.makedirs(OUT, exist_ok=True)
    folders = []
    for spec in FOLDERS:
        if only and spec['name'] not in only:
            continue
        path, tok, ids = build(spec)
        folders.append(folder_goldens(spec, path, tok, ids))
        print(spec['name'], 'ok', file=sys.stderr, flush=True)
    write_json(folders)
    import make_whisper_word_goldens  # words.json / words.bin (its docstring is in the README too)
    make_whisper_word_goldens.run(sys.modules[__name__], only)
    write_readme()


def write_readme():
    with open(os.path.join(OUT, 'README.md'), 'w') as f:
        f.write('# Whisper goldens\n\nMade by tests/data/make_whisper_goldens.py; its docstring, repeated here.\n\n')
        f.write('```text\n' + __doc__.split('\n\n', 1)[1].strip() + '\n```\n')
        import make_whisper_word_goldens
        f.write('\nWord-level timestamps: tests/data/make_whisper_word_goldens.py (run by the script above, or by '
                '`make_whisper_goldens.py --words`); its docstring:\n\n```text\n' + make_whisper_word_goldens.__doc__.strip() + '\n```\n')


if __name__ == '__main__':
    main()
