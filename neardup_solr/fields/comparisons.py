"""Comparing one field of two records: a level of agreement, by the field's kind.

A comparison turns a field of a pair into a **level**, from "the same value"
down to "different", by a measure that suits what the field holds
(:data:`COMPARISONS`, one row per kind of ``fields.KINDS``). Level 0 is
"missing on either side", which says nothing either way; the others are
ordered, best first, and each pair falls in the first whose test it passes:

==========  ==================================================================
name        exact; Jaro-Winkler >= 0.92; >= 0.8; an initial or a part of the
            other; different
text        exact; token set ratio >= 90; >= 60; different
code        exact; one edit; two edits; different
email       exact; the same mailbox at another domain; Jaro-Winkler >= 0.9;
            different
phone       exact; the same last 7 digits; two edits; different
date        exact; day and month swapped; one of year, month, day differs;
            the same year; different
number      exact; within 0.5%; within 10%; different
category    exact; different
==========  ==================================================================

"Exact" means equal after :func:`~neardup_solr.fields.values.normal`. The measures
are rapidfuzz's, run compiled over all pairs of a field at once
(``process.cpdist``); dates and numbers are compared as arrays.

Values are held per record as a :class:`Column` (each record's normal form
numbered, plus what its kind's levels read), so a field of a million
records costs its distinct values once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import JaroWinkler, Levenshtein

from .values import Day, clean, normal, parse_number

MISSING = 0
EXACT = 1
# Each kind's levels after "missing", best first; the last is "different".
COMPARISONS: dict[str, tuple[str, ...]] = {
    "name": ("exact", "Jaro-Winkler >= 0.92", "Jaro-Winkler >= 0.8", "an initial or a part of the other",
             "different"),
    "text": ("exact", "token set ratio >= 90", "token set ratio >= 60", "different"),
    "code": ("exact", "one edit", "two edits", "different"),
    "email": ("exact", "same mailbox, other domain", "Jaro-Winkler >= 0.9", "different"),
    "phone": ("exact", "same last 7 digits", "two edits", "different"),
    "date": ("exact", "day and month swapped", "one of year, month, day differs", "same year", "different"),
    "number": ("exact", "within 0.5%", "within 10%", "different"),
    "category": ("exact", "different"),
}
# Pairs compared by one call of rapidfuzz (its threads split each call).
SPAN = 1 << 18
# The last digits of a phone number that say whose it is, whatever the
# country or area code written before them.
PHONE_TAIL = 7
NO_DATE = -1
# A measure at a threshold passes it: its floats may round either way, and
# rapidfuzz's cutoff drops 0.7999999999999999 at 0.8 - 1e-9 (similarity.py's ROUNDING).
ROUNDING = 1e-6


def level_names(kind: str) -> tuple[str, ...]:
    """All levels of a kind's comparison, "missing" first; of a joint kind
    (``"name+category"``, :func:`joint`), each combination of its parts'
    levels, "missing" (all missing) first and all exact second."""
    if JOINT in kind:
        parts = kind.split(JOINT)
        return tuple("missing" if not any(t) else " / ".join(level_names(p)[x] for p, x in zip(parts, t))
                     for t in _combinations(tuple(len(level_names(p)) for p in parts)))
    return ("missing", *COMPARISONS[kind])


# Between the kinds of fields compared together (``joint``).
JOINT = "+"


@lru_cache(maxsize=None)
def _combinations(sizes: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Every combination of levels of parts with ``sizes`` levels each: all
    missing first, all exact second (so a joint comparison's levels 0 and
    1 mean what a single one's do), then the rest in order."""
    every = list(product(*(range(n) for n in sizes)))
    first = [(MISSING,) * len(sizes), (EXACT,) * len(sizes)]
    return tuple(first + [t for t in every if t not in first])


def joint_kind(kinds: Sequence[str]) -> str:
    """The kind of fields of ``kinds`` compared together."""
    return JOINT.join(kinds)


def joint(levels: np.ndarray, units: Sequence[Sequence[int]], kinds: Sequence[str]) -> np.ndarray:
    """Pairs x units levels from pairs x fields ``levels``: a unit of one
    field keeps its level; fields compared together (dependent ones: a city
    and its state) get the level of their combination (:func:`level_names`
    of their :func:`joint_kind`)."""
    out = np.empty((len(levels), len(units)), np.int16)
    for at, unit in enumerate(units):
        if len(unit) == 1:
            out[:, at] = levels[:, unit[0]]
            continue
        sizes = tuple(len(level_names(kinds[f])) for f in unit)
        table = np.zeros(int(np.prod(sizes)), np.int16)
        for number, combination in enumerate(_combinations(sizes)):
            table[np.ravel_multi_index(combination, sizes)] = number
        out[:, at] = table[np.ravel_multi_index(tuple(levels[:, f].astype(np.int64) for f in unit), sizes)]
    return out


@dataclass
class Column:
    """One field of many records, ready to compare: each record's normal
    form as a number (``codes``, -1 where the record lacks the field), the
    distinct normal forms (``values``), and what the kind's levels read of
    them (dates as year, month, day; numbers as floats; a phone's tail)."""

    kind: str
    codes: np.ndarray
    values: list[str]
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.codes)

    @classmethod
    def of(cls, kind: str, raw: Sequence[str | None]) -> Column:
        """The column of ``raw`` values (``None`` or "" where missing).
        Costs a cleaning of each distinct raw value."""
        numbers: dict[str, int] = {}
        values: list[str] = []
        seen: dict[str | None, int] = {}
        codes = np.empty(len(raw), np.int32)
        for at, value in enumerate(raw):
            code = seen.get(value)
            if code is None:
                form = normal(kind, value) if value else ""
                if form:
                    code = numbers.setdefault(form, len(values))
                    if code == len(values):
                        values.append(form)
                else:
                    code = -1
                seen[value] = code
            codes[at] = code
        return cls(kind, codes, values, _extra(kind, values))

    def frequencies(self) -> np.ndarray:
        """Each distinct value's share of the records that have the field."""
        counts = np.bincount(self.codes[self.codes >= 0], minlength=len(self.values)).astype(np.float64)
        return counts / max(counts.sum(), 1.0)


def _extra(kind: str, values: list[str]) -> dict[str, np.ndarray]:
    if kind == "date":
        days = [Day.of_normal(v) for v in values]
        return {
            "year": np.array([d.year if d else NO_DATE for d in days], np.int32),
            "month": np.array([d.month if d else NO_DATE for d in days], np.int32),
            "day": np.array([d.day if d else NO_DATE for d in days], np.int32),
            "either": np.array([bool(d and d.either_way) for d in days], bool),
            "time": np.array([_time_code(d) for d in days], np.int32),
        }
    if kind == "number":
        return {"number": np.array([_as_float(v) for v in values], np.float64)}
    if kind == "phone":
        tails = [v[-PHONE_TAIL:] for v in values]
        numbered: dict[str, int] = {}
        return {"tail": np.array([numbered.setdefault(t, len(numbered)) for t in tails], np.int32)}
    if kind == "name":
        return {"starts": np.array([_starts(v) for v in values], np.int64)}
    if kind == "email":
        mailboxes = [v.split("@", 1)[0] for v in values]
        numbered = {}
        return {"mailbox": np.array([numbered.setdefault(m, len(numbered)) for m in mailboxes], np.int32)}
    return {}


def _as_float(value: str) -> float:
    found = parse_number(value)
    return np.nan if found is None else found


def _time_code(day: Day | None) -> int:
    if day is None or not day.time:
        return -1
    hours, minutes, seconds = (int(part) for part in day.time.split(":"))
    return hours * 3600 + minutes * 60 + seconds


def compare(column: Column, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The level (int8, :func:`level_names` order) of each pair
    ``(left[i], right[i])`` of records of ``column``.

    Costs a comparison of the codes for every pair, and a compiled
    measure (rapidfuzz, every core) for the pairs neither missing nor
    exact.
    """
    a, b = column.codes[left], column.codes[right]
    levels = np.full(len(a), len(COMPARISONS[column.kind]), np.int8)  # "different"
    present = (a >= 0) & (b >= 0)
    levels[~present] = MISSING
    same = present & (a == b)
    levels[same] = EXACT
    rest = np.flatnonzero(present & ~same)
    if len(rest):
        levels[rest] = _KIND_LEVELS[column.kind](column, a[rest], b[rest])
    return levels


def _strings(column: Column, codes: np.ndarray) -> list[str]:
    values = column.values
    return [values[c] for c in codes.tolist()]


def _scores(column: Column, a: np.ndarray, b: np.ndarray, scorer, cutoff: float) -> np.ndarray:
    """``scorer`` of each pair of distinct values, compiled, a span at a time."""
    out = np.zeros(len(a), np.float64)
    for start in range(0, len(a), SPAN):
        end = min(start + SPAN, len(a))
        out[start:end] = process.cpdist(_strings(column, a[start:end]), _strings(column, b[start:end]),
                                        scorer=scorer, score_cutoff=cutoff, workers=-1, dtype=np.float64)
    return out


def _by_thresholds(scores: np.ndarray, thresholds: Sequence[float], first: int, higher_better: bool = True) -> np.ndarray:
    """Levels ``first``, ``first + 1``, ... for scores passing each threshold in turn; the next for none."""
    levels = np.full(len(scores), first + len(thresholds), np.int8)
    for offset, threshold in reversed(list(enumerate(thresholds))):
        passing = scores >= threshold if higher_better else scores <= threshold
        levels[passing] = first + offset
    return levels


def _name(column: Column, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    scores = _scores(column, a, b, JaroWinkler.similarity, 0.8 - ROUNDING)
    levels = _by_thresholds(scores, (0.92 - ROUNDING, 0.8 - ROUNDING), 2)
    # A part of the other has no word starting with a letter none of the other's starts with.
    starts = column.extra["starts"]
    x, y = starts[a], starts[b]
    unsure = np.flatnonzero((levels == 4) & (((x & ~y) == 0) | ((y & ~x) == 0)))
    levels[levels == 4] = 5
    if len(unsure):
        part = np.array([_part_of(column.values[x], column.values[y])
                         for x, y in zip(a[unsure].tolist(), b[unsure].tolist())], bool)
        levels[unsure[part]] = 4
    return levels


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


def _text(column: Column, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    scores = _scores(column, a, b, fuzz.token_set_ratio, 60 - ROUNDING)
    return _by_thresholds(scores, (90 - ROUNDING, 60 - ROUNDING), 2)


def _edits(column: Column, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.full(len(a), 3, np.int64)
    for start in range(0, len(a), SPAN):
        end = min(start + SPAN, len(a))
        out[start:end] = process.cpdist(_strings(column, a[start:end]), _strings(column, b[start:end]),
                                        scorer=Levenshtein.distance, score_cutoff=2, workers=-1)
    return out


def _code(column: Column, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _by_thresholds(_edits(column, a, b).astype(np.float64), (1, 2), 2, higher_better=False)


def _email(column: Column, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    mailbox = column.extra["mailbox"]
    levels = np.full(len(a), 4, np.int8)
    same = mailbox[a] == mailbox[b]
    levels[same] = 2
    rest = np.flatnonzero(~same)
    if len(rest):
        scores = _scores(column, a[rest], b[rest], JaroWinkler.similarity, 0.9 - ROUNDING)
        levels[rest[scores >= 0.9 - ROUNDING]] = 3
        levels[rest[scores < 0.9 - ROUNDING]] = 4
    return levels


def _phone(column: Column, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    tail = column.extra["tail"]
    levels = np.full(len(a), 4, np.int8)
    same = tail[a] == tail[b]
    levels[same] = 2
    rest = np.flatnonzero(~same)
    if len(rest):
        close = _edits(column, a[rest], b[rest]) <= 2
        levels[rest[close]] = 3
    return levels


def _date(column: Column, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    e = column.extra
    ya, ma, da, ta = e["year"][a], e["month"][a], e["day"][a], e["time"][a]
    yb, mb, db, tb = e["year"][b], e["month"][b], e["day"][b], e["time"][b]
    either = e["either"][a] | e["either"][b]
    levels = np.full(len(a), 5, np.int8)
    parsed = (ya != NO_DATE) & (yb != NO_DATE)
    year = ya == yb
    straight = (ma == mb) & (da == db)
    crossed = (ma == db) & (da == mb)
    times_differ = (ta >= 0) & (tb >= 0) & (ta != tb)
    agree = (year.astype(np.int8) + np.maximum((ma == mb).astype(np.int8) + (da == db).astype(np.int8),
                                               (ma == db).astype(np.int8) + (da == mb).astype(np.int8)))
    levels[parsed & (agree == 2)] = 3
    levels[parsed & year & (agree < 2)] = 4
    levels[parsed & year & crossed & ~either] = 2
    # The same day, one with a time of day and one without, or written
    # either way round (03/04/2024 against 2024-04-03), is the same date.
    levels[parsed & year & straight & ~times_differ] = EXACT
    levels[parsed & year & crossed & either & ~times_differ] = EXACT
    levels[parsed & times_differ & (levels < 4)] = 4
    levels[parsed & times_differ & ~year] = 5
    unparsed = np.flatnonzero(~parsed)
    if len(unparsed):
        edits = _edits(column, a[unparsed], b[unparsed])
        levels[unparsed] = np.where(edits <= 1, 3, 5)
    return levels


def _number(column: Column, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    number = column.extra["number"]
    x, y = number[a], number[b]
    with np.errstate(invalid="ignore", divide="ignore"):
        relative = np.abs(x - y) / np.maximum(np.abs(x), np.abs(y))
    relative = np.where(np.isnan(relative), np.inf, relative)
    return _by_thresholds(relative, (0.005, 0.1), 2, higher_better=False)


def _category(column: Column, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.full(len(a), 2, np.int8)


_KIND_LEVELS = {"name": _name, "text": _text, "code": _code, "email": _email, "phone": _phone, "date": _date,
                "number": _number, "category": _category}


def compare_values(kind: str, x: str, y: str) -> int:
    """The level of two raw values of a field of ``kind``: the same rules
    as :func:`compare`, for one pair (the online query, explanations)."""
    column = Column.of(kind, [x, y])
    return int(compare(column, np.array([0]), np.array([1]))[0])


__all__ = ["COMPARISONS", "Column", "EXACT", "MISSING", "compare", "compare_values", "joint", "joint_kind",
           "level_names", "clean"]
