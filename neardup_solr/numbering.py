"""Ids numbered in order of arrival, in about 45 bytes an id.

A report numbers every record it meets in a bucket, the first time it meets
it, to keep its pairs as arrays of numbers (``collisions.Pairing``). A dict
of str to int costs about 150 bytes an id (the string, the int, the dict's
slot): 700 MB for the 4.5 million bucketed records of ten million. Here an
id is its 128-bit MurmurHash3 (``mmh3.hash64``'s two halves) in an
open-addressing table (linear probing, filled to at most ``LOAD``: 20 bytes
a slot), and the new ids' characters are kept once, a batch at a time, as
bytes (about 9 an id) until :meth:`Numbering.ids` reads them back.

Two ids share a number only if their 128-bit hashes are equal: for ten
million ids that happens with probability about 10^-25.
"""

from __future__ import annotations

import mmh3
import numpy as np

from .compiled import chosen, njit

# The share of the table's slots filled before it doubles.
LOAD = 0.6
# Slots of a new table.
FIRST_SLOTS = 1 << 16


class Numbering:
    """Numbers 0, 1, 2, ... for ids in order of their first arrival."""

    def __init__(self, slots: int = FIRST_SLOTS, *, compiled: bool = True) -> None:
        self._high, self._low = np.zeros(slots, np.int64), np.zeros(slots, np.int64)
        self._number = np.full(slots, -1, np.int32)
        self._count = 0
        self._blocks: list[bytes] = []
        self._compiled = compiled

    def __len__(self) -> int:
        return self._count

    def add(self, ids: list[str]) -> tuple[np.ndarray, list[str]]:
        """Each id's number (int32, in ``ids``' order), and the ids new to
        the numbering, in order (an id twice in ``ids`` is new once)."""
        while self._count + len(ids) > LOAD * len(self._number):
            self._grow()
        hashes = np.array([mmh3.hash64(i) for i in ids], np.int64).reshape(-1, 2)
        numbers, fresh = np.empty(len(ids), np.int32), np.zeros(len(ids), np.bool_)
        self._count = chosen(_assign, self._compiled)(self._high, self._low, self._number, hashes, self._count, numbers, fresh)
        new = [ids[i] for i in np.flatnonzero(fresh).tolist()]
        if new:
            self._blocks.append("\n".join(new).encode())
        return numbers, new

    def ids(self) -> list[str]:
        """Every id, by its number."""
        return "\n".join(block.decode() for block in self._blocks).split("\n") if self._blocks else []

    def _grow(self) -> None:
        high, low, number = self._high, self._low, self._number
        slots = 2 * len(number)
        self._high, self._low = np.zeros(slots, np.int64), np.zeros(slots, np.int64)
        self._number = np.full(slots, -1, np.int32)
        held = np.flatnonzero(number >= 0)
        chosen(_place, self._compiled)(self._high, self._low, self._number, high[held], low[held], number[held])


@njit(cache=True, nogil=True)
def _slot(high, low, number, h, l):  # pragma: no cover - compiled; twin tested
    """The slot holding the hash (h, l), or the empty slot where it goes."""
    slots = len(number)
    at = (l & 0x7FFFFFFFFFFFFFFF) % slots
    while number[at] >= 0 and not (high[at] == h and low[at] == l):
        at += 1
        if at == slots:
            at = 0
    return at


@njit(cache=True, nogil=True)
def _assign(high, low, number, hashes, count, numbers, fresh):  # pragma: no cover - compiled; twin tested
    """Number each hash (new ones from ``count`` on, marked ``fresh``); the new count."""
    for i in range(len(hashes)):
        h, l = hashes[i, 0], hashes[i, 1]
        at = _slot(high, low, number, h, l)
        if number[at] < 0:
            high[at], low[at], number[at] = h, l, count
            fresh[i] = True
            count += 1
        numbers[i] = number[at]
    return count


@njit(cache=True, nogil=True)
def _place(high, low, number, hs, ls, ns):  # pragma: no cover - compiled; twin tested
    """Put held hashes, with their numbers, into an empty (larger) table."""
    for i in range(len(ns)):
        at = _slot(high, low, number, hs[i], ls[i])
        high[at], low[at], number[at] = hs[i], ls[i], ns[i]
