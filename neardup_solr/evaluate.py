"""Scoring reported pairs against known true pairs.

Every reported pair counts: precision = true / found, recall = true / gold,
F1 their harmonic mean. Pairs are unordered (``a b`` is ``b a``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError
from .pairs import Pair


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
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read gold pairs from {path}: {err}") from None
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
