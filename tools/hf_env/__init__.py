"""Hugging Face transformers on this machine, for goldens (../shared/TOOLCHAIN.md, "transformers here").

transformers itself is not in this repository: extract tag v4.40.2's src/transformers somewhere, e.g.
    git -C <a clone of transformers> archive v4.40.2 src/transformers | tar -x -C /work/hf
and point AW_TRANSFORMERS_SRC at the folder holding `transformers/` (/work/hf/src above, the default).
Debian packages it needs: python3-torch python3-regex python3-yaml python3-filelock python3-requests
python3-tqdm python3-packaging python3-sentencepiece python3-pil python3-protobuf python3-numpy.

What Debian lacks comes from site/ (stand-ins, no model math in them):
  huggingface_hub  the names transformers imports, made on demand; a load from a local folder calls none
  safetensors      storage_ptr / storage_size, safe_open / save_file / load_file over the file format
  tokenizers       AddedToken with tokenizers 0.19's semantics (hashed on its content): transformers' own
                   fallback class is unhashable and every slow tokenizer fails on it. Only slow tokenizers
                   run here; fast tokenizers' ids come from npm `tokenizers`.
  *.dist-info      versions for transformers' import-time checks

Use (run with /usr/bin/python3):
    import sys; sys.path.insert(0, 'tools'); import hf_env; hf_env.setup()
    import transformers
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SRC = '/work/hf/src'


def setup(src=None):
    """Puts the stand-ins and transformers' source first on sys.path; returns the source folder used."""
    src = src or os.environ.get('AW_TRANSFORMERS_SRC', DEFAULT_SRC)
    if not os.path.isfile(os.path.join(src, 'transformers', '__init__.py')):
        raise SystemExit(f'hf_env: no transformers/ in {src}: set AW_TRANSFORMERS_SRC (tools/hf_env/__init__.py says how)')
    for p in (src, os.path.join(HERE, 'site')):
        if p not in sys.path:
            sys.path.insert(0, p)
    os.environ.setdefault('HF_HUB_OFFLINE', '1')
    os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
    os.environ.setdefault('TRANSFORMERS_NO_ADVISORY_WARNINGS', '1')
    return src
