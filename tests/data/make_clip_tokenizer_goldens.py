"""CLIP's and SigLIP's slow tokenizers (transformers v4.40.2) on folders of their files, with the ids they give.

Run with Debian's python (sentencepiece 0.1.97, transformers v4.40.2 through tools/hf_env; ftfy is not
installed, so CLIPTokenizer runs its BasicTokenizer fallback, as for every Python user without ftfy):
    /usr/bin/python3 tests/data/make_clip_tokenizer_goldens.py [--clip-bpe PATH]
then node tests/data/make_clip_tokenizer_goldens.mjs (the fast tokenizer.json's ids from the Rust library).

Writes tests/data/goldens/clip_tokenizer/:
  clip/vocab.json, clip/merges.txt   CLIP's real vocabulary cut to what TEXTS need: OpenAI's
        bpe_simple_vocab_16e6.txt.gz (github.com/openai/CLIP, clip/, sha256 below) read as OpenAI's
        simple_tokenizer.py and the hub's vocab.json / merges.txt have it (49 408 ids: the 256 byte symbols,
        the same with '</w>', one token per merge, <|startoftext|> 49406, <|endoftext|> 49407), then
        only the merges the texts apply (slow and fast pre-tokenization both) and their tokens, every
        id as in the full vocabulary. BPE over that subset gives the full files' result for these texts
        (a merge that never applies cannot change one); with --clip-bpe the script checks it, text by
        text, against CLIPTokenizer on the full files. Without it the checked-in cut is used.
  siglip.model    a SentencePiece unigram model trained here as SigLIP's spiece.model is built (nmt_nfkc,
        <pad> 0, </s> 1, <unk> 2, no <s>), from a fixed caption corpus (one thread, no shuffling: two
        runs write the same bytes). No real SigLIP spiece.model (800 KB, on the hub only) was reachable.
  folders/<name>/ tokenizer folders: clip_hub (openai/clip-vit-base-patch32's tokenizer_config.json
        and special_tokens_map.json, and the tokenizer.json CLIPConverter makes), clip_saved
        (CLIPTokenizer.save_pretrained: slow files, added_tokens_decoder), clip_config (config.json
        model_type clip, no tokenizer_config.json), siglip_saved (SiglipTokenizer.save_pretrained, as
        google/siglip-base-patch16-224 has it), siglip_cased (do_lower_case false; no tokenizer_class:
        config.json's model_type siglip)
  slow.json       per folder and text (AutoTokenizer.from_pretrained(folder), the slow class): tokens,
        ids with and without special tokens, decode with and without skip_special_tokens; padded
        batches as CLIPProcessor (padding=True) and SiglipProcessor (padding='max_length') make them
"""
import gzip
import hashlib
import io
import json
import os
import random
import shutil
import sys
import unicodedata

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import regex  # noqa: E402
import sentencepiece as spm  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoTokenizer, CLIPTokenizer, SiglipTokenizer  # noqa: E402

transformers.logging.set_verbosity_error()
OUT = os.path.join(ROOT, 'tests', 'data', 'goldens', 'clip_tokenizer')
CLIP_BPE_SHA256 = '924691ac288e54409236115652ad4aa250f48203de50a9e4722a6ecd48d6804a'

# Labels as zero-shot classification writes them, and what breaks tokenizers: capitals, punctuation,
# accents, CJK, emoji, runs of spaces / tabs / newlines, the empty string, a long text, special
# tokens written in the text, SigLIP's punctuation removal, characters Python and Rust lowercase apart.
TEXTS = [
    'a photo of a cat', 'a photo of a dog', 'a photo of a bird.', 'A Photo Of A CAT', 'This is a photo of a Golden Retriever!',
    'Hello, World!!', "don't it's they're we'll I'M you've", 'café naïve résumé Ünïcödé', 'e\u0301 combining accent',
    '日本語のテキスト 中文 한국어', 'emoji 😀👍🏽 family 👨\u200d👩\u200d👧', 'multiple   spaces\t\ttabs\nnew\r\nlines  ', '', ' ',
    '   \t\n ', '!!!', '...', ' '.join(['a photo of the large brown dog sitting on a red sofa near the window'] * 8),
    'ΣΑΣ ΟΔΟΣ İstanbul', '12345 3.14 1,000,000', '<|startoftext|> a <|endoftext|>', 'a<|endoftext|>b', '<|ENDOFTEXT|> x', 'x </s> y',
    'hello!!!world??', '$100 & 50% off #tag @user', "it's—“quoted” ‘text’ …", 'ﬁne ＡＢＣ full-width',
    '\x00nul\x07bell\ufeffbom\u200bzw', 'supercalifragilisticexpialidocious', 'the cat\u00a0sat\u3000down',
    '  leading and trailing  ', "'s 's 'S", 'a\u0085b\u2028c', 'Ⅻ ① x²', 'a_b-c/d:e(f)g[h]i{j}k', '▁ under▁line',
    "a photo of a cat's toy, (blurry) - 50%", 'mother-in-law e-mail rock\'n\'roll', "it'ſ a \u212a",
]
BATCHES = [['a photo of a cat', 'a photo of a dog', 'a picture of a red sports car parked outside'], ['', 'x', 'Hello, World!!']]

WORDS = ('a photo of the cat dog bird picture image red blue green large small brown sitting on sofa near window car '
         'parked outside sports golden retriever this is hello world people man woman child tree house street food '
         'white black yellow two three one with and in at by an old new close up view night day sunny beach mountain').split()


def clip_full(path):
    """vocab and merges as OpenAI's simple_tokenizer.py builds them from bpe_simple_vocab_16e6.txt.gz."""
    with open(path, 'rb') as f:
        data = f.read()
    if hashlib.sha256(data).hexdigest() != CLIP_BPE_SHA256:
        raise SystemExit(f'{path}: expected sha256 {CLIP_BPE_SHA256}')
    lines = gzip.decompress(data).decode('utf-8').split('\n')
    merges = [tuple(m.split()) for m in lines[1:49152 - 256 - 2 + 1]]
    symbols = list(transformers.models.clip.tokenization_clip.bytes_to_unicode().values())
    vocab = symbols + [s + '</w>' for s in symbols] + [''.join(m) for m in merges] + ['<|startoftext|>', '<|endoftext|>']
    return {t: i for i, t in enumerate(vocab)}, merges


def write_clip(d, vocab, merges):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'vocab.json'), 'w', encoding='utf-8') as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(d, 'merges.txt'), 'w', encoding='utf-8') as f:
        f.write('#version: 0.2\n' + ''.join(f'{a} {b}\n' for a, b in merges))


def pieces_of(tok, texts):
    """Every byte-symbol word BPE sees for these texts: the slow class's (BasicTokenizer, its regex) and
    the fast file's (NFC, \\s+ → ' ', lowercase per character, the same regex without IGNORECASE)."""
    enc = tok.byte_encoder
    words = set()
    for t in texts:
        slow = regex.findall(tok.pat, ' '.join(tok.nlp.tokenize(t)))
        fast = regex.findall(regex.compile(tok.pat.pattern), ''.join(c.lower() for c in regex.sub(r'\s+', ' ', unicodedata.normalize('NFC', t))))
        for p in slow + fast:
            words.add(''.join(enc[b] for b in p.encode('utf-8')))
    return words


def applied_merges(words, ranks):
    """The merges CLIPTokenizer.bpe applies to these words (its own loop, recorded)."""
    used = set()
    for token in words:
        word = list(token[:-1]) + [token[-1] + '</w>']
        while len(word) > 1:
            pairs = {(word[i], word[i + 1]) for i in range(len(word) - 1)}
            best = min(pairs, key=lambda p: ranks.get(p, float('inf')))
            if best not in ranks:
                break
            used.add(best)
            out, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            word = out
    return used


def make_clip(clip_bpe, tmp):
    d = os.path.join(OUT, 'clip')
    texts = TEXTS + [t for b in BATCHES for t in b]
    if clip_bpe:
        vocab, merges = clip_full(clip_bpe)
        full = os.path.join(tmp, 'clip_full')
        write_clip(full, vocab, merges)
        full_tok = CLIPTokenizer(os.path.join(full, 'vocab.json'), os.path.join(full, 'merges.txt'))
        used = applied_merges(pieces_of(full_tok, texts), full_tok.bpe_ranks)
        keep = [m for m in merges if m in used]
        base = list(full_tok.byte_encoder.values())
        tokens = base + [s + '</w>' for s in base] + [''.join(m) for m in keep] + ['<|startoftext|>', '<|endoftext|>']
        write_clip(d, {t: vocab[t] for t in tokens}, keep)
        cut = CLIPTokenizer(os.path.join(d, 'vocab.json'), os.path.join(d, 'merges.txt'))
        for t in texts:
            if cut(t)['input_ids'] != full_tok(t)['input_ids']:
                raise SystemExit(f'the cut vocabulary gives other ids than the full one for {t!r}')
        print(f'CLIP: {len(keep)} of {len(merges)} merges, {len(tokens)} tokens; ids equal to the full files for all {len(texts)} texts')
    with open(os.path.join(d, 'vocab.json'), encoding='utf-8') as f:
        vocab = json.load(f)
    with open(os.path.join(d, 'merges.txt'), encoding='utf-8') as f:
        merges = [tuple(line.split()) for line in f.read().strip().split('\n')[1:]]
    return vocab, merges


def converted_json(vocab, merges):
    """The tokenizer.json transformers' CLIPConverter writes (tokenizers 0.19's serialization of it)."""
    def added(content, i):
        return {'id': i, 'content': content, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': True, 'special': True}
    return {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': [added('<|startoftext|>', vocab['<|startoftext|>']), added('<|endoftext|>', vocab['<|endoftext|>'])],
        'normalizer': {'type': 'Sequence', 'normalizers': [{'type': 'NFC'}, {'type': 'Replace', 'pattern': {'Regex': '\\s+'}, 'content': ' '}, {'type': 'Lowercase'}]},
        'pre_tokenizer': {'type': 'Sequence', 'pretokenizers': [
            {'type': 'Split', 'pattern': {'Regex': "'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+"}, 'behavior': 'Removed', 'invert': True},
            {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': False}]},
        'post_processor': {'type': 'RobertaProcessing', 'sep': ['<|endoftext|>', vocab['<|endoftext|>']], 'cls': ['<|startoftext|>', vocab['<|startoftext|>']],
                           'trim_offsets': False, 'add_prefix_space': False},
        'decoder': {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': True, 'use_regex': True},
        'model': {'type': 'BPE', 'dropout': None, 'unk_token': '<|endoftext|>', 'continuing_subword_prefix': '', 'end_of_word_suffix': '</w>',
                  'fuse_unk': False, 'byte_fallback': False, 'ignore_merges': False, 'vocab': vocab, 'merges': [f'{a} {b}' for a, b in merges]},
    }


def siglip_corpus():
    """About 2 000 captions of WORDS and made-up words, lowercase, from a fixed seed."""
    rnd = random.Random(20261205)
    words = list(WORDS)
    for _ in range(150):
        words.append(''.join(rnd.choice('bkmstrnpl') + rnd.choice('aeiou') for _ in range(rnd.randint(2, 4))))
    return [' '.join(rnd.choice(words) for _ in range(rnd.randint(3, 12))) for _ in range(2000)]


def make_siglip(path):
    f = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(siglip_corpus()), model_writer=f, num_threads=1, shuffle_input_sentence=False,
                                   hard_vocab_limit=False, minloglevel=2, vocab_size=400, model_type='unigram',
                                   normalization_rule_name='nmt_nfkc', pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
    with open(path, 'wb') as out:
        out.write(f.getvalue())


def write_json(path, obj):
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(obj, f, ensure_ascii=False, indent=1 if 'folders' in path else None)
        f.write('\n')


def expected(tok, folder, batch_kwargs):
    out = {'class': type(tok).__name__, 'cases': [], 'batches': []}
    for t in TEXTS:
        ids = tok(t)['input_ids']
        out['cases'].append({'text': t, 'tokens': tok.tokenize(t), 'ids': ids, 'ids_plain': tok(t, add_special_tokens=False)['input_ids'],
                             'decoded': tok.decode(ids), 'decoded_skip': tok.decode(ids, skip_special_tokens=True)})
    for b in BATCHES + [[TEXTS[17], 'a photo of a cat']]:
        enc = tok(b, **batch_kwargs)
        out['batches'].append({'texts': b, 'kwargs': batch_kwargs, 'input_ids': enc['input_ids'], 'attention_mask': enc['attention_mask']})
    return out


def main():
    clip_bpe = sys.argv[sys.argv.index('--clip-bpe') + 1] if '--clip-bpe' in sys.argv else None
    tmp = os.path.join(ROOT, 'build', 'clip_tokenizer_goldens')
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    os.makedirs(OUT, exist_ok=True)
    vocab, merges = make_clip(clip_bpe, tmp)
    clip_dir = os.path.join(OUT, 'clip')
    folders = os.path.join(OUT, 'folders')
    shutil.rmtree(folders, ignore_errors=True)

    def token(content):
        return {'content': content, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': True, '__type': 'AddedToken'}
    # openai/clip-vit-base-patch32's files (tokenizer.json as CLIPConverter writes it for them).
    hub = os.path.join(folders, 'clip_hub')
    os.makedirs(hub)
    write_json(os.path.join(hub, 'tokenizer_config.json'), {
        'unk_token': token('<|endoftext|>'), 'bos_token': token('<|startoftext|>'), 'eos_token': token('<|endoftext|>'), 'pad_token': '<|endoftext|>',
        'add_prefix_space': False, 'errors': 'replace', 'do_lower_case': True, 'model_max_length': 77, 'tokenizer_class': 'CLIPTokenizer'})
    write_json(os.path.join(hub, 'special_tokens_map.json'), {
        'bos_token': {k: v for k, v in token('<|startoftext|>').items() if k != '__type'}, 'eos_token': {k: v for k, v in token('<|endoftext|>').items() if k != '__type'},
        'unk_token': {k: v for k, v in token('<|endoftext|>').items() if k != '__type'}, 'pad_token': '<|endoftext|>'})
    write_json(os.path.join(hub, 'tokenizer.json'), converted_json(vocab, merges))
    saved = os.path.join(folders, 'clip_saved')
    CLIPTokenizer(os.path.join(clip_dir, 'vocab.json'), os.path.join(clip_dir, 'merges.txt'), model_max_length=77).save_pretrained(saved)
    by_type = os.path.join(folders, 'clip_config')
    os.makedirs(by_type)
    write_json(os.path.join(by_type, 'config.json'), {'model_type': 'clip'})

    model = os.path.join(OUT, 'siglip.model')
    make_siglip(model)
    SiglipTokenizer(model).save_pretrained(os.path.join(folders, 'siglip_saved'))
    cased = os.path.join(folders, 'siglip_cased')
    SiglipTokenizer(model, do_lower_case=False).save_pretrained(cased)
    with open(os.path.join(cased, 'tokenizer_config.json'), encoding='utf-8') as f:
        config = json.load(f)
    del config['tokenizer_class']  # the class from config.json's model_type
    write_json(os.path.join(cased, 'tokenizer_config.json'), config)
    write_json(os.path.join(cased, 'config.json'), {'model_type': 'siglip'})
    # The tests read the vocabulary files once (manifest below), not a copy per folder.
    for name, f in (('siglip_saved', 'spiece.model'), ('siglip_cased', 'spiece.model'), ('clip_saved', 'vocab.json'), ('clip_saved', 'merges.txt')):
        os.remove(os.path.join(folders, name, f))

    manifest = {'clip_hub': ['clip'], 'clip_saved': ['clip'], 'clip_config': ['clip'], 'siglip_saved': ['siglip.model'], 'siglip_cased': ['siglip.model']}
    result = {'transformers': transformers.__version__, 'manifest': manifest, 'folders': {}}
    for name, files in manifest.items():
        d = os.path.join(tmp, name)
        shutil.copytree(os.path.join(folders, name), d)
        if files == ['clip']:
            for f in ('vocab.json', 'merges.txt'):
                shutil.copy(os.path.join(clip_dir, f), d)
        else:
            shutil.copy(model, os.path.join(d, 'spiece.model'))
        if os.path.exists(os.path.join(d, 'tokenizer.json')):
            os.rename(os.path.join(d, 'tokenizer.json'), os.path.join(d, 'tokenizer.json.fast'))  # the slow class, as no fast one runs here
        tok = AutoTokenizer.from_pretrained(d, use_fast=False)
        # CLIPProcessor pads to the longest text; SiglipProcessor to max_length (model_max_length 64).
        kwargs = {'padding': 'max_length', 'truncation': True} if 'siglip' in name else {'padding': True}
        result['folders'][name] = expected(tok, d, kwargs)
    write_json(os.path.join(OUT, 'slow.json'), result)
    print('wrote', OUT)


if __name__ == '__main__':
    main()
