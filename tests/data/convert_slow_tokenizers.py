"""Transformers' own slow→fast conversion of slow tokenizer folders, for make_offset_goldens.mjs.

Run by make_offset_goldens.mjs with /usr/bin/python3 (tools/hf_env: transformers 4.40.2 on this machine,
whose `tokenizers` is a stand-in without the Rust library). Reads {"folders": {name: {file: {"path": p} |
{"json": obj}}}, "texts": [...]} on stdin and writes on stdout, per folder: the class from_pretrained
loads, its ids for each text (encode without special tokens: the slow class's own ids), and the
fast tokenizer transformers would build from it, as a transcript of the calls the converter makes:
convert_slow_tokenizer(slow) runs transformers' converter (RobertaConverter, XLMRobertaConverter, …)
unchanged, with recorders in place of the `tokenizers` constructors it calls (each call kept as its
class, positional and keyword arguments, and the attributes set on it). make_offset_goldens.mjs turns
the transcript into the Rust library's tokenizer.json and runs npm `tokenizers` on it.

What the fast class's __init__ does after the conversion is written out here, from
tokenization_utils_fast.py and tokenization_roberta_fast.py (v4.40.2): the slow tokenizer's added
tokens added to the fast one (special ones through add_special_tokens: special, normalized only when
the token says so), and RobertaTokenizerFast's add_prefix_space / trim_offsets from the init kwargs
(tokenizer_config.json) written into the post-processor and pre-tokenizer.
"""
import base64
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import transformers  # noqa: E402
import transformers.convert_slow_tokenizer as cst  # noqa: E402


class Call:
    """One recorded constructor call of the `tokenizers` library, and the attributes set on the result."""

    def __init__(self, name, args, kwargs):
        object.__setattr__(self, 'record', {'call': name, 'args': list(args), 'kwargs': dict(kwargs), 'set': {}})

    def __setattr__(self, key, value):
        self.record['set'][key] = value

    def __getattr__(self, key):
        if key in self.record['set']:
            return self.record['set'][key]
        raise AttributeError(f'recorded {self.record["call"]} has no attribute {key} (the converter read something not recorded)')


def recorder(name):
    return lambda *args, **kwargs: Call(name, args, kwargs)


class Module:
    """tokenizers.normalizers, .pre_tokenizers, …: every name a recorder."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, key):
        if key.startswith('__'):
            raise AttributeError(key)
        return recorder(f'{self.name}.{key}')


for name in ('Tokenizer', 'Regex'):
    setattr(cst, name, recorder(name))
for name in ('BPE', 'Unigram', 'WordPiece'):
    setattr(cst, name, recorder(f'models.{name}'))
for name in ('normalizers', 'pre_tokenizers', 'decoders', 'processors'):
    setattr(cst, name, Module(name))


def plain(x):
    """A transcript value as JSON: calls as records, bytes as base64, tuples as lists."""
    if isinstance(x, Call):
        r = x.record
        return {'call': r['call'], 'args': plain(r['args']), 'kwargs': plain(r['kwargs']), 'set': plain(r['set'])}
    if isinstance(x, (bytes, bytearray)):
        return {'bytes': base64.b64encode(bytes(x)).decode('ascii')}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    raise TypeError(f'transcript: cannot write {type(x).__name__}')


def roberta_fast_init(tok, slow):
    """RobertaTokenizerFast.__init__ after the conversion: its add_prefix_space / trim_offsets kwargs
    (defaults False / True) written into the pre-tokenizer and the post-processor where they differ."""
    add_prefix_space = slow.init_kwargs.get('add_prefix_space', False)
    trim_offsets = slow.init_kwargs.get('trim_offsets', True)
    pre = tok.record['set']['pre_tokenizer'].record['kwargs']
    if pre.get('add_prefix_space', add_prefix_space) != add_prefix_space:
        pre['add_prefix_space'] = add_prefix_space
    post = tok.record['set']['post_processor'].record['kwargs']
    for key, value in (('add_prefix_space', add_prefix_space), ('trim_offsets', trim_offsets)):
        if post.get(key, value) != value:
            post[key] = value


def added_tokens(slow):
    """The tokens PreTrainedTokenizerFast.__init__ adds: the slow tokenizer's added tokens by id;
    special ones (token.special or one of all_special_tokens) through add_special_tokens, which makes
    them special and, unless the token sets it, not normalized."""
    specials = set(slow.all_special_tokens)
    out = []
    for i, t in sorted(slow.added_tokens_decoder.items()):
        special = t.special or str(t) in specials
        normalized = t._normalized if t._normalized is not None else not special
        out.append({'id': i, 'content': t.content, 'single_word': t.single_word, 'lstrip': t.lstrip, 'rstrip': t.rstrip,
                    'normalized': normalized, 'special': special})
    return out


def main():
    req = json.load(sys.stdin)
    out = {'transformers': transformers.__version__, 'folders': {}}
    for name, files in req['folders'].items():
        folder = tempfile.mkdtemp()
        try:
            for file, src in files.items():
                if 'path' in src:
                    shutil.copy(src['path'], os.path.join(folder, file))
                else:
                    with open(os.path.join(folder, file), 'w', encoding='utf-8') as f:
                        json.dump(src['json'], f)
            config = files.get('tokenizer_config.json', {}).get('json', {})
            cls = getattr(transformers, config.get('tokenizer_class') or ('XLMRobertaTokenizer' if 'sentencepiece.bpe.model' in files else 'RobertaTokenizer'))
            slow = cls.from_pretrained(folder)
            tok = cst.convert_slow_tokenizer(slow)
            if type(slow).__name__ == 'RobertaTokenizer':
                roberta_fast_init(tok, slow)
            ids = [slow.encode(t, add_special_tokens=False) for t in req['texts']]
            out['folders'][name] = {'class': type(slow).__name__, 'tokenizer': plain(tok), 'added_tokens': added_tokens(slow), 'ids': ids}
        finally:
            shutil.rmtree(folder)
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == '__main__':
    main()
