#!/usr/bin/python3
"""Goldens of attnwasm/image (issue 39): fixture images and what PIL + transformers' image processors make of them.

Not a test itself. Writes tests/data/goldens/images/:
  fixtures/*.png  every PNG colour type and bit depth (grey 1/2/4/8/16, grey+alpha 8/16, RGB 8/16, RGBA 8/16,
                  palette 1/2/4/8), each plain and Adam7-interlaced; tRNS variants; a palette whose indices run
                  past its end; odd sizes (1x1, 200x10, 10x200, 3 and 1 rows tall); IDAT split in many chunks;
                  EXIF orientations 2..8 (eXIf chunks, both byte orders). Written by the small PNG writer below
                  (PIL cannot write most of these), every scanline with filter type row % 5 so all five filters
                  are read. Read back by PIL, never by the writer.
  fixtures/*.jpg  written by PIL (libjpeg-turbo): 4:2:0 / 4:2:2 / 4:4:4, greyscale, progressive, optimized
                  Huffman tables, qualities 50..95, EXIF orientations 6 and 8, 1x1.
  refused/*       images PIL reads and attnwasm/image refuses as ERR_UNSUPPORTED: a CMYK JPEG, a GIF, a BMP,
                  a TIFF, a WebP (when this PIL writes WebP)
  decoded.bin     uint8 RGB of every fixture as transformers.image_utils.load_image gives it (PIL open,
                  ImageOps.exif_transpose, convert("RGB")), concatenated in fixture order
  pixel_values.bin  float32 little-endian pixel_values of every case, concatenated
  expected.json   versions, tolerance, the fixtures (file, PIL mode, size, offset into decoded.bin), the configs
                  (preprocessor_config.json as the hub writes them), the cases ({fixtures, config, shape, offset}
                  into pixel_values.bin, or for the hub-size configs {sha256 of the float32 bytes, samples}).
The reference pixel_values are AutoImageProcessor.from_pretrained(<folder holding the config>)(load_image(f),
return_tensors="np", input_data_format="channels_last"): the channel order is given because transformers infers
a 1- or 3-pixel-tall HWC image as channels-first (docs/images.md). Deterministic (fixed seed): two runs give
identical bytes. Run with Debian's python3 (PIL 9.4) and transformers v4.40.2 (tools/hf_env):
  /usr/bin/python3 tests/data/make_image_goldens.py
"""
import hashlib
import json
import os
import shutil
import struct
import sys
import tempfile
import zlib

import numpy as np
import PIL
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import transformers  # noqa: E402
from transformers import AutoImageProcessor  # noqa: E402
from transformers.image_utils import load_image  # noqa: E402

OUT = os.path.join(ROOT, 'tests', 'data', 'goldens', 'images')
FIX = os.path.join(OUT, 'fixtures')
rng = np.random.default_rng(39)

# ---------------------------------------------------------------- the PNG writer


def chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xFFFFFFFF)


def pack_row(values, depth):
    """One scanline of samples (ints) as PNG packs them: MSB first below 8 bits, big-endian at 16."""
    if depth == 16:
        return np.asarray(values, dtype='>u2').tobytes()
    if depth == 8:
        return np.asarray(values, dtype=np.uint8).tobytes()
    per = 8 // depth
    out = bytearray((len(values) + per - 1) // per)
    for i, v in enumerate(values):
        out[i // per] |= int(v) << (8 - depth * (i % per + 1))
    return bytes(out)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def filter_rows(rows, bpp, first_row):
    """Filters scanlines, row r (counted over the whole image) with filter type r % 5."""
    out, prior = bytearray(), bytes(len(rows[0])) if rows else b''
    for r, row in enumerate(rows):
        f = (first_row + r) % 5
        line = bytearray()
        for i, x in enumerate(row):
            a = row[i - bpp] if i >= bpp else 0
            b = prior[i]
            c = prior[i - bpp] if i >= bpp else 0
            pred = (0, a, b, (a + b) // 2, paeth(a, b, c))[f]
            line.append((x - pred) & 0xFF)
        out += bytes([f]) + line
        prior = row
    return out


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(name, samples, depth, ctype, interlace=0, plte=None, trns=None, exif=None, idat_size=None):
    """samples: (h, w, channels) ints. Returns the file name."""
    h, w, ch = samples.shape
    bpp = max(1, depth * ch // 8)
    raw = bytearray()
    parts = [(0, 0, 1, 1)] if not interlace else ADAM7
    r0 = 0
    for x0, y0, dx, dy in parts:
        sub = samples[y0::dy, x0::dx]
        if sub.shape[0] == 0 or sub.shape[1] == 0:
            continue
        rows = [pack_row(s.reshape(-1), depth) for s in sub]
        raw += filter_rows(rows, bpp, r0)
        r0 += len(rows)
    data = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, depth, ctype, 0, 0, interlace))
    if exif is not None:
        data += chunk(b'eXIf', exif)
    if plte is not None:
        data += chunk(b'PLTE', bytes(np.asarray(plte, dtype=np.uint8).reshape(-1)))
    if trns is not None:
        data += chunk(b'tRNS', bytes(trns))
    z = zlib.compress(bytes(raw), 9)
    step = idat_size or len(z)
    for i in range(0, len(z), step):
        data += chunk(b'IDAT', z[i:i + step])
    data += chunk(b'IEND', b'')
    with open(os.path.join(FIX, name + '.png'), 'wb') as f:
        f.write(data)
    return name + '.png'


def tiff_orientation(orientation, big_endian):
    """A TIFF header + IFD0 holding only Orientation (0x0112, SHORT): an eXIf chunk's body."""
    e = '>' if big_endian else '<'
    return (b'MM' if big_endian else b'II') + struct.pack(e + 'HI', 42, 8) + struct.pack(e + 'H', 1) \
        + struct.pack(e + 'HHI', 0x0112, 3, 1) + struct.pack(e + 'HH', orientation, 0) + struct.pack(e + 'I', 0)

# ---------------------------------------------------------------- fixture content


def picture(h, w, channels, top):
    """Smooth ramps plus noise in [0, top]: resampling filters give visibly different results on it."""
    y, x = np.mgrid[0:h, 0:w]
    out = np.empty((h, w, channels))
    for c in range(channels):
        phase = (c + 1) * 0.7
        base = 0.5 + 0.35 * np.sin(x * 0.9 / max(w, 2) * 6 + phase) * np.cos(y * 0.8 / max(h, 2) * 5 - phase)
        out[..., c] = base + rng.normal(0, 0.12, (h, w))
    return np.clip(np.rint(out * top), 0, top).astype(np.int64)


SIZES = [(9, 13), (13, 9), (6, 17), (11, 5), (14, 21), (3, 2), (10, 7), (8, 8)]
KINDS = [  # name, colour type, channels, depths
    ('g', 0, 1, (1, 2, 4, 8, 16)), ('ga', 4, 2, (8, 16)), ('rgb', 2, 3, (8, 16)), ('rgba', 6, 4, (8, 16)),
    ('p', 3, 1, (1, 2, 4, 8)),
]
fixtures = []  # (name, file, notes)


def png(name, *args, canvas=True, note='', **kw):
    fixtures.append({'name': name, 'file': write_png(name, *args, **kw), 'canvasExact': canvas, 'note': note})


def build_fixtures():
    k = 0
    for interlace in (0, 1):
        for kind, ctype, ch, depths in KINDS:
            for depth in depths:
                h, w = SIZES[k % len(SIZES)]
                k += 1
                name = f'{kind}{depth}' + ('_i' if interlace else '')
                if kind == 'p':
                    n = min(1 << depth, 200)
                    plte = rng.integers(0, 256, (n, 3))
                    png(name, rng.integers(0, n, (h, w, 1)), depth, ctype, interlace, plte=plte)
                else:
                    top = (1 << depth) - 1
                    s = picture(h, w, ch, top)
                    if depth == 16 and kind == 'g':
                        s = s // 200  # PIL reads 16-bit grey as mode I and clips at 255: keep most values below
                    if kind in ('ga', 'rgba'):
                        s[..., -1] = rng.integers(0, top + 1, (h, w))  # alpha of every level (dropped by RGB)
                    # 16-bit: the browser's 16→8 reduction is its own; translucent pixels lose their colour in a canvas
                    exact = depth <= 8 and kind not in ('ga', 'rgba')
                    png(name, s, depth, ctype, interlace, canvas=exact)
    s = picture(9, 11, 1, 255)
    png('g8_trns', s, 8, 0, trns=struct.pack('>H', int(s[0, 0, 0])), canvas=False, note='tRNS: ignored by RGB')
    s = picture(7, 12, 3, 255)
    png('rgb8_trns', s, 8, 2, trns=struct.pack('>HHH', *[int(v) for v in s[1, 1]]), canvas=False)
    png('g16_trns', picture(5, 6, 1, 255), 16, 0, trns=struct.pack('>H', 7), canvas=False)
    plte = rng.integers(0, 256, (40, 3))
    png('p8_trns', rng.integers(0, 40, (10, 9, 1)), 8, 3, plte=plte, trns=bytes(rng.integers(0, 256, 25).tolist()),
        canvas=False)
    plte = rng.integers(0, 256, (16, 3))
    png('p4_trns_i', rng.integers(0, 16, (9, 10, 1)), 4, 3, 1, plte=plte, trns=bytes([0, 128, 255, 3]), canvas=False)
    png('p4_short_palette', rng.integers(0, 16, (6, 7, 1)), 4, 3, plte=rng.integers(0, 256, (5, 3)), canvas=False,
        note='indices past the palette read as grey (i, i, i), as PIL does')
    png('rgb8_1x1', picture(1, 1, 3, 255), 8, 2, note='1x1')
    png('g8_1x1_i', picture(1, 1, 1, 255), 8, 0, 1)
    png('rgb8_200x10', picture(10, 200, 3, 255), 8, 2, note='200 wide, 10 tall')
    png('rgb8_10x200', picture(200, 10, 3, 255), 8, 2, note='10 wide, 200 tall')
    png('rgba8_7x3', picture(3, 7, 4, 255), 8, 6, canvas=False, note='3 rows: transformers would infer channels-first')
    png('rgb8_5x1', picture(1, 5, 3, 255), 8, 2, note='1 row')
    png('rgb8_64x48', picture(48, 64, 3, 255), 8, 2, note='for downscaling')
    y, x = np.mgrid[0:7, 0:11]
    checker = np.stack([((x + y) % 2) * 255, (x % 2) * 255, (y % 2) * 255], -1)
    png('rgb8_checker', checker, 8, 2, note='0 / 255 checkers: bicubic and lanczos overshoot, so clipping is exercised')
    png('rgb8_idat', picture(12, 15, 3, 255), 8, 2, idat_size=7, note='IDAT in 7-byte chunks')
    for o in range(2, 9):
        png(f'rgb8_exif{o}', picture(3, 5, 3, 255), 8, 2, exif=tiff_orientation(o, big_endian=o % 2 == 0),
            note=f'eXIf orientation {o}')
    jpegs = [
        ('j420_q90', (29, 37), dict(quality=90, subsampling=2)),
        ('j422_q75', (30, 41), dict(quality=75, subsampling=1)),
        ('j444_q95', (23, 19), dict(quality=95, subsampling=0)),
        ('j420_q50', (33, 45), dict(quality=50, subsampling=2)),
        ('jprog', (31, 26), dict(quality=85, progressive=True, subsampling=2)),
        ('jopt', (18, 27), dict(quality=80, optimize=True, subsampling=2)),
        ('j64x48', (48, 64), dict(quality=85, subsampling=2)),
        ('j1x1', (1, 1), dict(quality=90)),
    ]
    for name, (h, w), kw in jpegs:
        Image.fromarray(picture(h, w, 3, 255).astype(np.uint8), 'RGB').save(os.path.join(FIX, name + '.jpg'), **kw)
        fixtures.append({'name': name, 'file': name + '.jpg', 'canvasExact': False, 'note': 'JPEG'})
    Image.fromarray(picture(21, 17, 1, 255)[..., 0].astype(np.uint8), 'L').save(os.path.join(FIX, 'jgrey.jpg'),
                                                                                quality=85)
    fixtures.append({'name': 'jgrey', 'file': 'jgrey.jpg', 'canvasExact': False, 'note': 'JPEG, greyscale'})
    for o in (6, 8):
        ex = Image.Exif()
        ex[0x0112] = o
        Image.fromarray(picture(14, 22, 3, 255).astype(np.uint8), 'RGB').save(
            os.path.join(FIX, f'j_exif{o}.jpg'), quality=90, exif=ex.tobytes())
        fixtures.append({'name': f'j_exif{o}', 'file': f'j_exif{o}.jpg', 'canvasExact': False,
                         'note': f'JPEG, EXIF orientation {o}'})

# ---------------------------------------------------------------- configs


CLIP_MEAN, CLIP_STD = [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]
IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
R = 0.00392156862745098
CONFIGS = {
    # small configs of each processor, for every fixture and every filter
    'clip_small': {'image_processor_type': 'CLIPImageProcessor', 'do_resize': True, 'size': {'shortest_edge': 8},
                   'resample': 3, 'do_center_crop': True, 'crop_size': {'height': 8, 'width': 8}, 'do_rescale': True,
                   'rescale_factor': R, 'do_normalize': True, 'image_mean': CLIP_MEAN, 'image_std': CLIP_STD,
                   'do_convert_rgb': True},
    'vit_small': {'image_processor_type': 'ViTImageProcessor', 'do_resize': True, 'size': {'height': 7, 'width': 10},
                  'resample': 2, 'do_rescale': True, 'rescale_factor': R, 'do_normalize': True,
                  'image_mean': [0.5, 0.5, 0.5], 'image_std': [0.5, 0.5, 0.5]},
    'deit_small': {'image_processor_type': 'DeiTImageProcessor', 'size': {'height': 11, 'width': 13}, 'resample': 3,
                   'do_center_crop': True, 'crop_size': {'height': 9, 'width': 8}, 'image_mean': IMAGENET_MEAN,
                   'image_std': IMAGENET_STD, 'crop_pct': 0.875},
    'bit_small': {'image_processor_type': 'BitImageProcessor', 'size': {'shortest_edge': 10}, 'resample': 3,
                  'crop_size': {'height': 9, 'width': 9}, 'image_mean': IMAGENET_MEAN, 'image_std': IMAGENET_STD},
    'clip_old_small': {'feature_extractor_type': 'CLIPFeatureExtractor', 'size': 9, 'crop_size': 7, 'resample': 3,
                       'do_center_crop': True, 'do_normalize': True, 'do_resize': True, 'image_mean': CLIP_MEAN,
                       'image_std': CLIP_STD},
    'vit_old_small': {'feature_extractor_type': 'ViTFeatureExtractor', 'size': 10, 'resample': 2,
                      'do_normalize': True, 'do_resize': True, 'image_mean': [0.5, 0.5, 0.5],
                      'image_std': [0.5, 0.5, 0.5]},
    'siglip_small': {'image_processor_type': 'SiglipImageProcessor', 'do_resize': True,
                     'size': {'height': 10, 'width': 12}, 'resample': 3, 'do_rescale': True, 'rescale_factor': R,
                     'do_normalize': True, 'image_mean': [0.5, 0.5, 0.5], 'image_std': [0.5, 0.5, 0.5]},
    'clip_hw': {'image_processor_type': 'CLIPImageProcessor', 'size': {'height': 9, 'width': 11},
                'crop_size': {'height': 7, 'width': 7}},
    'bit_hw_lanczos': {'image_processor_type': 'BitImageProcessor', 'size': {'height': 12, 'width': 6}, 'resample': 1,
                       'crop_size': 5},
    'clip_pad': {'image_processor_type': 'CLIPImageProcessor', 'size': {'shortest_edge': 6},
                 'crop_size': {'height': 10, 'width': 9}, 'resample': 2},
    'bit_noresize_pad': {'image_processor_type': 'BitImageProcessor', 'do_resize': False,
                         'crop_size': {'height': 17, 'width': 12}},
    'bit_noresize_crop': {'image_processor_type': 'BitImageProcessor', 'do_resize': False,
                          'crop_size': {'height': 4, 'width': 5}},
    'vit_norescale': {'image_processor_type': 'ViTImageProcessor', 'size': {'height': 6, 'width': 5},
                      'do_rescale': False, 'image_mean': 127.5, 'image_std': 64.0},
    'vit_nonormalize': {'image_processor_type': 'ViTImageProcessor', 'size': [5, 7], 'do_normalize': False,
                        'rescale_factor': 0.0078125},
    'vit_raw': {'image_processor_type': 'ViTImageProcessor', 'do_resize': False, 'do_rescale': False,
                'do_normalize': False},
    # the hub's own files (openai/clip-vit-base-patch32, google/vit-base-patch16-224,
    # facebook/deit-base-distilled-patch16-224, facebook/dinov2-base, google/siglip-base-patch16-224, and a newer CLIP)
    'hub_clip_b32': {'crop_size': 224, 'do_center_crop': True, 'do_normalize': True, 'do_resize': True,
                     'feature_extractor_type': 'CLIPFeatureExtractor', 'image_mean': CLIP_MEAN, 'image_std': CLIP_STD,
                     'resample': 3, 'size': 224},
    'hub_clip_new': {'crop_size': {'height': 224, 'width': 224}, 'do_center_crop': True, 'do_convert_rgb': True,
                     'do_normalize': True, 'do_rescale': True, 'do_resize': True, 'image_mean': CLIP_MEAN,
                     'image_processor_type': 'CLIPImageProcessor', 'image_std': CLIP_STD, 'resample': 3,
                     'rescale_factor': R, 'size': {'shortest_edge': 224}},
    'hub_vit': {'do_normalize': True, 'do_resize': True, 'feature_extractor_type': 'ViTFeatureExtractor',
                'image_mean': [0.5, 0.5, 0.5], 'image_std': [0.5, 0.5, 0.5], 'resample': 2, 'size': 224},
    'hub_deit': {'crop_size': 224, 'do_center_crop': True, 'do_normalize': True, 'do_resize': True,
                 'feature_extractor_type': 'DeiTFeatureExtractor', 'image_mean': IMAGENET_MEAN,
                 'image_std': IMAGENET_STD, 'resample': 3, 'size': 256},
    'hub_dinov2': {'crop_size': {'height': 224, 'width': 224}, 'do_center_crop': True, 'do_convert_rgb': True,
                   'do_normalize': True, 'do_rescale': True, 'do_resize': True, 'image_mean': IMAGENET_MEAN,
                   'image_processor_type': 'BitImageProcessor', 'image_std': IMAGENET_STD, 'resample': 3,
                   'rescale_factor': R, 'size': {'shortest_edge': 256}},
    'hub_siglip': {'do_normalize': True, 'do_rescale': True, 'do_resize': True, 'image_mean': [0.5, 0.5, 0.5],
                   'image_processor_type': 'SiglipImageProcessor', 'image_std': [0.5, 0.5, 0.5],
                   'processor_class': 'SiglipProcessor', 'resample': 3, 'rescale_factor': R,
                   'size': {'height': 224, 'width': 224}},
}
FILTERS = {0: 'nearest', 1: 'lanczos', 2: 'bilinear', 3: 'bicubic', 4: 'box', 5: 'hamming'}
for f, fname in FILTERS.items():  # ViT's processor with every filter, downscaling and upscaling
    CONFIGS[f'vit_{fname}_down'] = {'image_processor_type': 'ViTImageProcessor', 'size': {'height': 7, 'width': 11},
                                    'resample': f}
    CONFIGS[f'vit_{fname}_up'] = {'image_processor_type': 'ViTImageProcessor', 'size': {'height': 12, 'width': 14},
                                  'resample': f}


def processor(name, cache={}):
    if name not in cache:
        d = tempfile.mkdtemp()
        with open(os.path.join(d, 'preprocessor_config.json'), 'w') as f:
            json.dump(CONFIGS[name], f)
        cache[name] = AutoImageProcessor.from_pretrained(d)
        shutil.rmtree(d)
    return cache[name]


def build_refusals():
    os.makedirs(os.path.join(OUT, 'refused'))
    rgb = Image.fromarray(picture(6, 7, 3, 255).astype(np.uint8), 'RGB')
    out = []
    for name, fmt, im in (('cmyk.jpg', 'JPEG', rgb.convert('CMYK')), ('image.gif', 'GIF', rgb),
                          ('image.bmp', 'BMP', rgb), ('image.tiff', 'TIFF', rgb), ('image.webp', 'WEBP', rgb)):
        try:
            im.save(os.path.join(OUT, 'refused', name), fmt)
        except (KeyError, OSError):
            continue  # a format this PIL cannot write
        out.append({'file': name, 'pilMode': Image.open(os.path.join(OUT, 'refused', name)).mode})
    return out


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(FIX)
    build_fixtures()
    refusals = build_refusals()
    decoded, fx = bytearray(), {}
    for f in fixtures:
        path = os.path.join(FIX, f['file'])
        rgb = np.asarray(load_image(path))
        fx[f['name']] = {**f, 'pilMode': Image.open(path).mode, 'width': rgb.shape[1], 'height': rgb.shape[0],
                         'offset': len(decoded)}
        decoded += rgb.tobytes()
    names = [f['name'] for f in fixtures]
    cases = [(n, c) for n in names for c in ('clip_small', 'vit_small')]
    cases += [(n, f'vit_{fn}_{d}') for n in ('rgb8_64x48', 'j64x48', 'rgb8_1x1', 'rgb8_200x10', 'rgb8_10x200', 'g8',
                                             'p4_i', 'rgb8_checker') for fn in FILTERS.values() for d in ('down', 'up')]
    some = ['rgb8', 'g16_i', 'p4_trns_i', 'ga8', 'j420_q90', 'rgb8_200x10', 'rgb8_1x1', 'rgb8_exif6', 'j_exif8']
    cases += [(n, c) for n in some for c in ('deit_small', 'bit_small', 'clip_old_small', 'vit_old_small',
                                             'siglip_small', 'clip_pad', 'vit_norescale', 'vit_nonormalize',
                                             'clip_hw', 'bit_hw_lanczos')]
    cases += [(n, c) for n in ('rgb8', 'g8', 'rgb8_1x1', 'p4_short_palette') for c in
              ('bit_noresize_pad', 'bit_noresize_crop', 'vit_raw')]
    cases += [(['rgb8', 'j420_q90', 'p2_i', 'rgb8_1x1'], c) for c in ('clip_small', 'deit_small', 'siglip_small')]
    hub = [(n, c) for n in ('rgb8_64x48', 'j64x48', 'rgb8_200x10') for c in CONFIGS if c.startswith('hub_')]
    values, out_cases = bytearray(), []
    for sources, config in cases + hub:
        batch = sources if isinstance(sources, list) else [sources]
        images = [load_image(os.path.join(FIX, fx[n]['file'])) for n in batch]
        pv = processor(config)(images, return_tensors='np', input_data_format='channels_last')['pixel_values']
        pv = np.ascontiguousarray(pv, dtype=np.float32)  # do_rescale=False, do_normalize=False keeps uint8
        case = {'fixtures': batch, 'config': config, 'shape': list(pv.shape)}
        if config.startswith('hub_'):
            flat = pv.reshape(-1)
            idx = np.sort(rng.choice(flat.size, 64, replace=False))
            case.update(sha256=hashlib.sha256(flat.astype('<f4').tobytes()).hexdigest(),
                        samples={'index': idx.tolist(), 'value': flat[idx].astype(float).tolist()})
        else:
            case['offset'] = len(values) // 4
            values += pv.astype('<f4').tobytes()
        out_cases.append(case)
    with open(os.path.join(OUT, 'decoded.bin'), 'wb') as f:
        f.write(decoded)
    with open(os.path.join(OUT, 'pixel_values.bin'), 'wb') as f:
        f.write(values)
    expected = {
        'generator': 'tests/data/make_image_goldens.py',
        'versions': {'PIL': PIL.__version__, 'transformers': transformers.__version__, 'numpy': np.__version__},
        'tolerance': 1e-6,
        'fixtures': fx, 'configs': CONFIGS, 'cases': out_cases, 'refusals': refusals,
    }
    with open(os.path.join(OUT, 'expected.json'), 'w') as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write('\n')
    total = sum(os.path.getsize(os.path.join(dp, n)) for dp, _, ns in os.walk(OUT) for n in ns)
    print(f'{len(fixtures)} fixtures, {len(out_cases)} cases, {total} bytes in {OUT}')


if __name__ == '__main__':
    main()
