"""Checking a candidate: is it really a near duplicate?"""

from __future__ import annotations

import Levenshtein


def word_distance(a: list[str], b: list[str]) -> int:
    """Levenshtein distance counted in words: insertions, deletions, substitutions."""
    return Levenshtein.distance(a, b)
