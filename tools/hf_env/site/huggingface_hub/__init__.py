"""Stand-in for huggingface_hub (tools/hf_env): the names transformers imports, made on demand.

A name ending in Error is an exception class; an UPPER_CASE name a constant (a path under /tmp, or a regex for
REGEX_*); any other a function that, used as a decorator (one callable argument, or keyword arguments only),
leaves what it decorates unchanged, with no argument returns None, and otherwise raises: nothing here reaches the network."""
import re
import sys
import types
import importlib.abc
import importlib.machinery

__version__ = '0.23.0'
_made = {}


def _standin(module, name):
    key = (module, name)
    if key in _made:
        return _made[key]
    if name.startswith('__'):
        raise AttributeError(name)
    if name.endswith('Error') or name.endswith('Warning'):
        value = type(name, (Warning if name.endswith('Warning') else Exception,), {})
    elif name.startswith('REGEX_'):
        value = re.compile(r'^[0-9a-f]{40}$')
    elif name.isupper():
        value = False if name.startswith('HF_HUB_DISABLE') or name.endswith('OFFLINE') else '/tmp/hf_env_cache'
    else:
        def value(*args, **kwargs):
            if len(args) == 1 and callable(args[0]) and not kwargs:
                return args[0]
            if not args and kwargs:
                return lambda f: f
            if not args:
                return None
            raise RuntimeError(f'{module}.{name}: a stand-in (tools/hf_env): nothing is downloaded here')
        value.__name__ = name
    _made[key] = value
    return value


def __getattr__(name):
    return _standin(__name__, name)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Every huggingface_hub.<sub> module: one whose attributes are stand-ins."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith('huggingface_hub.'):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        m = types.ModuleType(spec.name)
        m.__path__ = []
        m.__getattr__ = lambda name, _n=spec.name: _standin(_n, name)
        return m

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Finder())
__path__ = __path__  # a package: submodules come from _Finder
