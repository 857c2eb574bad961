"""The words and shingles of a repaired text (:mod:`neardup_solr.text.repair`)
as the index holds them: its tokens, which the default mode searches and
verifies by, and the shingles its LSH signature is made of; and any value
as a term the index can hold.
"""

from __future__ import annotations

import hashlib

from .repair import repaired_words
from .shingles import CHAR_SHINGLE_SIZE, char_shingles, word_shingles

# Lucene refuses terms over 32766 UTF-8 bytes; longer values are stored as
# their digest, which keeps equality (all a shingle or signature needs).
# 4096 stays far below Lucene's limit; a character takes at most 4 bytes, so
# a value of up to 1024 characters needs no encoding to be known short.
MAX_TERM_BYTES = 4096


def index_term(value: str) -> str:
    if len(value) * 4 <= MAX_TERM_BYTES or len(value.encode("utf-8")) <= MAX_TERM_BYTES:
        return value
    return "md5:" + hashlib.md5(value.encode("utf-8")).hexdigest()


def index_terms(values: list[str]) -> list[str]:
    """Each value as :func:`index_term` makes it; ``values`` itself when all
    are known short, as almost every text's words are."""
    if max(map(len, values), default=0) * 4 <= MAX_TERM_BYTES:
        return values
    return [index_term(value) for value in values]


def lsh_shingles(repaired: str, kind: str = "chars") -> list[str]:
    """The shingles of a repaired text that its LSH signature is made of:
    character 3-grams (``"chars"``) or word 3-shingles (``"words"``)."""
    if kind == "chars":
        return char_shingles(repaired, CHAR_SHINGLE_SIZE)
    return index_terms(word_shingles(repaired.split()))


def repaired_tokens(repaired: str) -> list[str]:
    """Words of repaired text as the ``tokens`` field holds them."""
    return index_terms(repaired.split())


def text_tokens(text: str) -> list[str]:
    """``repaired_tokens(repair(text))``: the tokens of a text as given."""
    return index_terms(repaired_words(text))
