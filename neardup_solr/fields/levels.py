"""Levels of agreement as data: each level its label and its test.

A comparison turns one field of a pair into a **level**. Level 0 is
"missing on either side"; the others are a kind's :class:`Level` s in
order (``kinds.KINDS``), best first: "exact" (equal normal forms), then
each level whose test a pair passes, the first it passes taken, and last
"different" (no test: what is left). A level's test holds its measure and
threshold, and its label says them (``Jaro-Winkler >= 0.92``), so a label
and the rule it names cannot drift apart.

Tests read a :class:`~neardup_solr.fields.comparisons.Column` (each record's
normal form numbered, the distinct forms once) and the codes of the pairs
still to place. A measure (rapidfuzz's, compiled, run over many pairs at
once: ``process.cpdist``) is computed once per pair in a comparison, at the
loosest of its thresholds there, however many levels read it; what a test
derives from a column's distinct values (a date's parts, a phone's tail) is
derived once per column.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import JaroWinkler, Levenshtein

from .values import PHONE_TAIL, Day, name_groups, parse_number

MISSING = 0
EXACT = 1
# Pairs compared by one call of rapidfuzz (its threads split each call).
SPAN = 1 << 18
NO_DATE = -1
# A measure at a threshold passes it: its floats may round either way, and
# rapidfuzz's cutoff drops 0.7999999999999999 at 0.8 - 1e-9 (similarity.py's ROUNDING).
ROUNDING = 1e-6


class Pairs:
    """The pairs of one comparison still to place: the codes of their two
    values in a column (``a``, ``b``), and each measure's scores of them,
    computed for a pair when a test first asks (at the loosest threshold
    the comparison reads the measure at: ``cutoffs``)."""

    def __init__(self, column: Any, a: np.ndarray, b: np.ndarray, cutoffs: dict[str, float]):
        self.column, self.a, self.b, self.cutoffs = column, a, b, cutoffs
        self._scores: dict[str, np.ndarray] = {}
        self._scored: dict[str, np.ndarray] = {}

    def scores(self, measure: Measure, at: np.ndarray) -> np.ndarray:
        """``measure`` of the pairs at positions ``at``."""
        if measure.name not in self._scores:
            self._scores[measure.name] = np.zeros(len(self.a), np.float64)
            self._scored[measure.name] = np.zeros(len(self.a), bool)
        scores, scored = self._scores[measure.name], self._scored[measure.name]
        new = at[~scored[at]]
        if len(new):
            scores[new] = measure.score(self.column, self.a[new], self.b[new], self.cutoffs[measure.name])
            scored[new] = True
        return scores[at]


@dataclass(frozen=True)
class Measure:
    """A measure of two values (``higher_better``, or a distance), read at
    thresholds; ``label`` says one as a level's label."""

    name: str
    score: Callable[[Any, np.ndarray, np.ndarray, float], np.ndarray]
    label: Callable[[float], str]
    higher_better: bool = True
    rounding: float = 0.0

    def passes(self, scores: np.ndarray, threshold: float) -> np.ndarray:
        return scores >= threshold - self.rounding if self.higher_better else scores <= threshold + self.rounding

    def loosest(self, thresholds: Sequence[float]) -> float:
        return min(thresholds) if self.higher_better else max(thresholds)


def _strings(column: Any, codes: np.ndarray) -> np.ndarray:
    """The values of ``codes``, an array of str objects (rapidfuzz reads it as a list, gathered in C)."""
    return column.derived("objects", lambda values: np.array(values, object))[codes]


def _compiled(scorer: Callable) -> Callable[[Any, np.ndarray, np.ndarray, float], np.ndarray]:
    """A rapidfuzz similarity of each pair of values, a span at a time, 0 below the cutoff."""
    def score(column: Any, a: np.ndarray, b: np.ndarray, cutoff: float) -> np.ndarray:
        out = np.zeros(len(a), np.float64)
        for start in range(0, len(a), SPAN):
            end = min(start + SPAN, len(a))
            out[start:end] = process.cpdist(_strings(column, a[start:end]), _strings(column, b[start:end]),
                                            scorer=scorer, score_cutoff=cutoff - ROUNDING, workers=-1,
                                            dtype=np.float64)
        return out
    return score


def _edits(column: Any, a: np.ndarray, b: np.ndarray, cutoff: float) -> np.ndarray:
    """Levenshtein distances, ``cutoff + 1`` past the cutoff."""
    out = np.full(len(a), int(cutoff) + 1, np.int64)
    for start in range(0, len(a), SPAN):
        end = min(start + SPAN, len(a))
        out[start:end] = process.cpdist(_strings(column, a[start:end]), _strings(column, b[start:end]),
                                        scorer=Levenshtein.distance, score_cutoff=int(cutoff), workers=-1)
    return out.astype(np.float64)


def _relative(column: Any, a: np.ndarray, b: np.ndarray, cutoff: float) -> np.ndarray:
    """``|x - y| / max(|x|, |y|)`` of two numbers; infinite where either is none."""
    number = column.derived("number", lambda values: np.array([_as_float(v) for v in values], np.float64))
    x, y = number[a], number[b]
    with np.errstate(invalid="ignore", divide="ignore"):
        relative = np.abs(x - y) / np.maximum(np.abs(x), np.abs(y))
    return np.where(np.isnan(relative), np.inf, relative)


def _as_float(value: str) -> float:
    found = parse_number(value)
    return np.nan if found is None else found


_EDIT_WORDS = {1: "one edit", 2: "two edits"}
JARO_WINKLER = Measure("Jaro-Winkler", _compiled(JaroWinkler.similarity), lambda t: f"Jaro-Winkler >= {t:g}",
                       rounding=ROUNDING)
TOKEN_SET = Measure("token set ratio", _compiled(fuzz.token_set_ratio), lambda t: f"token set ratio >= {t:g}",
                    rounding=ROUNDING)
EDITS = Measure("edits", _edits, lambda t: _EDIT_WORDS[int(t)], higher_better=False)
RELATIVE = Measure("relative difference", _relative, lambda t: f"within {t * 100:g}%", higher_better=False)


@dataclass(frozen=True)
class Level:
    """A level of agreement: its ``label``, and the ``test`` a pair passes
    to be in it (``None``: "exact", equal normal forms, and the last,
    "different"). A test takes the pairs still to place and the positions
    among them to test, and says which pass."""

    label: str
    test: Callable[[Pairs, np.ndarray], np.ndarray] | None = None


@dataclass(frozen=True)
class Threshold:
    """Passing ``measure`` at ``at``."""

    measure: Measure
    at: float

    def __call__(self, pairs: Pairs, at: np.ndarray) -> np.ndarray:
        return self.measure.passes(pairs.scores(self.measure, at), self.at)


def threshold(measure: Measure, at: float) -> Level:
    """The level of pairs passing ``measure`` at ``at``, labelled by it."""
    return Level(measure.label(at), Threshold(measure, at))


EXACT_LEVEL = Level("exact")
DIFFERENT = Level("different")


def cutoffs(levels: Sequence[Level]) -> dict[str, float]:
    """Each measure the ``levels`` read, at the loosest threshold they read it at."""
    found: dict[str, list[float]] = {}
    measures = {}
    for level in levels:
        if isinstance(level.test, Threshold):
            found.setdefault(level.test.measure.name, []).append(level.test.at)
            measures[level.test.measure.name] = level.test.measure
    return {name: measures[name].loosest(at) for name, at in found.items()}


def place(levels: Sequence[Level], column: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The level number (1 is ``levels[0]``) of each pair of values (codes
    ``a``, ``b``, present and of different normal forms): the first whose
    test it passes, else the last."""
    out = np.full(len(a), len(levels), np.int8)
    pairs = Pairs(column, a, b, cutoffs(levels))
    open_ = np.arange(len(a))
    for number, level in enumerate(levels, start=1):
        if level.test is None or not len(open_):
            continue
        passing = np.asarray(level.test(pairs, open_), bool)
        out[open_[passing]] = number
        open_ = open_[~passing]
    return out


def _numbered(values: Sequence[str]) -> np.ndarray:
    numbered: dict[str, int] = {}
    return np.array([numbered.setdefault(v, len(numbered)) for v in values], np.int32)


def same_tail(pairs: Pairs, at: np.ndarray) -> np.ndarray:
    """The same last :data:`~neardup_solr.fields.values.PHONE_TAIL` digits."""
    tail = pairs.column.derived("tail", lambda values: _numbered([v[-PHONE_TAIL:] for v in values]))
    return tail[pairs.a[at]] == tail[pairs.b[at]]


def same_mailbox(pairs: Pairs, at: np.ndarray) -> np.ndarray:
    """The same mailbox (an email's part before the @)."""
    mailbox = pairs.column.derived("mailbox", lambda values: _numbered([v.split("@", 1)[0] for v in values]))
    return mailbox[pairs.a[at]] == mailbox[pairs.b[at]]


def _starts(value: str) -> int:
    """The first characters of a value's words, as bits (of their code modulo 63)."""
    bits = 0
    for word in value.split():
        bits |= 1 << (ord(word[0]) % 63)
    return bits


def _part_of(x: str, y: str) -> bool:
    """Whether one name is an initial of the other, or its words a part of the other's."""
    short, long = (x, y) if len(x) <= len(y) else (y, x)
    if len(short) == 1:
        return long.startswith(short)
    words, others = short.split(), long.split()
    return all(any(o == w or (len(w) == 1 and o.startswith(w)) for o in others) for w in words)


def part_of(pairs: Pairs, at: np.ndarray) -> np.ndarray:
    """One name an initial of the other, or its words a part of the other's."""
    starts = pairs.column.derived("starts", lambda values: np.array([_starts(v) for v in values], np.int64))
    a, b = pairs.a[at], pairs.b[at]
    x, y = starts[a], starts[b]
    # A part of the other has no word starting with a letter none of the other's starts with.
    maybe = np.flatnonzero(((x & ~y) == 0) | ((y & ~x) == 0))
    out = np.zeros(len(at), bool)
    values = pairs.column.values
    out[maybe] = [_part_of(values[p], values[q]) for p, q in zip(a[maybe].tolist(), b[maybe].tolist())]
    return out


def nickname(pairs: Pairs, at: np.ndarray) -> np.ndarray:
    """Two single words that are one given name as people write it: a
    nickname or diminutive of the other, or both of one name
    (``values.name_groups``: ``bill`` and ``william``)."""
    groups = pairs.column.derived("nicknames", lambda values: np.array(
        [name_groups(v) if " " not in v else frozenset() for v in values] + [frozenset()], object)[:-1])
    named = pairs.column.derived("nicknamed", lambda _: np.array([bool(g) for g in groups], bool))
    a, b = pairs.a[at], pairs.b[at]
    known = named[a] & named[b]
    out = np.zeros(len(at), bool)
    maybe = np.flatnonzero(known)
    out[maybe] = [bool(groups[x] & groups[y]) for x, y in zip(a[maybe].tolist(), b[maybe].tolist())]
    return out


def _time_code(day: Day | None) -> int:
    if day is None or not day.time:
        return -1
    hours, minutes, seconds = (int(part) for part in day.time.split(":"))
    return hours * 3600 + minutes * 60 + seconds


def _date_parts(values: Sequence[str]) -> np.ndarray:
    """Each normal form's year, month, day, whether day and month could be
    either way round, and its time of day in seconds (rows; ``NO_DATE``
    where it is no date, -1 where it has no time)."""
    days = [Day.of_normal(v) for v in values]
    return np.array([[d.year, d.month, d.day, int(d.either_way), _time_code(d)] if d else
                     [NO_DATE, NO_DATE, NO_DATE, 0, -1] for d in days], np.int64).reshape(len(values), 5)


@dataclass(frozen=True)
class _Dates:
    """How two dates agree, pair by pair: both parsed, the same year, the
    same month and day (``straight``) or crossed, either of them written
    either way round, their times of day differing, and how many of year,
    month and day agree (the better of straight and crossed)."""

    parsed: np.ndarray
    year: np.ndarray
    straight: np.ndarray
    crossed: np.ndarray
    either: np.ndarray
    times_differ: np.ndarray
    agree: np.ndarray

    @classmethod
    def of(cls, pairs: Pairs, at: np.ndarray) -> _Dates:
        parts = pairs.column.derived("date", _date_parts)
        x, y = parts[pairs.a[at]], parts[pairs.b[at]]
        ya, ma, da, ea, ta = x.T
        yb, mb, db, eb, tb = y.T
        agree = (ya == yb).astype(np.int8) + np.maximum((ma == mb).astype(np.int8) + (da == db).astype(np.int8),
                                                         (ma == db).astype(np.int8) + (da == mb).astype(np.int8))
        return cls((ya != NO_DATE) & (yb != NO_DATE), ya == yb, (ma == mb) & (da == db), (ma == db) & (da == mb),
                   (ea | eb) == 1, (ta >= 0) & (tb >= 0) & (ta != tb), agree)


def same_date(pairs: Pairs, at: np.ndarray) -> np.ndarray:
    """One day, written apart: one with a time of day and one without, or
    written either way round (03/04/2024 against 2024-04-03)."""
    d = _Dates.of(pairs, at)
    return d.parsed & d.year & ~d.times_differ & (d.straight | (d.crossed & d.either))


def swapped(pairs: Pairs, at: np.ndarray) -> np.ndarray:
    """Day and month swapped, neither written either way round."""
    d = _Dates.of(pairs, at)
    return d.parsed & d.year & d.crossed & ~d.either & ~d.times_differ


def one_differs(pairs: Pairs, at: np.ndarray) -> np.ndarray:
    """One of year, month and day differs (at one time of day); of what
    is no date, one edit."""
    d = _Dates.of(pairs, at)
    out = d.parsed & (d.agree == 2) & ~d.times_differ
    unparsed = np.flatnonzero(~d.parsed)
    if len(unparsed):
        out[unparsed] = _edits(pairs.column, pairs.a[at[unparsed]], pairs.b[at[unparsed]], 2) <= 1
    return out


def same_year(pairs: Pairs, at: np.ndarray) -> np.ndarray:
    """The same year: two days of it; or one day at two times of day where
    month and day also differ, or also read crossed (01-01 at 10:00 and at
    11:00). One day at two times with month and day apart (2024-01-05 at
    10:00 and at 11:00) falls through to "different"."""
    d = _Dates.of(pairs, at)
    return d.parsed & d.year & ((d.agree < 2) | (d.times_differ & ((d.agree == 2) | (d.crossed & ~d.either))))


__all__ = ["DIFFERENT", "EDITS", "EXACT", "EXACT_LEVEL", "JARO_WINKLER", "Level", "MISSING", "Measure", "RELATIVE",
           "ROUNDING", "TOKEN_SET", "nickname", "one_differs", "part_of", "place", "same_date", "same_mailbox", "same_tail",
           "same_year", "swapped", "threshold"]
