"""A pair of records found to be near duplicates, as every stage after the
candidates passes it on: the two ids, their word edit distance, and in the
default mode their similarity, match probability and, when asked for, why."""

from __future__ import annotations

from typing import NamedTuple


class Pair(NamedTuple):
    a: str
    b: str
    distance: int
    similarity: float | None = None
    probability: float | None = None
    # Why the pair has its probability, in brief (``explanations.Explanation.brief``), when asked for.
    explanation: str | None = None

    @property
    def key(self) -> frozenset[str]:
        return frozenset((self.a, self.b))
