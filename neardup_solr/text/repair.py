"""Normalization that repairs text, for the default detection mode.

The reference normalization (``text.normalize``) keeps what the data says;
these rules undo what typing, encoding and house style did to it, so two
spellings of one thing become one token list. Each rule makes sense for any
English name, address or title, and each is applied in this order:

1. ``html_entities``: ``Caf&eacute;`` -> ``Café``, ``&amp;`` -> ``&``.
2. ``fold_accents``: ``Café`` -> ``Cafe``, ``Straße`` -> ``Strasse`` (Unicode
   decomposition without combining marks, plus the letters that do not
   decompose).
3. ``apostrophes``: a possessive ``'s`` goes (``Philippe's`` -> ``Philippe``)
   and other apostrophes inside words close up (``O'Groats`` -> ``OGroats``).
4. ``ampersand``: ``&`` -> ``and``.
5. the reference normalization: lowercase, punctuation but ``-`` to spaces.
6. ``ordinals``: ``seventh`` -> ``7th`` (first to twentieth).
7. ``numbers``: ``seven`` -> ``7`` (one to twenty).
8. ``postal``: the USPS street-suffix, unit and direction abbreviations
   (``street`` -> ``st``, ``avenue`` -> ``ave``, ``north`` -> ``n``).
"""

from __future__ import annotations

import html
import re
import unicodedata

from .normalize import normal_words, normalize

_ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
    "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()
_NUMBERS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty"
).split()


def _suffix(n: int) -> str:
    return "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


ORDINALS = {word: f"{n}{_suffix(n)}" for n, word in enumerate(_ORDINALS, start=1)}
NUMBERS = {word: str(n) for n, word in enumerate(_NUMBERS, start=1)}

# USPS Publication 28: common street suffixes (C1), secondary unit designators
# (C2) and directionals, each spelled-out or variant form to its abbreviation.
POSTAL = {
    "avenue": "ave", "av": "ave", "aven": "ave", "avenu": "ave", "avn": "ave", "avnue": "ave",
    "boulevard": "blvd", "boul": "blvd", "boulv": "blvd",
    "circle": "cir", "circ": "cir", "circl": "cir", "crcl": "cir",
    "court": "ct", "center": "ctr", "centre": "ctr", "cent": "ctr", "cntr": "ctr",
    "drive": "dr", "driv": "dr", "drv": "dr",
    "expressway": "expy", "expressw": "expy", "freeway": "fwy", "freewy": "fwy",
    "highway": "hwy", "highwy": "hwy", "hiway": "hwy", "hiwy": "hwy",
    "lane": "ln", "parkway": "pkwy", "parkwy": "pkwy", "pkway": "pkwy",
    "place": "pl", "plaza": "plz", "plza": "plz", "road": "rd", "square": "sq", "sqr": "sq",
    "street": "st", "strt": "st", "str": "st", "terrace": "ter", "terr": "ter",
    "apartment": "apt", "building": "bldg", "floor": "fl", "suite": "ste", "room": "rm",
    "north": "n", "south": "s", "east": "e", "west": "w",
    "northeast": "ne", "northwest": "nw", "southeast": "se", "southwest": "sw",
}

_UNDECOMPOSABLE = str.maketrans(
    {"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe", "Œ": "OE", "ł": "l", "Ł": "L",
     "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th", "ı": "i"}
)
# A possessive goes whole, else an apostrophe before a word character goes
# alone: the same as the possessives first, then the rest, in one pass (no
# apostrophe is next to a possessive's, which follows a word character). It
# starts with the apostrophe and looks back from there: a pattern that opens
# with a look-behind is tried at every position of the text.
_APOSTROPHES = re.compile(r"['’](?<=\w['’])(?:s\b|(?=\w))")
# Text outside ASCII, a run at a time: NFKD leaves ASCII as it is and never
# moves a mark across it, so only these runs need folding.
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def html_entities(text: str) -> str:
    return html.unescape(text) if "&" in text else text


def fold_accents(text: str) -> str:
    if text.isascii():
        return text
    return _NON_ASCII.sub(_folded, text)


def _folded(run: re.Match) -> str:
    decomposed = unicodedata.normalize("NFKD", run.group().translate(_UNDECOMPOSABLE))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def apostrophes(text: str) -> str:
    if "'" not in text and "’" not in text:
        return text
    return _APOSTROPHES.sub("", text)


def ampersand(text: str) -> str:
    return text.replace("&", " and ")


TEXT_RULES = (html_entities, fold_accents, apostrophes, ampersand)
WORD_RULES = (ORDINALS, NUMBERS, POSTAL)


def _in_turn(word: str) -> str:
    for table in WORD_RULES:
        word = table.get(word, word)
    return word


# The word rules in their order as one table, so a word is looked up once.
_WORD_TABLE = {word: _in_turn(word) for word in set().union(*WORD_RULES)}


def repair(text: str, normalized: str | None = None) -> str:
    """The repaired, normalized text: words separated by single spaces.

    Never empty when ``normalize(text)`` is not: a repair that would erase
    a record (text of combining marks alone) leaves it as it was.
    ``normalized``, ``normalize(text)`` when the caller has it, is not
    made again where the text rules leave the text as it is (most texts).
    """
    words, whole = _repaired(text, normalized)
    return " ".join(words) if whole is None else whole


def repaired_words(text: str) -> list[str]:
    """``repair(text).split()``, made without joining the words and
    splitting them again."""
    return _repaired(text, None)[0]


def _repaired(text: str, normalized: str | None) -> tuple[list[str], str | None]:
    """The repaired words, and the repaired text where it is at hand without joining them."""
    fixed = _text_rules(text)
    if normalized is not None and fixed == text:
        words = normalized.split()
        # Most texts hold no word the word rules change: given, their normalized text is the answer.
        if _WORD_TABLE.keys().isdisjoint(words):
            return words, normalized
    else:
        words = normal_words(fixed)
    if repaired := list(map(_WORD_TABLE.get, words, words)):
        return repaired, None
    kept = normalize(text) if normalized is None else normalized
    return kept.split(), kept


def _text_rules(text: str) -> str:
    for rule in TEXT_RULES:
        text = rule(text)
    return text
