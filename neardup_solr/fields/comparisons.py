"""Comparing one field of many pairs of records at once: each pair's level.

A field's values are held per record as a :class:`Column` (each record's
normal form numbered, the distinct forms once), so a field of a million
records costs its distinct values once; :func:`compare` gives each pair of
records its level of the field's kind (``kinds.KINDS``): "missing" where
either lacks it, "exact" where their normal forms are equal, else the
first of the kind's levels whose test the pair passes (``levels.py``).

Fields that depend on each other (a city and its state) are compared
together as one **unit** (:func:`joint`): its levels are the combinations
of its fields' levels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product

import numpy as np

from .kinds import KINDS, SWAPPED, normal
from .levels import EXACT, MISSING, place


@dataclass
class Column:
    """One field of many records, ready to compare: each record's normal
    form as a number (``codes``, -1 where the record lacks the field), the
    distinct normal forms (``values``), and what the kind's levels derive
    from them (:meth:`derived`)."""

    kind: str
    codes: np.ndarray
    values: list[str]
    _derived: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _shares: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.codes)

    @classmethod
    def of(cls, kind: str, raw: Sequence[str | None]) -> Column:
        """The column of ``raw`` values (``None`` or "" where missing).
        Costs a cleaning of each distinct raw value."""
        forms: dict[str | None, str] = {}
        return cls.of_forms(kind, [forms[value] if value in forms else
                                   forms.setdefault(value, normal(kind, value) if value else "") for value in raw])

    @classmethod
    def of_forms(cls, kind: str, forms: Sequence[str]) -> Column:
        """The column of values already in normal form ("" where missing)."""
        numbers: dict[str, int] = {}
        values: list[str] = []
        codes = np.empty(len(forms), np.int32)
        for at, form in enumerate(forms):
            if form:
                code = numbers.setdefault(form, len(values))
                if code == len(values):
                    values.append(form)
            else:
                code = -1
            codes[at] = code
        return cls(kind, codes, values)

    def derived(self, name: str, make: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """``make`` of the distinct values (one entry each), made once."""
        if name not in self._derived:
            self._derived[name] = make(self.values)
        return self._derived[name]

    def shares(self) -> np.ndarray:
        """Each distinct value's share of the records that have the field,
        then 1 (what a missing value, code -1, reads). Counted once: every
        weighing of pairs reads it."""
        if self._shares is None:
            counts = np.bincount(self.codes[self.codes >= 0], minlength=len(self.values)).astype(np.float64)
            self._shares = np.append(counts / max(counts.sum(), 1.0), 1.0)
        return self._shares


def first_and_inverse(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where one of each distinct value of ``keys`` is, and each key's
    number among those: ``keys[first][inverse]`` is ``keys``. As
    ``np.unique``'s index and inverse, by one unstable sort (several times
    faster than the stable one ``np.unique`` needs for its index).

    >>> first, inverse = first_and_inverse(np.array([7, 3, 7, 3, 9]))
    >>> np.array([7, 3, 7, 3, 9])[first][inverse].tolist()
    [7, 3, 7, 3, 9]
    """
    order = np.argsort(keys)
    ordered = keys[order]
    starts = np.ones(len(keys), bool)
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    inverse = np.empty(len(keys), np.intp)
    inverse[order] = np.cumsum(starts) - 1
    return order[starts], inverse


def compare(column: Column, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The level (int8, :func:`level_names` order) of each pair
    ``(left[i], right[i])`` of records of ``column``.

    Costs a comparison of the codes for every pair, and for the pairs
    neither missing nor exact the tests of the kind's levels (compiled
    measures on every core).
    """
    a, b = column.codes[left], column.codes[right]
    levels = KINDS[column.kind].levels
    found = np.full(len(a), len(levels), np.int8)  # "different"
    present = (a >= 0) & (b >= 0)
    found[~present] = MISSING
    same = present & (a == b)
    found[same] = EXACT
    rest = np.flatnonzero(present & ~same)
    if len(rest):
        # Each two values are placed once, however many pairs hold them (a city, a job title).
        x, y = a[rest], b[rest]
        first, inverse = first_and_inverse(x.astype(np.int64) * len(column.values) + y)
        found[rest] = place(levels, column, x[first], y[first])[inverse]
    return found


def compare_values(kind: str, x: str, y: str) -> int:
    """The level of two raw values of a field of ``kind``: the same rules
    as :func:`compare`, for one pair."""
    column = Column.of(kind, [x, y])
    return int(compare(column, np.array([0]), np.array([1]))[0])


def swaps(levels: np.ndarray, columns: Sequence[Column], roles: Sequence[str], left: np.ndarray,
          right: np.ndarray) -> np.ndarray:
    """``levels`` (pairs x fields) with the given and family names
    (``roles``: "given" and "family", ``kinds.name_roles``) at the level
    "the other's given or family name" where one record's given name is the
    other's family name, either way round, and the field is neither missing
    nor exact (a name written in the other field, or both swapped)."""
    if "given" not in roles or "family" not in roles:
        return levels
    given, family = columns[list(roles).index("given")], columns[list(roles).index("family")]
    shared: dict[str, int] = {}
    as_given = np.array([shared.setdefault(v, len(shared)) for v in given.values] + [-1], np.int64)[given.codes]
    as_family = np.array([shared.setdefault(v, len(shared)) for v in family.values] + [-2], np.int64)[family.codes]
    swapped = (as_given[left] == as_family[right]) | (as_given[right] == as_family[left])
    level = KINDS["name"].level_names.index(SWAPPED.label)
    for at in (list(roles).index("given"), list(roles).index("family")):
        levels[swapped & (levels[:, at] != MISSING) & (levels[:, at] != EXACT), at] = level
    return levels


# Between the kinds of fields compared together (``joint``).
JOINT = "+"


def level_names(kind: str) -> tuple[str, ...]:
    """All levels of a kind's comparison, "missing" first; of a joint kind
    (``"name+category"``, :func:`joint`), each combination of its parts'
    levels, "missing" (all missing) first and all exact second."""
    if JOINT in kind:
        parts = kind.split(JOINT)
        return tuple("missing" if not any(t) else " / ".join(level_names(p)[x] for p, x in zip(parts, t))
                     for t in _combinations(tuple(len(level_names(p)) for p in parts)))
    return KINDS[kind].level_names


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


__all__ = ["Column", "EXACT", "JOINT", "MISSING", "compare", "compare_values", "joint", "joint_kind", "level_names",
           "swaps"]
