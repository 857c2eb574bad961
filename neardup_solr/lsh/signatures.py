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

The whole batch is done at once: ``murmur.py`` hashes all shingles with
numpy, and ``MinHasher.minimum`` takes the minima for all masks with one
compiled loop over the hashes (numba), or with numpy where numba is
missing, for a few records (an online query) and for a small batch in a
process without numba; with no Python loop per shingle value or per hash
function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mmh3
import numpy as np

from .. import compiled
from ..arrays import within
from .murmur import murmur3_32, window_hashes
from ..text.analysis import MAX_TERM_BYTES, index_terms
from ..text.shingles import CHAR_SHINGLE_SIZE, WORD_SHINGLE_SIZE, char_shingles, word_shingles

SHINGLE_HASH_SEED = 42
MASK_SEED = 1
# Hashes in a batch from which the compiled minima pay for importing numba
# (about a quarter of a second) in a process that has not imported it yet.
KERNEL_HASHES = 1_000_000


def shingle_hash(shingle: str) -> int:
    return mmh3.hash(shingle, SHINGLE_HASH_SEED, signed=False)


def masks(n: int) -> np.ndarray:
    return np.array([mmh3.hash(f"mask {i}", MASK_SEED, signed=False) for i in range(n)], dtype=np.uint32)


def multipliers(n: int) -> np.ndarray:
    """Odd 16-bit numbers: multiplying by one is a bijection of the 16-bit values."""
    return np.array([mmh3.hash(f"multiplier {i}", MASK_SEED, signed=False) & 0xFFFF | 1 for i in range(n)],
                    dtype=np.uint16)


class MinHasher:
    """Signatures of ``num_perm`` values for batches of records.

    ``bits=16`` keeps the top 16 bits of every hash and mask, so each value
    is the minimum over a 16-bit hash space: two different values agree by
    accident with probability 1/65536, which banding makes negligible, and
    numpy moves half the bytes (b-bit minwise hashing, Li and König 2010,
    taken before the minimum rather than after). In 16 bits the masked hash
    is also multiplied by an odd number i: ``((h >> 16) XOR m_i) * a_i mod
    2^16``. XOR alone reorders values only by flipping bits, so the values of
    one band agree together slightly less often than independent functions
    would (0.840 against 1-(1-s^6)^21 = 0.855 at s = 2/3, measured); the
    multiplication carries every bit into the high ones and restores the
    S-curve. The reference signatures keep the write-up's 32-bit XOR scheme.
    """

    # Records whose minima are taken together: their hashes XOR-ed with all
    # masks stay in the CPU cache.
    CHUNK = 512

    def __init__(self, num_perm: int, bits: int = 32):
        if num_perm < 1:
            raise ValueError("a signature needs at least one value")
        if bits not in (16, 32):
            raise ValueError("bits must be 16 or 32")
        self.num_perm = num_perm
        self.shift = np.uint32(32 - bits)
        self.dtype = np.uint16 if bits == 16 else np.uint32
        self.masks = (masks(num_perm) >> self.shift).astype(self.dtype)
        self.multipliers = multipliers(num_perm) if bits == 16 else None

    def signatures(self, shingle_lists: Sequence[Sequence[str]]) -> np.ndarray:
        """One row of ``num_perm`` values per shingle list (none may be empty)."""
        encoded = [s.encode("utf-8") for shingles in shingle_lists for s in shingles]
        counts = np.fromiter((len(s) for s in shingle_lists), dtype=np.int64, count=len(shingle_lists))
        lengths = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
        buffer = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
        return self.minimum(murmur3_32(buffer, starts, lengths, SHINGLE_HASH_SEED), counts)

    def text_signatures(self, texts: Sequence[str], width: int) -> np.ndarray:
        """Signatures of each text's character ``width``-grams, as
        ``signatures([char_shingles(t, width) ...])`` but without building them:
        for ASCII text the n-grams are the byte windows of one buffer."""
        out = np.empty((len(texts), self.num_perm), dtype=self.dtype)
        ascii_rows = [i for i, t in enumerate(texts) if t.isascii() and len(t) >= width]
        other_rows = sorted(set(range(len(texts))) - set(ascii_rows))
        if ascii_rows:
            chosen = [texts[i] for i in ascii_rows]
            buffer = np.frombuffer("".join(chosen).encode("ascii"), dtype=np.uint8)
            lengths = np.fromiter((len(t) for t in chosen), dtype=np.int64, count=len(chosen))
            counts = lengths - width + 1
            ends = np.cumsum(lengths)
            # Window starts inside each text: its offset plus 0 .. count-1.
            firsts = np.repeat(ends - lengths, counts)
            hashes = window_hashes(buffer, width, SHINGLE_HASH_SEED)[firsts + within(counts)]
            out[ascii_rows] = self.minimum(hashes, counts)
        if other_rows:
            out[other_rows] = self.signatures([char_shingles(texts[i], width) for i in other_rows])
        return out

    def word_signatures(self, texts: Sequence[str], k: int) -> np.ndarray:
        """Signatures of each repaired text's word ``k``-shingles, as
        ``signatures([index_terms(word_shingles(t.split(), k)) ...])`` (for
        ``k`` = 3, the LSH shingles of ``analysis.lsh_shingles``) but without
        building them: in an ASCII text of words between single spaces, a
        shingle is the bytes from its first word's start to its last word's
        end (a shingle met twice leaves the minima alone). Other texts, and
        those with a shingle long enough to be kept as its digest, are
        shingled."""
        out = np.empty((len(texts), self.num_perm), dtype=self.dtype)
        rows = [i for i, t in enumerate(texts) if t and t.isascii()]
        windows, unusable = _word_windows([texts[i] for i in rows], k)
        while unusable:  # rare: the others' windows made again
            left_out = set(unusable)
            rows = [row for n, row in enumerate(rows) if n not in left_out]
            windows, unusable = _word_windows([texts[i] for i in rows], k)
        if windows is not None:
            out[rows] = self.minimum(murmur3_32(windows.buffer, windows.starts, windows.lengths, SHINGLE_HASH_SEED),
                                     windows.counts)
        other_rows = sorted(set(range(len(texts))) - set(rows))
        if other_rows:
            out[other_rows] = self.signatures([index_terms(word_shingles(texts[i].split(), k)) for i in other_rows])
        return out

    def minimum(self, hashes: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Per record, the minimum of its hashes XOR each mask (16 bits: then
        times each multiplier).

        Many records' 16-bit values are taken by the compiled loop
        (``minima.minima16``) when numba is there and the batch is large enough
        to pay for its import (``KERNEL_HASHES``) or it is imported already;
        a record or a few (an online query), or a small batch in a process
        without numba, by numpy. With numpy, records are
        taken in order of length, CHUNK at a time, each padded to
        the chunk's longest by repeating its last hash (which leaves its
        minimum alone); a few in-place array operations per shingle position
        then do all masks of all records in the chunk.
        """
        if len(counts) and counts.min() <= 0:
            raise ValueError("cannot sign a record without shingles")
        hashes = (hashes >> self.shift).astype(self.dtype)
        starts = np.cumsum(counts) - counts
        if (self.multipliers is not None and len(counts) > 1 and len(hashes) > self.CHUNK
                and (len(hashes) >= KERNEL_HASHES or compiled.loaded()) and compiled.available()):
            from .minima import minima16  # numba comes with it: imported only here

            out = np.empty((len(counts), self.num_perm), dtype=self.dtype)
            return minima16(hashes, starts, np.asarray(counts, np.int64), self.masks, self.multipliers, out)
        if len(hashes) <= self.CHUNK:
            # A record or a few (an online query): all hashes under all
            # permutations fit the cache at once, and padding would cost more.
            permuted = self._permuted(hashes[:, None], np.empty((len(hashes), self.num_perm), dtype=self.dtype))
            return np.minimum.reduceat(permuted, starts, axis=0)
        out = np.empty((len(counts), self.num_perm), dtype=self.dtype)
        scratch = np.empty((self.CHUNK, self.num_perm), dtype=self.dtype)
        order = np.argsort(counts, kind="stable")
        for first in range(0, len(order), self.CHUNK):
            rows = order[first : first + self.CHUNK]
            width = int(counts[rows].max())
            at = starts[rows, None] + np.minimum(np.arange(width), counts[rows, None] - 1)
            by_position = np.ascontiguousarray(hashes[at].T)
            acc = self._permuted(by_position[0, :, None], scratch[: len(rows)]).copy()
            for position in range(1, width):
                np.minimum(acc, self._permuted(by_position[position, :, None], scratch[: len(rows)]), out=acc)
            out[rows] = acc
        return out

    def _permuted(self, column: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Each hash of ``column`` under every permutation, written into ``out``."""
        np.bitwise_xor(column, self.masks, out=out)
        if self.multipliers is not None:
            np.multiply(out, self.multipliers, out=out)
        return out

    def signature(self, shingles: Sequence[str]) -> np.ndarray:
        return self.signatures([shingles])[0]


# What ``str.split`` takes for whitespace in ASCII besides the space.
_OTHER_SPACES = np.zeros(256, dtype=bool)
_OTHER_SPACES[[9, 10, 11, 12, 13, 28, 29, 30, 31]] = True


@dataclass(frozen=True)
class _Windows:
    buffer: np.ndarray  # the texts' bytes end to end
    starts: np.ndarray  # each shingle's first byte, text by text
    lengths: np.ndarray  # each shingle's bytes
    counts: np.ndarray  # each text's shingles


def _word_windows(texts: list[str], k: int) -> tuple[_Windows | None, list[int]]:
    """Where the word ``k``-shingles of ``texts`` (ASCII, none empty) lie in
    their bytes end to end (a text of fewer than ``k`` words is one shingle,
    itself), or the texts whose windows would not be their shingles (none
    for no text): those not of words between single spaces, else those
    with a shingle of more than MAX_TERM_BYTES (the index keeps its digest)."""
    if not texts:
        return None, []
    buffer = np.frombuffer("".join(texts).encode("ascii"), dtype=np.uint8)
    sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    ends = np.cumsum(sizes)
    begins = ends - sizes
    spaces = np.flatnonzero(buffer == ord(" "))
    odd = np.concatenate((np.flatnonzero(_OTHER_SPACES[buffer]), spaces[1:][np.diff(spaces) == 1],
                          begins[buffer[begins] == ord(" ")], ends[buffer[ends - 1] == ord(" ")] - 1))
    if len(odd):
        return None, np.unique(np.searchsorted(ends, odd, side="right")).tolist()
    # Words start at each text's start and after each space.
    starting = np.zeros(len(buffer), dtype=bool)
    starting[begins] = True
    starting[spaces + 1] = True
    word_starts = np.flatnonzero(starting)
    words = np.diff(np.searchsorted(spaces, ends), prepend=0) + 1
    last_word = np.cumsum(words) - 1
    # A word ends where the next one's space is, or at its text's end.
    word_ends = np.empty_like(word_starts)
    word_ends[:-1] = word_starts[1:] - 1
    word_ends[last_word] = ends
    counts = np.maximum(words - k + 1, 1)
    # Shingle j of a text runs from its word j to its word j + k - 1 (its last word when it has fewer).
    firsts = np.repeat(last_word - words + 1, counts) + within(counts)
    lasts = np.minimum(firsts + k - 1, np.repeat(last_word, counts))
    starts = word_starts[firsts]
    lengths = word_ends[lasts] - starts
    too_long = np.unique(np.repeat(np.arange(len(texts)), counts)[lengths > MAX_TERM_BYTES]).tolist()
    return (None, too_long) if too_long else (_Windows(buffer, starts, lengths, counts), [])


def tagged_values(signature: np.ndarray) -> list[str]:
    """Signature values as Solr terms ``"i_value"``: equal only at the same position."""
    return [f"{i}_{v}" for i, v in enumerate(signature.tolist())]


def untag(value: str) -> tuple[int, int]:
    position, _, number = value.partition("_")
    return int(position), int(number)


class TextSignatures:
    """The LSH MinHash signatures of repaired texts: ``values`` 16-bit
    values each, of their character 3-grams (``shingles="chars"``) or word
    3-shingles (``"words"``, :func:`neardup_solr.text.analysis.lsh_shingles`).

    Example:
        >>> TextSignatures(4)(["arnie morton's of chicago"]).shape
        (1, 4)
    """

    def __init__(self, values: int, shingles: str = "chars"):
        self.shingles = shingles
        self._hasher = MinHasher(values, bits=16)

    def __call__(self, repaired: Sequence[str]) -> np.ndarray:
        if self.shingles == "chars":
            return self._hasher.text_signatures(repaired, CHAR_SHINGLE_SIZE)
        return self._hasher.word_signatures(repaired, WORD_SHINGLE_SIZE)
