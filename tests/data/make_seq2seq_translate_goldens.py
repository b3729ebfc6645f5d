#!/usr/bin/python3
"""Goldens of translate(): text in, text out, through a folder's slow tokenizer, generate() and batch_decode, as
transformers v4.40.2 runs them (issue 40): tests/data/goldens/seq2seq_translate/.

Run: /usr/bin/python3 tests/data/make_seq2seq_translate_goldens.py (Debian's torch 1.13 and sentencepiece 0.1.97;
transformers through tools/hf_env). Deterministic: fixed seed, one thread; two runs write identical bytes.

Each folder holds a small random checkpoint (config.json, generation_config.json, model.safetensors: d_model 16,
4 heads, 2 + 2 layers) whose vocabulary is the size of a golden tokenizer of tests/data/goldens/spm/ (its folder's
files and the .model files its manifest names; not copied here: the test puts them beside the model, as a hub folder
has them):
  marian   MarianMTModel + spm folder marian_hub (MarianTokenizer: source.spm, target.spm, vocab.json); beams 3,
           renormalize_logits as opus-mt's generation_config.json
  m2m100   M2M100ForConditionalGeneration + m2m_hub (M2M100Tokenizer, src_lang en); forced_bos = get_lang_id(tgt)
  nllb     M2M100ForConditionalGeneration + nllb_hub (NllbTokenizer, eng_Latn); forced_bos = the id of tgt's code
  t5       T5ForConditionalGeneration + t5_hub (T5Tokenizer: spiece.model, extra ids); greedy
  mbart50  MBartForConditionalGeneration + mbart50_saved (MBart50Tokenizer, en_XX); forced_bos = the id of tgt's code; beams 2
Parameters redrawn from N(0, 0.5) (LayerNorm weights 1 + N(0, 0.3)) so the argmaxes are far apart.

expected.json: {cases: [{folder, tokenizer (the spm golden folder), texts, options (Seq2SeqLM#translate's, camelCase),
  input_ids, attention_mask (the Python tokenizer's batch, padding=True), sequences (generate's), translations
  (batch_decode(sequences, skip_special_tokens=True))}]}.
"""
import json
import os
import shutil
import sys
import tempfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import hf_env  # noqa: E402

hf_env.setup()
import transformers as T  # noqa: E402

SEED = 20261205
SPM = os.path.join(ROOT, 'tests', 'data', 'goldens', 'spm')
OUT = os.path.join(ROOT, 'tests', 'data', 'goldens', 'seq2seq_translate')
TEXTS = ['Hello world.', 'The quick brown fox jumps over the lazy dog, twice!', 'Ça coûte 12,50 € — vraiment?', '']


def tokenizer_folder(name, into):
    """The spm golden folder `name` assembled in `into` (its small files and the .model files of the manifest)."""
    manifest = json.load(open(os.path.join(SPM, 'manifest.json')))
    for f in os.listdir(os.path.join(SPM, 'folders', name)):
        shutil.copy(os.path.join(SPM, 'folders', name, f), os.path.join(into, f))
    for f, src in manifest[name].items():
        shutil.copy(os.path.join(SPM, src), os.path.join(into, f))


def randomize(m):
    with torch.no_grad():
        for n, p in m.named_parameters():
            if 'embed_positions' in n and isinstance(m, T.MarianMTModel):
                continue  # Marian's sinusoid: a parameter that is not saved (transformers recomputes it)
            p.copy_(torch.randn_like(p) * (0.3 if 'norm' in n else 0.5) + (1 if 'norm' in n and n.endswith('weight') else 0))
        if hasattr(m, 'final_logits_bias'):
            m.final_logits_bias.copy_(torch.randn_like(m.final_logits_bias) * 0.5)


def small(V, **kw):
    return dict(vocab_size=V, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                decoder_attention_heads=4, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64, **kw)


def build(case, tmp):
    tokenizer_folder(case['tokenizer'], tmp)
    if case['folder'] == 'marian':
        tok = T.MarianTokenizer.from_pretrained(tmp)
        V, pad, eos = len(tok), tok.pad_token_id, tok.eos_token_id
        cfg = T.MarianConfig(**small(V, pad_token_id=pad, eos_token_id=eos, decoder_start_token_id=pad, forced_eos_token_id=eos,
                                     activation_function='swish', scale_embedding=True))
        m = T.MarianMTModel(cfg)
        gen = T.GenerationConfig(bad_words_ids=[[pad]], decoder_start_token_id=pad, eos_token_id=eos, forced_eos_token_id=eos,
                                 max_length=16, num_beams=3, pad_token_id=pad, renormalize_logits=True)
        kwargs = {}
    elif case['folder'] in ('m2m100', 'nllb'):
        tok = T.AutoTokenizer.from_pretrained(tmp, use_fast=False)
        V = len(tok)
        cfg = T.M2M100Config(**small(V, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id,
                                     decoder_start_token_id=tok.eos_token_id))
        m = T.M2M100ForConditionalGeneration(cfg)
        gen = T.GenerationConfig(decoder_start_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                                 bos_token_id=tok.bos_token_id, max_length=14, num_beams=1 if case['folder'] == 'm2m100' else 2)
        tgt = case['options']['tgtLang']
        forced = tok.get_lang_id(tgt) if case['folder'] == 'm2m100' else tok.convert_tokens_to_ids(tgt)
        kwargs = {'forced_bos_token_id': forced}
        tok.src_lang = case['options']['srcLang']
    elif case['folder'] == 'mbart50':
        tok = T.AutoTokenizer.from_pretrained(tmp, use_fast=False)
        V = len(tok)
        cfg = T.MBartConfig(**small(V, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id,
                                    decoder_start_token_id=tok.eos_token_id, forced_eos_token_id=tok.eos_token_id, scale_embedding=True))
        m = T.MBartForConditionalGeneration(cfg)
        gen = T.GenerationConfig(decoder_start_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                                 bos_token_id=tok.bos_token_id, forced_eos_token_id=tok.eos_token_id, max_length=14, num_beams=2)
        kwargs = {'forced_bos_token_id': tok.lang_code_to_id[case['options']['tgtLang']]}
        tok.src_lang = case['options']['srcLang']
    else:
        tok = T.T5Tokenizer.from_pretrained(tmp)
        V = len(tok)
        cfg = T.T5Config(vocab_size=V, d_model=16, d_kv=4, d_ff=32, num_layers=2, num_heads=4, decoder_start_token_id=tok.pad_token_id,
                         relative_attention_num_buckets=8, relative_attention_max_distance=20)
        m = T.T5ForConditionalGeneration(cfg)
        gen = T.GenerationConfig(decoder_start_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, max_length=14)
        kwargs = {}
    randomize(m)
    m.generation_config = gen
    if 'numBeams' in case['options']:
        kwargs['num_beams'] = case['options']['numBeams']
    if 'noRepeatNgramSize' in case['options']:
        kwargs['no_repeat_ngram_size'] = case['options']['noRepeatNgramSize']
    return tok, m, kwargs


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    cases = [
        {'folder': 'marian', 'tokenizer': 'marian_hub', 'texts': TEXTS, 'options': {}},
        {'folder': 'm2m100', 'tokenizer': 'm2m_hub', 'texts': TEXTS[:3], 'options': {'srcLang': 'en', 'tgtLang': 'fr', 'noRepeatNgramSize': 2}},
        {'folder': 'nllb', 'tokenizer': 'nllb_hub', 'texts': TEXTS[:3], 'options': {'srcLang': 'eng_Latn', 'tgtLang': 'deu_Latn', 'noRepeatNgramSize': 2}},
        {'folder': 't5', 'tokenizer': 't5_hub', 'texts': ['translate English to German: ' + t for t in TEXTS[:3]], 'options': {'numBeams': 2}},
        {'folder': 'mbart50', 'tokenizer': 'mbart50_saved', 'texts': TEXTS[:3], 'options': {'srcLang': 'en_XX', 'tgtLang': 'fr_XX'}},
    ]
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    out = []
    for case in cases:
        with tempfile.TemporaryDirectory() as tmp:
            tok, m, kwargs = build(case, tmp)
            m.eval()
            folder = os.path.join(OUT, case['folder'])
            m.save_pretrained(folder, safe_serialization=True)
            m = type(m).from_pretrained(folder).eval()  # the goldens are the saved folder's
            batch = tok(case['texts'], padding=True, return_tensors='pt')
            with torch.no_grad():
                seq = m.generate(**batch, **kwargs)
            # The float64 model chooses the same tokens (the goldens do not hang on float32 rounding).
            m64 = m.double()
            torch.set_default_dtype(torch.float64)
            with torch.no_grad():
                seq64 = m64.generate(**batch, **kwargs)
            torch.set_default_dtype(torch.float32)
            assert torch.equal(seq, seq64), case['folder']
            out.append({**case, 'input_ids': batch['input_ids'].tolist(), 'attention_mask': batch['attention_mask'].tolist(),
                        'sequences': seq.tolist(), 'translations': tok.batch_decode(seq, skip_special_tokens=True)})
            print(case['folder'], out[-1]['translations'])
    with open(os.path.join(OUT, 'expected.json'), 'w') as f:
        json.dump({'cases': out}, f, ensure_ascii=False, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
