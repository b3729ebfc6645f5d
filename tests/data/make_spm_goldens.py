"""SentencePiece model files and slow-tokenizer folders, with the ids the real libraries give.

Run with Debian's python (sentencepiece 0.1.97, transformers v4.40.2 through tools/hf_env):
    /usr/bin/python3 tests/data/make_spm_goldens.py

Writes tests/data/goldens/spm/:
  models/*.model   five small SentencePiece models trained here from a fixed corpus (one thread, no
                   shuffling: two runs write the same bytes): unigram with nmt_nfkc, unigram with
                   identity + byte_fallback + user-defined symbols, BPE with custom normalization rules
                   (multi-character rules, a deletion) + byte_fallback, BPE with identity and
                   treat_whitespace_as_suffix, and a T5-like unigram (pad 0, eos 1, unk 2, no bos; a denormalization rule)
  folders/<name>/  tokenizer folders as the hub has them (the small files; the .model files are
                   named in manifest.json): Marian (shared vocabulary with >>xx<< codes; separate
                   vocabularies), T5 (legacy and not, extra_ids), M2M100, NLLB (and legacy_behaviour), mBART-25, mBART-50,
                   XLM-R, BERT (uncased; cased with strip_accents, no Chinese splitting; never_split; no basic tokenizer), RoBERTa
                   (vocab.json + merges.txt from a byte-level BPE learned here), each saved by
                   transformers' save_pretrained or written as hub folders write them (no
                   added_tokens_decoder: special_tokens_map.json)
  expected.json    per model: encode ids and pieces, decode of the ids and of the pieces; per folder:
                   tokenize, ids with and without special tokens, target-side ids, decode with and
                   without skip_special_tokens, a padded batch — from the Python classes loaded with
                   from_pretrained(folder)
"""
import io
import json
import os
import random
import shutil
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import regex  # noqa: E402
import sentencepiece as spm  # noqa: E402
import transformers  # noqa: E402
from transformers import (BertTokenizer, M2M100Tokenizer, MarianTokenizer, MBart50Tokenizer, MBartTokenizer, NllbTokenizer, RobertaTokenizer,  # noqa: E402
                          T5Tokenizer, XLMRobertaTokenizer)

transformers.logging.set_verbosity_error()
OUT = os.path.join(ROOT, 'tests', 'data', 'goldens', 'spm')

# The texts: accents, digits, unknown characters, long words, empty strings, runs of spaces, mixed
# scripts, emoji, NFKC-changing characters, every family's special tokens written in the text.
TEXTS = [
    '', ' ', '    ', 'Hello world', '  Hello   world  ', 'hello\tworld\nnew line', 'Ünïcödé àccents café naïve résumé',
    'ﬁne ﬂour', 'ＡＢＣ１２３ full-width', '①②③ ①x ②', '㍻ ㌔ ℡', '12345 3.14159 1,000,000', 'Supercalifragilisticexpialidocious',
    'pneumonoultramicroscopicsilicovolcanoconiosis' * 3, 'a' * 120, '日本語のテキスト', 'Привет мир', 'Γειά σου κόσμε',
    'emoji 😀👍🏽 family 👨\u200d👩\u200d👧', 'mixedEnglish日本語русский', '𝔘𝔫𝔦 unknown ∰ ⨌ ꙮ', '\x00 nul', 'a\u200bb zero width',
    'tab\t\ttabs\r\n', '▁ already ▁▁ underline▁', '<unk> <s> </s> <pad>', '>>de<< Hallo Welt', '>>fr<<Bonjour', 'x >>es<< y',
    'user<sep2>users', 'e\u0301 combining', '한국어 텍스트', 'Å Ω x² … Ⅻ', "don't it's they're", '\ufffd replacement',
    '  \u3000full space\u00a0nbsp ', 'Hello <extra_id_0>. <extra_id_1> world </s>', '<extra_id_99> x <extra_id_100>',
    '__en__ hello __fr__', 'eng_Latn fra_Latn text', 'A [MASK] word [SEP] [CLS]', 'a <mask> word', 'ΣΑΣ İstanbul ǅ',
    'x\x85y\ufeffz\x1cw', '  leading and trailing  ', 'hello world hello world.', '3 . 14 , x ! ? n\'t',
]


def corpus():
    """About 3 000 lines of English, German, French, Spanish, Russian, Greek, Japanese, Korean,
    digits and emoji words, and made-up syllable words, from a fixed seed."""
    rnd = random.Random(20261204)
    words = ('the quick brown fox jumps over lazy dog hello world tokenizer model reads text and gives ids translation '
             'café naïve résumé über straße größe niño español français être Привет мир язык русский Γειά σου κόσμε '
             '日本語 テキスト 한국어 텍스트 12345 3.14 1,000 ﬁne don\'t it\'s they\'re user emoji 😀 hallo welt bonjour '
             'señor über-groß e-mail x² Ⅻ').split()
    syll = [['b', 'k', 'm', 'st', 'r', 'n', 'ch', 'pl'], ['a', 'e', 'i', 'o', 'u', 'é', 'ö', 'ai']]
    for _ in range(400):
        words.append(''.join(rnd.choice(syll[0]) + rnd.choice(syll[1]) for _ in range(rnd.randint(2, 4))))
    lines = []
    for _ in range(3000):
        n = rnd.randint(3, 14)
        lines.append((' ' if rnd.random() < 0.1 else '').join([' '.join(rnd.choice(words) for _ in range(n))]))
    return lines


RULES_TSV = '\n'.join([
    'FB01\t66 69',        # ﬁ → fi
    '2460\t31',           # ① → 1
    '2460 2461\t31 32 21',  # ①② → 12! (longer than ①: the longest rule wins)
    '200B\t',             # zero width space → nothing
    'FF21\t41',           # Ａ → A
    '3000\t20',           # ideographic space → space
    '00C5\t41 30A',       # Å → A + ring
]) + '\n'


def train(lines, path, **kw):
    f = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=f, num_threads=1, shuffle_input_sentence=False,
                                   hard_vocab_limit=False, minloglevel=2, **kw)
    with open(path, 'wb') as out:
        out.write(f.getvalue())


def make_models(tmp):
    lines = corpus()
    models = os.path.join(OUT, 'models')
    os.makedirs(models, exist_ok=True)
    # The trainer writes the rule file's path into the model: a relative one keeps the bytes the same.
    os.chdir(tmp)
    rules = 'rules.tsv'
    with open(rules, 'w') as f:
        f.write(RULES_TSV)
    train(lines, os.path.join(models, 'uni_nfkc.model'), vocab_size=600, model_type='unigram', normalization_rule_name='nmt_nfkc')
    train(lines, os.path.join(models, 'uni_bf.model'), vocab_size=700, model_type='unigram', normalization_rule_name='identity',
          byte_fallback=True, user_defined_symbols=['<sep2>', 'user'])
    train(lines, os.path.join(models, 'bpe_rules.model'), vocab_size=700, model_type='bpe', normalization_rule_tsv=rules,
          byte_fallback=True, user_defined_symbols=['<sep2>'], split_digits=True)
    train(lines, os.path.join(models, 'bpe_suffix.model'), vocab_size=500, model_type='bpe', normalization_rule_name='identity',
          treat_whitespace_as_suffix=True, remove_extra_whitespaces=False)
    with open('denorm.tsv', 'w') as f:
        f.write('66 69\tFB01\n')  # decoding writes 'fi' as 'ﬁ': the denormalizer
    train(lines, os.path.join(models, 't5like.model'), vocab_size=500, model_type='unigram', normalization_rule_tsv=rules,
          denormalization_rule_tsv='denorm.tsv', pad_id=0, eos_id=1, unk_id=2, bos_id=-1, control_symbols=['<ctl>'])
    return {n[:-6]: os.path.join(models, n) for n in sorted(os.listdir(models))}


def pieces_of(path):
    sp = spm.SentencePieceProcessor(model_file=path)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())], sp


def marian_vocab(src, tgt, codes):
    """A joint Marian vocabulary: </s> <unk>, the >>xx<< codes, every piece of both models, <pad> last."""
    vocab = {'</s>': 0, '<unk>': 1}
    for c in codes:
        vocab[c] = len(vocab)
    for path in (src, tgt):
        pieces, sp = pieces_of(path)
        for i, p in enumerate(pieces):
            if not sp.is_control(i) and not sp.is_unknown(i) and p not in vocab:
                vocab[p] = len(vocab)
    vocab['<pad>'] = len(vocab)
    return vocab


def bert_vocab(lines):
    words = {}
    chars = set()
    for line in lines:
        for w in regex.findall(r'\w+|[^\w\s]', line):
            words[w.lower()] = words.get(w.lower(), 0) + 1
            chars.update(w)
            chars.update(w.lower())
    top = sorted(words, key=lambda w: (-words[w], w))[:300]
    subs = ['##s', '##ing', '##ed', '##er', '##ly', 'qu', '##ick', '##ll', '##o', 'hel', 'wor', '##ld']
    singles = sorted(chars)
    vocab = ['[PAD]', '[unused0]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] + list('.,!?\'-') + singles + ['##' + c for c in singles] + subs + top
    out = []
    for v in vocab:
        if v not in out:
            out.append(v)
    return out


def byte_bpe(lines, merges_wanted=300):
    """A byte-level BPE learned from the corpus (GPT-2's pre-tokenizer and byte symbols)."""
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) + list(range(ord('®'), ord('ÿ') + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    sym = {b: chr(c) for b, c in zip(bs, cs)}
    pat = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
    counts = {}
    for line in lines:
        for piece in pat.findall(line):
            w = tuple(sym[b] for b in piece.encode('utf-8'))
            counts[w] = counts.get(w, 0) + 1
    words = dict(counts)
    merges = []
    for _ in range(merges_wanted):
        pairs = {}
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + c
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p))
        merges.append(best)
        nw = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            nw[tuple(out)] = c
        words = nw
    vocab = {'<s>': 0, '<pad>': 1, '</s>': 2, '<unk>': 3}
    for b in range(256):
        vocab.setdefault(sym[b], len(vocab))
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    vocab['<mask>'] = len(vocab)
    return vocab, merges


def write(folder, name, data):
    with open(os.path.join(folder, name), 'w', encoding='utf-8') as f:
        f.write(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False))


def fuzz_texts(n=100):
    """Random strings over a pool with the characters the rules, models and special tokens care about."""
    rnd = random.Random(7)
    pool = list('abcdefghijklmnopqrstuvwxyz   \t\nABCéèüößÅΩ²①②ﬁＡ日本語テキストПриветΓειά😀👍🏽\u200d0123456789.,!?\'<>▁\u200b\u3000\u00a0\u0301\x00') + \
        ['user', '<sep2>', '<ctl>', '<unk>', '<s>', '</s>', 'the ', 'quick ', '<extra_id_1>', '>>de<<', '__en__', '[MASK]', '<mask>']
    return [''.join(rnd.choice(pool) for _ in range(rnd.randint(0, 40))) for _ in range(n)]


def model_rows(path, texts, fuzz):
    sp = spm.SentencePieceProcessor(model_file=path)
    rows = []
    for t in texts + fuzz:
        ids = sp.encode(t)
        pieces = sp.encode(t, out_type=str)
        row = {'ids': ids}
        if t in fuzz:  # the random texts: ids only (decoding is checked on TEXTS and on every folder's)
            rows.append(row)
            continue
        row['decode'] = sp.decode(ids)
        # Kept only where they differ from what the ids say (a fused unknown piece is its text).
        diff = {k: p for k, (p, q) in enumerate(zip(pieces, [sp.id_to_piece(i) for i in ids])) if p != q}
        if diff:
            row['pieces'] = diff
        if sp.decode_pieces(pieces) != row['decode']:
            row['decode_pieces'] = sp.decode_pieces(pieces)
        rows.append(row)
    return rows


def folder_rows(tok, kind, texts):
    rnd = random.Random(11)
    rows = []
    seq2seq = kind in ('marian', 'm2m', 'nllb', 'mbart', 'mbart50')
    for t in texts:
        ids = tok(t)['input_ids']
        plain = tok(t, add_special_tokens=False)['input_ids']
        row = {'ids': ids, 'plain': plain, 'decode': tok.decode(ids)}
        # Kept only where they differ from what the ids say (an unknown piece is its text) or from decode.
        tokens = tok.tokenize(t)
        assert len(tokens) == len(plain)
        diff = {k: p for k, (p, q) in enumerate(zip(tokens, tok.convert_ids_to_tokens(plain))) if p != q}
        if diff:
            row['tokens'] = diff
        if tok.decode(ids, skip_special_tokens=True) != row['decode']:
            row['decode_skip'] = tok.decode(ids, skip_special_tokens=True)
        if seq2seq:
            row['target'] = tok(text_target=t)['input_ids']
        rows.append(row)
    pool = list(range(tok.vocab_size)) + sorted(tok.added_tokens_decoder)
    if kind == 'marian':
        pool = sorted(set(tok.decoder) | set(tok.added_tokens_decoder))
    decodes = []
    for _ in range(6):
        ids = [rnd.choice(pool) for _ in range(rnd.randint(1, 24))]
        decodes.append({'ids': ids, 'decode': tok.decode(ids), 'decode_skip': tok.decode(ids, skip_special_tokens=True)})
    batch = tok(texts[3:8], padding=True, truncation=True, max_length=12)
    return {'rows': rows, 'decodes': decodes, 'batch': {'texts': texts[3:8], 'max_length': 12, 'input_ids': batch['input_ids'],
                                                        'attention_mask': batch['attention_mask']}}


def make_folders(tmp, models, lines):
    """Each folder: (kind, class, files written by hand or by save_pretrained, its .model files)."""
    folders = {}

    def hub(name, kind, cls, spm_files, other):
        d = os.path.join(tmp, name)
        os.makedirs(d)
        for target, model in spm_files.items():
            shutil.copy(models[model], os.path.join(d, target))
        for fname, data in other.items():
            write(d, fname, data)
        folders[name] = (kind, cls, d, spm_files)

    def saved(name, kind, cls, spm_files, make):
        d = os.path.join(tmp, name)
        make().save_pretrained(d)
        for target, model in spm_files.items():
            assert open(os.path.join(d, target), 'rb').read() == open(models[model], 'rb').read(), (name, target)
        folders[name] = (kind, cls, d, spm_files)

    shared = marian_vocab(models['uni_nfkc'], models['uni_bf'], ['>>de<<', '>>fr<<', '>>es<<'])
    specials = {'eos_token': '</s>', 'unk_token': '<unk>', 'pad_token': '<pad>'}
    hub('marian_hub', 'marian', MarianTokenizer, {'source.spm': 'uni_nfkc', 'target.spm': 'uni_bf'},
        {'vocab.json': shared, 'tokenizer_config.json': {'target_lang': 'de', 'source_lang': 'en'}, 'special_tokens_map.json': specials})
    src_v = marian_vocab(models['uni_bf'], models['uni_bf'], [])
    tgt_v = marian_vocab(models['uni_nfkc'], models['uni_nfkc'], [])
    sv = os.path.join(tmp, 'sv')
    os.makedirs(sv)
    write(sv, 'vocab.json', src_v)
    write(sv, 'target_vocab.json', tgt_v)
    saved('marian_sep_saved', 'marian', MarianTokenizer, {'source.spm': 'uni_bf', 'target.spm': 'uni_nfkc'},
          lambda: MarianTokenizer(models['uni_bf'], models['uni_nfkc'], os.path.join(sv, 'vocab.json'),
                                  target_vocab_file=os.path.join(sv, 'target_vocab.json'), separate_vocabs=True))

    hub('t5_hub', 't5', T5Tokenizer, {'spiece.model': 't5like'}, {'tokenizer_config.json': {'model_max_length': 512}})
    saved('t5_saved', 't5', T5Tokenizer, {'spiece.model': 't5like'}, lambda: T5Tokenizer(models['t5like'], extra_ids=10, legacy=True))
    saved('t5_nonlegacy_saved', 't5', T5Tokenizer, {'spiece.model': 't5like'}, lambda: T5Tokenizer(models['t5like'], extra_ids=5, legacy=False))

    m2m = {'<s>': 0, '<pad>': 1, '</s>': 2, '<unk>': 3}
    pieces, sp = pieces_of(models['bpe_suffix'])
    for i, p in enumerate(pieces):
        if not sp.is_control(i) and not sp.is_unknown(i):
            m2m.setdefault(p, len(m2m))
    for i in range(8):
        m2m[f'madeupword{i:04d}'] = len(m2m)
    codes = M2M100Tokenizer.__init__.__globals__['FAIRSEQ_LANGUAGE_CODES']['m2m100']
    hub('m2m_hub', 'm2m', M2M100Tokenizer, {'sentencepiece.bpe.model': 'bpe_suffix'},
        {'vocab.json': m2m, 'tokenizer_config.json': {'src_lang': 'en', 'tgt_lang': 'fr', 'tokenizer_class': 'M2M100Tokenizer', 'language_codes': 'm2m100',
                                                      'num_madeup_words': 8, 'model_max_length': 1024},
         'special_tokens_map.json': {'bos_token': '<s>', 'eos_token': '</s>', 'sep_token': '</s>', 'pad_token': '<pad>', 'unk_token': '<unk>',
                                     'additional_special_tokens': [f'__{c}__' for c in codes]}})
    m2m_rules = {'<s>': 0, '<pad>': 1, '</s>': 2, '<unk>': 3}
    pieces, sp = pieces_of(models['bpe_rules'])
    for i, p in enumerate(pieces):
        if not sp.is_control(i) and not sp.is_unknown(i):
            m2m_rules.setdefault(p, len(m2m_rules))
    write(sv, 'm2m_vocab.json', m2m_rules)
    saved('m2m_saved', 'm2m', M2M100Tokenizer, {'sentencepiece.bpe.model': 'bpe_rules'},
          lambda: M2M100Tokenizer(os.path.join(sv, 'm2m_vocab.json'), models['bpe_rules'], src_lang='de', tgt_lang='en', language_codes='wmt21'))

    nllb_codes = NllbTokenizer.__init__.__globals__['FAIRSEQ_LANGUAGE_CODES']
    hub('nllb_hub', 'nllb', NllbTokenizer, {'sentencepiece.bpe.model': 'bpe_rules'},
        {'tokenizer_config.json': {'src_lang': 'eng_Latn', 'tgt_lang': 'fra_Latn', 'tokenizer_class': 'NllbTokenizer', 'model_max_length': 1024},
         'special_tokens_map.json': {'bos_token': '<s>', 'eos_token': '</s>', 'sep_token': '</s>', 'cls_token': '<s>', 'pad_token': '<pad>',
                                     'unk_token': '<unk>', 'mask_token': {'content': '<mask>', 'lstrip': True, 'normalized': True, 'rstrip': False,
                                                                          'single_word': False}, 'additional_special_tokens': nllb_codes}})
    saved('nllb_legacy_saved', 'nllb', NllbTokenizer, {'sentencepiece.bpe.model': 'uni_bf'},
          lambda: NllbTokenizer(models['uni_bf'], src_lang='fra_Latn', tgt_lang='deu_Latn', legacy_behaviour=True))

    hub('mbart_hub', 'mbart', MBartTokenizer, {'sentencepiece.bpe.model': 'uni_nfkc'},
        {'tokenizer_config.json': {'src_lang': 'en_XX', 'tgt_lang': 'ro_RO', 'tokenizer_class': 'MBartTokenizer', 'model_max_length': 1024},
         'special_tokens_map.json': {'bos_token': '<s>', 'eos_token': '</s>', 'sep_token': '</s>', 'cls_token': '<s>', 'pad_token': '<pad>',
                                     'unk_token': '<unk>', 'mask_token': {'content': '<mask>', 'lstrip': True, 'normalized': True, 'rstrip': False,
                                                                          'single_word': False}}})
    saved('mbart50_saved', 'mbart50', MBart50Tokenizer, {'sentencepiece.bpe.model': 'bpe_rules'},
          lambda: MBart50Tokenizer(models['bpe_rules'], src_lang='fr_XX', tgt_lang='de_DE'))

    hub('xlmr_hub', 'xlmr', XLMRobertaTokenizer, {'sentencepiece.bpe.model': 'uni_nfkc'}, {})
    saved('xlmr_saved', 'xlmr', XLMRobertaTokenizer, {'sentencepiece.bpe.model': 'bpe_rules'}, lambda: XLMRobertaTokenizer(models['bpe_rules']))

    bv = bert_vocab(lines)
    hub('bert_hub', 'bert', BertTokenizer, {}, {'vocab.txt': '\n'.join(bv) + '\n', 'tokenizer_config.json': {'do_lower_case': True}})
    write(sv, 'vocab.txt', '\n'.join(bv) + '\n')
    saved('bert_cased_saved', 'bert', BertTokenizer, {},
          lambda: BertTokenizer(os.path.join(sv, 'vocab.txt'), do_lower_case=False, strip_accents=True, tokenize_chinese_chars=False))

    saved('bert_options_saved', 'bert', BertTokenizer, {},
          lambda: BertTokenizer(os.path.join(sv, 'vocab.txt'), do_lower_case=True, never_split=['Hello', 'A'], strip_accents=False))
    saved('bert_nobasic_saved', 'bert', BertTokenizer, {}, lambda: BertTokenizer(os.path.join(sv, 'vocab.txt'), do_basic_tokenize=False))

    rv, merges = byte_bpe(lines)
    merges_txt = '#version: 0.2\n' + ''.join(f'{a} {b}\n' for a, b in merges)
    hub('roberta_hub', 'roberta', RobertaTokenizer, {}, {'vocab.json': rv, 'merges.txt': merges_txt})
    write(sv, 'r_vocab.json', rv)
    write(sv, 'merges.txt', merges_txt)
    saved('roberta_saved', 'roberta', RobertaTokenizer, {},
          lambda: RobertaTokenizer(os.path.join(sv, 'r_vocab.json'), os.path.join(sv, 'merges.txt'), add_prefix_space=True))
    return folders


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    tmp = tempfile.mkdtemp(prefix='spm-goldens-')
    try:
        lines = corpus()
        models = make_models(tmp)
        fuzz = fuzz_texts()
        expected = {'reference': f'sentencepiece {spm.__version__}, transformers {transformers.__version__} (slow tokenizers), '
                                 'made by tests/data/make_spm_goldens.py',
                    'texts': TEXTS, 'fuzz': fuzz, 'models': {}, 'folders': {}}
        for name, path in models.items():
            expected['models'][name] = model_rows(path, TEXTS, fuzz)
        manifest = {}
        for name, (kind, cls, d, spm_files) in make_folders(tmp, models, lines).items():
            tok = cls.from_pretrained(d)
            expected['folders'][name] = {'kind': kind, 'class': cls.__name__, 'size': len(tok), **folder_rows(tok, kind, TEXTS)}
            if kind in ('nllb', 'm2m', 'mbart', 'mbart50'):
                other = {'nllb': 'fra_Latn', 'm2m': 'ru', 'mbart': 'de_DE', 'mbart50': 'uk_UA'}[kind]
                tok.src_lang = other
                expected['folders'][name]['src_lang'] = {'lang': other, 'ids': [tok(t)['input_ids'] for t in TEXTS[:12]]}
            keep = os.path.join(OUT, 'folders', name)
            os.makedirs(keep)
            for f in sorted(os.listdir(d)):
                if f not in spm_files:
                    shutil.copy(os.path.join(d, f), keep)
            manifest[name] = {f: f'models/{m}.model' for f, m in spm_files.items()}
        write(OUT, 'manifest.json', manifest)
        with open(os.path.join(OUT, 'expected.json'), 'w', encoding='utf-8') as f:
            json.dump(expected, f, ensure_ascii=False, separators=(',', ':'))
            f.write('\n')
    finally:
        shutil.rmtree(tmp)
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(OUT) for f in fs)
    print(f'{OUT}: {len(models)} models, {len(manifest)} folders, {size} bytes')


if __name__ == '__main__':
    main()
