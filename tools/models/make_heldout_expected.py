#!/usr/bin/python3
"""Writes models/translator/heldout_expected.json: for every held-out number of
models/translator/heldout.json, its canonical English input (english(n)) and the expected
French and German text from the rule-based generator (tools/models/numbers.py). The Node
tests measure the translator's held-out exact match through our runtime with
it, so CI needs neither Python nor torch.

    /usr/bin/python3 tools/models/make_heldout_expected.py [MODEL_DIR]   (default models/translator)
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numbers as numwords  # noqa: E402  (tools/models/numbers.py)

ROOT = os.path.dirname(os.path.dirname(HERE))
MODEL_DIR = os.path.join(ROOT, "models", "translator")


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else MODEL_DIR
    with open(os.path.join(model_dir, "heldout.json"), encoding="utf-8") as fh:
        held = json.load(fh)
    nums = held["uniform"] + held["small"] + held.get("hundreds", [])
    out = {"generator": "tools/models/make_heldout_expected.py", "columns": ["english", "fr", "de"],
           "items": [[numwords.english(n), numwords.french(n), numwords.german_join(numwords.german(n))]
                     for n in nums]}
    with open(os.path.join(model_dir, "heldout_expected.json"), "w", encoding="utf-8") as fh:
        json.dump(out, fh, ensure_ascii=False)
        fh.write("\n")
    print(f"wrote {len(nums)} held-out numbers x 2 languages")


if __name__ == "__main__":
    main()
