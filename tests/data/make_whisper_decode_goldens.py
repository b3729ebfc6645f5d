#!/usr/bin/python3
"""Goldens of Whisper's generation helpers and ASR decoding (issue 41): tests/data/goldens/whisper_decode/goldens.json,
made by Hugging Face transformers v4.40.2 itself (its classes and functions, called on constructed inputs).

Run: /usr/bin/python3 tests/data/make_whisper_decode_goldens.py (Debian's torch 1.13; transformers through tools/hf_env).
Deterministic: no torch RNG is used (rows come from the integer LCG below, which tests/js/whisper_decode.test.mjs
repeats bit for bit), one thread; two runs write identical bytes.

THE VOCABULARY: a small slow WhisperTokenizer written to a temp folder: the 256 byte symbols, MERGES (20 merges, each
adding its token), then <|endoftext|> (276, bos = eos = unk), <|startoftranscript|>, the first 99 languages of
LANGUAGES (no <|yue|>), <|translate|>, <|transcribe|>, <|startoflm|>, <|startofprev|>, <|nocaptions|>,
<|notimestamps|> (all special, in Whisper's order), then <|0.00|> ... <|30.00|> (added, not special). V = 1884,
timestamp_begin = 383. The JS test builds the tokenizer.json twin from `vocab` / `merges` here.

ROWS: row(seed) = V float32 values (k - 2^23) / 2^21, k = 24 bits of the LCG s -> (s * 1103515245 + 12345) mod 2^31
(bits 7..30), then `shift` (float32) added to the timestamp ids' values (float32 add).

SECTIONS (each a list of cases, one per line):
  processors   one processor of transformers on one row: {kind, params, ids (the row's input_ids), seed, shift,
               masked: [[from, to), ...] the ids set to -inf (all else is unchanged, checked here), and for the
               timestamp processor lse / maxText: the float32 bits of logsumexp of the timestamp log-probs and of the
               largest text log-prob (torch's values), and took: whether the text was masked by that rule}
  order        class names of the processor list generate() builds (Whisper's _retrieve_logit_processors, then
               GenerationMixin._get_logits_processor merging them after its own) for some settings
  init         _set_return_timestamps + _set_language_and_task + _retrieve_init_tokens on generation configs:
               {config, language, task, return_timestamps, is_multilingual, detected, init | error}
  detect       detect_language's rule on a row: the argmax id over the language ids and torch's softmax of the
               masked row at the language ids (float32 bits)
  prompt       get_prompt_ids(text) -> ids | error
  decode       WhisperTokenizer.decode(ids, skip_special_tokens, output_offsets / decode_with_timestamps)
  asr          _decode_asr(model_outputs, return_timestamps, return_language, time_precision 0.02) -> [text, optional]
  lcs          _find_longest_common_sequence(sequences)
  segments     _retrieve_segment(seek_sequence, time_offset, seek_num_frames, ...) -> segments [{start, end (float32
               as torch gives them), tokens}], segment_offset; with time_offset = seek * 0.02 / 2 computed as generate
  words        _decode_asr(..., return_timestamps='word') on rows of encoded texts (English with punctuation and
               quotes, Chinese, Japanese, Thai, bytes that are no UTF-8, a tokenizer language) with token_timestamps
               (float32 multiples of 0.02, as _extract_token_timestamps gives them), one row or stride-overlapping
               chunks: {name, outputs: [{tokens, token_timestamps (float32 values), stride?}], language (the
               tokenizer's), text, chunks: [{text, timestamp}]}
  token_timestamps  _extract_token_timestamps on cross-attention weights made from the LCG (no torch RNG): one
               decoding step of a 2-layer model of `model_heads` heads, weights (1, model_heads, T, S) per layer, value
               of [layer][head][t][s] = lcg_row(seed + 7·layer + head, T·S) mapped by `kind` (float32 exact):
                 uniform  (v + 4) / 8;  ties  floor(|v|) / 4 (many equal values);  near  float32(1/S) + v · 2^-22
                 (nearly uniform rows, the normalisation's worst case);  path  (a diagonal band of 8 plus |v| / 4)
               {T, S, model_heads, kind, seed, heads (alignment_heads), num_frames, width (median_filter_width),
               timestamps (float32 values), matrix_fnv (FNV-1a of the float64 bytes _dynamic_time_warping was given)}
"""
import copy
import json
import os
import random
import struct
import sys
import tempfile
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import GenerationConfig, WhisperTokenizer  # noqa: E402
from transformers.generation import logits_process as lp  # noqa: E402
from transformers.generation.utils import GenerationMixin  # noqa: E402
from transformers.models.whisper import tokenization_whisper as tw  # noqa: E402
from transformers.models.whisper import generation_whisper as hf_wg  # noqa: E402
from transformers.models.whisper.generation_whisper import WhisperGenerationMixin  # noqa: E402
from tokenizers import AddedToken  # noqa: E402  (tools/hf_env's stand-in)

torch.set_num_threads(1)
OUT = os.path.join(ROOT, 'tests', 'data', 'goldens', 'whisper_decode')

MERGES = ['Ġ t', 'h e', 'Ġt he', 'Ġ a', 'i n', 'Ġ s', 'e r', 'o n', 'Ġ w', 'r e', 'a t', 'o r', 'e n', 'Ġ c',
          'i s', 'Ġ o', 'Ġ h', 'Ġ b', 'l l', 'Ġ f']
LANGS = list(tw.LANGUAGES.keys())[:99]


def build_tokenizer(folder):
    byte_syms = list(tw.bytes_to_unicode().values())
    vocab = {s: i for i, s in enumerate(byte_syms)}
    for m in MERGES:
        vocab[m.replace(' ', '')] = len(vocab)
    with open(os.path.join(folder, 'vocab.json'), 'w', encoding='utf-8') as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(folder, 'merges.txt'), 'w', encoding='utf-8') as f:
        f.write('#version: 0.2\n' + '\n'.join(MERGES) + '\n')
    specials = ['<|startoftranscript|>'] + [f'<|{c}|>' for c in LANGS] + [
        '<|translate|>', '<|transcribe|>', '<|startoflm|>', '<|startofprev|>', '<|nocaptions|>', '<|notimestamps|>']
    tok = WhisperTokenizer(os.path.join(folder, 'vocab.json'), os.path.join(folder, 'merges.txt'),
                           additional_special_tokens=specials)
    tok.add_tokens([AddedToken('<|%.2f|>' % (i * 0.02), lstrip=False, rstrip=False) for i in range(1501)])
    return tok, list(vocab.keys()), specials


def lcg_row(seed, n):
    s = seed & 0x7fffffff
    out = np.empty(n, dtype=np.float32)
    for i in range(n):
        s = (s * 1103515245 + 12345) & 0x7fffffff
        k = (s >> 7) & 0xffffff
        out[i] = np.float32((k - (1 << 23)) / (1 << 21))
    return out


def f32bits(x):
    return struct.unpack('<I', struct.pack('<f', float(x)))[0]


def ranges(mask):
    out, i, n = [], 0, len(mask)
    while i < n:
        if mask[i]:
            j = i
            while j < n and mask[j]:
                j += 1
            out.append([i, j])
            i = j
        else:
            i += 1
    return out


def main():
    tmp = tempfile.mkdtemp()
    tok, vocab_tokens, specials = build_tokenizer(tmp)
    V = len(tok)
    eos = tok.convert_tokens_to_ids('<|endoftext|>')
    sot = tok.convert_tokens_to_ids('<|startoftranscript|>')
    nots = tok.convert_tokens_to_ids('<|notimestamps|>')
    tb = nots + 1
    prev = tok.convert_tokens_to_ids('<|startofprev|>')
    lang_to_id = {f'<|{c}|>': tok.convert_tokens_to_ids(f'<|{c}|>') for c in LANGS}
    task_to_id = {'translate': tok.convert_tokens_to_ids('<|translate|>'),
                  'transcribe': tok.convert_tokens_to_ids('<|transcribe|>')}
    en, fr, de = lang_to_id['<|en|>'], lang_to_id['<|fr|>'], lang_to_id['<|de|>']
    tr = task_to_id['transcribe']
    assert tok.all_special_ids[-1] == nots and tok.all_special_ids[0] == eos and V == 1884 and tb == 383
    text_ids = list(range(256 + 0, 276))  # the merged tokens
    letters = [vocab_tokens.index(c) for c in 'abcdefghiklmnoprstuw']
    words = text_ids + letters
    rnd = random.Random(41)

    def ts(t):  # timestamp token of t seconds
        return tb + int(round(t / 0.02))

    def gen_config(**kw):
        d = dict(decoder_start_token_id=sot, eos_token_id=eos, bos_token_id=eos, pad_token_id=eos,
                 no_timestamps_token_id=nots, lang_to_id=lang_to_id, task_to_id=task_to_id, is_multilingual=True,
                 max_initial_timestamp_index=50)
        d.update(kw)
        return GenerationConfig(**d)

    # ---- processors --------------------------------------------------------------------------------------------
    processors = []

    def run_proc(kind, params, ids, seed, shift=0.0):
        row = lcg_row(seed, V)
        row[tb:] = row[tb:] + np.float32(shift)
        scores = torch.from_numpy(row.copy())[None]
        input_ids = torch.tensor([ids], dtype=torch.long)
        extra = {}
        if kind == 'suppress':
            proc = lp.SuppressTokensLogitsProcessor(params['tokens'])
        elif kind == 'begin_suppress':
            proc = lp.SuppressTokensAtBeginLogitsProcessor(params['tokens'], params['begin_index'])
        else:
            gc = gen_config(max_initial_timestamp_index=params['max_initial_timestamp_index'])
            proc = lp.WhisperTimeStampLogitsProcessor(gc, begin_index=params['begin_index'])
            # the rule's two numbers, as __call__ computes them (on the row before that rule)
            pre = scores.clone()
            hold = proc._detect_timestamp_from_logprob
            proc._detect_timestamp_from_logprob = False
            pre = proc(input_ids, pre)
            proc._detect_timestamp_from_logprob = hold
            logprobs = torch.nn.functional.log_softmax(pre.float(), dim=-1)
            lse = logprobs[0, tb:].logsumexp(dim=-1)
            mt = logprobs[0, :tb].max()
            extra = {'lse': f32bits(lse), 'maxText': f32bits(mt), 'took': bool(lse > mt)}
        out = proc(input_ids, scores)[0].numpy()
        inf = np.isneginf(out)
        assert np.array_equal(out[~inf], row[~inf]) or np.array_equal(np.isnan(out), np.isnan(row))
        assert all((out[i] == row[i]) or np.isneginf(out[i]) for i in range(V))
        processors.append({'kind': kind, 'params': params, 'ids': ids, 'seed': seed, 'shift': shift,
                           'masked': ranges(inf), **extra})

    init3 = [sot, en, tr]
    run_proc('suppress', {'tokens': [1, 2, 7, 220, 300, 350, 382, 383, 5000]}, init3, 1)
    run_proc('suppress', {'tokens': []}, init3, 2)
    for n in (3, 4):
        run_proc('begin_suppress', {'tokens': [220, eos], 'begin_index': 3}, init3 + [300] * (n - 3), 3 + n)
    seed = 100
    T = 'timestamps'
    hist = [
        ([], None), ([], 0), ([], 1), ([], 50),                       # the first step: max_initial_timestamp_index
        ([ts(0)], 50), ([ts(0), 260], 50), ([ts(0), 260, ts(1.2)], 50),   # single ts, text, ts after text
        ([ts(0), 260, ts(1.2), ts(1.2)], 50),                          # a pair: next is text
        ([ts(0), 260, ts(1.2), ts(1.2), 261, 262], 50),                # decreasing rule: > last+1 ... (last + 1)
        ([ts(0.5), 260, 261, ts(2.0), ts(2.4), 270, ts(3.0)], None),    # last single ts: >= last allowed
        ([260, 261, 262], 50), ([260], None), ([ts(29.98), 260, ts(30.0)], None),
    ]
    for h, mi in hist:
        for shift in (0.0, 4.0):
            seed += 1
            run_proc(T, {'begin_index': 3, 'max_initial_timestamp_index': mi}, init3 + h, seed, shift)
    # begin_index 1 (no init tokens but sot) and a prompt before the init tokens (short-form generate keeps
    # begin_index = len(init_tokens), so the rules read part of the prompt)
    run_proc(T, {'begin_index': 1, 'max_initial_timestamp_index': 50}, [sot], 201)
    run_proc(T, {'begin_index': 4, 'max_initial_timestamp_index': 50}, [prev, 260, 261, sot, en, tr, nots], 202)
    run_proc(T, {'begin_index': 3, 'max_initial_timestamp_index': 50}, [prev, 260, ts(1.0), sot, en, tr], 203, 2.0)
    # near ties of the logsumexp rule: shifts searched so that lse and maxText are close
    near = 0
    for s in range(300, 400):
        row = lcg_row(s, V)
        lo, hi = -8.0, 8.0
        for _ in range(60):
            mid = (lo + hi) / 2
            r = row.copy()
            r[tb:] = r[tb:] + np.float32(mid)
            t = torch.from_numpy(r)[None]
            t[0, nots] = -float('inf')
            lpr = torch.log_softmax(t, -1)
            if lpr[0, tb:].logsumexp(-1) > lpr[0, :tb].max():
                hi = mid
            else:
                lo = mid
        for shift in (float(np.float32(lo)), float(np.float32(hi))):
            run_proc(T, {'begin_index': 3, 'max_initial_timestamp_index': None}, init3 + [260, 261], s,
                     shift)
        near += 1
        if near == 4:
            break

    # ---- order ---------------------------------------------------------------------------------------------------
    order = []
    fake = types.SimpleNamespace()
    fake._merge_criteria_processor_list = types.MethodType(GenerationMixin._merge_criteria_processor_list, fake)
    for settings in [dict(return_timestamps=True), dict(return_timestamps=False),
                     dict(return_timestamps=True, no_repeat_ngram_size=3, repetition_penalty=1.5,
                          renormalize_logits=True),
                     dict(return_timestamps=True, no_speech_threshold=0.6, shortform=False)]:
        short = settings.pop('shortform', True)
        gc = gen_config(suppress_tokens=[1, 2], begin_suppress_tokens=[220, eos], **settings)
        gc.no_speech_threshold = settings.get('no_speech_threshold')
        wl = WhisperGenerationMixin._retrieve_logit_processors(fake_model(), gc, None, 3, short, 1)
        full = GenerationMixin._get_logits_processor(fake, gc, 3, None, None, lp.LogitsProcessorList(wl))
        order.append({'settings': settings, 'shortform': short, 'whisper': [type(p).__name__ for p in wl],
                      'full': [type(p).__name__ for p in full]})

    # ---- init tokens ---------------------------------------------------------------------------------------------
    init = []
    base = dict(decoder_start_token_id=sot, no_timestamps_token_id=nots, lang_to_id=lang_to_id,
                task_to_id=task_to_id, is_multilingual=True)
    configs = {
        'multilingual': base,
        'forced': {**base, 'forced_decoder_ids': [[1, None], [2, tr]]},
        'forced_full': {**base, 'forced_decoder_ids': [[1, fr], [2, tr], [3, nots]]},
        'forced_bad': {**base, 'forced_decoder_ids': [[1, fr], [3, tr]]},
        'english': {'decoder_start_token_id': sot, 'no_timestamps_token_id': nots, 'is_multilingual': False},
        'english_langs': {**base, 'is_multilingual': False},
        'old': {'decoder_start_token_id': sot, 'no_timestamps_token_id': nots},
        'no_notimestamps': {'decoder_start_token_id': sot, 'lang_to_id': lang_to_id, 'task_to_id': task_to_id},
    }
    calls = [(None, None, False, None), ('en', None, False, None), ('english', None, True, None),
             ('<|en|>', 'translate', False, None), ('EN', None, False, None), ('French', 'transcribe', True, None),
             ('castilian', None, False, None), (None, 'translate', False, None), (None, None, True, None),
             ('xx', None, False, None), ('klingon', None, False, None), ('yue', None, False, None),
             ('cantonese', None, False, None), ('<|xx|>', None, False, None), ('en', 'summarize', False, None),
             (None, None, False, True), ('en', None, False, False), (None, None, False, False)]
    for cname, cfg in configs.items():
        for language, task, return_timestamps, is_multilingual in calls:
            if cname not in ('multilingual',) and (language, task) not in [(None, None), ('en', None),
                                                                           (None, 'translate')]:
                continue
            if is_multilingual is not None and cname not in ('multilingual', 'english'):
                continue
            for rt in ([return_timestamps] if cname == 'multilingual' else [False, True]):
                case = {'config': cname, 'language': language, 'task': task, 'return_timestamps': rt,
                        'is_multilingual': is_multilingual, 'detected': de}
                try:
                    gc = GenerationConfig(**cfg)
                    WhisperGenerationMixin._set_return_timestamps(rt, True, gc)
                    WhisperGenerationMixin._set_language_and_task(language, task, is_multilingual, gc)
                    model = fake_model(detected=de)
                    case['init'] = WhisperGenerationMixin._retrieve_init_tokens(
                        model, None, generation_config=gc, config=types.SimpleNamespace(), num_segment_frames=3000,
                        kwargs={})
                    case['detect_called'] = model.detect_calls
                except ValueError as e:
                    case['error'] = str(e)
                init.append(case)
    configs_out = configs

    # ---- language detection --------------------------------------------------------------------------------------
    detect = []
    for s in (501, 502, 503):
        row = lcg_row(s, V)
        if s == 503:
            row[lang_to_id['<|ja|>']] = row[lang_to_id['<|es|>']] = np.float32(9.5)   # a tie: the first id wins
        logits = torch.from_numpy(row.copy())[None]
        mask = torch.ones_like(logits[0], dtype=torch.bool)
        mask[list(lang_to_id.values())] = False
        logits[:, mask] = -np.inf
        lang = int(logits.argmax(-1)[0])
        probs = logits.softmax(-1)[0]
        detect.append({'seed': s, 'tie': s == 503, 'lang': lang,
                       'probs': [f32bits(probs[i]) for i in lang_to_id.values()]})

    # ---- prompt ids --------------------------------------------------------------------------------------------
    prompt = []
    for text in ['the cat', '  hello there \n', '', 'in<|en|>', 'at<|1.00|>', 'x<|startofprev|>', '\x1cfish\x1f']:
        case = {'text': text}
        try:
            case['ids'] = tok.get_prompt_ids(text).tolist()
        except ValueError as e:
            case['error'] = str(e)
        prompt.append(case)

    # ---- decode with offsets / timestamps ----------------------------------------------------------------------
    decode = []
    seqs = [
        [sot, en, tr, nots] + words[:6] + [eos],
        [sot, en, tr, ts(0), 260, 261, ts(1.5), ts(1.5), 262, 263, ts(3.0), eos],
        [sot, en, tr, ts(0), 260, 261, ts(1.5), ts(0.5), 262, ts(2.0), eos],     # a new segment: times restart
        [prev, 270, 271, sot, en, tr, ts(0), 260, ts(1.0), ts(1.0), 262, ts(2.0), eos],
        [prev, 270, 271],                                                        # a prompt without sot
        [ts(0), 260, 261, ts(1.0)], [ts(0)], [260, 261], [ts(0), 260, ts(1.0), ts(1.0), 262],
        [ts(0), ts(1.0), ts(1.0), 262, ts(2.5), 263],
    ]
    for ids in seqs:
        for skip in (False, True):
            c = {'ids': ids, 'skip': skip, 'text': tok.decode(ids, skip_special_tokens=skip),
                 'with_timestamps': tok.decode(ids, skip_special_tokens=skip, decode_with_timestamps=True)}
            o = tok.decode(ids, skip_special_tokens=skip, output_offsets=True)
            c['offsets'] = [{'text': x['text'], 'timestamp': list(x['timestamp'])} for x in o['offsets']]
            decode.append(c)

    # ---- _decode_asr -------------------------------------------------------------------------------------------
    asr = []

    def asr_case(name, outputs, modes):
        for rt, rl in modes:
            mo = [{'tokens': torch.tensor([o['tokens']]), **({'stride': tuple(o['stride'])} if 'stride' in o else {})}
                  for o in outputs]
            text, optional = tok._decode_asr(mo, return_timestamps=rt, return_language=rl, time_precision=30 / 1500)
            if 'chunks' in optional:
                optional = {'chunks': [{k: (list(v) if isinstance(v, tuple) else v) for k, v in ch.items()}
                                       for ch in optional['chunks']]}
            asr.append({'name': name, 'outputs': outputs, 'return_timestamps': rt, 'return_language': rl,
                        'text': text, 'optional': optional})

    modes = [(False, False), (True, False), (False, True), (True, True)]
    asr_case('one, no timestamps', [{'tokens': [sot, en, tr, nots] + words[:7] + [eos]}], modes)
    asr_case('one, timestamps', [{'tokens': [sot, en, tr, ts(0), 260, 261, ts(1.5), ts(1.5), 262, ts(3.1), eos]}],
             modes)
    asr_case('duplicate start', [{'tokens': [sot, en, tr, ts(1.0), ts(1.0), 260, ts(2.0), 262, eos]}], modes)
    asr_case('no ending timestamp', [{'tokens': [sot, en, tr, ts(0), 260, 261, ts(1.0), ts(1.0), 262, eos]}], modes)
    asr_case('empty', [{'tokens': [sot, en, tr, nots, eos]}], modes)
    asr_case('prompt', [{'tokens': [prev, 270, 271, sot, en, tr, ts(0), 260, ts(1.0), eos]}], modes)
    asr_case('language switch', [{'tokens': [sot, en, tr, nots, 260, 261, eos], 'stride': [30.0, 0.0, 5.0]},
                                 {'tokens': [sot, fr, tr, nots, 262, 263, eos], 'stride': [30.0, 5.0, 0.0]}], modes)
    # chunked: a transcript of timed words cut into overlapping windows as the pipeline's chunk_iter does
    for name, n_chunks, left_s, right_s, with_ts, noise in [
            ('2 chunks, 5 s strides', 2, 5.0, 5.0, True, 0), ('3 chunks, 3.3 s strides', 3, 3.3, 3.3, True, 0),
            ('4 chunks, 4.17 s / 2.5 s', 4, 4.17, 2.5, True, 1), ('3 chunks, no timestamps', 3, 5.0, 5.0, False, 1),
            ('4 chunks, no timestamps, noisy', 4, 6.0, 6.0, False, 3), ('2 chunks, last short', 2, 5.0, 5.0, True, 2)]:
        chunk = 30.0
        step = chunk - left_s - right_s
        total = step * n_chunks + left_s + right_s
        t, timeline = 0.3, []
        while t < total - 0.5:
            timeline.append((round(t, 2), rnd.choice(words)))
            t += rnd.choice([0.3, 0.42, 0.58, 0.7])
        outputs = []
        for c in range(n_chunks):
            start = c * step
            sl = 0.0 if c == 0 else left_s
            sr = 0.0 if c == n_chunks - 1 else right_s
            end = min(start + chunk, total if c == n_chunks - 1 else start + chunk)
            inside = [(tt - start, w) for tt, w in timeline if start <= tt < end - 0.2]
            toks = [sot, en, tr] + ([] if with_ts else [nots])
            if with_ts:
                i = 0
                while i < len(inside):
                    seg = inside[i:i + rnd.choice([3, 4, 5])]
                    toks.append(ts(max(0.0, seg[0][0] - 0.1)))
                    toks += [w for _, w in seg]
                    toks.append(ts(min(30.0, seg[-1][0] + 0.2)))
                    i += len(seg)
            else:
                toks += [w for _, w in inside]
            for _ in range(noise):
                j = rnd.randrange(4, len(toks) - 1)
                if toks[j] < tb:
                    toks[j] = rnd.choice(words)
            toks.append(eos)
            outputs.append({'tokens': toks, 'stride': [chunk, sl, sr]})
        asr_case(name, outputs, modes[:2] if with_ts else [(False, False)])

    # ---- the longest common sequence -----------------------------------------------------------------------------
    lcs = []
    for seqs in [[[1, 2, 3, 4], [3, 4, 5]], [[1, 2, 3, 4, 5], [9, 3, 4, 5, 6, 7], [5, 6, 7, 8]], [[1, 2], [3, 4]],
                 [[1, 2, 3], []], [[], [1, 2, 3]], [[1, 1, 1, 1], [1, 1, 1, 2]], [[5]]]:
        lcs.append({'sequences': seqs, 'out': tw._find_longest_common_sequence([list(s) for s in seqs])})
    for _ in range(20):
        a = [rnd.randrange(6) for _ in range(rnd.randrange(3, 12))]
        b = a[rnd.randrange(len(a)):] + [rnd.randrange(6) for _ in range(rnd.randrange(0, 8))]
        b = [x if rnd.random() > 0.2 else rnd.randrange(6) for x in b]
        lcs.append({'sequences': [a, b], 'out': tw._find_longest_common_sequence([a, b])})

    # ---- _retrieve_segment ---------------------------------------------------------------------------------------
    segments = []
    for seek, nframes, seq in [
            (0, 3000, [ts(0), 260, 261, ts(1.5), ts(1.5), 262, ts(3.0), ts(3.0), 263, 264]),   # unfinished: seek back
            (0, 3000, [ts(0), 260, 261, ts(1.5), ts(1.5), 262, ts(3.0), eos]),                 # single ending
            (1234, 3000, [ts(0), 260, ts(1.5), ts(1.5), 262, ts(3.0)]),
            (4711, 2500, [ts(0.4), 260, 261, eos]),                        # no pair, a start timestamp only
            (4711, 2500, [ts(0), 260, 261, ts(2.2), eos]),                  # no pair, last timestamp used
            (3000, 1800, [260, 261, eos]), (6000, 3000, [ts(0), 260, ts(0.8), ts(0.8), ts(2.0), 262]),
            (98765, 3000, [ts(0.02), 260, ts(7.34), ts(7.34), 261, ts(12.66), ts(12.66), 262, ts(29.98), eos])]:
        seek_t = torch.tensor([seek], dtype=torch.long)
        time_offset = seek_t * 0.02 / 2
        segs, off = WhisperGenerationMixin._retrieve_segment(
            torch.tensor(seq), [{}], time_offset, tb, torch.tensor([nframes]), 0.02, 2, 0, 0, False)
        segments.append({'seek': seek, 'seek_num_frames': nframes, 'sequence': seq,
                         'time_offset': f32bits(time_offset[0]),
                         'segments': [{'start': f32bits(s['start']), 'end': f32bits(s['end']),
                                       'tokens': s['tokens'].tolist()} for s in segs],
                         'segment_offset': int(off)})

    # ---- word-level timestamps: _decode_asr's word branch -----------------------------------------------------------
    lang_ids = {c: tok.convert_tokens_to_ids(f'<|{c}|>') for c in ('zh', 'ja', 'th')}
    words_out = []

    def times_of(n, start_frame, seed):  # nondecreasing float32 multiples of 0.02, as the DTW's jumps give them
        r = random.Random(seed)
        out, f = [0.0], start_frame
        for _ in range(n - 1):
            f += r.choice([0, 0, 1, 3, 7, 12])
            out.append(float(np.float32(f * 0.02)))
        return out

    def word_case(name, outputs, language=None):
        mo = []
        for o in outputs:
            m = {'tokens': torch.tensor([o['tokens']]),
                 'token_timestamps': torch.tensor([o['token_timestamps']], dtype=torch.float32)}
            if 'stride' in o:
                m['stride'] = tuple(o['stride'])
            mo.append(m)
        tok.language = language
        try:
            text, optional = tok._decode_asr(mo, return_timestamps='word', return_language=False,
                                             time_precision=30 / 1500)
        finally:
            tok.language = None
        words_out.append({'name': name, 'outputs': outputs, 'language': language, 'text': text,
                          'chunks': [{'text': c['text'], 'timestamp': list(c['timestamp'])} for c in optional['chunks']]})

    def enc(text):
        return tok(text, add_special_tokens=False)['input_ids']

    english = enc(' Hello, world! This is (a) test: "quoted" words - and  3.14? ¿Qué? “Sí”, dijo.')
    chinese = enc('你好，世界。我们在这里！')
    japanese = enc('こんにちは、世界。「東京」へ行く！')
    thai = enc('สวัสดีครับ โลก')
    broken = [200, 201, 202] + enc(' ok') + [228, 189] + enc(' 你') + [160, 161]  # bytes that are no UTF-8
    for name, lang, body in [('english', en, english), ('chinese', lang_ids['zh'], chinese),
                             ('japanese', lang_ids['ja'], japanese), ('thai', lang_ids['th'], thai),
                             ('broken bytes, english', en, broken), ('broken bytes, chinese', lang_ids['zh'], broken)]:
        toks = [sot, lang, tr, ts(0)] + body + [ts(4.0), eos]
        word_case(name, [{'tokens': toks, 'token_timestamps': times_of(len(toks), 0, len(words_out))}])
    half = len(english) // 2
    toks = [sot, en, tr, ts(0)] + english[:half] + [ts(2.0), ts(2.0)] + english[half:] + [ts(5.5), eos]
    word_case('english, two segments', [{'tokens': toks, 'token_timestamps': times_of(len(toks), 0, 41)}])
    toks = [sot, en, tr, ts(0)] + english[:half] + [ts(2.0), ts(2.0)] + english[half:] + [eos]
    word_case('english, no ending timestamp', [{'tokens': toks, 'token_timestamps': times_of(len(toks), 0, 42)}])
    toks = [sot, en, tr, nots] + english + [eos]
    word_case('english, no timestamp tokens', [{'tokens': toks, 'token_timestamps': times_of(len(toks), 0, 43)}])
    toks = [sot, tr, ts(0)] + chinese + [ts(3.0), eos]   # no language token: the tokenizer's language, else english
    word_case('no language token', [{'tokens': toks, 'token_timestamps': times_of(len(toks), 0, 44)}])
    word_case('no language token, tokenizer chinese', [{'tokens': toks, 'token_timestamps': times_of(len(toks), 0, 44)}],
              language='chinese')
    toks = [sot, en, tr, ts(0)] + english + [eos]
    word_case('times shorter than the row', [{'tokens': toks, 'token_timestamps': times_of(len(toks) - 2, 0, 45) + [
        float(np.float32(6.0)), float(np.float32(6.1))]}])
    # chunks overlapping by their strides, each with its own times (relative to the chunk), merged by the LCS
    text = english + chinese + english
    for name, lang, n_chunks, left_s, right_s in [('3 chunks, 5 s strides', en, 3, 5.0, 5.0),
                                                  ('2 chunks, 4 s / 2 s, chinese', lang_ids['zh'], 2, 4.0, 2.0)]:
        outputs, step = [], len(text) // n_chunks
        for c in range(n_chunks):
            lo = max(0, c * step - 4)
            hi = len(text) if c == n_chunks - 1 else (c + 1) * step + 4
            toks = [sot, lang, tr, ts(0)] + text[lo:hi] + [ts(25.0), eos]
            outputs.append({'tokens': toks, 'token_timestamps': times_of(len(toks), 0, 50 + c),
                            'stride': [30.0, 0.0 if c == 0 else left_s, 0.0 if c == n_chunks - 1 else right_s]})
        word_case(name, outputs)

    # ---- token-level timestamps: _extract_token_timestamps --------------------------------------------------------
    token_ts = []
    captured = []
    orig_dtw = hf_wg._dynamic_time_warping

    def dtw_spy(matrix):
        captured.append(np.ascontiguousarray(matrix, dtype=np.float64))
        return orig_dtw(matrix)
    hf_wg._dynamic_time_warping = dtw_spy

    def fnv(a):
        h = 0x811C9DC5
        for b in a.tobytes():
            h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
        return f'{h:08x}'

    def weights_of(kind, T, S, seed):
        v = lcg_row(seed, T * S).reshape(T, S)
        if kind == 'uniform':
            w = (v + np.float32(4)) / np.float32(8)
        elif kind == 'ties':
            w = np.floor(np.abs(v)) / np.float32(4)
        elif kind == 'near':
            w = np.float32(1.0 / S) + v * np.float32(2.0 ** -22)
        else:  # path: a diagonal band
            band = np.abs(np.arange(S)[None, :] - (np.arange(T)[:, None] * S) // T) < 3
            w = band.astype(np.float32) * np.float32(8) + np.abs(v) / np.float32(4)
        return torch.from_numpy(np.ascontiguousarray(w, dtype=np.float32))

    for T, S, model_heads, kind, seed, heads, num_frames, width in [
            (1, 10, 2, 'uniform', 1, [[1, 0]], None, 7), (3, 25, 4, 'uniform', 2, [[1, 0], [1, 2], [1, 3]], None, 7),
            (12, 200, 4, 'near', 3, [[1, 0], [1, 2], [1, 3]], None, 7),
            (40, 1500, 4, 'near', 4, [[1, 0], [1, 2], [1, 3]], None, 7),
            (40, 1500, 4, 'path', 5, [[1, 0], [1, 2], [1, 3]], 1000, 7),
            (17, 300, 6, 'uniform', 6, [[0, 1], [1, 0], [1, 2], [1, 3], [1, 5], [0, 4]], None, 7),
            (20, 100, 6, 'ties', 7, [[1, h] for h in range(6)] + [[0, h] for h in range(4)], None, 5),
            (5, 3, 4, 'uniform', 8, [[1, 0], [1, 2]], None, 7), (8, 7, 4, 'near', 9, [[1, 0], [0, 1], [1, 2], [1, 3]], None, 7),
            (9, 40, 4, 'ties', 10, [[1, 0], [1, 2], [1, 3]], 50, 3), (300, 64, 4, 'near', 11, [[1, 0], [1, 2], [1, 3]], None, 7),
            (25, 1500, 4, 'path', 12, [[1, 1]], 2999, 9)]:
        layers = tuple(torch.stack([weights_of(kind, T, S, seed + 7 * l + h) for h in range(model_heads)])[None]
                       for l in range(2))
        outputs = transformers.generation.utils.GenerateEncoderDecoderOutput(
            sequences=torch.zeros((1, T + 1), dtype=torch.long), cross_attentions=(layers,))
        fake = types.SimpleNamespace(config=types.SimpleNamespace(decoder_layers=2, median_filter_width=width))
        captured.clear()
        got = WhisperGenerationMixin._extract_token_timestamps(fake, outputs, heads, num_frames=num_frames)
        token_ts.append({'T': T, 'S': S, 'model_heads': model_heads, 'kind': kind, 'seed': seed, 'heads': heads,
                         'num_frames': num_frames, 'width': width,
                         'timestamps': [float(np.float32(x)) for x in got[0].tolist()], 'matrix_fnv': fnv(captured[0])})
    hf_wg._dynamic_time_warping = orig_dtw

    doc = {'transformers': transformers.__version__, 'torch': torch.__version__.split('+')[0], 'V': V,
           'vocab': vocab_tokens, 'merges': MERGES, 'specials': specials, 'langs': LANGS,
           'ids': {'eos': eos, 'sot': sot, 'notimestamps': nots, 'timestamp_begin': tb, 'startofprev': prev},
           'configs': configs_out,
           'processors': processors, 'order': order, 'init': init, 'detect': detect, 'prompt': prompt,
           'decode': decode, 'asr': asr, 'lcs': lcs, 'segments': segments, 'words': words_out,
           'token_timestamps': token_ts}
    os.makedirs(OUT, exist_ok=True)
    lines = ['{']
    keys = list(doc)
    for i, k in enumerate(keys):
        v = doc[k]
        comma = ',' if i < len(keys) - 1 else ''
        if isinstance(v, list) and v and isinstance(v[0], dict):
            lines.append(f'  {json.dumps(k)}: [')
            lines += [f'    {json.dumps(x, ensure_ascii=False)}' + (',' if j < len(v) - 1 else '') for j, x in enumerate(v)]
            lines.append(f'  ]{comma}')
        else:
            lines.append(f'  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}{comma}')
    lines.append('}')
    with open(os.path.join(OUT, 'goldens.json'), 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines) + '\n')
    with open(os.path.join(OUT, 'README.md'), 'w', encoding='utf-8') as f:
        f.write(__doc__)


def fake_model(detected=None):
    """What _retrieve_init_tokens and _retrieve_logit_processors use of a model: detect_language (a fixed answer)."""
    m = types.SimpleNamespace(detect_calls=0)

    def detect_language(**kw):
        m.detect_calls += 1
        return torch.tensor([detected])
    m.detect_language = detect_language
    return m


if __name__ == '__main__':
    main()
