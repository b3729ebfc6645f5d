#!/usr/bin/python3
"""Goldens for attnwasm/audio (issue 41, the audio half): tests/data/goldens/whisper_features/.

Not a test itself. What transformers v4.40.2 (tools/hf_env), torchaudio 0.13 and ffmpeg 5.1 give for fixed
signals, stored compactly (goldens.json + goldens.bin, well under 1 MB) for tests/js/audio_*.test.mjs:
  features   WhisperFeatureExtractor.__call__ on its numpy path (transformers takes its torch path when torch is
             installed; is_torch_available is patched off for these) for tones, noise, silence, clipping, a chirp,
             quiet noise; lengths 0.1 s, 12.3 s, 30 s, 75 s (trimmed; and whole, padding='longest' as the pipeline
             does for long-form generation); 80 and 128 mel bins; the attention mask; a stored `mel_filters` (HTK
             filters put in place of transformers' own); the chunked pipeline's chunks (chunk_iter) of 75 s.
             Each keeps sampled frames whole (every mel bin), the per-mel means, the means of blocks of 10 frames, statistics, and
             the largest difference from the torch path (for docs/speech.md).
  melFilters the non-zero weights of transformers' mel_filter_bank for 80 and 128 bins (float64)
  chunks     the ASR pipeline's preprocess (chunk_length_s, stride_length_s) → chunk_iter: each chunk's first sample,
             length, stride and is_last, for many lengths and strides, and the refusals
  resample   torchaudio.functional.resample (float64) of a 0.125 s signal from 7 rates to 16 kHz; ffmpeg's resampling
             (transformers' ffmpeg_read) of the same for 4 rates; their differences measured on 2 s signals, in
             samples and in features, and both resamplers' gains at 440 Hz … 7.9 kHz
  files      small WAV fixtures (wav/: PCM u8/s16/s24/s32, float32/64, extensible, stereo, 44.1 kHz, extra chunks) and
             FLAC (flac/; 256-sample frames, so that one damaged frame leaves others), with what ffmpeg_read (the pipeline's file reader) decodes them to (*.ffmpeg.f32)

The signals are not stored: tests/data/whisper_signals.mjs makes them bit for bit as signal() here (each case holds
the FNV-1a hash of its input's float32 bytes). Run with Debian's python (apt-get install python3-torchaudio ffmpeg):
  /usr/bin/python3 tests/data/make_whisper_feature_goldens.py
Deterministic: two runs write identical bytes.
"""
import json
import math
import os
import struct
import subprocess
import sys
import types

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import torch  # noqa: E402
import torchaudio  # noqa: E402
import transformers  # noqa: E402
import transformers.models.whisper.feature_extraction_whisper as fxw  # noqa: E402
from transformers import WhisperFeatureExtractor  # noqa: E402
from transformers.audio_utils import mel_filter_bank  # noqa: E402
from transformers.pipelines.audio_utils import ffmpeg_read  # noqa: E402
from transformers.pipelines.automatic_speech_recognition import AutomaticSpeechRecognitionPipeline, chunk_iter  # noqa: E402

OUT = os.path.join(ROOT, 'tests', 'data', 'goldens', 'whisper_features')
SR = 16000
torch.set_num_threads(1)


# ---- signals: the twin of tests/data/whisper_signals.mjs ------------------------------------------------------------
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


class Blob:
    """goldens.bin: little-endian arrays one after another; a reference is {dtype, offset (bytes), length}."""
    def __init__(self):
        self.parts, self.size = [], 0

    def add(self, a, dtype='<f4'):
        b = np.ascontiguousarray(np.asarray(a).astype(dtype)).tobytes()
        ref = {'dtype': 'float32' if dtype == '<f4' else 'float64', 'offset': self.size, 'length': len(b) // np.dtype(dtype).itemsize}
        self.parts.append(b)
        self.size += len(b)
        pad = (-self.size) % 8
        if pad:
            self.parts.append(b'\0' * pad)
            self.size += pad
        return ref


BLOB = Blob()


# ---- features ---------------------------------------------------------------------------------------------------------
def extract(fe, x, torch_path, **kw):
    saved = fxw.is_torch_available
    fxw.is_torch_available = (lambda: True) if torch_path else (lambda: False)
    try:
        out = fe(x, sampling_rate=SR, return_tensors='np', **kw)
    finally:
        fxw.is_torch_available = saved
    return out


def feature_record(name, spec, feats, x, options, mask=None, torch_diff=None, extra=None):
    feats = np.asarray(feats)
    assert feats.dtype == np.float32, feats.dtype
    n_mels, T = feats.shape
    L = len(x)
    frames = {0, 1, 2, 3, T - 3, T - 2, T - 1, *range(0, T, 199)}
    for c in (L // 160, 3000):
        frames |= {f for f in range(c - 3, c + 3) if 0 <= f < T}
    frames = sorted(f for f in frames if 0 <= f < T)
    rec = {
        'name': name, 'signal': spec, 'nMels': n_mels, 'options': options,
        'input': {'samples': L, 'fnv1a': fnv1a(x)},
        'shape': [1, n_mels, T], 'frames': frames,
        'values': BLOB.add(feats[:, frames]),            # (nMels, len(frames)), row-major
        'melMean': BLOB.add(feats.astype(np.float64).mean(axis=1)),
        # means over blocks of 10 frames (the last block may be shorter): every frame counts, 10x smaller than per frame
        'blockMean': BLOB.add([feats[:, i:i + 10].astype(np.float64).mean() for i in range(0, T, 10)]),
        'stats': {'min': float(feats.min()), 'max': float(feats.max()), 'mean': float(feats.astype(np.float64).mean()),
                  'std': float(feats.astype(np.float64).std())},
        'attentionMask': None, 'torchPathMaxAbsDiff': torch_diff,
    }
    if mask is not None:
        m = np.asarray(mask)[0]
        ones = int(m.sum())
        assert (m[:ones] == 1).all() and (m[ones:] == 0).all()
        rec['attentionMask'] = {'length': int(m.shape[0]), 'ones': ones}
    if extra:
        rec.update(extra)
    return rec


FEATURE_CASES = [
    # name, signal, nMels, options
    ('tone_0.1s_80', {'kind': 'tone', 'seconds': 0.1, 'freqs': [440], 'amp': 0.5}, 80, {'returnAttentionMask': True}),
    ('tone_0.1s_128', {'kind': 'tone', 'seconds': 0.1, 'freqs': [440], 'amp': 0.5}, 128, {}),
    ('tones_30s_80', {'kind': 'tone', 'seconds': 30, 'freqs': [440, 3000], 'amp': 0.6}, 80, {}),
    ('noise_30s_80', {'kind': 'noise', 'seconds': 30, 'seed': 41, 'ampLog2': -1}, 80, {}),
    ('noise_30s_128', {'kind': 'noise', 'seconds': 30, 'seed': 42, 'ampLog2': -1}, 128, {}),
    ('silence_30s_80', {'kind': 'silence', 'seconds': 30}, 80, {}),
    ('clipping_30s_80', {'kind': 'tone', 'seconds': 30, 'freqs': [220], 'amp': 1.5}, 80, {}),
    ('quiet_noise_30s_80', {'kind': 'noise', 'seconds': 30, 'seed': 43, 'ampLog2': -12}, 80, {}),
    ('chirp_12.3s_80', {'kind': 'chirp', 'samples': 196817, 'f0': 100, 'f1': 7900, 'amp': 0.7}, 80, {'returnAttentionMask': True}),
    ('speechy_12.3s_128', {'kind': 'mix', 'samples': 196817, 'parts': [
        {'kind': 'chirp', 'samples': 196817, 'f0': 80, 'f1': 4000, 'amp': 0.5},
        {'kind': 'noise', 'samples': 196817, 'seed': 44, 'ampLog2': -6}]}, 128, {}),
    ('noise_75s_80_trimmed', {'kind': 'noise', 'seconds': 75, 'seed': 45, 'ampLog2': -1}, 80, {}),
    ('noise_75s_80_longest', {'kind': 'noise', 'seconds': 75, 'seed': 45, 'ampLog2': -1}, 80,
     {'padding': 'longest', 'truncation': False, 'returnAttentionMask': True}),
    ('mix_31s_128_longest', {'kind': 'mix', 'samples': 496123, 'parts': [
        {'kind': 'tone', 'samples': 496123, 'freqs': [300, 1200, 5000], 'amp': 0.5},
        {'kind': 'noise', 'samples': 496123, 'seed': 46, 'ampLog2': -4}]}, 128,
     {'padding': 'longest', 'truncation': False, 'returnAttentionMask': True}),
    # Short inputs kept whole: the centre padding reflects more than the signal (numpy reflects again and again).
    ('noise_170_80_longest', {'kind': 'noise', 'samples': 170, 'seed': 47, 'ampLog2': -1}, 80, {'padding': 'longest', 'truncation': False}),
    ('tone_4001_128_longest', {'kind': 'tone', 'samples': 4001, 'freqs': [1000], 'amp': 0.3}, 128,
     {'padding': 'longest', 'truncation': False, 'returnAttentionMask': True}),
]


def py_options(o):
    return {'padding': o.get('padding', 'max_length'), 'truncation': o.get('truncation', True),
            'return_attention_mask': o.get('returnAttentionMask', False)}


def make_features():
    cases, cache = [], {}
    for name, spec, n_mels, options in FEATURE_CASES:
        key = json.dumps(spec, sort_keys=True)
        x = cache.setdefault(key, signal(spec))
        fe = WhisperFeatureExtractor(feature_size=n_mels)
        out = extract(fe, x, False, **py_options(options))
        feats = out['input_features'][0]
        try:
            tfeats = extract(fe, x, True, **py_options(options))['input_features'][0]
            diff = float(np.abs(feats.astype(np.float64) - tfeats).max())
        except RuntimeError:  # torch.stft refuses a reflection longer than the input
            diff = None
        cases.append(feature_record(name, spec, feats, x, options, out.get('attention_mask'), diff))
        print(f'{name}: {feats.shape}, numpy vs torch path max |diff| {diff}', flush=True)
    # A stored `mel_filters` (melFilters: 'config'): HTK filters, no norm, in the (n_mels, 201) layout of old hub files.
    spec = FEATURE_CASES[0][1]
    x = signal(spec)
    fe = WhisperFeatureExtractor(feature_size=80)
    fe.mel_filters = mel_filter_bank(201, 80, 0.0, 8000.0, SR, norm=None, mel_scale='htk')
    feats = extract(fe, x, False)['input_features'][0]
    cases.append(feature_record('tone_0.1s_80_htk_config_filters', spec, feats, x, {},
                                extra={'melFilters': {'source': 'config', 'melScale': 'htk', 'norm': None, 'layout': '(n_mels, bins)'}}))
    # The chunked pipeline: chunk_iter's chunks of 75 s (chunk_length_s 30, stride_length_s 5 each side), each padded.
    spec = next(c[1] for c in FEATURE_CASES if c[0] == 'noise_75s_80_trimmed')
    x = cache[json.dumps(spec, sort_keys=True)]
    fe = WhisperFeatureExtractor(feature_size=80)
    saved = fxw.is_torch_available
    fxw.is_torch_available = lambda: False
    try:
        chunks = list(chunk_iter(x, fe, 480000, 80000, 80000))
    finally:
        fxw.is_torch_available = saved
    start = 0
    for i, c in enumerate(chunks):
        feats = c['input_features'][0].numpy()
        rec = feature_record(f'noise_75s_80_chunk{i}', spec, feats, x[start:start + c['stride'][0]], {},
                             extra={'chunk': {'index': i, 'start': start, 'stride': list(c['stride']), 'isLast': c['is_last'],
                                              'chunkLengthS': 30, 'strideLengthS': 5}})
        rec['input'] = {'samples': len(x), 'fnv1a': fnv1a(x)}
        cases.append(rec)
        start += 480000 - 160000
    return cases


def make_mel_filters():
    out = {}
    for n in (80, 128):
        w = WhisperFeatureExtractor(feature_size=n).mel_filters  # (201, n) float64
        nz = np.nonzero(w)
        out[str(n)] = {'shape': list(w.shape), 'bins': nz[0].tolist(), 'mels': nz[1].tolist(), 'weights': BLOB.add(w[nz], '<f8')}
    return out


# ---- chunk arithmetic ---------------------------------------------------------------------------------------------------
class StubFE:
    sampling_rate = SR

    def __call__(self, chunk, sampling_rate, return_tensors):
        return {'start': int(chunk[0]) if len(chunk) else -1, 'n': int(chunk.shape[0])}


def pipeline_chunks(length, chunk_length_s, stride_length_s):
    stub = types.SimpleNamespace(feature_extractor=StubFE(), model=types.SimpleNamespace(config=types.SimpleNamespace()),
                                 torch_dtype=None, type='seq2seq_whisper')
    x = np.arange(length, dtype=np.float64)
    try:
        items = list(AutomaticSpeechRecognitionPipeline.preprocess(stub, x, chunk_length_s=chunk_length_s, stride_length_s=stride_length_s))
    except ValueError as e:
        return {'error': str(e)}
    return {'chunks': [[it['start'], it['n'], list(it['stride']), it['is_last']] for it in items]}


def make_chunks():
    lengths = [1, 100, 80000, 479999, 480000, 480001, 800000, 800001, 1200000, 1600000, 2880000]
    strides = [(30, None), (30, 5), (30, [4, 2]), (30, 0), (10, [0, 3]), (12.3, 1.7), (7, 1.15), (0.5, 0.0625),
               (10, 5), (10, 6), (30, 2.5e-5), (30, 9.375e-5)]
    out = []
    for c, s in strides:
        for n in lengths:
            if c < 1 and n > 100000:
                continue
            out.append({'length': n, 'chunkLengthS': c, 'strideLengthS': s, **pipeline_chunks(n, c, s)})
    return out


# ---- resampling and files -------------------------------------------------------------------------------------------------
def resample_signal(rate, seconds):
    n = int(round(seconds * rate))
    return {'kind': 'mix', 'samples': n, 'parts': [
        {'kind': 'tone', 'samples': n, 'freqs': [440, 2500], 'amp': 0.4},
        {'kind': 'chirp', 'samples': n, 'f0': 100, 'f1': min(7800, rate // 2 - 100), 'amp': 0.4}]}


def wav_bytes(frames, rate, fmt_tag, bits, extensible=False, extra_chunks=b''):
    """frames: (n, channels) bytes already interleaved as `data`."""
    channels, data = frames
    block = channels * bits // 8
    if extensible:
        guid = struct.pack('<H', fmt_tag) + bytes.fromhex('000000001000800000aa00389b71')
        fmt = struct.pack('<HHIIHHHHI', 0xFFFE, channels, rate, rate * block, block, bits, 22, bits, 3) + guid
    else:
        fmt = struct.pack('<HHIIHH', fmt_tag, channels, rate, rate * block, block, bits)
    body = b'WAVE' + b'fmt ' + struct.pack('<I', len(fmt)) + fmt + extra_chunks + b'data' + struct.pack('<I', len(data)) + data
    if len(data) % 2:
        body += b'\0'
    return b'RIFF' + struct.pack('<I', len(body)) + body


def ffmpeg_f32(path, mono=True):
    args = ['ffmpeg', '-i', path] + (['-ac', '1'] if mono else []) + ['-f', 'f32le', '-hide_banner', '-loglevel', 'quiet', 'pipe:1']
    return np.frombuffer(subprocess.run(args, check=True, capture_output=True).stdout, np.float32)


def make_files():
    rng = np.random.default_rng(41)
    n = 800
    wav_dir, flac_dir = os.path.join(OUT, 'wav'), os.path.join(OUT, 'flac')
    os.makedirs(wav_dir, exist_ok=True)
    os.makedirs(flac_dir, exist_ok=True)
    s24 = rng.integers(-2 ** 23, 2 ** 23, (n, 2))
    tone16 = (signal({'kind': 'tone', 'samples': n, 'freqs': [440, 3000], 'amp': 0.9}) * 32768).astype('<i2')
    specs = {
        'pcm_u8_mono_16k': (1, rng.integers(0, 256, n).astype('u1').tobytes(), SR, 1, 8, False),
        'pcm_s16_mono_16k': (1, tone16.tobytes(), SR, 1, 16, False),
        'pcm_s24_mono_16k': (1, b''.join(int(v).to_bytes(3, 'little', signed=True) for v in s24[:, 0]), SR, 1, 24, False),
        'pcm_s32_mono_16k': (1, rng.integers(-2 ** 31, 2 ** 31, n).astype('<i4').tobytes(), SR, 1, 32, False),
        'float32_mono_16k': (1, rng.uniform(-1, 1, n).astype('<f4').tobytes(), SR, 3, 32, False),
        'float64_mono_16k': (1, rng.uniform(-1, 1, n).astype('<f8').tobytes(), SR, 3, 64, False),
        'pcm_s24_stereo_ext_16k': (2, b''.join(int(v).to_bytes(3, 'little', signed=True) for v in s24.reshape(-1)), SR, 1, 24, True),
        'pcm_s16_stereo_16k': (2, rng.integers(-20000, 20000, (n, 2)).astype('<i2').tobytes(), SR, 1, 16, False),
        'pcm_s16_mono_44k': (1, (signal(resample_signal(44100, 0.05), 44100) * 32768).astype('<i2').tobytes(), 44100, 1, 16, False),
        'pcm_s16_mono_extra_chunks': (1, tone16.tobytes(), SR, 1, 16, False),
    }
    files = {}
    for name, (ch, data, rate, tag, bits, ext) in specs.items():
        extra = b''
        if name.endswith('extra_chunks'):  # a LIST chunk and an odd-sized chunk (padded to even) before 'data'
            extra = b'LIST' + struct.pack('<I', 14) + b'INFOISFT' + struct.pack('<I', 2) + b'x\0' + b'junk' + struct.pack('<I', 3) + b'abc\0'
        path = os.path.join(wav_dir, f'{name}.wav')
        with open(path, 'wb') as f:
            f.write(wav_bytes((ch, data), rate, tag, bits, ext, extra))
        got = ffmpeg_read(open(path, 'rb').read(), SR)
        with open(os.path.join(wav_dir, f'{name}.ffmpeg.f32'), 'wb') as f:
            f.write(got.astype('<f4').tobytes())
        files[f'wav/{name}.wav'] = {'channels': ch, 'samplingRate': rate, 'bits': bits, 'format': 'float' if tag == 3 else 'pcm',
                                   'frames': len(data) // (ch * bits // 8), 'ffmpeg': f'wav/{name}.ffmpeg.f32', 'ffmpegSamples': len(got)}
    for src, dst in (('pcm_s16_mono_16k', 'flac_s16_mono_16k'), ('pcm_s24_stereo_ext_16k', 'flac_s24_stereo_16k')):
        path = os.path.join(flac_dir, f'{dst}.flac')
        subprocess.run(['ffmpeg', '-y', '-hide_banner', '-loglevel', 'error', '-i', os.path.join(wav_dir, f'{src}.wav'),
                        '-map_metadata', '-1', '-fflags', '+bitexact', '-flags:a', '+bitexact', '-c:a', 'flac', '-frame_size', '256', path], check=True)
        same = np.array_equal(ffmpeg_f32(path, False), ffmpeg_f32(os.path.join(wav_dir, f'{src}.wav'), False))
        assert same, f'{dst}: ffmpeg decodes the FLAC to other samples than its source WAV'
        files[f'flac/{dst}.flac'] = {'source': f'wav/{src}.wav', 'losslessCheckedWithFfmpeg': True}
    return files


def make_resample():
    out = {'rates': {}, 'ffmpeg': {}}
    for rate in (44100, 48000, 22050, 8000, 32000, 11025, 12345):
        spec = resample_signal(rate, 0.125)
        x = signal(spec, rate)
        y64 = torchaudio.functional.resample(torch.from_numpy(x.astype(np.float64)), rate, SR).numpy()
        y32 = torchaudio.functional.resample(torch.from_numpy(x), rate, SR).numpy()
        out['rates'][str(rate)] = {'signal': spec, 'fnv1a': fnv1a(x), 'torchaudio': BLOB.add(y64), 'samples': len(y64),
                                   'float32PathMaxAbsDiff': float(np.abs(y32.astype(np.float64) - y64).max())}
    fe = WhisperFeatureExtractor(feature_size=80)
    for rate in (44100, 48000, 22050, 8000):
        rec = {}
        for seconds in (0.125, 2.0):
            spec = resample_signal(rate, seconds)
            x = signal(spec, rate)
            data = (x * 32768).astype('<i2')
            assert np.array_equal(data.astype(np.float32) / 32768, x)
            ff = ffmpeg_read(wav_bytes((1, data.tobytes()), rate, 1, 16), SR)
            ta = torchaudio.functional.resample(torch.from_numpy(x.astype(np.float64)), rate, SR).numpy().astype(np.float32)
            m = min(len(ff), len(ta))
            d = ff[:m].astype(np.float64) - ta[:m]
            inner = d[64:m - 64]
            f_ff = extract(fe, ff, False)['input_features'][0]
            f_ta = extract(fe, ta, False)['input_features'][0]
            frames = m // 160 - 2
            rec[str(seconds)] = {
                'signal': spec, 'ffmpegSamples': len(ff), 'torchaudioSamples': len(ta),
                'maxAbs': float(np.abs(d).max()), 'rms': float(np.sqrt((d ** 2).mean())),
                'innerMaxAbs': float(np.abs(inner).max()), 'innerRms': float(np.sqrt((inner ** 2).mean())),
                'signalRms': float(np.sqrt((ta[:m].astype(np.float64) ** 2).mean())),
                'featuresMaxAbs': float(np.abs(f_ff[:, :frames].astype(np.float64) - f_ta[:, :frames]).max()),
            }
            if seconds == 0.125:
                rec['ffmpeg'] = BLOB.add(ff)
        # The gain of each resampler at a few frequencies: 2 s tones, output rms / input rms away from the ends.
        gains = {}
        for f in (440, 1000, 3000, 5000, 6000, 7000, 7500, 7700, 7900):
            if f >= min(rate, SR) // 2:
                continue
            x = signal({'kind': 'tone', 'samples': 2 * rate, 'freqs': [f], 'amp': 0.5}, rate)
            ff = ffmpeg_read(wav_bytes((1, (x * 32768).astype('<i2').tobytes()), rate, 1, 16), SR)
            ta = torchaudio.functional.resample(torch.from_numpy(x.astype(np.float64)), rate, SR).numpy()
            x_rms = np.sqrt((x[rate // 4:-rate // 4].astype(np.float64) ** 2).mean())
            gain = lambda y: float(np.sqrt((y[SR // 4:-SR // 4].astype(np.float64) ** 2).mean()) / x_rms)  # noqa: E731
            gains[str(f)] = {'torchaudio': gain(ta), 'ffmpeg': gain(ff)}
        rec['gains'] = gains
        out['ffmpeg'][str(rate)] = rec
        print(f'resample {rate}: ffmpeg vs torchaudio {rec["2.0"]}, gains {gains}', flush=True)
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    ffmpeg_version = subprocess.run(['ffmpeg', '-version'], capture_output=True, text=True).stdout.split('\n')[0]
    doc = {
        'generator': 'tests/data/make_whisper_feature_goldens.py',
        'versions': {'transformers': transformers.__version__, 'numpy': np.__version__, 'torch': torch.__version__,
                     'torchaudio': torchaudio.__version__, 'ffmpeg': ffmpeg_version},
        'tolerance': {'features': 1e-4, 'resample': 1e-6},
        'note': 'features: WhisperFeatureExtractor numpy path; values are (nMels, len(frames)) of the listed frames',
    }
    doc['features'] = make_features()
    doc['melFilters'] = make_mel_filters()
    doc['chunks'] = make_chunks()
    doc['resample'] = make_resample()
    doc['files'] = make_files()
    with open(os.path.join(OUT, 'goldens.bin'), 'wb') as f:
        f.write(b''.join(BLOB.parts))
    with open(os.path.join(OUT, 'goldens.json'), 'w') as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write('\n')
    print(f'wrote {OUT}: goldens.bin {BLOB.size} bytes')


if __name__ == '__main__':
    main()
