"""safetensors.torch stand-in (tools/hf_env): load_file, save_file, storage_ptr, storage_size."""
import json
import struct

import torch

from . import safe_open

NAMES = {torch.float64: 'F64', torch.float32: 'F32', torch.float16: 'F16', torch.bfloat16: 'BF16', torch.int64: 'I64',
         torch.int32: 'I32', torch.int16: 'I16', torch.int8: 'I8', torch.uint8: 'U8', torch.bool: 'BOOL'}


def storage_ptr(tensor):
    try:
        return tensor.untyped_storage().data_ptr()
    except (AttributeError, NotImplementedError):
        return tensor.storage().data_ptr()


def storage_size(tensor):
    try:
        return tensor.untyped_storage().nbytes()
    except (AttributeError, NotImplementedError):
        return tensor.storage().size() * tensor.element_size()


def load_file(path, device='cpu'):
    with safe_open(path) as f:
        return {k: f.get_tensor(k) for k in f.keys()}


def _bytes(t):
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def save_file(tensors, path, metadata=None):
    header, blobs, at = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name]
        b = _bytes(t)
        header[name] = {'dtype': NAMES[t.dtype], 'shape': list(t.shape), 'data_offsets': [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    if metadata:
        header['__metadata__'] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * ((8 - len(text) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
