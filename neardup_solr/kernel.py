"""The verification kernel: the soft cosine and the numbers' agreement of
many candidate pairs at once, over records held as arrays.

A report verifies millions of candidates. As Python objects (a dict of
weights per record) a pair of short records cost about 20 us to score and a
record about 840 bytes to hold; here the records are rows of a CSR matrix
and a compiled loop (numba) scores each pair:

- :class:`Rows`: record ``i``'s distinct words are ``words[start[i]:start[i + 1]]``
  (vocabulary numbers, in the order of their first occurrence) with their
  unit-vector weights in ``weights`` (float64: float32 changes scores),
  12 bytes a word, and ``digits[w]`` says whether word ``w`` holds a digit;
- :class:`CloseTable`: for each vocabulary word, the words within
  Jaro-Winkler ``CLOSE`` of it, sorted, with their similarity, a CSR matrix
  too; a pair of missing words is looked up by binary search.

:func:`score_pairs` returns, for each pair, exactly what
:func:`neardup_solr.similarity.similarity` and
:func:`neardup_solr.similarity.number_agreement` return for the same records
as dicts: the same terms added in the same order (the exact words in the
first record's order, the soft terms in the order the dict version meets
them), so the floats are the same to the last bit. Membership of a word in
the other record is a stamp in a table the size of the vocabulary, so a
pair costs time in proportion to its words, not their product (documents
of hundreds of words included); only the missing words are compared pair by
pair, as in the dict version.

Without numba the same functions run as plain Python over the same arrays
(about a hundred times slower, with the same results): the tests run both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .collisions import distinct
from .similarity import close_pairs, close_scores, holds_digit

try:
    from numba import njit
except ImportError:  # pragma: no cover - numba installs with the package; this keeps a broken install working
    def njit(*_args, **_kwargs):
        def plain(fn):
            fn.py_func = fn
            return fn
        return plain

    COMPILED = False
else:
    COMPILED = True


@dataclass
class Rows:
    """Records' weighted words as a CSR matrix (see the module docstring)."""

    start: np.ndarray  # int64, records + 1
    words: np.ndarray  # int32, vocabulary numbers
    weights: np.ndarray  # float64, the unit vector's weights
    digits: np.ndarray  # bool, per vocabulary word: it holds a digit

    def __len__(self) -> int:
        return len(self.start) - 1

    @property
    def nbytes(self) -> int:
        return self.start.nbytes + self.words.nbytes + self.weights.nbytes + self.digits.nbytes

    @classmethod
    def of(cls, vectors: Iterable[Mapping[str, float]], vocabulary: Vocabulary) -> Rows:
        """Rows of weight vectors (dicts, as :meth:`Weights.vector` makes
        them), their words numbered by ``vocabulary`` (which grows)."""
        lengths, words, weights = [], [], []
        number = vocabulary.number
        for vector in vectors:
            lengths.append(len(vector))
            words.extend(map(number, vector))
            weights.extend(vector.values())
        start = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=start[1:])
        return cls(start, np.array(words, np.int32), np.array(weights, np.float64), vocabulary.digits())


class Vocabulary:
    """Words numbered in the order they are first seen."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.words: list[str] = []

    def number(self, word: str) -> int:
        if (found := self.ids.get(word)) is None:
            found = self.ids[word] = len(self.words)
            self.words.append(word)
        return found

    def __len__(self) -> int:
        return len(self.words)

    def digits(self) -> np.ndarray:
        """Per word, whether it holds a digit (so it counts in the numbers' agreement)."""
        return np.fromiter((holds_digit(w) for w in self.words), bool, len(self.words))


@dataclass
class CloseTable:
    """Close words as a CSR matrix over the vocabulary: word ``w``'s close
    words are ``other[start[w]:start[w + 1]]`` (sorted), their Jaro-Winkler
    similarities ``score`` (float64 of the float32 rapidfuzz gives)."""

    start: np.ndarray  # int64, vocabulary + 1
    other: np.ndarray  # int32
    score: np.ndarray  # float64

    @classmethod
    def of(cls, vocabulary: Sequence[str], used: np.ndarray | None = None) -> CloseTable:
        """The close words among the ``used`` words of ``vocabulary`` (by
        number; all of them by default), by :func:`close_pairs`."""
        ids = np.arange(len(vocabulary), dtype=np.int64) if used is None else np.asarray(used, np.int64)
        row, column, score = close_pairs([vocabulary[i] for i in ids.tolist()])
        return cls.from_pairs(len(vocabulary), ids[row], ids[column], score)

    @classmethod
    def needed(cls, vocabulary: Sequence[str], rows: Rows, left: np.ndarray, right: np.ndarray,
               row_of: np.ndarray | None = None, *, whole: bool | None = None, compiled: bool = True) -> CloseTable:
        """The close words :func:`score_pairs` needs for the pairs (``left``,
        ``right``) of ``rows``: of the pairs of words missing from each
        other's record, or of the whole vocabulary the rows use (by
        :meth:`of`) when that makes fewer pairs of words to compare.

        Costs a Jaro-Winkler comparison of each distinct pair of missing
        words (at a million short records: 25 million pairs of missing
        words a span of 262,144 candidates at a time, 9.3 million of them
        distinct, 0.5 us each on two threads) and 16 bytes each while they
        are gathered; a
        vocabulary of V words costs V^2 / 2 comparisons instead, which
        documents of hundreds of words each choose. ``whole`` forces one
        way (``True``: the vocabulary's); ``compiled=False`` runs the plain
        Python twin (for tests).
        """
        used = distinct(rows.words)
        missing = _kernel(_missing_pairs, compiled)
        row_of = _rows_of(rows, row_of)
        left, right = np.asarray(left, np.int64), np.asarray(right, np.int64)
        spans = [(first, min(first + MISSING_SPAN, len(left))) for first in range(0, len(left), MISSING_SPAN)]
        if whole is None:
            needed = sum(missing(rows.start, rows.words, row_of, left[a:b], right[a:b], len(vocabulary), False)[0]
                         for a, b in spans)
            whole = needed >= len(used) * (len(used) - 1) // 2
        if whole:
            return cls.of(vocabulary, used)
        codes = np.zeros(0, np.int64)
        for a, b in spans:
            # Merged a span at a time: the distinct pairs, not every repeat, are held.
            found = distinct(missing(rows.start, rows.words, row_of, left[a:b], right[a:b], len(vocabulary), True)[1])
            codes = distinct(np.concatenate([codes, found]))
        word, other = np.divmod(codes, len(vocabulary))
        scores = np.concatenate([np.zeros(0, np.float32), *(
            close_scores([vocabulary[i] for i in word[first:first + MISSING_SPAN].tolist()],
                         [vocabulary[i] for i in other[first:first + MISSING_SPAN].tolist()])
            for first in range(0, len(codes), MISSING_SPAN))])
        close = scores > 0
        word, other, scores = word[close], other[close], scores[close]
        return cls.from_pairs(len(vocabulary), np.concatenate([word, other]), np.concatenate([other, word]),
                              np.concatenate([scores, scores]))

    @classmethod
    def from_pairs(cls, vocabulary: int, word: np.ndarray, other: np.ndarray, score: np.ndarray) -> CloseTable:
        """From (word, other, score) triples, each ordered pair once."""
        order = np.lexsort((other, word))
        counts = np.bincount(word, minlength=vocabulary)
        start = np.zeros(vocabulary + 1, np.int64)
        np.cumsum(counts, out=start[1:])
        return cls(start, other[order].astype(np.int32), score[order].astype(np.float64))


# Candidate pairs whose missing words are gathered at once.
MISSING_SPAN = 1 << 18


@njit(cache=True, nogil=True)
def _missing_pairs(start, words, row_of, left, right, vocabulary, gather):  # pragma: no cover - compiled; twin tested
    """How many pairs of words, one missing from each record, the pairs
    (``left``, ``right``) of rows ``row_of[...]`` hold; with ``gather``,
    also each one's code ``min * vocabulary + max`` (repeats included)."""
    stamp = np.full(vocabulary, -1, np.int32)
    mark = np.full(vocabulary, -1, np.int32)
    total = 0
    for k in range(len(left)):
        a, b = row_of[left[k]], row_of[right[k]]
        for j in range(start[b], start[b + 1]):
            stamp[words[j]] = k
        missing_a = 0
        for i in range(start[a], start[a + 1]):
            mark[words[i]] = k
            if stamp[words[i]] != k:
                missing_a += 1
        missing_b = 0
        for j in range(start[b], start[b + 1]):
            if mark[words[j]] != k:
                missing_b += 1
        total += missing_a * missing_b
    codes = np.empty(total if gather else 0, np.int64)
    if gather:
        n = 0
        for k in range(len(left)):
            a, b = row_of[left[k]], row_of[right[k]]
            for j in range(start[b], start[b + 1]):
                stamp[words[j]] = len(left) + k
            for i in range(start[a], start[a + 1]):
                mark[words[i]] = len(left) + k
            for i in range(start[a], start[a + 1]):
                wa = words[i]
                if stamp[wa] == len(left) + k:
                    continue
                for j in range(start[b], start[b + 1]):
                    wb = words[j]
                    if mark[wb] != len(left) + k:
                        codes[n] = min(wa, wb) * vocabulary + max(wa, wb)
                        n += 1
    return total, codes


@njit(cache=True, nogil=True)
def _score_pairs(start, words, weights, digits, close_start, close_other, close_score, row_of, left, right,
                 similarities, levels):  # pragma: no cover - compiled; its plain twin is tested
    vocabulary = len(digits)
    # Tables the size of the vocabulary, in int32 to halve the cache they take
    # (pairs of a call and words of a record are far fewer than 2^31).
    stamp = np.full(vocabulary, -1, np.int32)  # the pair whose second record holds the word
    place = np.zeros(vocabulary, np.int32)  # where in that record
    mark = np.full(vocabulary, -1, np.int32)  # the pair whose first record holds the word
    slot = np.zeros(vocabulary, np.int32)  # where among the second record's missing words
    # Room for one record's missing words, made once (the longest row's length).
    longest = 0
    for r in range(len(start) - 1):
        longest = max(longest, start[r + 1] - start[r])
    only_b = np.empty(longest, np.int64)
    best_b = np.empty(longest, np.float64)
    touched = np.empty(longest, np.int64)  # when each was first given a score
    order = np.empty(longest, np.int64)
    hit = np.empty(longest, np.int64)  # one missing word's close words among the other's, in its order
    hit_score = np.empty(longest, np.float64)
    for k in range(len(left)):
        a, b = row_of[left[k]], row_of[right[k]]
        a0, a1, b0, b1 = start[a], start[a + 1], start[b], start[b + 1]
        for j in range(b0, b1):
            stamp[words[j]] = k
            place[words[j]] = j - b0
        for i in range(a0, a1):
            mark[words[i]] = k
        # Exact words, in the first record's order; the numbers' agreement on the way.
        exact = 0.0
        digits_a = 0
        shared = 0
        missing_a = 0
        for i in range(a0, a1):
            w = words[i]
            if digits[w]:
                digits_a += 1
            if stamp[w] == k:
                exact += weights[i] * weights[b0 + place[w]]
                if digits[w]:
                    shared += 1
            else:
                missing_a += 1
        digits_b = 0
        missing_b = 0
        for j in range(b0, b1):
            w = words[j]
            if digits[w]:
                digits_b += 1
            if mark[w] != k:
                missing_b += 1
        if digits_a == 0 or digits_b == 0:
            levels[k] = 0
        elif shared == 0:
            levels[k] = 1
        else:
            levels[k] = 4 - min(max(digits_a, digits_b) - shared, 2)
        # Soft words: each missing word of one record through the other's
        # closest missing word, both ways, summed as the dict version sums.
        soft_a = 0.0
        soft_b = 0.0
        if missing_a and missing_b:
            n = 0
            for j in range(b0, b1):
                if mark[words[j]] != k:
                    only_b[n] = j
                    slot[words[j]] = n
                    best_b[n] = 0.0
                    touched[n] = -1
                    n += 1
            touches = 0
            for i in range(a0, a1):
                w = words[i]
                if stamp[w] == k:
                    continue
                lo, hi = close_start[w], close_start[w + 1]
                if lo == hi:
                    continue
                # The other record's missing words close to w, in that record's
                # order (the order the dict version meets them): through w's
                # close words when they are fewer, else a search for each.
                hits = 0
                if hi - lo <= missing_b:
                    for x in range(lo, hi):
                        o = close_other[x]
                        if stamp[o] == k and mark[o] != k:
                            n = slot[o]
                            c = hits
                            while c > 0 and hit[c - 1] > n:
                                hit[c] = hit[c - 1]
                                hit_score[c] = hit_score[c - 1]
                                c -= 1
                            hit[c] = n
                            hit_score[c] = close_score[x]
                            hits += 1
                else:
                    for n in range(missing_b):
                        o = words[only_b[n]]
                        x, y = lo, hi
                        while x < y:
                            mid = (x + y) >> 1
                            if close_other[mid] < o:
                                x = mid + 1
                            else:
                                y = mid
                        if x < hi and close_other[x] == o:
                            hit[hits] = n
                            hit_score[hits] = close_score[x]
                            hits += 1
                best = 0.0  # as the dict version's max(best_a.get(word, 0.0), ...)
                found = hits > 0
                for h in range(hits):
                    n = hit[h]
                    s = hit_score[h]
                    via_b = weights[only_b[n]] * s
                    if via_b > best:
                        best = via_b
                    if touched[n] < 0:
                        touched[n] = touches
                        order[touches] = n
                        touches += 1
                    via_a = weights[i] * s
                    if via_a > best_b[n]:
                        best_b[n] = via_a
                if found:
                    soft_a += weights[i] * best
            for t in range(touches):
                n = order[t]
                soft_b += weights[only_b[n]] * best_b[n]
        total = exact + (soft_a + soft_b) / 2.0
        similarities[k] = total if total < 1.0 else 1.0


def score_pairs(rows: Rows, close: CloseTable, left: np.ndarray, right: np.ndarray,
                row_of: np.ndarray | None = None, compiled: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The soft cosine and the level of number agreement of the pairs
    (``left[k]``, ``right[k]``) of ``rows``' records.

    Args:
        rows: the records.
        close: the close words of their vocabulary.
        left, right: record numbers, one pair per position.
        row_of: each record number's row (by default the row of that number).
        compiled: ``False`` runs the plain Python twin (for tests).

    Returns:
        Similarities (float64) and levels (int8, an index into
        ``similarity.AGREEMENT``), in the pairs' order. Costs time in
        proportion to the pairs' words (about 0.3 us a pair of short
        records compiled) and, while it runs, three int64 tables the size
        of the vocabulary; it holds no lock, so threads run it side by side.
    """
    if len(left) >= 2**31 - 1:
        raise ValueError("score at most 2^31 - 2 pairs a call: its tables number them in int32")
    similarities = np.zeros(len(left), np.float64)
    levels = np.zeros(len(left), np.int8)
    _kernel(_score_pairs, compiled)(rows.start, rows.words, rows.weights, rows.digits, close.start, close.other,
                                    close.score, _rows_of(rows, row_of), np.ascontiguousarray(left, np.int64),
                                    np.ascontiguousarray(right, np.int64), similarities, levels)
    return similarities, levels


def _kernel(fn: Callable, compiled: bool) -> Callable:
    """``fn`` compiled, or its plain Python twin."""
    return fn if compiled and COMPILED else fn.py_func


def _rows_of(rows: Rows, row_of: np.ndarray | None) -> np.ndarray:
    return np.arange(len(rows), dtype=np.int64) if row_of is None else np.ascontiguousarray(row_of, np.int64)
