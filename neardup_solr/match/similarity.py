"""Verification for the default mode: a cosine that weights words by rarity and place.

Each distinct word w of a record x gets the weight::

    weight(w, x) = idf(w) * (1 + LEAD * DECAY ** p)
    idf(w)       = ln(1 + (N - df(w) + 0.5) / (df(w) + 0.5))

where p is the position of w's first occurrence, N the number of records
and df(w) the number holding w: the idf Solr's BM25 uses, from the index's
own counts. Rare words say more about identity than common ones ("bistro"
less than "spago"), and leading words more than later ones: a record opens
with what it is (a name, a title) and ends with shared context (street,
city, category). Two records at one address differ in their leading words;
one restaurant listed twice differs in its trailing ones.

The similarity is the cosine of the two unit weight vectors, made soft as in
Soft TF-IDF (Cohen, Ravikumar and Fienberg, 2003): a word of one record
missing from the other still counts through the other's closest word, if
their Jaro-Winkler similarity is at least ``CLOSE`` (0.85), times that
similarity. So a typo ("Vally" for "Valley") costs a little, not the whole
word. It is computed both ways and averaged, and lies in [0, 1].

Beside the similarity, the match model (``number_levels.py``) weighs a second piece
of evidence: how the two records' numbers agree (``number_agreement``).
Numbers in records are identifiers (house numbers, postcodes, phone numbers,
dates, account numbers): typing garbles words far more often than it changes
a number, and two records that look alike but are not the same thing (one
chain's shops, a family at one address) differ in them. The soft cosine
counts a number as one word among many; the agreement says it apart, in
five levels: a record has no number; none of the numbers is shared; two or
more differ; one differs (a typo, or a field one record lacks); all agree.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from itertools import count, takewhile

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import JaroWinkler

LEAD = 1.0
DECAY = 0.5
# Two words are close from a Jaro-Winkler similarity of 0.85: one typo in
# a short word ("Iris" / "Irts": 0.87) counts through its intended word. At
# 0.9, where Soft TF-IDF's authors put it, such a typo in a record's leading
# word halved its similarity; at 0.8 a household's given names became
# close (what each did to the labeled sets: docs/scale.md).
CLOSE = 0.85
# Jaro-Winkler similarities are fractions that floating point rounds either
# way ("a" / "aa" is 0.85 exactly, and rapidfuzz's cutoff drops it even at
# 0.85 - 1e-9): a word at CLOSE is close. A millionth is below the gap
# between any two Jaro-Winkler values of words of up to 40 letters.
ROUNDING = 1e-6
Vector = dict[str, float]

# A word's place factor, 1 + LEAD * DECAY ** position, worked out once for
# every position where it is not exactly 1.0 in floating point (the first 53).
_PLACE = tuple(takewhile(lambda factor: factor != 1.0, (1.0 + LEAD * DECAY**position for position in count())))

_DIGIT = re.compile(r"[0-9]")
# The levels of ``number_agreement``, in its order.
AGREEMENT = ("a record has no number", "no number shared", "two or more numbers differ", "one number differs",
             "all numbers agree")


class Weights:
    """Word weights from document frequencies, as unit vectors per record."""

    def __init__(self, doc_count: int, doc_freq: Mapping[str, int]):
        self.doc_count = doc_count
        self.doc_freq = doc_freq
        # Each word's interned string and idf, worked out once: a million
        # records hold a few tens of thousands of distinct words.
        self._known: dict[str, tuple[str, float]] = {}

    def idf(self, word: str) -> float:
        df = self.doc_freq.get(word, 0)
        return math.log1p((self.doc_count - df + 0.5) / (df + 0.5))

    def vector(self, words: list[str]) -> Vector:
        """Unit vector of the distinct words; their strings are interned, so a
        million cached vectors share one copy of each word."""
        weights: Vector = {}
        known = self._known
        for position, word in enumerate(words):
            if word not in weights:
                if (seen := known.get(word)) is None:
                    seen = known[word] = (sys.intern(word), self.idf(word))
                weights[seen[0]] = seen[1] * (_PLACE[position] if position < len(_PLACE) else 1.0)
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        return {word: w / norm for word, w in weights.items()}


class CloseWords:
    """Which words of a vocabulary are within Jaro-Winkler ``CLOSE`` of which
    (:func:`close_pairs`), as a dictionary: comparing two records is a few
    dictionary lookups instead of a Jaro-Winkler call for every pair of
    their words."""

    def __init__(self, words: Iterable[str], against: Iterable[str] | None = None):
        """``words``' close words among themselves, or with ``against`` given,
        only among those (all :func:`similarity` asks when its first record's
        words are ``words`` and the others' ``against``)."""
        vocabulary = sorted(set(words))
        others = None if against is None else sorted(set(against))
        columns = vocabulary if others is None else others
        self.close: dict[str, dict[str, float]] = {}
        for row, column, score in zip(*(part.tolist() for part in close_pairs(vocabulary, others))):
            self.close.setdefault(vocabulary[row], {})[columns[column]] = score


# Rows of the vocabulary compared with all of it at once.
CLOSE_ROWS = 512


def close_pairs(vocabulary: Sequence[str], columns: Sequence[str] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every ordered pair of different words of ``vocabulary`` within
    Jaro-Winkler ``CLOSE``: their positions (int64) and similarity (float32,
    as rapidfuzz gives it); with ``columns``, each word of ``vocabulary``
    with each of ``columns`` (positions in each; a word in both is its own
    close word there).

    Worked out for the whole vocabulary at once (rapidfuzz's ``cdist``, in
    compiled code, ``CLOSE_ROWS`` rows at a time to bound memory).
    """
    square = columns is None
    columns = vocabulary if square else columns
    rows, found, scores = [], [], []
    # Threads pay off for a bulk report's vocabulary; for the few words of
    # one online query, starting them costs more than the comparisons.
    workers = -1 if len(vocabulary) > CLOSE_ROWS else 1
    for first in range(0, len(vocabulary), CLOSE_ROWS):
        block = vocabulary[first : first + CLOSE_ROWS]
        similar = process.cdist(block, columns, scorer=JaroWinkler.similarity,
                                score_cutoff=CLOSE - ROUNDING, dtype=np.float32, workers=workers)
        row, column = np.nonzero(similar)
        if square:  # a word is not its own close word
            other = first + row != column
            row, column = row[other], column[other]
        rows.append(first + row)
        found.append(column)
        scores.append(similar[row, column])
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
    return (np.concatenate(rows).astype(np.int64), np.concatenate(found).astype(np.int64),
            np.concatenate(scores))


def similarity(a: Vector, b: Vector, close: CloseWords) -> float:
    """Soft cosine: shared words count fully; each word of one record missing
    from the other counts through the other's closest missing word, if close
    enough (both ways, averaged)."""
    exact = 0.0
    only_a = []
    for word, weight in a.items():
        if word in b:
            exact += weight * b[word]
        else:
            only_a.append(word)
    only_b = [word for word in b if word not in a]
    best_a: dict[str, float] = {}
    best_b: dict[str, float] = {}
    place: dict[str, int] | None = None
    # Each missing word's close words among the other's missing words, in
    # the other's order: by looking each pair up where the missing words are
    # fewer (a common word's close words in a large vocabulary are many),
    # else from its close words (two long documents miss hundreds each).
    for word in only_a:
        near = close.close.get(word)
        if near is None:
            continue
        others = only_b
        if len(near) < len(only_b):
            place = place or dict(zip(only_b, range(len(only_b))))
            others = sorted((other for other in near if other in place), key=place.__getitem__)
        for other in others:
            if (score := near.get(other)) is not None:
                best_a[word] = max(best_a.get(word, 0.0), b[other] * score)
                best_b[other] = max(best_b.get(other, 0.0), a[word] * score)
    soft_a = sum(a[word] * weight for word, weight in best_a.items())
    soft_b = sum(b[word] * weight for word, weight in best_b.items())
    return min(1.0, exact + (soft_a + soft_b) / 2.0)


def holds_digit(word: str) -> bool:
    """Whether a word is a number for :func:`number_agreement`."""
    return _DIGIT.search(word) is not None


def numbers(words: Iterable[str]) -> tuple[str, ...]:
    """The distinct words holding a digit, in order (a tuple: most records
    have one or two, and a million of them are kept during a report)."""
    return tuple(dict.fromkeys(filter(holds_digit, words)))


def number_agreement(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How two records' numbers (:func:`numbers`) agree, as an index into
    ``AGREEMENT``: 0 when either has none, 1 when they share none, else 4
    minus how many of the larger set the other lacks (at most 2)."""
    if not a or not b:
        return 0
    # Most records hold one number or two: look it up, make no set.
    if len(a) == 1 or len(b) == 1:
        shared = int(a[0] in b) if len(a) == 1 else int(b[0] in a)
    else:
        shared = len(set(a).intersection(b))
    if not shared:
        return 1
    return 4 - min(max(len(a), len(b)) - shared, 2)
