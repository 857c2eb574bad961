"""Word k-shingles: the sets whose overlap measures record similarity."""

from __future__ import annotations

WORD_SHINGLE_SIZE = 3


def word_shingles(words: list[str], k: int = WORD_SHINGLE_SIZE) -> list[str]:
    """Distinct k-word shingles in order of first appearance.

    A record shorter than k words is one shingle, itself, so short records
    can still match each other exactly.
    """
    if not words:
        return []
    if len(words) < k:
        return [" ".join(words)]
    return list(dict.fromkeys(" ".join(words[i : i + k]) for i in range(len(words) - k + 1)))


def jaccard(a: set[str] | list[str], b: set[str] | list[str]) -> float:
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


CHAR_SHINGLE_SIZE = 3


def char_shingles(text: str, n: int = CHAR_SHINGLE_SIZE) -> list[str]:
    """Distinct character n-grams (spaces included), for short records.

    A name of a few words has too few word shingles to be compared by them;
    its character n-grams survive a typo, a dropped letter or a joined word.
    Text shorter than n is one shingle, itself.
    """
    if len(text) <= n:
        return [text] if text else []
    return list(dict.fromkeys(text[i : i + n] for i in range(len(text) - n + 1)))
