"""MinHash LSH: signatures cut into b bands of r rows, each band one Solr term.

Two records become candidates when all r values of at least one band agree.
For records of Jaccard similarity s, one band agrees with probability s^r,
so the chance that at least one of b bands does is the S-curve::

    P(s) = 1 - (1 - s^r)^b

It is steepest near s* ~= (1/b)^(1/r). Choosing (b, r) is solved directly
from two requirements: pairs at or below ``low`` similarity become
candidates with probability at most ``false_hit``, pairs at or above ``high``
with probability at least ``1 - miss``. For a given r they bound b::

    b >= ln(miss) / ln(1 - high^r)             (catch the similar pairs)
    b <= ln(1 - false_hit) / ln(1 - low^r)     (skip the dissimilar ones)

and b * r may not exceed the signature length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_BAND_SEED = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer: every input bit reaches every output bit."""
    x = x ^ (x >> np.uint64(30))
    x = x * _MIX1
    x = x ^ (x >> np.uint64(27))
    x = x * _MIX2
    return x ^ (x >> np.uint64(31))


MAX_BANDS = 256
_HASH_BITS = np.uint64((1 << 56) - 1)


def band_hashes(signatures: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """(records, bands) uint64: band i of each signature hashed with i mixed in,
    then tagged: the top byte is the band number, the other 56 bits the hash."""
    if bands * rows > signatures.shape[1]:
        raise ValueError(f"{bands} bands of {rows} rows need {bands * rows} values, signatures have {signatures.shape[1]}")
    if bands > MAX_BANDS:
        raise ValueError(f"at most {MAX_BANDS} bands")
    values = signatures[:, : bands * rows].reshape(len(signatures), bands, rows).astype(np.uint64)
    number = np.arange(bands, dtype=np.uint64)
    h = np.broadcast_to(number * _BAND_SEED, values.shape[:2])
    for j in range(rows):
        h = _mix(h ^ values[:, :, j])
    return (h & _HASH_BITS) | (number << np.uint64(56))


def band_keys(signatures: np.ndarray, bands: int, rows: int) -> list[list[str]]:
    """Per record, its b band keys as Solr terms: 16 hex digits, the first two
    the band number (so ``band_prefix(i)`` selects band i's keys)."""
    tagged = band_hashes(signatures, bands, rows).astype(">u8")
    digits = np.frombuffer(tagged.tobytes().hex().encode("ascii"), dtype="S16")
    return digits.astype("U16").reshape(len(signatures), bands).tolist()


def band_prefix(band: int) -> str:
    return f"{band:02x}"


def collision_probability(s: float, bands: int, rows: int) -> float:
    return 1.0 - (1.0 - s**rows) ** bands


@dataclass(frozen=True)
class Banding:
    bands: int
    rows: int
    p_low: float
    p_high: float

    @property
    def hashes(self) -> int:
        return self.bands * self.rows

    @property
    def threshold(self) -> float:
        """Similarity where the S-curve is steepest, about (1/b)^(1/r)."""
        return (1.0 / self.bands) ** (1.0 / self.rows)


def bands_needed(high: float, rows: int, miss: float) -> int:
    """Fewest bands that catch similarity ``high`` with probability >= 1 - miss."""
    if high >= 1.0:
        return 1
    return max(1, math.ceil(math.log(miss) / math.log1p(-(high**rows))))


def bands_allowed(low: float, rows: int, false_hit: float) -> int:
    """Most bands that keep similarity ``low`` a candidate with probability <= false_hit."""
    if low <= 0.0:
        return 10**9
    return math.floor(math.log1p(-false_hit) / math.log1p(-(low**rows)))


MAX_ROWS = 64


@dataclass(frozen=True)
class Tuning:
    low: float
    high: float
    hashes: int
    table: list[Banding]
    choice: Banding
    meets: bool
    hashes_needed: int


def tune(low: float, high: float, hashes: int, *, miss: float = 0.01, false_hit: float = 0.001) -> Tuning:
    """Pick (b, r) for ``hashes`` values; see the module docstring.

    ``table`` has one row per r, with the fewest bands that catch ``high``
    (capped by the signature length): fewer bands only lose similar pairs,
    more only add dissimilar ones. The choice is the row meeting both
    targets with the fewest hashes or, when none does, the row missing its
    targets by the smallest factor. ``hashes_needed`` is the shortest
    signature with which both targets can be met.
    """
    if not 0.0 <= low < high <= 1.0:
        raise ValueError("need 0 <= low < high <= 1")
    table = []
    for rows in range(1, hashes + 1):
        bands = min(bands_needed(high, rows, miss), hashes // rows)
        table.append(Banding(bands, rows, collision_probability(low, bands, rows), collision_probability(high, bands, rows)))
    feasible = [b for b in table if b.p_high >= 1.0 - miss and b.p_low <= false_hit]
    if feasible:
        choice = min(feasible, key=lambda b: (b.hashes, -b.p_high))
    else:
        choice = min(table, key=lambda b: max(b.p_low / false_hit, (1.0 - b.p_high) / miss))
    needed = [
        bands_needed(high, rows, miss) * rows
        for rows in range(1, MAX_ROWS + 1)
        if bands_needed(high, rows, miss) <= bands_allowed(low, rows, false_hit)
    ]
    return Tuning(low, high, hashes, table, choice, bool(feasible), min(needed, default=-1))
