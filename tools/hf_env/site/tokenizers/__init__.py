"""Stand-in for tokenizers (tools/hf_env): AddedToken with tokenizers 0.19's semantics, for the slow
tokenizers; there is no fast tokenizer here (their ids come from npm `tokenizers`)."""
import sys
import types
import importlib.abc
import importlib.machinery

__version__ = "0.19.1"


class AddedToken:
    """tokenizers.AddedToken: content plus flags; equal and hashed by content, as the Rust class is.
    As in tokenizers 0.19, `normalized` left unset means `not special` (read when asked), and
    __setstate__ changes only the fields it is given (transformers' _add_tokens passes two)."""

    def __init__(self, content='', single_word=False, lstrip=False, rstrip=False, normalized=None, special=False):
        self.content = str(content)
        self.single_word = single_word
        self.lstrip = lstrip
        self.rstrip = rstrip
        self._normalized = normalized
        self.special = special

    @property
    def normalized(self):
        return (not self.special) if self._normalized is None else self._normalized

    @normalized.setter
    def normalized(self, value):
        self._normalized = value

    def __getstate__(self):
        return dict(content=self.content, single_word=self.single_word, lstrip=self.lstrip, rstrip=self.rstrip,
                    normalized=self.normalized, special=self.special)

    def __setstate__(self, state):
        for key, value in state.items():
            if key in ('content', 'single_word', 'lstrip', 'rstrip', 'normalized', 'special'):
                setattr(self, key, value)

    def __str__(self):
        return self.content

    def __repr__(self):
        return (f'AddedToken("{self.content}", rstrip={self.rstrip}, lstrip={self.lstrip}, '
                f'single_word={self.single_word}, normalized={self.normalized}, special={self.special})')

    def __eq__(self, other):
        return isinstance(other, AddedToken) and self.content == other.content

    def __hash__(self):
        return hash(self.content)


class _Unavailable:
    def __init__(self, *a, **k):
        raise RuntimeError('tokenizers: a stand-in (tools/hf_env): fast tokenizers do not run here')


Tokenizer = Encoding = _Unavailable


def __getattr__(name):
    """Any other name (Regex, decoders, …) imports, and fails only when used."""
    if name.startswith('__'):
        raise AttributeError(name)
    return _Unavailable


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """tokenizers.<sub> modules whose names are all _Unavailable."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith('tokenizers.'):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        m = types.ModuleType(spec.name)
        m.__path__ = []
        m.__getattr__ = __getattr__
        return m

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Finder())
