"""Stand-in for safetensors (tools/hf_env): the file format read and written in Python (8-byte little-endian
header length, a JSON header of name -> {dtype, shape, data_offsets} plus __metadata__, then the data)."""
import json
import struct

__version__ = '0.4.3'

DTYPES = {'F64': 'float64', 'F32': 'float32', 'F16': 'float16', 'BF16': 'bfloat16', 'I64': 'int64', 'I32': 'int32',
          'I16': 'int16', 'I8': 'int8', 'U8': 'uint8', 'BOOL': 'bool'}


def read_header(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n))
    return n, header


class safe_open:
    """safe_open(path, framework='pt'): keys(), metadata(), get_tensor(name), as a context manager."""

    def __init__(self, path, framework='pt', device='cpu'):
        self.path = path
        self.n, self.header = read_header(path)
        self._meta = self.header.pop('__metadata__', None) or {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def keys(self):
        return list(self.header.keys())

    def metadata(self):
        return dict(self._meta)

    def get_tensor(self, name):
        import torch
        info = self.header[name]
        a, b = info['data_offsets']
        with open(self.path, 'rb') as f:
            f.seek(8 + self.n + a)
            raw = bytearray(f.read(b - a))
        dtype = getattr(torch, DTYPES[info['dtype']])
        t = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        return t.reshape(info['shape']).clone()
