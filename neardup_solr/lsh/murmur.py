"""MurmurHash3 (x86, 32-bit) of many byte strings at once, with numpy.

Calling ``mmh3.hash`` once per shingle costs a Python call per shingle; here
a whole batch is one flat byte buffer plus (start, length) per string, and
the hash's rounds run on arrays: strings of equal length go together, one
array operation per 4-byte block. The values equal ``mmh3.hash(s, seed,
signed=False)`` bit for bit.
"""

from __future__ import annotations

import numpy as np

_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)
_M5 = np.uint32(5)
_N = np.uint32(0xE6546B64)
_F1 = np.uint32(0x85EBCA6B)
_F2 = np.uint32(0xC2B2AE35)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix_key(k: np.ndarray) -> np.ndarray:
    return _rotl(k * _C1, 15) * _C2


def _hash(word, length: int, seed: int, count: int) -> np.ndarray:
    """The hash of ``count`` strings of ``length`` bytes; ``word(offset, n)``
    gives the little-endian uint32 of their ``n`` bytes at ``offset``."""
    h = np.full(count, seed, dtype=np.uint32)
    for block in range(length // 4):
        h ^= _mix_key(word(4 * block, 4))
        h = _rotl(h, 13) * _M5 + _N
    tail = length & 3
    if tail:
        h ^= _mix_key(word(length - tail, tail))
    h ^= np.uint32(length & 0xFFFFFFFF)
    h ^= h >> np.uint32(16)
    h *= _F1
    h ^= h >> np.uint32(13)
    h *= _F2
    return h ^ (h >> np.uint32(16))


def murmur3_32(buffer: np.ndarray, starts: np.ndarray, lengths: np.ndarray, seed: int) -> np.ndarray:
    """Hash of ``buffer[starts[i] : starts[i] + lengths[i]]`` for every i (uint8 buffer)."""
    out = np.empty(len(starts), dtype=np.uint32)
    for length in np.unique(lengths).tolist():
        chosen = np.flatnonzero(lengths == length)
        at = starts[chosen]

        def word(offset: int, n: int, at: np.ndarray = at) -> np.ndarray:
            value = buffer[at + offset].astype(np.uint32)
            for i in range(1, n):
                value |= buffer[at + offset + i].astype(np.uint32) << np.uint32(8 * i)
            return value

        out[chosen] = _hash(word, length, seed, len(at))
    return out


def window_hashes(buffer: np.ndarray, width: int, seed: int) -> np.ndarray:
    """Hash of every ``width``-byte window of ``buffer``, window i starting at byte i.

    Windows overlap, so each byte of a block is a shifted slice of the
    buffer itself: no index arrays, no copies of the windows.
    """
    count = len(buffer) - width + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint32)
    wide = buffer.astype(np.uint32)

    def word(offset: int, n: int) -> np.ndarray:
        value = wide[offset : offset + count].copy()
        for i in range(1, n):
            value |= wide[offset + i : offset + i + count] << np.uint32(8 * i)
        return value

    return _hash(word, width, seed, count)
