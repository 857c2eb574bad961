"""MinHash LSH: signatures cut into b bands of r rows, each band one key (a number Solr indexes as a point).

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
from dataclasses import dataclass, field

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


# The band number is the top byte of a band key (``band_hashes``).
MAX_BANDS = 256
_HASH_BITS = np.uint64((1 << 56) - 1)


def band_hashes(signatures: np.ndarray, bands: int, band_rows: int) -> np.ndarray:
    """(records, bands) uint64: band i of each signature hashed with i mixed in,
    then tagged: the top byte is the band number, the other 56 bits the hash."""
    if bands * band_rows > signatures.shape[1]:
        raise ValueError(f"{bands} bands of {band_rows} rows need {bands * band_rows} values, "
                         f"signatures have {signatures.shape[1]}")
    if bands > MAX_BANDS:
        raise ValueError(f"at most {MAX_BANDS} bands")
    values = signatures[:, : bands * band_rows].reshape(len(signatures), bands, band_rows).astype(np.uint64)
    number = np.arange(bands, dtype=np.uint64)
    h = np.broadcast_to(number * _BAND_SEED, values.shape[:2])
    for j in range(band_rows):
        h = _mix(h ^ values[:, :, j])
    return (h & _HASH_BITS) | (number << np.uint64(56))


def band_keys(signatures: np.ndarray, bands: int, band_rows: int) -> list[list[int]]:
    """Per record, its b band keys as Solr stores them: the 64 bits of
    :func:`band_hashes` read as a signed number (Solr's long), so band i's
    keys are the numbers from ``band_range(i)[0]`` to ``band_range(i)[1]``."""
    return band_hashes(signatures, bands, band_rows).view(np.int64).tolist()


def band_range(band: int) -> tuple[int, int]:
    """The smallest and largest key band ``band`` can have, as signed numbers."""
    low = band << 56
    low = low - (1 << 64) if low >= 1 << 63 else low
    return low, low + (1 << 56) - 1


def collision_probability(s: float, bands: int, band_rows: int) -> float:
    return 1.0 - (1.0 - s**band_rows) ** bands


@dataclass(frozen=True)
class Banding:
    """``bands`` bands of ``band_rows`` MinHash values each."""

    bands: int
    band_rows: int

    @property
    def values(self) -> int:
        """MinHash values a signature needs: bands x rows."""
        return self.bands * self.band_rows

    @property
    def midpoint(self) -> float:
        """Similarity where the S-curve is steepest, about (1/b)^(1/r)."""
        return (1.0 / self.bands) ** (1.0 / self.band_rows)

    def probability(self, s: float) -> float:
        """The chance that a pair of similarity ``s`` collides in a band: P(s)."""
        return collision_probability(s, self.bands, self.band_rows)

    def catches(self, miss: float) -> float:
        """The similarity at and above which a pair collides with probability >= 1 - miss."""
        return (1.0 - miss ** (1.0 / self.bands)) ** (1.0 / self.band_rows)


def bands_needed(high: float, band_rows: int, miss: float) -> int:
    """Fewest bands that catch similarity ``high`` with probability >= 1 - miss."""
    if high >= 1.0:
        return 1
    return max(1, math.ceil(math.log(miss) / math.log1p(-(high**band_rows))))


def bands_allowed(low: float, band_rows: int, false_hit: float) -> int:
    """Most bands that keep similarity ``low`` a candidate with probability <= false_hit."""
    if low <= 0.0:
        return 10**9  # a pair of similarity 0 never collides: any number of bands
    return math.floor(math.log1p(-false_hit) / math.log1p(-(low**band_rows)))


# The longest band ``values_needed`` considers: what ``neardup index --band-rows`` accepts.
MAX_BAND_ROWS = 64


@dataclass(frozen=True)
class Tuning:
    low: float
    high: float
    values: int
    table: list[Banding]
    choice: Banding
    meets: bool
    values_needed: int


def tune(low: float, high: float, values: int, *, miss: float = 0.01, false_hit: float = 0.001) -> Tuning:
    """Pick (b, r) for signatures of ``values`` MinHash values; see the
    module docstring.

    ``table`` has one row per r, with the fewest bands that catch ``high``
    (capped by the signature length): fewer bands only lose similar pairs,
    more only add dissimilar ones. The choice is the row meeting both
    targets with the fewest values or, when none does, the row missing its
    targets by the smallest factor. ``values_needed`` is the shortest
    signature with which both targets can be met.
    """
    if not 0.0 <= low < high <= 1.0:
        raise ValueError("need 0 <= low < high <= 1")
    table = [Banding(min(bands_needed(high, band_rows, miss), values // band_rows), band_rows)
             for band_rows in range(1, values + 1)]
    feasible = [b for b in table if b.probability(high) >= 1.0 - miss and b.probability(low) <= false_hit]
    if feasible:
        choice = min(feasible, key=lambda b: (b.values, -b.probability(high)))
    else:
        choice = min(table, key=lambda b: max(b.probability(low) / false_hit, (1.0 - b.probability(high)) / miss))
    needed = [
        bands_needed(high, band_rows, miss) * band_rows
        for band_rows in range(1, MAX_BAND_ROWS + 1)
        if bands_needed(high, band_rows, miss) <= bands_allowed(low, band_rows, false_hit)
    ]
    return Tuning(low, high, values, table, choice, bool(feasible), min(needed, default=-1))


# Choosing bands x rows from the data
# -----------------------------------
# A sample of the records gives the similarity of random pairs: the pairs
# that become candidates by chance. For a banding (b, r) a record then has
#
#     E = (N - 1) * mean over random pairs of P(s)
#
# candidates by chance, and pairs of similarity s_catch = (1 - miss^(1/b))^(1/r)
# or more collide with probability 1 - miss. The choice catches the lowest
# similarity it can while E stays within the budget of ``chance_budget(N)``:
# a report verifies N * E / 2 chance pairs, so a smaller data set may spend
# the whole budget on catching lower similarities, while a larger one holds
# a record to fewer chance candidates (docs/scale.md, "Why the constants").

# Chance candidates a record may have at most: half of the 100 an online
# query reads (``candidates.LSH.per_record``), so its best candidates are
# rarely cut off.
CANDIDATE_BUDGET = 50.0
# Chance pairs a report may verify at any size: as long to verify as a report of a few tens of thousands of records.
CHANCE_PAIRS = 1_000_000
# Chance candidates a record may have past CHANCE_PAIRS: each costs Solr bucket reads, not only its score.
RECORD_BUDGET = 10.0

# MinHash values a signature may have: bands x rows <= this.
SIGNATURE_VALUES = 128
# A key held by more records than an online query reads for one record
# (``candidates.LSH``'s 100) would make every holder a candidate of every
# other, 4,950 pairs from one key at this size and quadratically more
# beyond: such keys (a band key, or a field key) are skipped and counted.
MAX_BUCKET = 100


def agreements(signatures: np.ndarray) -> np.ndarray:
    """How many of the ``values`` MinHash values each pair of rows shares:
    ``counts[k]`` is the number of pairs (of the upper triangle) agreeing in
    exactly k values."""
    count, values = signatures.shape
    equal = np.zeros((count, count), dtype=np.uint16)
    for column in signatures.T:
        equal += column[:, None] == column[None, :]
    return np.bincount(equal[np.triu_indices(count, k=1)], minlength=values + 1)


def chance_candidates(agreeing: np.ndarray, records: int, bands: int, band_rows: int) -> float:
    """Expected candidates per record among ``records`` from pairs like the
    random ones whose agreements are counted in ``agreeing``.

    A pair agreeing in k of n values agrees in all r values of a band with
    probability s^r, estimated without bias by C(k, r) / C(n, r) (the share
    of r-subsets of the n values on which it agrees); plugging the estimate
    of s itself into s^r would overstate it for the many dissimilar pairs.
    """
    pairs = agreeing.sum()
    if pairs == 0:
        return 0.0
    values = len(agreeing) - 1
    k = np.arange(values + 1)
    band = np.array([math.comb(int(i), band_rows) for i in k], dtype=np.float64) / math.comb(values, band_rows)
    collide = 1.0 - (1.0 - band) ** bands
    return (records - 1) * float((agreeing * collide).sum() / pairs)


@dataclass(frozen=True)
class Choice:
    """A banding chosen from the data for ``records`` records: a record
    expects ``expected`` chance candidates; pairs of similarity ``catches``
    or more collide with probability 1 - miss; ``fits`` whether
    ``expected`` is within the budget. ``agreeing`` is the sample's random
    pairs by values shared, as :func:`choose` was given them."""

    banding: Banding
    expected: float
    catches: float
    fits: bool
    records: int
    agreeing: np.ndarray = field(repr=False, compare=False)

    @property
    def sampled(self) -> int:
        """Records in the sample: n of them make n (n - 1) / 2 pairs."""
        return round((1 + math.sqrt(1 + 8 * int(self.agreeing.sum()))) / 2)


def chance_budget(records: int) -> float:
    """Chance candidates a record may expect among ``records``: the online
    query's ``CANDIDATE_BUDGET``, down to ``RECORD_BUDGET`` as the report's
    ``CHANCE_PAIRS`` are shared by more records (see above)."""
    return min(CANDIDATE_BUDGET, max(RECORD_BUDGET, 2 * CHANCE_PAIRS / max(records, 1)))


def choose(agreeing: np.ndarray, records: int, *, miss: float = 0.01, budget: float | None = None,
           values: int = SIGNATURE_VALUES) -> Choice:
    """The banding of at most ``values`` MinHash values that catches the
    lowest similarity with probability >= 1 - miss while a record expects at
    most ``budget`` chance candidates; when none is within the budget, the
    one expecting the fewest.

    Args:
        agreeing: random pairs of records (a sample) by how many MinHash values
            they share, from :func:`agreements`.
        records: how many records will be indexed.
        budget: chance candidates a record may expect (default:
            :func:`chance_budget` of ``records``).

    Returns:
        The :class:`Choice`.
    """
    values = min(values, len(agreeing) - 1)
    if budget is None:
        budget = chance_budget(records)
    options = []
    for band_rows in range(1, values + 1):
        for bands in range(1, values // band_rows + 1):
            banding = Banding(bands, band_rows)
            expected = chance_candidates(agreeing, records, bands, band_rows)
            options.append(Choice(banding, expected, banding.catches(miss), expected <= budget, records, agreeing))
            if expected > budget:
                break  # more bands only add candidates
    fitting = [c for c in options if c.fits]
    if fitting:
        return min(fitting, key=lambda c: (c.catches, c.banding.values))
    return min(options, key=lambda c: (c.expected, c.catches))
