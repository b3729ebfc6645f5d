"""Word-level timestamps of the Whisper goldens (tests/data/goldens/whisper/words.json and words.bin), made by
transformers v4.40.2 itself on the folders make_whisper_goldens.py saved; run by it (its full run, or
`make_whisper_goldens.py --words` on the folders as they are: expected.json is not touched). Deterministic.

WORDS (words.json: {transformers, torch, atol, rtol, perturbation, trials, folders: [{folder, pipeline, generate,
cross_attention?, raw?}]}, one case a line):
  pipeline case {name, input (signal record), call_kwargs, output, margins, stable}: transformers.pipeline(
    'automatic-speech-recognition') called with return_timestamps='word' as make_whisper_goldens.py's pipeline cases
    (float64 recorded, float32 equal: checked). The pipeline passes return_timestamps='word' on to generate, which in
    short form puts no <|notimestamps|> in the prompt but runs no WhisperTimeStampLogitsProcessor (`is True` there);
    long-form sets it True. num_frames = chunk samples // hop_length in chunked mode (the weights cropped to its half).
    tiny: one window (tones3, language en), chunk_length_s 10 and 5, 15 with stride [4, 2], long-form (75 s), Chinese
    (one window and long-form) and Japanese (language zh / ja: words split on unicode), detected language, beams
    (below); en: one window (no language token: english; empty: the model emits only timestamps there), long-form
    (40 s); v3: Cantonese (yue, unicode split), one window (empty, as en's) and long-form (75 s).
  stable: every _extract_token_timestamps call of the case (float32 run) gives the same token times when its
    cross-attention weights are multiplied by (1 + PERTURBATION · u), u uniform in [-1, 1), TRIALS times: the times
    do not hang on float32 rounding (an engine's weights differ from torch's by ~1e-6 relative). A case that is not
    stable is kept with stable false, and the test says so.
  beams: transformers v4.40.2 picks beam search's cross-attention rows by beam_indices without shifting them by the
    decoder prompt's length (fixed in later releases), so its rows come from other hypotheses and its
    token_timestamps are len(prompt) - 1 shorter than the sequence. attnwasm teacher-forces each returned row
    instead. A beam case records output_4_40_2 (what the pipeline gives) and output: transformers' own _decode_asr fed
    with the token times transformers' _extract_token_timestamps computes from the teacher-forced cross-attention of
    the pipeline's sequence (model(..., output_attentions=True): the rows greedy generation would concatenate).
  generate case {name, inputs, kwargs, sequences, token_timestamps (float32 values), [token_timestamps_4_40_2]}:
    model.generate(input_features, return_token_timestamps=True, **kwargs) (float32), as pipeline.
  cross_attention {inputs, decoder_input_ids, heads, shape (1, heads, T, 1500), columns (every 15th state and each
    row's 3 largest), weights: base64 of float32 (heads, T, len(columns)) little-endian}: the alignment heads'
    cross-attention of a teacher-forced forward (float32 model), for comparing an engine's weights.
  raw {case, call, num_frames, shape (heads, T, S'), offset, timestamps}: the float32 weights one
    _extract_token_timestamps call of a pipeline case was given (its alignment heads, already cropped to
    num_frames // 2 states) at byte `offset` of words.bin, and the token times it returned.
"""
import base64
import copy
import json
import os
import re

import numpy as np
import torch

PERTURBATION = 1e-5
TRIALS = 6

import transformers  # noqa: E402  (set up by make_whisper_goldens.py)
from transformers import WhisperFeatureExtractor, WhisperForConditionalGeneration, WhisperTokenizer  # noqa: E402
from transformers.generation.utils import GenerateEncoderDecoderOutput  # noqa: E402
from transformers.models.whisper import generation_whisper as hf_wg  # noqa: E402

_orig_extract = hf_wg.WhisperGenerationMixin._extract_token_timestamps
CALLS = None  # a list while a case runs: per _extract_token_timestamps call {weights, num_frames, out, stable}


def _selected(outputs, heads, decoder_layers):
    ca = [torch.cat([x[i] for x in outputs.cross_attentions], dim=2) for i in range(decoder_layers)]
    return torch.stack([ca[l][:, h] for l, h in heads]).permute([1, 0, 2, 3])


def _extract_spy(self, generate_outputs, alignment_heads, time_precision=0.02, num_frames=None):
    out = _orig_extract(self, generate_outputs, alignment_heads, time_precision=time_precision, num_frames=num_frames)
    if CALLS is not None and out.dtype == torch.float32 and 'beam_indices' not in generate_outputs \
            and generate_outputs.cross_attentions[0][0].dtype == torch.float32:
        rng = np.random.default_rng(len(CALLS) + 1)
        stable = True
        for _ in range(TRIALS):
            noisy = tuple(tuple(a * (1 + PERTURBATION * torch.from_numpy(rng.uniform(-1, 1, a.shape).astype(np.float32)))
                                for a in step) for step in generate_outputs.cross_attentions)
            again = _orig_extract(self, GenerateEncoderDecoderOutput(sequences=generate_outputs.sequences,
                                                                      cross_attentions=noisy),
                                  alignment_heads, time_precision=time_precision, num_frames=num_frames)
            stable = stable and torch.equal(again, out)
        w = _selected(generate_outputs, alignment_heads, self.config.decoder_layers)
        if num_frames is not None:
            w = w[..., : (num_frames if isinstance(num_frames, int) else num_frames[0]) // 2]
        CALLS.append({'weights': w, 'num_frames': num_frames, 'out': out, 'stable': stable})
    return out


hf_wg.WhisperGenerationMixin._extract_token_timestamps = _extract_spy


def f32list(t):
    return [float(np.float32(v)) for v in t.reshape(-1).tolist()]


def teacher_forced_timestamps(model, feats, seqs, num_frames=None):
    """transformers' _extract_token_timestamps on the teacher-forced cross-attention of `seqs` (rows [:-1])."""
    with torch.no_grad():
        out = model(input_features=feats, decoder_input_ids=seqs[:, :-1], output_attentions=True)
    gen = GenerateEncoderDecoderOutput(sequences=seqs, cross_attentions=(out.cross_attentions,))
    return _orig_extract(model, gen, model.generation_config.alignment_heads, num_frames=num_frames)


def pipeline_word_case(G, name, m64, m32, tok, fe, sig, call_kw):
    """make_whisper_goldens.pipeline_case with return_timestamps='word', the float32 run's stability recorded."""
    global CALLS
    CALLS = []
    try:
        rec = G.pipeline_case(name, m64, m32, tok, fe, sig, dict(call_kw, return_timestamps='word'))
    finally:
        calls, CALLS = CALLS, None
    rec['stable'] = all(c['stable'] for c in calls) if calls else None
    return rec, calls


def beam_word_case(G, name, m32, tok, fe, sig, gen_kw):
    """The pipeline with beams: what 4.40.2 gives, and the teacher-forced rows' words (attnwasm's semantics)."""
    pipe = transformers.pipeline('automatic-speech-recognition', model=m32, tokenizer=tok, feature_extractor=fe,
                                 torch_dtype=torch.float32, device='cpu')
    with torch.no_grad():
        hf_out = G.plain(pipe(G.audio(sig).copy(), return_timestamps='word', generate_kwargs=copy.deepcopy(gen_kw)))
    feats = G.features(fe, [sig])['input_features']
    with torch.no_grad():
        gen = m32.generate(feats, return_timestamps='word', return_token_timestamps=True, **gen_kw)
    seqs = gen['sequences']
    tt = teacher_forced_timestamps(m32, feats, seqs)
    text, opt = tok._decode_asr([{'tokens': seqs, 'token_timestamps': tt}], return_timestamps='word',
                                return_language=False, time_precision=0.02)
    out = G.plain({'text': text, 'chunks': opt['chunks']})
    if out['text'] != hf_out['text']:
        raise SystemExit(f'{name}: the pipeline\'s text differs from generate\'s')
    return {'name': name, 'input': G.signal_record(sig), 'call_kwargs': {'generate_kwargs': gen_kw,
                                                                         'return_timestamps': 'word'},
            'output': out, 'output_4_40_2': hf_out, 'sequence': seqs[0].tolist(),
            'token_timestamps': f32list(tt[0]), 'token_timestamps_4_40_2': f32list(gen['token_timestamps'][0])}


def generate_case(name, m32, fe, names, kwargs):
    feats = G_.features(fe, list(names))['input_features']
    with torch.no_grad():
        out = m32.generate(feats, return_token_timestamps=True, **kwargs)
    rec = {'name': name, 'inputs': [G_.signal_record(n) for n in names], 'kwargs': kwargs,
           'sequences': out['sequences'].tolist(), 'token_timestamps': [f32list(r) for r in out['token_timestamps']]}
    if kwargs.get('num_beams', 1) > 1:  # 4.40.2's rows (see beams); the teacher-forced ones are what attnwasm gives
        rec['token_timestamps_4_40_2'] = rec['token_timestamps']
        tt = teacher_forced_timestamps(m32, feats, out['sequences'], kwargs.get('num_frames'))
        rec['token_timestamps'] = [f32list(r) for r in tt]
    return rec


def cross_attention_case(m32, fe, names, seq):
    feats = G_.features(fe, list(names))['input_features']
    ids = torch.tensor([seq[:-1]])
    heads = m32.generation_config.alignment_heads
    with torch.no_grad():
        out = m32(input_features=feats, decoder_input_ids=ids, output_attentions=True)
    w = torch.stack([out.cross_attentions[l][0, h] for l, h in heads])  # (heads, T, S)
    H, T, S = w.shape
    cols = sorted(set(range(0, S, 15)) | set(torch.topk(w, 3, dim=-1).indices.reshape(-1).tolist()))
    sub = w[:, :, cols].contiguous().numpy().astype('<f4')
    return {'inputs': [G_.signal_record(n) for n in names], 'decoder_input_ids': ids.tolist(), 'heads': heads,
            'shape': [1, H, T, S], 'columns': cols, 'weights': base64.b64encode(sub.tobytes()).decode()}


G_ = None


def cases(spec):
    """(name, signal, call kwargs) of a folder's pipeline word cases."""
    if spec['name'] == 'tiny':
        en = {'generate_kwargs': {'language': 'en'}}
        return [('short_word', 'tones3', en), ('chunk10_word', 'long75', dict(en, chunk_length_s=10)),
                ('chunk5_word', 'long40', dict(en, chunk_length_s=5)),
                ('chunk15_stride4_2_word', 'long40', dict(en, chunk_length_s=15, stride_length_s=[4, 2])),
                ('unchunked_word', 'long75', en),
                ('chinese_word', 'noise7', {'generate_kwargs': {'language': 'zh'}}),
                ('chinese_longform_word', 'long40', {'generate_kwargs': {'language': 'zh'}}),
                ('japanese_word', 'tones3', {'generate_kwargs': {'language': 'ja'}}),
                ('detected_word', 'chirp05', {})]
    # en and v3 emit only timestamp tokens in short form without the timestamp rule (their outputs are empty, which
    # the one-window cases keep); long-form (the rule on) gives them words.
    if spec['name'] == 'en':
        return [('short_word', 'tones3', {}), ('longform_word', 'long40', {})]
    return [('cantonese_word', 'noise7', {'generate_kwargs': {'language': 'yue'}}),
            ('cantonese_longform_word', 'long75', {'generate_kwargs': {'language': 'yue'}})]


def run(G, only=None):
    """Writes words.json / words.bin from the folders under G.OUT (make_whisper_goldens.py's module)."""
    global G_
    G_ = G
    folders, blobs, offset = [], [], 0
    for spec in G.FOLDERS:
        if only and spec['name'] not in only:
            continue
        path = os.path.join(G.OUT, spec['name'])
        m64 = WhisperForConditionalGeneration.from_pretrained(path).eval().double()
        m32 = WhisperForConditionalGeneration.from_pretrained(path).eval()
        fe = WhisperFeatureExtractor.from_pretrained(path)
        tok = WhisperTokenizer.from_pretrained(path)
        entry = {'folder': spec['name'], 'pipeline': [], 'generate': []}
        for name, sig, kw in cases(spec):
            try:
                rec, calls = pipeline_word_case(G, name, m64, m32, tok, fe, sig, kw)
            except SystemExit as e:
                entry['pipeline'].append({'name': name, 'input': G.signal_record(sig), 'call_kwargs': kw,
                                          'left_out': str(e).split('\n')[0]})
                continue
            entry['pipeline'].append(rec)
            if spec['name'] == 'tiny' and name == 'chunk5_word':  # the raw weights of its first chunk
                c = calls[0]
                w = c['weights'][0].contiguous().numpy().astype('<f4')
                blobs.append(w.tobytes())
                entry['raw'] = {'case': name, 'call': 0, 'num_frames': c['num_frames'], 'shape': list(w.shape),
                                'offset': offset, 'timestamps': f32list(c['out'][0])}
                offset += len(blobs[-1])
        if spec['name'] == 'tiny':
            entry['pipeline'].append(beam_word_case(G, 'beam3_word', m32, tok, fe, 'tones3',
                                                    {'language': 'en', 'num_beams': 3}))
            entry['generate'] = [
                generate_case('greedy_timestamps', m32, fe, ['tones3'], {'language': 'en', 'return_timestamps': True}),
                generate_case('greedy_no_timestamps', m32, fe, ['noise7'], {'language': 'en'}),
                generate_case('num_frames_1000', m32, fe, ['tones3'], {'language': 'en', 'num_frames': 1000}),
                generate_case('batch2', m32, fe, ['tones3', 'noise7'], {'language': 'en'}),
                generate_case('beam3', m32, fe, ['chirp05'], {'language': 'en', 'num_beams': 3})]
            short = next(c for c in entry['pipeline'] if c['name'] == 'short_word')
            feats = G.features(fe, ['tones3'])['input_features']
            with torch.no_grad():
                seq = m32.generate(feats, language='en', return_timestamps='word')[0].tolist()
            if tok.decode(seq, skip_special_tokens=True) != short['output']['text']:
                raise SystemExit('cross_attention: generate and the pipeline disagree')
            entry['cross_attention'] = cross_attention_case(m32, fe, ['tones3'], seq)
        elif spec['name'] == 'en':
            entry['generate'] = [generate_case('greedy', m32, fe, ['tones3'], {})]
        folders.append(entry)
        print(spec['name'], 'words ok', flush=True)
    write(G, folders, b''.join(blobs))


def write(G, folders, blob):
    lines = {}

    def line(x):
        lines[f'@{len(lines)}@'] = json.dumps(x, separators=(',', ':'), ensure_ascii=False)
        return f'@{len(lines) - 1}@'

    for f in folders:
        for k in ('pipeline', 'generate'):
            f[k] = [line(c) for c in f[k]]
        for k in ('cross_attention', 'raw'):
            if k in f:
                f[k] = line(f[k])
    text = json.dumps({'transformers': transformers.__version__, 'torch': torch.__version__, 'atol': G.TOL[0],
                       'rtol': G.TOL[1], 'perturbation': PERTURBATION, 'trials': TRIALS, 'folders': folders},
                      indent=1, ensure_ascii=False)
    text = re.sub(r'"(@\d+@)"', lambda m: lines[m.group(1)], text)
    with open(os.path.join(G.OUT, 'words.json'), 'w') as f:
        f.write(text + '\n')
    with open(os.path.join(G.OUT, 'words.bin'), 'wb') as f:
        f.write(blob)
