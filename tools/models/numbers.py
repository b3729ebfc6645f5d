#!/usr/bin/python3
"""Rule-based number words for 0..999 999 in English, French and German, plus tokenizers.

Used by tools/models/train_translator.py to make the training / held-out data of the
"translator" model (English number words -> French / German). Run it to self-check:
    /usr/bin/python3 tools/models/numbers.py

Conventions
-----------
English  english(n): no "and", tens hyphenated ("twenty-one"), "one hundred", "one thousand",
         "twelve thousand three hundred forty-five", "one hundred thousand", 0 = "zero".
         english_spelled(n, ...) also writes the variants people type, which the translator learns
         (the training generator; tools/models/make_typed_heldout.py is an independent one):
           a space instead of the hyphen between tens and units ("twenty one");
           British "and" before a final part below 100, after "hundred" or "thousand"
             ("one hundred and five", "two thousand and six", "three hundred and one thousand");
           "a" for a leading one ("a hundred", "a thousand", "a hundred and five thousand");
           hundreds counted past ten for 1100..9999 when the hundreds digit is not 0
             ("eleven hundred", "nineteen hundred and eighty-four", "twenty-five hundred").
         english_variant(n, rng) draws one of them (english(n) itself in CANONICAL_SHARE of draws).
         Lower case and single spaces only: capitals, extra spaces, commas and digits are the
         runtime's normalisation (bindings/numberwords.js), never seen by the model.
French   french(n): traditional (pre-1990) spelling: hyphens only between tens and units below
         100 ("trente-deux", "quatre-vingt-un"), "et" for 21 31 41 51 61 71 ("vingt et un",
         "soixante et onze"), never for 81 / 91 ("quatre-vingt-un", "quatre-vingt-onze").
         "quatre-vingts" and "<k> cents" take an -s only when they end the number; before
         "mille" they stay invariable ("quatre-vingt mille", "deux cent mille"), "mille" never
         takes an -s and is never preceded by "un" ("mille", "deux mille"); "cent" alone for
         100..199 ("cent", "cent un"). 0 = "zéro" (UTF-8, with the accent).
German   german(n): a string of MORPHEMES separated by single spaces; german_join() removes the
         spaces to give the written word ("drei hundert ein und siebzig" -> "dreihunderteinundsiebzig").
         Morphemes: null eins ein zwei drei vier fünf sechs sieben acht neun zehn elf zwölf
         dreizehn vierzehn fünfzehn sechzehn siebzehn achtzehn neunzehn zwanzig dreißig vierzig
         fünfzig sechzig siebzig achtzig neunzig und hundert tausend (13..19 and the tens are
         single morphemes because of their irregular stems: "sechzehn", "siebzig", "dreißig").
         Units before "und" and before "tausend" are "ein"; a final 1 is "eins"
         ("ein und zwanzig", "hundert eins", "tausend eins", "hundert ein tausend").
         Convention for a leading one: NO "ein" before "hundert" / "tausend":
           100 "hundert", 1000 "tausend", 1100 "tausend hundert", 101 "hundert eins",
           200 "zwei hundert", 2000 "zwei tausend", 100000 "hundert tausend".
         Numbers >= 1000: "<german(thousands), final eins -> ein> tausend <german(rest)>".
         "ß", "ü", "ö" are kept (UTF-8).

Tokens
------
tokenize(s): split on spaces, and split each word further at "-", keeping "-" as its own token:
    "three hundred seventy-one" -> ["three", "hundred", "seventy", "-", "one"]
For German, the morpheme string is split on spaces (no hyphens ever occur).
detokenize(tokens, lang): "en"/"fr": "hyphen-join" = join with single spaces, except that no
space is put on either side of a "-" token; "de": "concat" = join with "" (the display word).
german morpheme string = " ".join(tokens); detokenize_hyphen_join(tokenize(s)) == s for en/fr.
"""

import sys

LIMIT = 1_000_000  # numbers 0 .. LIMIT-1

# ----------------------------------------------------------------------------- English
_EN_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
            "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
            "seventeen", "eighteen", "nineteen"]
_EN_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def _en_below_100(n, joiner="-"):
    if n < 20:
        return _EN_ONES[n]
    t, u = divmod(n, 10)
    return _EN_TENS[t] + (joiner + _EN_ONES[u] if u else "")


def _constant(value):
    return lambda: value


def english_spelled(n, joiner=_constant("-"), use_and=_constant(False), a_for_one=False,
                    hundreds_count=False):
    """English words for 0 <= n < 1 000 000 in one of the spellings people type.

    joiner():  "-" or " " between tens and units, asked once per tens-units pair;
    use_and(): True for British "and" before a final part below 100, asked once per place where it
               may go (after "hundred" with 1..99 following; after "thousand" with 1..99 following);
    a_for_one: "a hundred ...", "a thousand ..." instead of a leading "one";
    hundreds_count: "eleven hundred" etc. for 1100..9999 whose hundreds digit is not 0.
    The defaults give english(n)."""
    _check(n)
    if n == 0:
        return "zero"

    def below_1000(m):
        h, r = divmod(m, 100)
        parts = []
        if h:
            parts.append(_EN_ONES[h] + " hundred")
        if r:
            parts.append(("and " if h and use_and() else "") + _en_below_100(r, joiner()))
        return " ".join(parts)

    th, r = divmod(n, 1000)
    if hundreds_count and 1100 <= n and th < 10 and (n // 100) % 10:
        h, r = divmod(n, 100)
        words = _en_below_100(h, joiner()) + " hundred"
        if r:
            words += (" and " if use_and() else " ") + _en_below_100(r, joiner())
        return words
    parts = []
    if th:
        parts.append(below_1000(th) + " thousand")
    if r:
        parts.append(("and " if th and r < 100 and use_and() else "") + below_1000(r))
    words = " ".join(parts)
    if a_for_one and (words.startswith("one hundred") or words.startswith("one thousand")):
        words = "a" + words[3:]
    return words


def english(n):
    """English number words for 0 <= n < 1 000 000 (no "and", hyphenated tens)."""
    return english_spelled(n)


CANONICAL_SHARE = 0.3  # english_variant: share of draws that are english(n) itself


def english_variant(n, rng):
    """One spelling of n drawn with rng (random.Random): english(n) in CANONICAL_SHARE of the draws;
    otherwise a writer's style: hyphens, spaces or a mix between tens and units; "and" never, always
    or sometimes; "a" for a leading one (40 %); "eleven hundred" where it exists (50 %)."""
    if rng.random() < CANONICAL_SHARE:
        return english(n)
    p_space = rng.choice((0.0, 1.0, 0.5))
    p_and = rng.choice((0.0, 1.0, 0.5))
    return english_spelled(n, joiner=lambda: " " if rng.random() < p_space else "-",
                           use_and=lambda: rng.random() < p_and, a_for_one=rng.random() < 0.4,
                           hundreds_count=rng.random() < 0.5)


# ----------------------------------------------------------------------------- French
_FR_ONES = ["zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf",
            "dix", "onze", "douze", "treize", "quatorze", "quinze", "seize", "dix-sept",
            "dix-huit", "dix-neuf"]
_FR_TENS = {2: "vingt", 3: "trente", 4: "quarante", 5: "cinquante", 6: "soixante"}


def _fr_below_100(n, final):
    """1..99; `final`: nothing follows in the whole number (plural -s of quatre-vingts)."""
    if n < 20:
        return _FR_ONES[n]
    t, u = divmod(n, 10)
    if t <= 6:
        base = _FR_TENS[t]
        if u == 0:
            return base
        if u == 1:
            return base + " et un"
        return base + "-" + _FR_ONES[u]
    if t == 7:  # 70..79 = soixante + 10..19
        if u == 1:
            return "soixante et onze"
        return "soixante-" + _FR_ONES[10 + u]
    # 80..99 = quatre-vingt(s) + 0..19, no "et"
    rest = n - 80
    if rest == 0:
        return "quatre-vingts" if final else "quatre-vingt"
    return "quatre-vingt-" + _FR_ONES[rest]


def _fr_below_1000(n, final):
    """1..999; `final`: the group ends the number (False before "mille")."""
    h, r = divmod(n, 100)
    parts = []
    if h:
        if h == 1:
            parts.append("cent")
        elif r == 0 and final:
            parts.append(_FR_ONES[h] + " cents")
        else:
            parts.append(_FR_ONES[h] + " cent")
    if r:
        parts.append(_fr_below_100(r, final))
    return " ".join(parts)


def french(n):
    """French number words (traditional spelling) for 0 <= n < 1 000 000."""
    _check(n)
    if n == 0:
        return "zéro"
    th, r = divmod(n, 1000)
    parts = []
    if th == 1:
        parts.append("mille")
    elif th:
        parts.append(_fr_below_1000(th, final=False) + " mille")
    if r:
        parts.append(_fr_below_1000(r, final=True))
    return " ".join(parts)


# ----------------------------------------------------------------------------- German
_DE_ONES = ["null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun",
            "zehn", "elf", "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn",
            "achtzehn", "neunzehn"]
_DE_TENS = ["", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig",
            "neunzig"]


def _de_below_100(n):
    """1..99 as morphemes (a final 1 is "eins")."""
    if n < 20:
        return _DE_ONES[n]
    t, u = divmod(n, 10)
    if u == 0:
        return _DE_TENS[t]
    unit = "ein" if u == 1 else _DE_ONES[u]
    return unit + " und " + _DE_TENS[t]


def _de_below_1000(n):
    """1..999 as morphemes; "hundert" (not "ein hundert") for 100..199."""
    h, r = divmod(n, 100)
    parts = []
    if h == 1:
        parts.append("hundert")
    elif h:
        parts.append(_DE_ONES[h] + " hundert")
    if r:
        parts.append(_de_below_100(r))
    return " ".join(parts)


def german(n):
    """German number as space-separated morphemes for 0 <= n < 1 000 000 (see german_join)."""
    _check(n)
    if n == 0:
        return "null"
    th, r = divmod(n, 1000)
    parts = []
    if th == 1:
        parts.append("tausend")
    elif th:
        head = _de_below_1000(th)
        if head.endswith("eins"):  # "hundert eins" -> "hundert ein tausend"
            head = head[:-1]
        parts.append(head + " tausend")
    if r:
        parts.append(_de_below_1000(r))
    return " ".join(parts)


def german_join(morphemes):
    """Morpheme string (or token list) -> written German word: concatenate without spaces."""
    if isinstance(morphemes, str):
        morphemes = morphemes.split(" ")
    return "".join(morphemes)


# ----------------------------------------------------------------------------- tokens
def tokenize(s):
    """Words and hyphens as separate tokens: "seventy-one" -> ["seventy", "-", "one"].
    For German morpheme strings this is a plain split on spaces."""
    out = []
    for word in s.split(" "):
        if not word:
            raise ValueError(f"empty word in {s!r}")
        pieces = word.split("-")
        for i, p in enumerate(pieces):
            if i:
                out.append("-")
            if not p:
                raise ValueError(f"empty piece in {s!r}")
            out.append(p)
    return out


def detokenize_hyphen_join(tokens):
    """English / French: join with spaces, but no space on either side of a "-" token."""
    s = ""
    prev = None
    for t in tokens:
        if prev is None or t == "-" or prev == "-":
            s += t
        else:
            s += " " + t
        prev = t
    return s


def detokenize(tokens, lang):
    """Tokens -> text. lang "en"/"fr": hyphen-join; "de": morpheme string (space-joined);
    use german_join / lang "de-word" for the written German word."""
    if lang in ("en", "fr"):
        return detokenize_hyphen_join(tokens)
    if lang == "de":
        return " ".join(tokens)
    if lang == "de-word":
        return "".join(tokens)
    raise ValueError(f"unknown language {lang!r}")


def english_tokens(n):
    return tokenize(english(n))


def french_tokens(n):
    return tokenize(french(n))


def german_tokens(n):
    return tokenize(german(n))


TARGETS = {"fr": french, "de": german}


def _check(n):
    if not isinstance(n, int) or not 0 <= n < LIMIT:
        raise ValueError(f"number out of range 0..{LIMIT - 1}: {n!r}")


# ----------------------------------------------------------------------------- self-check
KNOWN_EN = {
    0: "zero", 1: "one", 13: "thirteen", 21: "twenty-one", 40: "forty", 99: "ninety-nine",
    100: "one hundred", 101: "one hundred one", 110: "one hundred ten",
    371: "three hundred seventy-one", 1000: "one thousand", 1001: "one thousand one",
    12345: "twelve thousand three hundred forty-five", 100000: "one hundred thousand",
    200100: "two hundred thousand one hundred", 80000: "eighty thousand",
    999999: "nine hundred ninety-nine thousand nine hundred ninety-nine",
}

# english_spelled with every variant on: spaces, "and", "a", hundreds counted past ten.
KNOWN_EN_TYPED = {
    21: "twenty one", 100: "a hundred", 105: "a hundred and five", 1000: "a thousand",
    1001: "a thousand and one", 1100: "eleven hundred", 1984: "nineteen hundred and eighty four",
    2000: "two thousand", 2006: "two thousand and six",
    2500: "twenty five hundred", 10000: "ten thousand", 101000: "a hundred and one thousand",
    105000: "a hundred and five thousand", 200100: "two hundred thousand one hundred",
    999999: "nine hundred and ninety nine thousand nine hundred and ninety nine",
}


def english_all_variants(n):
    return english_spelled(n, joiner=_constant(" "), use_and=_constant(True), a_for_one=True, hundreds_count=True)


KNOWN_FR = {
    0: "zéro", 1: "un", 10: "dix", 11: "onze", 16: "seize", 17: "dix-sept", 19: "dix-neuf",
    20: "vingt", 21: "vingt et un", 22: "vingt-deux", 30: "trente", 31: "trente et un",
    32: "trente-deux", 41: "quarante et un", 51: "cinquante et un", 60: "soixante",
    61: "soixante et un", 69: "soixante-neuf", 70: "soixante-dix", 71: "soixante et onze",
    72: "soixante-douze", 77: "soixante-dix-sept", 79: "soixante-dix-neuf",
    80: "quatre-vingts", 81: "quatre-vingt-un", 82: "quatre-vingt-deux",
    90: "quatre-vingt-dix", 91: "quatre-vingt-onze", 97: "quatre-vingt-dix-sept",
    99: "quatre-vingt-dix-neuf", 100: "cent", 101: "cent un", 111: "cent onze",
    121: "cent vingt et un", 180: "cent quatre-vingts", 181: "cent quatre-vingt-un",
    200: "deux cents", 201: "deux cent un", 280: "deux cent quatre-vingts",
    300: "trois cents", 371: "trois cent soixante et onze", 999: "neuf cent quatre-vingt-dix-neuf",
    1000: "mille", 1001: "mille un", 1080: "mille quatre-vingts", 1100: "mille cent",
    1200: "mille deux cents", 2000: "deux mille", 21000: "vingt et un mille",
    71000: "soixante et onze mille", 80000: "quatre-vingt mille", 80080: "quatre-vingt mille quatre-vingts",
    81000: "quatre-vingt-un mille", 100000: "cent mille", 101000: "cent un mille",
    200000: "deux cent mille", 200100: "deux cent mille cent", 200200: "deux cent mille deux cents",
    300080: "trois cent mille quatre-vingts", 480000: "quatre cent quatre-vingt mille",
    999999: "neuf cent quatre-vingt-dix-neuf mille neuf cent quatre-vingt-dix-neuf",
}

KNOWN_DE = {
    0: "null", 1: "eins", 2: "zwei", 7: "sieben", 10: "zehn", 11: "elf", 12: "zwölf",
    13: "dreizehn", 16: "sechzehn", 17: "siebzehn", 20: "zwanzig", 21: "ein und zwanzig",
    30: "dreißig", 31: "ein und dreißig", 60: "sechzig", 66: "sechs und sechzig", 70: "siebzig",
    77: "sieben und siebzig", 99: "neun und neunzig", 100: "hundert", 101: "hundert eins",
    111: "hundert elf", 121: "hundert ein und zwanzig", 200: "zwei hundert",
    371: "drei hundert ein und siebzig", 1000: "tausend", 1001: "tausend eins",
    1100: "tausend hundert", 2000: "zwei tausend", 21000: "ein und zwanzig tausend",
    100000: "hundert tausend", 101000: "hundert ein tausend", 101101: "hundert ein tausend hundert eins",
    999999: "neun hundert neun und neunzig tausend neun hundert neun und neunzig",
}

KNOWN_DE_WORD = {
    1: "eins", 21: "einundzwanzig", 30: "dreißig", 101: "hunderteins",
    371: "dreihunderteinundsiebzig", 1000: "tausend", 1001: "tausendeins",
    21000: "einundzwanzigtausend", 101000: "hunderteintausend",
    999999: "neunhundertneunundneunzigtausendneunhundertneunundneunzig",
}


def self_check(verbose=True):
    for n, s in KNOWN_EN.items():
        assert english(n) == s, (n, english(n), s)
    for n, s in KNOWN_EN_TYPED.items():
        assert english_all_variants(n) == s, (n, english_all_variants(n), s)
    for n, s in KNOWN_FR.items():
        assert french(n) == s, (n, french(n), s)
    for n, s in KNOWN_DE.items():
        assert german(n) == s, (n, german(n), s)
    for n, s in KNOWN_DE_WORD.items():
        assert german_join(german(n)) == s, (n, german_join(german(n)), s)
    assert tokenize("three hundred seventy-one") == ["three", "hundred", "seventy", "-", "one"]
    assert tokenize(french(81)) == ["quatre", "-", "vingt", "-", "un"]
    assert tokenize(german(371)) == ["drei", "hundert", "ein", "und", "siebzig"]
    # Exhaustive structural checks over the whole range.
    seen = {"en": set(), "fr": set(), "de": set()}
    vocab = {"en": set(), "fr": set(), "de": set()}
    maxlen = {"en": 0, "fr": 0, "de": 0}
    for n in range(LIMIT):
        for lang, fn in (("en", english), ("fr", french), ("de", german)):
            s = fn(n)
            toks = tokenize(s)
            assert detokenize(toks, lang) == s, (lang, n, s)
            if lang != "de":
                assert detokenize_hyphen_join(toks) == s
            vocab[lang].update(toks)
            maxlen[lang] = max(maxlen[lang], len(toks))
            seen[lang].add(s)
    for lang in seen:  # every spelling is unique (the mapping is a bijection)
        assert len(seen[lang]) == LIMIT, (lang, len(seen[lang]))
    # The typed spellings are unambiguous too: no fully varied spelling is another number's.
    typed = {english_all_variants(n): n for n in range(LIMIT)}
    assert len(typed) == LIMIT
    assert all(typed.get(english(n), n) == n for n in range(LIMIT))
    assert len({german_join(german(n)) for n in range(LIMIT)}) == LIMIT
    if verbose:
        for n in (0, 1, 21, 71, 80, 81, 91, 100, 101, 180, 200, 201, 371, 1000, 1080, 12345,
                  21000, 80000, 101000, 200000, 200100, 999999):
            print(f"{n:>7}  en: {english(n)}\n         fr: {french(n)}\n"
                  f"         de: {german(n)}  ->  {german_join(german(n))}")
        for lang in ("en", "fr", "de"):
            print(f"{lang}: {len(vocab[lang])} token types, longest sequence {maxlen[lang]} tokens: "
                  f"{sorted(vocab[lang])}")
    return vocab, maxlen


if __name__ == "__main__":
    self_check()
    print("numbers.py self-check passed: %d EN, %d FR, %d DE known spellings; 0..%d round-trip, "
          "all spellings unique" % (len(KNOWN_EN) + len(KNOWN_EN_TYPED), len(KNOWN_FR),
                                    len(KNOWN_DE) + len(KNOWN_DE_WORD), LIMIT - 1))
    sys.exit(0)
