"""Checking a candidate: is it really a near duplicate?

Two checks, one per kind of mode:

- :class:`EditDistanceCheck` (the reference modes): the word-level
  Levenshtein distance of the two normalized texts is at most
  ``max_dist``; records with the same MD5 are at distance 0 unread.
- :class:`SimilarityCheck` (the default mode): the soft, rarity- and
  position-weighted cosine of the two repaired texts (``similarity.py``);
  which scores are kept is the match model's business (``text_model.py``).

Either way a kept pair carries its word edit distance (the pair itself is
made by the mode: ``results.pairs.Pair``).
"""

from __future__ import annotations

from typing import Any

import Levenshtein

from ..text.analysis import text_tokens
from ..index.schema import MD5, TEXT
from .similarity import CloseWords, Vector, Weights, similarity
from ..text.normalize import normalize, words


def word_distance(a: list[str], b: list[str]) -> int:
    """Levenshtein distance counted in words: insertions, deletions, substitutions."""
    return Levenshtein.distance(a, b)


class EditDistanceCheck:
    """The reference verification: word edit distance <= max_dist."""

    def __init__(self, max_dist: int):
        self.max_dist = max_dist

    def prepare(self, doc: dict[str, Any]) -> list[str]:
        return words(normalize(doc[TEXT]))

    def check(self, doc: dict[str, Any], mine: list[str], other: dict[str, Any]) -> int | None:
        """The word edit distance of ``doc`` (its words ``mine``) and
        ``other``, when at most ``max_dist``; else ``None``."""
        if other[MD5] == doc[MD5]:
            distance = 0
        else:
            distance = word_distance(mine, words(normalize(other[TEXT])))
        return distance if distance <= self.max_dist else None


def text_vector(weights: Weights, text: str) -> Vector:
    return weights.vector(text_tokens(text))


class SimilarityCheck:
    """The default verification: the soft weighted cosine of two records,
    and the pair it makes with their word edit distance."""

    def __init__(self, close: CloseWords):
        self.close = close

    def score(self, vector_a: Vector, vector_b: Vector) -> float:
        return similarity(vector_a, vector_b, self.close)

    @staticmethod
    def distance(text_a: str, text_b: str) -> int:
        """The word edit distance of two repaired texts, a kept pair's distance."""
        return word_distance(text_tokens(text_a), text_tokens(text_b))
