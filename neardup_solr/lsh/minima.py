"""The 16-bit MinHash minima of many records in one compiled loop (numba).

A module of its own so that importing the signatures does not import
numba: ``MinHasher.minimum`` imports this only for a batch large enough to
pay for it, or once numba is loaded anyway.
"""

from __future__ import annotations

import numpy as np

from .. import compiled


@compiled.njit(cache=True, nogil=True)
def _minima16(hashes, starts, counts, masks, multipliers, out):  # pragma: no cover - compiled; twin tested
    """Row r of ``out``: for each position p, the least ``(h XOR masks[p])
    * multipliers[p] mod 2^16`` over record r's 16-bit hashes ``h`` (those
    from ``starts[r]``, ``counts[r]`` of them): each hash read once, where
    numpy makes a pass over a chunk's arrays for every shingle position."""
    perms = masks.shape[0]
    for r in range(counts.shape[0]):
        for p in range(perms):
            out[r, p] = 0xFFFF
        for j in range(starts[r], starts[r] + counts[r]):
            h = int(hashes[j])
            for p in range(perms):
                v = ((h ^ int(masks[p])) * int(multipliers[p])) & 0xFFFF
                if v < out[r, p]:
                    out[r, p] = v
    return out


def compile_kernel() -> None:
    """Compile (or load from numba's cache) the signatures' kernel in this
    process now: processes forked afterwards inherit it ready, rather than
    each compiling it. Nothing without numba."""
    if compiled.available():
        one = np.zeros(1, np.uint16)
        minima16(one, np.zeros(1, np.int64), np.ones(1, np.int64), one, one + 1, np.empty((1, 1), np.uint16))


def minima16(hashes: np.ndarray, starts: np.ndarray, counts: np.ndarray, masks: np.ndarray,
             multipliers: np.ndarray, out: np.ndarray) -> np.ndarray:
    """:func:`_minima16` compiled (its plain twin without numba)."""
    return compiled.chosen(_minima16)(hashes, starts, counts, masks, multipliers, out)
