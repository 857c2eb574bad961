"""Scoring reported pairs against known true pairs.

Every reported pair counts: precision = true / found, recall = true / gold,
F1 their harmonic mean. Pairs are unordered (``a b`` is ``b a``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError
from .files import read_text
from .pairs import Pair
from .records import id_key


@dataclass(frozen=True)
class Score:
    found: int
    true: int
    gold: int

    @property
    def precision(self) -> float:
        return self.true / self.found if self.found else 0.0

    @property
    def recall(self) -> float:
        return self.true / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def line(self) -> str:
        return (
            f"found={self.found} true={self.true} precision={self.precision:.3f} "
            f"recall={self.recall:.3f} f1={self.f1:.3f}"
        )


def read_gold(path: Path | str) -> set[frozenset[str]]:
    """Gold pairs: two ids per line, separated by a tab or spaces."""
    gold = set()
    lines = read_text(path, "gold pairs").splitlines()
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise InputError(f"{path}:{number}: expected two ids, found {len(fields)} fields")
        gold.add(frozenset(fields))
    return gold


def score(pairs: Iterable[Pair], gold: set[frozenset[str]]) -> Score:
    found = {p.key for p in pairs}
    return Score(found=len(found), true=len(found & gold), gold=len(gold))


def missed(pairs: Iterable[Pair], gold: set[frozenset[str]]) -> list[tuple[str, str]]:
    """True pairs not reported, in id order."""
    found = {p.key for p in pairs}
    return sorted((tuple(sorted(g, key=id_key)) for g in gold - found), key=lambda p: (id_key(p[0]), id_key(p[1])))


def values_by_truth(pairs: list[Pair], gold: set[frozenset[str]]) -> tuple[list[float], list[float], str]:
    """Each reported pair's similarity (or, without one, its edit distance),
    split into true and false pairs, with the value's name."""
    if pairs and all(p.similarity is not None for p in pairs):
        value, label = (lambda p: p.similarity), "similarity"
    else:
        value, label = (lambda p: float(p.distance)), "word edit distance"
    true = [value(p) for p in pairs if p.key in gold]
    false = [value(p) for p in pairs if p.key not in gold]
    return true, false, label
