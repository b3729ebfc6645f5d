#!/usr/bin/python3
"""Evaluate the exported translator (models/translator/translator.safetensors) in torch.

    /usr/bin/python3 tools/models/eval_translator.py                  # check reference.json + held-out
    /usr/bin/python3 tools/models/eval_translator.py --every 10       # also every 10th number of 0..999999

Builds the model from translator.json alone (as a runtime would), loads the stored weights (F16 ->
float32), and
  1. recomputes reference.json: same greedy ids, and the max |difference| of the stored first-step
     logits against torch float32 (full nn.Transformer.forward) and float64 (a precision floor);
  2. exact match (greedy) per language on heldout.json (plain spellings) and on typed_heldout.json
     (typed variants, given to the model as the words the runtime's normalisation yields);
  3. with --every K: exact match on n = offset, offset + K, ... < 1 000 000 (training numbers included).
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]  # numbers.py shadows stdlib

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402


def _load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(_HERE, file))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


tt = _load("train_translator", "train_translator.py")
numwords = tt.numwords


def build(model_dir):
    with open(os.path.join(model_dir, "translator.json"), encoding="utf-8") as fh:
        cfg = json.load(fh)
    tensors, meta = tt.load_safetensors(os.path.join(model_dir, "translator.safetensors"))
    assert json.loads(meta["attnwasm.config"]) == cfg, "metadata config != translator.json"
    m = tt.Translator(len(cfg["srcVocab"]), len(cfg["tgtVocab"]), cfg["dModel"], cfg["nhead"],
                      cfg["numEncoderLayers"], cfg["numDecoderLayers"], cfg["dimFeedforward"], 0.0,
                      cfg["activation"], cfg["normFirst"], cfg["pad"])
    m.load_state_dict({k: v.float() for k, v in tensors.items()}, strict=True)
    m.eval()
    return m, cfg


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=tt.OUT_DIR)
    ap.add_argument("--every", type=int, default=0)
    ap.add_argument("--offset", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    m, cfg = build(args.dir)
    src_index = {t: i for i, t in enumerate(cfg["srcVocab"])}
    tgt_vocab = cfg["tgtVocab"]
    tgt_index = {t: i for i, t in enumerate(tgt_vocab)}
    pad, eos = cfg["pad"], cfg["eos"]

    # 1. reference.json
    with open(os.path.join(args.dir, "reference.json"), encoding="utf-8") as fh:
        ref = json.load(fh)
    m64 = build(args.dir)[0].double()
    m64.pe = m64.pe.double()
    d32 = d64 = 0.0
    n_logits = 0
    with torch.no_grad():
        for it in ref["items"]:
            src = torch.tensor([it["srcIds"]])
            ys = [it["decoderInputFirst"]] + it["outputIdsWithEos"]
            full = m(src, torch.tensor([ys[:-1]]))[0]
            assert full.argmax(-1).tolist() == it["outputIdsWithEos"], it["n"]
            for t, (inp, want) in enumerate(zip(it.get("firstStepsDecoderInputs", []), it.get("firstStepsLogits", []))):
                assert inp == ys[:t + 1]
                want = torch.tensor(want, dtype=torch.float64)
                d32 = max(d32, float((full[t].double() - want).abs().max()))
                d64 = max(d64, float((m64(src, torch.tensor([inp]))[0, -1] - want).abs().max()))
                n_logits += 1
    print(f"reference.json: {len(ref['items'])} items reproduced (greedy ids); {n_logits} logit vectors: "
          f"max |diff| vs torch float32 full forward {d32:.2e}, vs float64 {d64:.2e}")

    # 2. held-out, 3. sweep
    with open(os.path.join(args.dir, "heldout.json"), encoding="utf-8") as fh:
        ho = json.load(fh)
    with open(os.path.join(args.dir, "typed_heldout.json"), encoding="utf-8") as fh:
        typed = json.load(fh)
    col = {c: i for i, c in enumerate(typed["columns"])}
    sets = {"heldout": ho["uniform"] + ho["small"] + ho.get("hundreds", []),
            "typed held-out": [(row[col["n"]], row[col["words"]]) for row in typed["items"]]}
    if args.every:
        sets[f"every {args.every}th from {args.offset}"] = list(range(args.offset, numwords.LIMIT, args.every))
    for name, nums in sets.items():
        t0 = time.time()
        res = tt.evaluate(m, nums, src_index, tgt_vocab, tgt_index, pad, eos)
        print(f"{name} ({len(nums)} numbers): {tt.fmt_eval(res)}  [{time.time() - t0:.0f}s]", flush=True)
        for lang, (_, _, fails) in res.items():
            for f in fails[:20]:
                print(f"  {tt.fmt_fail(lang, f)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
