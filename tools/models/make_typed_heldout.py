#!/usr/bin/python3
"""Writes models/translator/typed_heldout.json: the held-out numbers of models/translator/heldout.json
typed the way people type them, one item per number, for measuring the translator on typed input.

    /usr/bin/python3 tools/models/make_typed_heldout.py [MODEL_DIR]   (default models/translator)

This is a second, independent writer of English numbers: it shares no code with the training
generator (numbers.english_spelled / english_variant); numbers.py only supplies the expected French
and German, and a cross-check that this writer's plain spelling equals numbers.english(n). Each
item is typed by a "typist" with a style drawn from random.Random(SEED):

  words the model sees      hyphen or space between tens and units; British "and" before a last
                            part below 100; "a hundred" / "a thousand" for a leading one; hundreds
                            counted past ten ("nineteen hundred and eighty-four") where it exists.
                            A word item always uses at least one of these when the number allows one.
  what the runtime          capitals (Capitalised, Title Case, UPPER CASE), extra and surrounding
  normalises first          spaces, a comma after "thousand"; or the number in digits ("42",
                            "1,234", "12 345", "007") instead of words.

Columns: typed (what the user types), words (the lower-case, single-spaced words the model should
be given: this writer's expectation of the runtime's normalisation; for digits, the plain
spelling), n, fr, de (expected translations).
"""
import importlib.util
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "models", "translator")
SEED = 1313

SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
DECADES = {20: "twenty", 30: "thirty", 40: "forty", 50: "fifty", 60: "sixty", 70: "seventy", 80: "eighty",
           90: "ninety"}


class Style:
    """How one person writes a number."""

    def __init__(self, rng, space_p=0.0, and_p=0.0, a_for_one=False, counted_hundreds=False):
        self.rng = rng
        self.space_p = space_p                    # space instead of hyphen in "forty-two"
        self.and_p = and_p                        # British "and"
        self.a_for_one = a_for_one                # "a hundred", "a thousand"
        self.counted_hundreds = counted_hundreds  # "twelve hundred"

    @classmethod
    def drawn(cls, rng, counted_hundreds_p):
        return cls(rng, rng.choice((0.0, 0.0, 1.0, 1.0, 0.5)), rng.choice((0.0, 1.0, 1.0, 0.5)),
                   rng.random() < 0.5, rng.random() < counted_hundreds_p)

    def sep(self):
        return " " if self.rng.random() < self.space_p else "-"

    def british(self):
        return self.rng.random() < self.and_p


def two_digits(n, style):
    """1..99 as a list of words; "forty-two" is one word or two."""
    if n < 20:
        return [SMALL[n]]
    tens, unit = DECADES[n - n % 10], n % 10
    if not unit:
        return [tens]
    sep = style.sep()
    return [tens + "-" + SMALL[unit]] if sep == "-" else [tens, SMALL[unit]]


def three_digits(n, style):
    """1..999 as a list of words."""
    hundreds, rest = n // 100, n % 100
    out = [SMALL[hundreds], "hundred"] if hundreds else []
    if rest:
        if hundreds and style.british():
            out.append("and")
        out += two_digits(rest, style)
    return out


def say(n, style):
    """n in words (lower case, one space between words), in this style."""
    if n == 0:
        return "zero"
    if style.counted_hundreds and 1100 <= n <= 9999 and n // 100 % 10:
        words = two_digits(n // 100, style) + ["hundred"]
        if n % 100:
            words += (["and"] if style.british() else []) + two_digits(n % 100, style)
        return " ".join(words)
    thousands, rest = divmod(n, 1000)
    words = three_digits(thousands, style) + ["thousand"] if thousands else []
    if rest:
        if thousands and rest < 100 and style.british():
            words.append("and")
        words += three_digits(rest, style)
    if style.a_for_one and words[0] == "one" and words[1] in ("hundred", "thousand"):
        words[0] = "a"
    return " ".join(words)


PLAIN = Style(random.Random(0))  # hyphens, no "and", "one hundred", no counted hundreds


def type_words(words, rng):
    """Surface noise the runtime removes: capitals, spaces, a comma after "thousand"."""
    tokens = words.split(" ")
    if "thousand" in tokens[:-1] and rng.random() < 0.3:
        i = tokens.index("thousand")
        tokens[i] = "thousand,"
    case = rng.choices(("lower", "first", "title", "upper"), (40, 25, 20, 15))[0]
    if case == "first":
        tokens[0] = tokens[0][:1].upper() + tokens[0][1:]
    elif case == "title":
        tokens = ["-".join(p[:1].upper() + p[1:] for p in t.split("-")) for t in tokens]
    elif case == "upper":
        tokens = [t.upper() for t in tokens]
    text = tokens[0]
    for t in tokens[1:]:
        text += ("  " if rng.random() < 0.15 else " ") + t
    if rng.random() < 0.15:
        text = " " + text
    if rng.random() < 0.15:
        text = text + "  "
    return text


def type_digits(n, rng):
    """n in digits: plain, with a comma or a space between thousands, or with leading zeros."""
    if n >= 1000:
        sep = rng.choice(("", ",", ",", " "))
        return f"{n // 1000}{sep}{n % 1000:03d}"
    if rng.random() < 0.1:
        return "0" * rng.randint(1, 2) + str(n)
    return str(n)


def load_numbers_py():
    spec = importlib.util.spec_from_file_location("numwords", os.path.join(HERE, "numbers.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else MODEL_DIR
    numwords = load_numbers_py()
    with open(os.path.join(model_dir, "heldout.json"), encoding="utf-8") as fh:
        held = json.load(fh)
    numbers = held["uniform"] + held["small"] + held["hundreds"]
    hundreds_band = set(held["hundreds"])
    rng = random.Random(SEED)
    items, kinds = [], {"digits": 0, "words": 0, "words with a variant the model sees": 0}
    for n in numbers:
        plain = say(n, PLAIN)
        assert plain == numwords.english(n), (n, plain, numwords.english(n))  # two writers agree
        if rng.random() < 0.08:
            typed, words = type_digits(n, rng), plain
            kinds["digits"] += 1
        else:
            # Draw styles until the words differ from the plain spelling, when the number has a variant.
            for _ in range(50):
                words = say(n, Style.drawn(rng, 0.7 if n in hundreds_band else 0.5))
                if words != plain:
                    break
            typed = type_words(words, rng)
            kinds["words"] += 1
            kinds["words with a variant the model sees"] += words != plain
        items.append([typed, words, n, numwords.french(n), numwords.german_join(numwords.german(n))])
    out = {"generator": "tools/models/make_typed_heldout.py", "seed": SEED,
           "description": "the held-out numbers of heldout.json (never trained on in any spelling), each typed "
                          "once by a random typist: " + ", ".join(f"{v} {k}" for k, v in kinds.items()),
           "columns": ["typed", "words", "n", "fr", "de"], "items": items}
    with open(os.path.join(model_dir, "typed_heldout.json"), "w", encoding="utf-8") as fh:
        head = json.dumps({k: v for k, v in out.items() if k != "items"}, ensure_ascii=False)
        fh.write(head[:-1] + ', "items": [\n' + ",\n".join(json.dumps(it, ensure_ascii=False) for it in items)
                 + "\n]}\n")
    print(f"wrote {len(items)} typed held-out items ({', '.join(f'{v} {k}' for k, v in kinds.items())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
