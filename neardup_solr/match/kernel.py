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
:func:`neardup_solr.match.similarity.similarity` and
:func:`neardup_solr.match.similarity.number_agreement` return for the same records
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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..compiled import chosen, njit
from ..parallel import bounded_map, cores
from .similarity import CLOSE, ROUNDING, close_pairs, holds_digit



@dataclass
class Rows:
    """Records' weighted words as a CSR matrix (see the module docstring)."""

    start: np.ndarray  # int64, records + 1
    words: np.ndarray  # int32, vocabulary numbers
    weights: np.ndarray  # float64, the unit vector's weights
    digits: np.ndarray  # bool, per vocabulary word: it holds a digit

    def __len__(self) -> int:
        return len(self.start) - 1

    @classmethod
    def of(cls, vectors: Iterable[Mapping[str, float]], vocabulary: Vocabulary) -> Rows:
        """Rows of weight vectors (dicts, as :meth:`Weights.vector` makes
        them), their words numbered by ``vocabulary`` (which grows)."""
        lengths, words, weights = [], [], []
        number = vocabulary.ids.__getitem__
        for vector in vectors:
            lengths.append(len(vector))
            words.extend(map(number, vector))
            weights.extend(vector.values())
        start = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=start[1:])
        return cls(start, np.array(words, np.int32), np.array(weights, np.float64), vocabulary.digits())


class _Numbers(dict):
    """Each word's number, a new word given the next (and written down in ``words``)."""

    def __init__(self, words: list[str]):
        super().__init__()
        self.words = words

    def __missing__(self, word: str) -> int:
        found = self[word] = len(self.words)
        self.words.append(word)
        return found


class Vocabulary:
    """Words numbered in the order they are first seen."""

    def __init__(self) -> None:
        self.words: list[str] = []
        self.ids: dict[str, int] = _Numbers(self.words)

    def numbers(self, words: list[str]) -> np.ndarray:
        """Each of ``words``' number (int32), a known word's looked up
        without a Python step (a million records hold ten million words)."""
        return np.fromiter(map(self.ids.__getitem__, words), np.int32, len(words))

    def __len__(self) -> int:
        return len(self.words)

    def digits(self) -> np.ndarray:
        """Per word, whether it holds a digit (so it counts in the numbers' agreement)."""
        return np.fromiter((holds_digit(w) for w in self.words), bool, len(self.words))


@dataclass
class CloseTable:
    """Close words as a CSR matrix over the vocabulary: word ``w``'s close
    words are ``other[start[w]:start[w + 1]]`` (sorted), their Jaro-Winkler
    similarities ``score`` (float64 of the float32 rapidfuzz gives).

    Or, with ``chars`` (the vocabulary's code points, word ``w``'s at
    ``chars[spelling[w]:spelling[w + 1]]``), no table: each pair of
    missing words is compared when a candidate meets it (:meth:`needed`).
    """

    start: np.ndarray  # int64, vocabulary + 1
    other: np.ndarray  # int32
    score: np.ndarray  # float64
    chars: np.ndarray | None = None  # int32
    spelling: np.ndarray | None = None  # int64, vocabulary + 1
    letters: np.ndarray | None = None  # uint64 per word: bit c % 64 set for each code point c it holds

    @classmethod
    def spelled(cls, vocabulary: Sequence[str]) -> CloseTable:
        """No table: the words' spellings, to compare pairs as they come."""
        lengths = np.fromiter(map(len, vocabulary), np.int64, len(vocabulary))
        spelling = np.zeros(len(vocabulary) + 1, np.int64)
        np.cumsum(lengths, out=spelling[1:])
        chars = np.frombuffer("".join(vocabulary).encode("utf-32-le", "surrogatepass"), np.uint32).astype(np.int32)
        bits = np.left_shift(np.uint64(1), (chars % 64).astype(np.uint64))
        letters = np.zeros(len(vocabulary), np.uint64)
        owner = np.repeat(np.arange(len(vocabulary)), lengths)
        np.bitwise_or.at(letters, owner, bits)
        empty = np.zeros(len(vocabulary) + 1, np.int64)
        return cls(empty, np.zeros(0, np.int32), np.zeros(0), chars, spelling, letters)

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
        ``right``) of ``rows``: the pairs of words missing from each other's
        record compared as they come (:meth:`spelled`), or a table of the
        whole vocabulary the rows use (:meth:`of`) when that makes fewer
        pairs of words to compare.

        Costs one pass over the pairs, on every core, to count their pairs
        of missing words (at a million short records 115 million, 40 a
        candidate, of which 9.3 million distinct: compared as they come,
        about 0.1 us each);
        the table of a vocabulary of V words costs V^2 / 2 comparisons
        (rapidfuzz, on every core) and is what documents of hundreds of
        words each choose. ``whole`` forces one way (``True``: the
        vocabulary's); ``compiled=False`` runs the plain Python twin (for
        tests).
        """
        # The words the rows use, by a mark a word of the vocabulary: sorting a copy of every row's words
        # held them twice more at the report's busiest moment.
        marked = np.zeros(len(vocabulary), np.bool_)
        marked[rows.words] = True
        used = np.flatnonzero(marked)
        del marked
        if whole is None:
            missing = chosen(_missing_pairs, compiled)
            row_of = _rows_of(rows, row_of)
            left, right = np.asarray(left, np.int64), np.asarray(right, np.int64)
            # On every core's thread (the compiled count holds no lock): a pass over every candidate.
            needed = sum(bounded_map(lambda a: missing(rows.start, rows.words, row_of, left[a:a + MISSING_SPAN],
                                                       right[a:a + MISSING_SPAN], len(vocabulary)),
                                     range(0, len(left), MISSING_SPAN), cores()))
            whole = needed >= len(used) * (len(used) - 1) // 2
        return cls.of(vocabulary, used) if whole else cls.spelled(vocabulary)

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
def _missing_pairs(start, words, row_of, left, right, vocabulary):  # pragma: no cover - compiled; twin tested
    """How many pairs of words, one missing from each record, the pairs
    (``left``, ``right``) of rows ``row_of[...]`` hold."""
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
    return total


# Jaro-Winkler as rapidfuzz computes it (its prefix weight and 4-letter prefix).
_PREFIX_WEIGHT = 0.1
_MAX_PREFIX = 4


@njit(cache=True, nogil=True)
def _jaro_winkler(chars, p0, p1, t0, t1, letters_p, letters_t, flag_p, flag_t, cutoff):  # pragma: no cover
    """The Jaro-Winkler similarity of the code points ``chars[p0:p1]`` and
    ``chars[t0:t1]`` as rapidfuzz's ``JaroWinkler.similarity`` gives it,
    rounded to float32 as its ``cdist`` gives it, or 0 below ``cutoff``.
    ``letters_p`` and ``letters_t`` are the words' letter bits
    (:meth:`CloseTable.spelled`); ``flag_p`` and ``flag_t`` are scratch, as
    long as the longest word. (Compiled; its plain twin is tested.)"""
    p_len, t_len = p1 - p0, t1 - t0
    if p_len == 0 and t_len == 0:
        return 1.0
    if p_len == 0 or t_len == 0:
        return 0.0
    shorter = min(p_len, t_len)
    prefix = 0
    while prefix < min(shorter, _MAX_PREFIX) and chars[p0 + prefix] == chars[t0 + prefix]:
        prefix += 1
    # The most the letters allow (no transposition, every letter of either
    # word that the other may hold common), then the prefix's boost: below
    # the cutoff, done. Most pairs of missing words end here.
    in_t = 0
    for j in range(p0, p1):
        if (letters_t >> np.uint64(chars[j] % 64)) & np.uint64(1):
            in_t += 1
    in_p = 0
    for i in range(t0, t1):
        if (letters_p >> np.uint64(chars[i] % 64)) & np.uint64(1):
            in_p += 1
    shorter = min(shorter, in_t, in_p)
    if shorter == 0:
        return 0.0
    most = (shorter / p_len + shorter / t_len + 1.0) / 3.0
    if most > 0.7:
        most += prefix * _PREFIX_WEIGHT * (1.0 - most)
    if most < cutoff - 1e-9:
        return 0.0
    if p_len == 1 and t_len == 1:
        sim = 1.0 if chars[p0] == chars[t0] else 0.0
    else:
        bound = max(p_len, t_len) // 2 - 1
        for j in range(p_len):
            flag_p[j] = False
        for i in range(t_len):
            flag_t[i] = False
        common = 0
        for i in range(t_len):
            lo = max(0, i - bound)
            hi = min(p_len, i + bound + 1)
            c = chars[t0 + i]
            for j in range(lo, hi):
                if not flag_p[j] and chars[p0 + j] == c:
                    flag_p[j] = True
                    flag_t[i] = True
                    common += 1
                    break
        if common == 0:
            return 0.0
        transpositions = 0
        j = 0
        for i in range(t_len):
            if flag_t[i]:
                while not flag_p[j]:
                    j += 1
                if chars[t0 + i] != chars[p0 + j]:
                    transpositions += 1
                j += 1
        transpositions //= 2
        sim = 0.0
        sim += common / p_len
        sim += common / t_len
        sim += (common - transpositions) / common
        sim = sim / 3.0
    if sim > 0.7:
        sim += prefix * _PREFIX_WEIGHT * (1.0 - sim)
    if sim < cutoff:
        return 0.0
    return float(np.float32(sim))


@njit(cache=True, nogil=True)
def _score_pairs(start, words, weights, digits, close_start, close_other, close_score, chars, spelling, letters,
                 cutoff, row_of, left, right, similarities, levels):  # pragma: no cover - compiled; its plain twin is tested
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
    spelled = len(spelling) > 0
    longest_word = 0
    for w in range(len(spelling) - 1):
        longest_word = max(longest_word, spelling[w + 1] - spelling[w])
    flag_p = np.zeros(longest_word, np.bool_)
    flag_t = np.zeros(longest_word, np.bool_)
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
                if lo == hi and not spelled:
                    continue
                # The other record's missing words close to w, in that record's
                # order (the order the dict version meets them): through w's
                # close words when they are fewer, else a search for each.
                hits = 0
                if spelled:
                    for n in range(missing_b):
                        o = words[only_b[n]]
                        sim = _jaro_winkler(chars, spelling[w], spelling[w + 1], spelling[o], spelling[o + 1],
                                            letters[w], letters[o], flag_p, flag_t, cutoff)
                        if sim > 0.0:
                            hit[hits] = n
                            hit_score[hits] = sim
                            hits += 1
                elif hi - lo <= missing_b:
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
    chars = np.zeros(0, np.int32) if close.chars is None else close.chars
    spelling = np.zeros(0, np.int64) if close.spelling is None else close.spelling
    letters = np.zeros(0, np.uint64) if close.letters is None else close.letters
    chosen(_score_pairs, compiled)(rows.start, rows.words, rows.weights, rows.digits, close.start, close.other,
                                    close.score, chars, spelling, letters, CLOSE - ROUNDING, _rows_of(rows, row_of),
                                    np.ascontiguousarray(left, np.int64), np.ascontiguousarray(right, np.int64),
                                    similarities, levels)
    return similarities, levels


def _rows_of(rows: Rows, row_of: np.ndarray | None) -> np.ndarray:
    return np.arange(len(rows), dtype=np.int64) if row_of is None else np.ascontiguousarray(row_of, np.int64)
