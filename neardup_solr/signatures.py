"""MinHash signatures by XOR masks.

Each shingle is hashed once with 32-bit MurmurHash3 (seed 42). Signature
function i is ``h_i(x) = hash(x) XOR mask_i``, a permutation of the 32-bit
hash space, and value i of a record's signature is the minimum of ``h_i`` over
its shingles. For records with shingle sets A and B::

    P[min h_i(A) == min h_i(B)] ~= J(A, B) = |A & B| / |A | B|

so the share of equal positions estimates their Jaccard similarity.

Mask i is MurmurHash3 of the text ``"mask <i>"`` with seed ``MASK_SEED``: the
same on every machine and numpy version, and independent of the signature
length, so the first S values of a long signature are the S-value signature.

The whole batch is done with numpy: all shingles hashed into one array, XOR-ed
with all masks at once, and reduced per record with ``np.minimum.reduceat``.
"""

from __future__ import annotations

from collections.abc import Sequence

import mmh3
import numpy as np

SHINGLE_HASH_SEED = 42
MASK_SEED = 1


def shingle_hash(shingle: str) -> int:
    return mmh3.hash(shingle, SHINGLE_HASH_SEED, signed=False)


def masks(n: int) -> np.ndarray:
    return np.array([mmh3.hash(f"mask {i}", MASK_SEED, signed=False) for i in range(n)], dtype=np.uint32)


class MinHasher:
    """Signatures of ``num_perm`` values for batches of shingle lists."""

    def __init__(self, num_perm: int):
        if num_perm < 1:
            raise ValueError("a signature needs at least one value")
        self.num_perm = num_perm
        self.masks = masks(num_perm)

    def signatures(self, shingle_lists: Sequence[Sequence[str]]) -> np.ndarray:
        """One row of ``num_perm`` uint32 values per shingle list (none may be empty)."""
        counts = np.fromiter((len(s) for s in shingle_lists), dtype=np.int64, count=len(shingle_lists))
        if len(counts) == 0:
            return np.empty((0, self.num_perm), dtype=np.uint32)
        if counts.min() == 0:
            raise ValueError("cannot sign a record without shingles")
        hashes = np.fromiter(
            (shingle_hash(s) for shingles in shingle_lists for s in shingles),
            dtype=np.uint32,
            count=int(counts.sum()),
        )
        starts = np.concatenate(([0], np.cumsum(counts[:-1])))
        return np.minimum.reduceat(hashes[:, None] ^ self.masks[None, :], starts, axis=0)

    def signature(self, shingles: Sequence[str]) -> np.ndarray:
        return self.signatures([shingles])[0]


def tagged_values(signature: np.ndarray) -> list[str]:
    """Signature values as Solr terms ``"i_value"``: equal only at the same position."""
    return [f"{i}_{v}" for i, v in enumerate(signature.tolist())]


def untag(value: str) -> tuple[int, int]:
    position, _, number = value.partition("_")
    return int(position), int(number)
