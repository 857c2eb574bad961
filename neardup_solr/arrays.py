"""Two array steps that several stages share: each item's place in its
group, for groups laid end to end; and a list's items taken one at a time,
each let go of by the list as it is taken (a large whole is then built
from its parts without holding all the parts and the whole at once)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

import numpy as np

T = TypeVar("T")


def within(counts: np.ndarray) -> np.ndarray:
    """For groups of ``counts`` items laid end to end, each item's place in
    its group (int64).

    >>> within(np.array([2, 0, 3])).tolist()
    [0, 1, 0, 1, 2]
    """
    counts = np.asarray(counts, np.int64)
    return np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)


def drained(items: list[T]) -> Iterator[T]:
    """The items of ``items`` in order, each taken out of the list as it is
    given, so the list no longer holds what was taken.

    >>> parts = [1, 2, 3]
    >>> [(part, len(parts)) for part in drained(parts)]
    [(1, 2), (2, 1), (3, 0)]
    """
    items.reverse()
    while items:
        yield items.pop()
