"""Ids numbered in order of arrival, in 33-67 bytes an id; ids held in about 17.

Where buckets are read by queries (``buckets._Queried``: SolrCloud), a
report numbers every record it meets in a bucket by its id, the first time
it meets it, to keep its pairs as arrays of numbers (``buckets.Pairing``).
A dict of str to int costs about 150 bytes an id (the string, the int, the
dict's slot): about 110 MB for the 714,120 bucketed records of a million.
Here an id is its 128-bit MurmurHash3 (``mmh3.hash64``'s two halves) in an
open-addressing table (linear probing, filled to at most ``LOAD``: 20 bytes
a slot). The records' ids are kept once, a batch at a time, as bytes and
lengths (:class:`Ids`: about 17 bytes an id of 9 characters).

Two ids share a number only if their 128-bit hashes are equal: for ten
million ids that happens with probability about 10^-25.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import mmh3
import numpy as np

from ..arrays import drained, within
from ..compiled import chosen, njit

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
        return numbers, [ids[i] for i in np.flatnonzero(fresh).tolist()]

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


class Ids(Sequence[str]):
    """Ids as one array of bytes and their offsets, about 17 bytes an id of 9
    characters, where a list of strings costs about 72: a report's
    candidates hold every bucketed record's id. Reading one decodes it;
    equal to any sequence of the same strings."""

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._set(encoded(chunk) for chunk in _chunks(ids, IDS_CHUNK))

    @classmethod
    def of_blocks(cls, blocks: list[tuple[bytes, np.ndarray]]) -> Ids:
        """From blocks of ids' UTF-8 bytes, each with their lengths;
        ``blocks`` is emptied as they are taken in."""
        held = cls()
        held._set(drained(blocks))
        return held

    def taken(self, order: np.ndarray) -> Ids:
        """The ids at the positions ``order`` lists, in its order; their
        bytes moved by numpy, none decoded. Costs the ids' bytes again, and
        16 bytes a byte of the ``IDS_CHUNK`` ids moved at a time."""
        source = np.frombuffer(self._bytes, np.uint8)
        return Ids.of_blocks([self._moved(source, order[first:first + IDS_CHUNK])
                              for first in range(0, len(order), IDS_CHUNK)])

    def _moved(self, source: np.ndarray, order: np.ndarray) -> tuple[bytes, np.ndarray]:
        first = self._start[order]
        sizes = self._start[order + 1] - first
        return source[np.repeat(first, sizes) + within(sizes)].tobytes(), sizes

    def _set(self, blocks: Iterable[tuple[bytes, np.ndarray]]) -> None:
        # Each block appended and let go: at most the ids and a block at once, not the ids twice.
        self._bytes = bytearray()
        lengths = [np.zeros(0, np.int64)]
        for block, sizes in blocks:
            self._bytes += block
            lengths.append(sizes)
        self._start = np.zeros(sum(map(len, lengths)) + 1, np.int64)
        np.cumsum(np.concatenate(lengths), out=self._start[1:])

    def __len__(self) -> int:
        return len(self._start) - 1

    @overload
    def __getitem__(self, at: int) -> str: ...

    @overload
    def __getitem__(self, at: slice) -> list[str]: ...

    def __getitem__(self, at):
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(len(self)))]
        if at < 0:
            at += len(self)
        if not 0 <= at < len(self):
            raise IndexError(at)
        return self._bytes[self._start[at]:self._start[at + 1]].decode()

    def __iter__(self) -> Iterator[str]:
        for first in range(0, len(self), IDS_CHUNK):
            start = self._start[first:first + IDS_CHUNK + 1].tolist()
            for a, b in zip(start, start[1:]):
                yield self._bytes[a:b].decode()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking equality, like a list's

    def __repr__(self) -> str:
        return f"Ids({list(self)[:5]!r}{'...' if len(self) > 5 else ''}, {len(self)} ids)"


# Ids encoded or read at once.
IDS_CHUNK = 1 << 16


def encoded(ids: list[str]) -> tuple[bytes, np.ndarray]:
    """The ids' UTF-8 bytes, joined, and each one's length in bytes."""
    raw = [i.encode() for i in ids]
    return b"".join(raw), np.fromiter(map(len, raw), np.int64, len(raw))


def _chunks(items: Iterable[str], size: int) -> Iterator[list[str]]:
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
