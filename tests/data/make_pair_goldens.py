"""Sentence pairs through transformers' slow classes (v4.40.2, tools/hf_env), the reference of the slow
path: tokenizer(text, pair, truncation=strategy, max_length=m) and add_special_tokens=False.

Run with Debian's python:  /usr/bin/python3 tests/data/make_pair_goldens.py
Reads the folders of make_spm_goldens.py (tests/data/goldens/spm/folders: bert_hub, roberta_hub,
xlmr_saved, its .model named in manifest.json) and the cases of tokenizer_pair_cases.json; writes
tests/data/goldens/spm/pairs.json: per folder and pair, the ids and type ids with and without the
special tokens, and per (maxLength, strategy) the ids each text keeps [k1, k2] (the row being the full
row with each text cut, checked here) or the logged error (the slow classes then return the texts
untruncated: attnwasm throws instead). Two runs write identical bytes.
"""
import json
import logging
import os
import shutil
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import transformers  # noqa: E402
from transformers import BertTokenizer, RobertaTokenizer, XLMRobertaTokenizer  # noqa: E402

SPM = os.path.join(ROOT, 'tests', 'data', 'goldens', 'spm')
FOLDERS = {'bert_hub': BertTokenizer, 'roberta_hub': RobertaTokenizer, 'xlmr_saved': XLMRobertaTokenizer}


def max_lengths_of(n1, n2, added):
    """The twin of tokenizer_pair_cases.mjs maxLengthsOf."""
    m = n1 + n2
    half = m // 2
    wanted = [added + m, added + m - 1, added + half, added + half + 1, added + 1, added]
    return sorted({v for v in wanted if v >= max(1, added)})


class Errors(logging.Handler):
    """Catches the error truncate_sequences logs when a strategy cannot reach max_length."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def main():
    cases = json.load(open(os.path.join(ROOT, 'tests', 'data', 'tokenizer_pair_cases.json'), encoding='utf-8'))
    manifest = json.load(open(os.path.join(SPM, 'manifest.json')))
    errors = Errors()
    logging.getLogger('transformers.tokenization_utils_base').addHandler(errors)
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_default_handler()
    out = {'reference': f'transformers {transformers.__version__} slow classes, made by tests/data/make_pair_goldens.py', 'folders': {}}
    for name, cls in FOLDERS.items():
        with tempfile.TemporaryDirectory() as tmp:
            folder = os.path.join(tmp, name)
            shutil.copytree(os.path.join(SPM, 'folders', name), folder)
            for file, model in manifest.get(name, {}).items():
                shutil.copy(os.path.join(SPM, model), os.path.join(folder, file))
            tok = cls.from_pretrained(folder)
        rows = []
        for a, b in cases['pairs']:
            full = tok(a, b, return_token_type_ids=True)
            plain = tok(a, b, add_special_tokens=False)  # type ids: only where the class returns them (BERT)
            n1 = len(tok(a, add_special_tokens=False)['input_ids'])
            n2 = len(tok(b, add_special_tokens=False)['input_ids'])
            added = tok.num_special_tokens_to_add(pair=True)
            assert len(full['input_ids']) == n1 + n2 + added
            p1 = tok(a, add_special_tokens=False)['input_ids']
            p2 = tok(b, add_special_tokens=False)['input_ids']
            truncated = []
            for m in max_lengths_of(n1, n2, added):
                for strategy in cases['strategies']:
                    errors.messages.clear()
                    r = tok(a, b, truncation=strategy, max_length=m, return_token_type_ids=True)
                    if errors.messages:
                        truncated.append([m, strategy, errors.messages[0].split('. ')[0]])
                        continue
                    k1 = next(k for k in range(n1, -1, -1) if tok.build_inputs_with_special_tokens(p1[:k], p2[:len(r['input_ids']) - added - k]) == r['input_ids'])
                    k2 = len(r['input_ids']) - added - k1
                    assert tok.create_token_type_ids_from_sequences(p1[:k1], p2[:k2]) == r['token_type_ids']
                    truncated.append([m, strategy, [k1, k2]])
            rows.append({'text': a, 'pair': b, 'lengths': [n1, n2], 'full': {'ids': full['input_ids'], 'types': ''.join(map(str, full['token_type_ids']))},
                         'plain': {'ids': plain['input_ids'], 'types': ''.join(map(str, plain.get('token_type_ids', [])))}, 'truncated': truncated})
        out['folders'][name] = {'class': cls.__name__, 'cases': rows}
    lines = ',\n'.join(f'{json.dumps(n)}: {{"class": {json.dumps(f["class"])}, "cases": [\n' + ',\n'.join(json.dumps(c, ensure_ascii=False, separators=(',', ':')) for c in f['cases']) + ']}'
                       for n, f in out['folders'].items())
    text = f'{{"reference": {json.dumps(out["reference"])}, "folders": {{\n{lines}}}}}\n'
    with open(os.path.join(SPM, 'pairs.json'), 'w', encoding='utf-8') as f:
        f.write(text)
    print('wrote tests/data/goldens/spm/pairs.json', len(text), 'bytes')


if __name__ == '__main__':
    main()
