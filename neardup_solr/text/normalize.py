"""Record text as the reference workflow sees it.

Normalization is deliberately plain so results stay comparable with the
reference: lowercase, every punctuation or symbol character except ``-``
becomes a space, runs of whitespace become one space. ``Art's Deli`` becomes
``art s deli``; ``Bel-Air`` stays ``bel-air``.
"""

from __future__ import annotations

import hashlib
import re

# \w keeps letters and digits of any script; "_" counts as punctuation.
_PUNCTUATION = re.compile(r"[^\w\s-]|_")
# The same for the ASCII characters of a text's UTF-8 bytes, as a table (a
# byte of a character outside ASCII stays): faster than the pattern, and
# than a table of characters (docs/scale.md).
_ASCII_BYTES = bytes(c if c >= 128 or not _PUNCTUATION.match(chr(c)) else ord(" ") for c in range(256))


def normalize(text: str) -> str:
    return " ".join(normal_words(text))


def normal_words(text: str) -> list[str]:
    """The words of ``normalize(text)``, without joining them."""
    lowered = text.lower()
    spaced = lowered.encode("utf-8", "surrogatepass").translate(_ASCII_BYTES).decode("utf-8", "surrogatepass")
    if lowered.isascii():
        return spaced.split()
    # A text outside ASCII is mostly ASCII most often: only its words outside ASCII meet the pattern.
    found: list[str] = []
    for word in spaced.split():
        if word.isascii():
            found.append(word)
        else:
            found += _PUNCTUATION.sub(" ", word).split()
    return found


def words(normalized: str) -> list[str]:
    return normalized.split()


def first_word(normalized: str) -> str:
    return normalized.split(" ", 1)[0]


def md5_hex(normalized: str) -> str:
    """Equal digests mean exact duplicates after normalization."""
    return hashlib.md5(normalized.encode("utf-8")).hexdigest()


def is_blank(text: str) -> bool:
    """True when ``normalize(text)`` would be empty: nothing to compare."""
    return _CONTENT.search(text) is None


_CONTENT = re.compile(r"[^\W_]|-")
