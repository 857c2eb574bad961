"""Field matching of an index's records, top to bottom: candidates, levels, the fit, probabilities.

An index whose records have two or more fields (a table's columns) is
matched here, field by field, instead of by the text similarity of the
default mode's texts:

1. candidates are the pairs sharing an LSH band key of the joined text
   (as for texts) or one of the keys chosen from the fields
   (``keys.py``: each field's key form, or two fields' together, as long
   as a key costs at most its budget of chance pairs);
2. each field of each candidate is compared (``comparisons.py``), and so is
   each field of a million random pairs, whose levels measure chance
   agreement (u) and which fields depend on each other (units);
3. the Fellegi-Sunter model (``model.py``) is fitted to the candidates by
   EM with u held fixed (``training.py``), and every candidate gets its
   match probability, agreement on rare values weighing more (term
   frequencies from the whole index); those of probability 1/2 or more
   are kept.

The estimates (precision: the kept pairs' mean probability; recall: their
expected matches over all expected matches, the matches no key or band
found included) and the keys used are the summary's
(:class:`~neardup_solr.match.summary.FieldSummary`, built by the report).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from itertools import chain
from dataclasses import dataclass

import numpy as np

from ..arrays import within
from ..lsh.bands import MAX_BUCKET
from ..progress import Progress, Tally
from ..records.record import source_of
from .comparisons import EXACT, MISSING, Column, compare, joint, joint_kind, swaps
from .keys import (Buckets, Key, choose, choose_keys, grouped_pairs, key_budget, key_codes, key_parts, key_words,
                   missed_share, record_order, runs, union_pairs)
from .kinds import FieldProfile, key_form
from .model import FieldModel
from .training import CHUNK, Patterns, Round, chance, fill_factors, fill_weights, fit, units_of

log = logging.getLogger("neardup_solr")

# Random pairs whose levels measure chance agreement: a million see a level
# of one chance in a hundred thousand about ten times.
RANDOM_PAIRS = 1_000_000
RANDOM_SEED = 0
# The share of true pairs the keys and bands are taken to miss at most, in
# the prior: estimated from the model it feeds, a larger one could grow on itself.
MAX_MISSED = 0.5
# A pair found by the bands, not a key, is this bit; key k is bit k + 1 (its
# whole buckets); a key's window is the bit after the keys' (window_bit).
BAND_BIT = 1
# Records whose band keys are moved at once (:meth:`BandKeys.reordered`).
REORDER_BLOCK = 1 << 16


def window_bit(keys: Sequence[Key]) -> int:
    """The bit of the pairs a key's window found: like a band's, they are
    records alike in all their fields, side by side in their order."""
    return 1 << (len(keys) + 1)


@dataclass(frozen=True)
class BandKeys:
    """Every record's band keys as numbers, end to end in record order, and
    how many each record has.

    >>> BandKeys.of([np.array([7, 9], np.uint64), np.array([3], np.uint64)]).counts.tolist()
    [2, 1]
    """

    keys: np.ndarray  # uint64
    counts: np.ndarray  # int64, a record each

    @classmethod
    def of(cls, per_record: Sequence[np.ndarray]) -> BandKeys:
        """From each record's keys (signed ones taken as their 64 bits)."""
        counts = np.fromiter(map(len, per_record), np.int64, len(per_record))
        # Each made unsigned first: numpy joins uint64 with int64 as float64.
        keys = np.concatenate([np.zeros(0, np.uint64), *(np.asarray(k).astype(np.uint64) for k in per_record)])
        return cls(keys, counts)

    def reordered(self, order: np.ndarray) -> BandKeys:
        """The keys of record ``order[i]`` as record i's; a block of
        REORDER_BLOCK records at a time, so the index arrays stay small."""
        counts = self.counts[order]
        starts = np.cumsum(self.counts) - self.counts
        keys = np.empty(int(counts.sum()), np.uint64)
        at = 0
        for first in range(0, len(order), REORDER_BLOCK):
            block = counts[first:first + REORDER_BLOCK]
            taken = self.keys[np.repeat(starts[order[first:first + REORDER_BLOCK]], block) + within(block)]
            keys[at:at + len(taken)] = taken
            at += len(taken)
        return BandKeys(keys, counts)


@dataclass
class Records:
    """Every record of an index of fields, as read once: ids in id order,
    each field as a :class:`~neardup_solr.fields.comparisons.Column`, each
    record's band keys."""

    ids: list[str]
    columns: list[Column]
    bands: BandKeys

    def __len__(self) -> int:
        return len(self.ids)

    def copies(self) -> np.ndarray:
        """Each record's group of records identical to it in every field
        (normal forms; missing where it is missing), numbered from 0: one
        record written again. Costs a sort of the records' codes."""
        if not self.columns:
            return np.arange(len(self))
        codes = np.stack([column.codes for column in self.columns], axis=1)
        return np.unique(codes, axis=0, return_inverse=True)[1].ravel()


def band_pairs(bands: BandKeys, max_bucket: int | None = MAX_BUCKET,
               order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of records sharing a band key (record numbers, smaller
    first; a pair sharing several keys once a key: :func:`candidates` makes
    them distinct with the keys' pairs); in a key held by more than
    ``max_bucket`` records, each record with its next ``keys.WINDOW`` in
    ``order`` (records alike side by side)."""
    counts, keys = bands.counts, bands.keys
    if not counts.sum():
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    arranged = np.lexsort((owner if order is None else order[owner], keys))
    keys, owner = keys[arranged], owner[arranged]
    _, sizes = runs(keys)
    windowed = sizes > max_bucket if max_bucket is not None else np.zeros(len(sizes), bool)
    left, right = grouped_pairs(owner, sizes, windowed)
    distinct = left != right
    return left[distinct], right[distinct]


@dataclass
class Found:
    """Candidate pairs (record numbers, smaller first) and which bands or keys found each (bits)."""

    left: np.ndarray
    right: np.ndarray
    bits: np.ndarray

    def __len__(self) -> int:
        return len(self.left)

    def where(self, keep: np.ndarray) -> Found:
        return Found(self.left[keep], self.right[keep], self.bits[keep])


def candidates(records: Records, keys: Sequence[Key], codes: Sequence[np.ndarray],
               max_bucket: int | None = MAX_BUCKET, order: np.ndarray | None = None) -> Found:
    """The pairs sharing a band key or one of ``keys``, with the bits of what found them."""
    order = record_order(codes) if order is None else order
    band_left, band_right = band_pairs(records.bands, max_bucket, order)
    parts = ((a, b, bit + 1) for a, b, bit in key_parts(codes, keys, max_bucket, order))
    left, right, bits = union_pairs(chain([(band_left, band_right, 0)], parts), len(records))
    return Found(left, right, bits)


def across(records: Records, found: Found) -> Found:
    """The candidates whose two records are of different sources."""
    sources: dict[str, int] = {}
    numbered = np.fromiter((sources.setdefault(source_of(i), len(sources)) for i in records.ids), np.int32,
                           len(records))
    return found.where(numbered[found.left] != numbered[found.right])


def levels_of(columns: Sequence[Column], left: np.ndarray, right: np.ndarray, roles: Sequence[str] = ()) -> np.ndarray:
    """Pairs x fields levels of the pairs ``(left, right)``, given and
    family names swapped found where ``roles`` name them
    (``comparisons.swaps``)."""
    if not len(left):
        return np.zeros((0, len(columns)), np.int8)
    return swaps(np.stack([compare(column, left, right) for column in columns], axis=1), columns, roles, left, right)


def shares_of(columns: Sequence[Column], left: np.ndarray, units: Sequence[Sequence[int]]) -> np.ndarray:
    """Pairs x units: the share of the records filling a field that hold
    ``left``'s value of it (what an exact agreement is weighed by), a unit
    taking the rarest of its fields' (a city's share, which its state only
    widens). Costs pairs x units numbers, a field's at a time."""
    out = np.empty((len(left), len(units)))
    for at, unit in enumerate(units):
        for f in unit:
            share = columns[f].shares()[columns[f].codes[left]]
            out[:, at] = share if f == unit[0] else np.minimum(out[:, at], share)
    return out


def random_pairs(records: Records, count: int = RANDOM_PAIRS, link: bool = False,
                 seed: int = RANDOM_SEED) -> tuple[np.ndarray, np.ndarray]:
    """``count`` pairs of distinct records drawn at random (across sources
    with ``link``), or every pair when there are fewer; the same records
    give the same pairs, whatever order they were indexed in."""
    n = len(records)
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if n * (n - 1) // 2 <= count and not link:
        left, right = np.triu_indices(n, k=1)
        return left.astype(np.int64), right.astype(np.int64)
    rng = np.random.default_rng(seed)
    left, right = rng.integers(0, n, count), rng.integers(0, n, count)
    keep = left != right
    if link:
        found = across(records, Found(np.minimum(left, right), np.maximum(left, right), np.zeros(count, np.int64)))
        return found.left, found.right
    return np.minimum(left, right)[keep], np.maximum(left, right)[keep]


def all_pairs(records: Records, link: bool) -> float:
    """How many pairs there are: every pair of records, or with ``link`` every pair across sources."""
    if not link:
        return len(records) * (len(records) - 1) / 2
    counts: dict[str, int] = {}
    for i in records.ids:
        source = source_of(i)
        counts[source] = counts.get(source, 0) + 1
    total = sum(counts.values())
    return (total * total - sum(c * c for c in counts.values())) / 2


def usable_bits(found: Found, keys: Sequence[Key], units: Sequence[Sequence[int]]) -> np.ndarray:
    """Bit u of a pair: whether a key reading no field of unit u (a field,
    or fields compared together) found it, so its agreement there is not
    forced. A band reads every field (the joined text), and so does a
    window (records side by side in their fields' order): the non-matches
    they bring look alike in all of them."""
    usable = np.zeros(len(found), np.int64)
    for at, unit in enumerate(units):
        forcing = BAND_BIT | window_bit(keys) | sum(1 << (k + 1) for k, key in enumerate(keys)
                                                     if set(unit) & set(key.reads))
        usable |= ((found.bits & ~forcing) != 0).astype(np.int64) << at
    return usable


def selecting_keys(found: Found, keys: Sequence[Key], units: Sequence[Sequence[int]]) -> np.ndarray:
    """Pairs x units: the first key that found each pair among those reading
    no field of the unit (its number; -1: none did)."""
    out = np.full((len(found), len(units)), -1, np.int8)
    for at, unit in enumerate(units):
        for k in reversed(range(len(keys))):
            if not set(unit) & set(keys[k].reads):
                out[((found.bits >> (k + 1)) & 1) == 1, at] = k
    return out


def key_rounds(found: Found, keys: Sequence[Key], units: Sequence[Sequence[int]], levels: np.ndarray,
               weighing: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> list[Round]:
    """Each key's candidates as a training round of the model
    (:class:`~neardup_solr.fields.training.Round`), the units reading its
    fields left out, each pair counted by ``weighing`` (its levels, and the
    key that found it for each unit). Costs a sort of each key's
    candidates' levels."""
    rounds = []
    for k, key in enumerate(keys):
        mine = ((found.bits >> (k + 1)) & 1) == 1
        if mine.any():
            left_out = frozenset(at for at, unit in enumerate(units) if set(unit) & set(key.reads))
            theirs = levels[mine]

            def weights(at: slice, theirs: np.ndarray = theirs, k: int = k) -> np.ndarray:
                return weighing(theirs[at], np.full(theirs[at].shape, k, np.int8))

            rounds.append(Round(Patterns.of(theirs, weights=weights), left_out))
    return rounds


def key_agreement(columns: Sequence[Column], profiles: Sequence[FieldProfile], found: Found, usable: np.ndarray,
                  posterior: np.ndarray, model: FieldModel) -> dict[int, float]:
    """Each field's chance that a match agrees on its key form, where both
    fill it: the posterior-weighted share among the candidates not forced to
    agree on it (nor on a field compared with it); where there are none, the
    model's chance of its unit's exact level (a key form is shared at least
    by equal values)."""
    agree = {}
    unit_of = {f: at for at, unit in enumerate(model.field_units) for f in unit}
    for f, (column, profile) in enumerate(zip(columns, profiles)):
        numbered: dict[str, int] = {}  # key forms as numbers: compared without a Python object a pair
        forms = np.array([numbered.setdefault(key_form(column.kind, v, key_words(profile)), len(numbered))
                          for v in column.values] + [-1], np.int64)
        mask, same = np.empty(len(found), bool), np.empty(len(found), bool)
        for start in range(0, len(found), CHUNK):
            at = slice(start, start + CHUNK)
            a, b = column.codes[found.left[at]], column.codes[found.right[at]]
            mask[at] = (a >= 0) & (b >= 0) & (((usable[at] >> unit_of[f]) & 1) == 1)
            same[at] = forms[a] == forms[b]
        weight = posterior[mask]
        agree[f] = float((weight * same[mask]).sum() / weight.sum()) if weight.sum() > 1.0 \
            else model.units[unit_of[f]].agreement
    return agree


@dataclass
class Fitted:
    """What :func:`fit_records` found: the candidates, their levels (pairs x
    fields, and pairs x the model's units: fields compared together joined),
    the records' columns (whose values' shares weigh an exact agreement,
    :func:`shares_of`), their probabilities, the model, the keys, the
    share of true pairs the keys and bands are estimated to miss, and how
    many random pairs measured chance."""

    found: Found
    field_levels: np.ndarray
    levels: np.ndarray
    columns: Sequence[Column]
    p: np.ndarray
    model: FieldModel
    keys: list[Key]
    missed: float
    random_pairs: int

    @property
    def expected(self) -> float:
        """The expected true pairs among all pairs of records: those among
        the candidates, and the share estimated to be missed."""
        return float(self.p.sum()) / max(1.0 - self.missed, 1e-3)

    identical: np.ndarray | None = None

    def explanation(self, at: int) -> str:
        """Candidate ``at``'s explanation in brief (``evidence.Explanation.brief``)."""
        shares = shares_of(self.columns, self.found.left[at:at + 1], self.model.field_units)[0]
        return self.model.explain("", "", self.levels[at].tolist(), shares.tolist(),
                                  identical=bool(self.identical is not None and self.identical[at])).brief()


def fit_records(records: Records, profiles: Sequence[FieldProfile], *, link: bool = False,
                max_bucket: int | None = MAX_BUCKET, progress: Progress | None = None) -> Fitted:
    """Candidates, their levels and probabilities, the model and the keys
    of ``records`` (see the module's docstring): fitted once on the keys
    that cost at most the budget in pairs, then again on those that cost
    at most the budget in chance pairs by that first model
    (:func:`chance_keys`), where they differ."""
    codes = key_codes(records.columns, profiles)
    order = record_order(codes)
    roles = [p.role for p in profiles]
    random_left, random_right = random_pairs(records, link=link)
    random_levels = levels_of(records.columns, random_left, random_right, roles)
    drawn = (random_left, random_right, random_levels)
    first_keys = choose_keys(codes, profiles, max_bucket=max_bucket, order=order)
    fitted = _fit(records, profiles, first_keys, codes, order, drawn, link, max_bucket)
    keys = chance_keys(records, profiles, codes, order, fitted.model, max_bucket)
    if keys != first_keys:
        fitted = None  # its candidates are let go before the second fit's are made
        fitted = _fit(records, profiles, keys, codes, order, drawn, link, max_bucket)
    verifying = Tally(progress, "verifying candidates", len(fitted.found))
    verifying(0)
    verifying(len(fitted.found))
    return fitted


def _fit(records: Records, profiles: Sequence[FieldProfile], keys: Sequence[Key], codes: Sequence[np.ndarray],
         order: np.ndarray, drawn: tuple[np.ndarray, np.ndarray, np.ndarray], link: bool,
         max_bucket: int | None) -> Fitted:
    """The fit of :func:`fit_records` on the candidates of ``keys``, the
    random pairs ``drawn`` (left, right and their levels) measuring chance."""
    kinds = [p.kind for p in profiles]
    roles = [p.role for p in profiles]
    found = candidates(records, keys, codes, max_bucket, order)
    if link:
        found = across(records, found)
    field_levels = levels_of(records.columns, found.left, found.right, roles)
    random_left, random_right, random_levels = drawn
    total = all_pairs(records, link)
    non_match = 1.0 - _alone(found, keys, field_levels, random_levels, kinds, total).probabilities(random_levels)
    units = units_of(random_levels, len(records), non_match, [f for f, role in enumerate(roles) if role])
    unit_kinds = [joint_kind([kinds[f] for f in unit]) for unit in units]
    names = [" + ".join(profiles[f].name for f in unit) for unit in units]
    levels = joint(field_levels, units, kinds)
    random_units = joint(random_levels, units, kinds)
    u = chance(random_units, unit_kinds)
    usable = usable_bits(found, keys, units)
    min_share = 2.0 / max(len(records), 2)
    filled = tuple(int((c.codes >= 0).sum()) for c in records.columns)
    factors = fill_factors([key.fields for key in keys], random_units, random_levels)

    def weighing(unit_levels: np.ndarray, selected: np.ndarray) -> np.ndarray:
        return fill_weights(unit_levels, selected, factors)

    patterns = Patterns.of(levels, usable,
                           lambda at: weighing(levels[at], selecting_keys(found.where(at), keys, units)))
    rounds = key_rounds(found, keys, units, levels, weighing)

    def fitted(found_share: float = 1.0) -> FieldModel:
        return fit(patterns, u, names, unit_kinds, total_pairs=total, random_pairs=len(random_left),
                   min_share=min_share, found_share=found_share, rounds=rounds, units=units, filled=filled)

    model = fitted()
    # What the keys and bands missed is estimated, then counted into the prior: from the random pairs that
    # are no candidates, scored; and from how often matches agree on the keys' fields.
    posterior = probabilities_of(model, levels)
    agree = key_agreement(records.columns, profiles, found, usable, posterior, model)
    by_keys = missed_share(agree, keys, [n / max(len(records), 1) for n in filled])
    by_bands = float(posterior[(found.bits & BAND_BIT) == 0].sum() / posterior.sum()) if posterior.sum() else 1.0
    outside = outside_matches(records, found, model, drawn, total, units, kinds)
    found_there = float(probabilities_of(model, levels, records.columns, found.left).sum())
    by_sample = outside / (outside + found_there) if outside + found_there else 0.0
    # At most half: a guess past that would let the prior feed on itself.
    missed = min(max(by_keys * by_bands, by_sample), MAX_MISSED)
    if missed > 1e-3:
        model = fitted(1.0 - missed)
    same = identical(records.columns, found.left, found.right)
    p = probabilities_of(model, levels, records.columns, found.left, same)
    return Fitted(found, field_levels, levels, records.columns, p, model, list(keys), missed, len(random_left), same)


def probabilities_of(model: FieldModel, levels: np.ndarray, columns: Sequence[Column] | None = None,
                     left: np.ndarray | None = None, identical: np.ndarray | None = None) -> np.ndarray:
    """``model``'s probability of each pair of unit ``levels`` (pairs x
    units), an exact agreement weighed by the share of ``left``'s value in
    ``columns`` (:func:`shares_of`) where they are given, pairs identical in
    every field (``identical``) at least :data:`~neardup_solr.fields.model.IDENTICAL`;
    a chunk of :data:`CHUNK` pairs at a time."""
    p = np.empty(len(levels))
    for start in range(0, len(levels), CHUNK):
        at = slice(start, start + CHUNK)
        shares = None if columns is None else shares_of(columns, left[at], model.field_units)
        p[at] = model.probabilities(levels[at], shares, identical=None if identical is None else identical[at])
    return p


def identical(columns: Sequence[Column], left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Whether the records of each pair are identical in every field
    (normal forms equal, or both missing): one record written twice."""
    same = np.ones(len(left), bool)
    for column in columns:
        same &= column.codes[left] == column.codes[right]
    return same


def outside_matches(records: Records, found: Found, model: FieldModel,
                    drawn: tuple[np.ndarray, np.ndarray, np.ndarray], total: float, units: Sequence[Sequence[int]],
                    kinds: Sequence[str]) -> float:
    """The matches expected among the pairs that are no candidates: the
    random pairs ``drawn`` that are none, scored by ``model``, their mean
    probability times how many such pairs there are. A floor: matches the
    candidates missed are the hard ones, which the model gives low odds."""
    random_left, random_right, random_levels = drawn
    width = max(len(records), 1)
    # Candidates are in (left, right) order: their codes are sorted.
    candidate = found.left * width + found.right
    at = np.minimum(np.searchsorted(candidate, random_left * width + random_right), max(len(candidate) - 1, 0))
    outside = candidate[at] != random_left * width + random_right if len(candidate) else \
        np.ones(len(random_left), bool)
    if not outside.any():
        return 0.0
    levels = joint(random_levels[outside], units, kinds)
    p = model.probabilities(levels, shares_of(records.columns, random_left[outside], units))
    return float(p.mean()) * max(total - len(found), 0.0)


# A key with windows is taken only where at least this share of the pairs
# it adds to those of the keys before it are matches (one verified in a
# thousand): a window over a common value (a state) costs as much as one
# over a surname.
MIN_YIELD = 0.001
# Pairs of a key drawn to estimate how many of its pairs are matches.
KEY_SAMPLE = 20_000
# A key whose pairs are more than this many times the budget is not looked
# at: even nineteen in twenty of them matches would leave it over.
KEY_SAMPLE_CAP = 20.0


def chance_keys(records: Records, profiles: Sequence[FieldProfile], codes: Sequence[np.ndarray],
                order: np.ndarray, model: FieldModel, max_bucket: int | None, seed: int = RANDOM_SEED) -> list[Key]:
    """The keys chosen as :func:`~neardup_solr.fields.keys.choose_keys`
    chooses them, but by the chance pairs each brings: its pairs less the
    matches ``model`` expects among them (a sample of them scored), so
    that a key whose pairs are mostly one entity's records is not taken
    for a costly one. A key whose buckets pass ``max_bucket`` is also tried
    refined inside them by the field a match most likely agrees on and
    fills, and taken so where that leaves more matches within the budget.
    A key that has windows is taken only where :data:`MIN_YIELD` of the
    pairs it adds to those of the keys taken before it are expected to be
    matches.

    Costs a grouping of the records and :data:`KEY_SAMPLE` pairs compared
    and scored per key tried.
    """
    budget = key_budget(len(records))
    roles = [p.role for p in profiles]
    kinds = [p.kind for p in profiles]
    unit_of = {f: at for at, unit in enumerate(model.field_units) for f in unit}
    filled = np.array([(c >= 0).mean() for c in codes])
    rng = np.random.default_rng(seed)
    usable = [i for i, p in enumerate(profiles) if p.kind != "category"]
    # How likely a match keeps a refining field: it fills it on both sides and agrees on it.
    keeps = {f: model.units[unit_of[f]].agreement * filled[f] ** 2 for f in usable}

    drawn: dict[Key, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def expected(key: Key) -> tuple[float, float, bool]:
        """The key's pairs, the matches expected among them, and whether it has no window."""
        buckets = Buckets.of(codes, key, max_bucket, order)
        whole = not buckets.windowed.any()
        if not buckets.cost or buckets.cost > KEY_SAMPLE_CAP * budget:
            return buckets.cost, 0.0, whole
        left, right = buckets.sample(KEY_SAMPLE, rng)
        units = model.field_units
        levels = joint(levels_of(records.columns, left, right, roles), units, kinds)
        p = model.probabilities(levels, shares_of(records.columns, left, units))
        drawn[key] = (left, right, p)
        return buckets.cost, buckets.cost * float(p.mean()), whole

    made: dict[Key, Buckets] = {}

    def adds(key: Key, taken: Sequence[Key]) -> bool:
        """Whether at least :data:`MIN_YIELD` of the key's drawn pairs that
        no key ``taken`` makes are expected to be matches."""
        if key not in drawn:
            return True
        left, right, p = drawn[key]
        new = np.ones(len(left), bool)
        for other in taken:
            if other not in made:
                made[other] = Buckets.of(codes, other, max_bucket, order)
            new &= ~made[other].holds(left, right, len(records))
        share = float(p[new].sum() / new.sum()) if new.any() else 0.0
        log.debug("key %s: %d of %d drawn pairs new, %.4f of them matches", key, int(new.sum()), len(p), share)
        return share >= MIN_YIELD

    def best(fields: tuple[int, ...]) -> tuple[Key, float, bool]:
        """The key of ``fields``, refined where that helps, its chance pairs, and whether it has no window."""
        key = Key(fields)
        cost, matches, whole = expected(key)
        if max_bucket is not None and not whole:  # a key not refined has windows where a bucket is past the limit
            refine = max((f for f in usable if f not in fields), key=lambda f: keeps[f], default=None)
            if refine is not None:
                refined = Key(fields, (refine,))
                refined_cost, refined_matches, _ = expected(refined)
                if refined_cost - refined_matches <= budget and refined_matches > matches:
                    return refined, refined_cost - refined_matches, False
        return key, cost - matches, whole

    return choose(codes, profiles, budget, best, adds)


def _alone(found: Found, keys: Sequence[Key], field_levels: np.ndarray, random_levels: np.ndarray,
           kinds: Sequence[str], total: float) -> FieldModel:
    """A model of each field alone, fitted once to all candidates: what
    tells the random pairs that are likely matches from the others."""
    singles = [(f,) for f in range(len(kinds))]
    return fit(Patterns.of(field_levels, usable_bits(found, keys, singles)), chance(random_levels, kinds),
               [str(f) for f in range(len(kinds))], kinds, total_pairs=total)


def pair_weights(records: Records, model: FieldModel, left: np.ndarray, right: np.ndarray,
                 roles: Sequence[str] = ()) -> np.ndarray:
    """The match weights (bits) of any pairs ``(left, right)`` of ``records``
    under ``model``: compared (``roles``: the fields' name roles) and
    weighed as candidates are."""
    field_levels = levels_of(records.columns, left, right, roles)
    return model.weights(joint(field_levels, model.field_units, [c.kind for c in records.columns]),
                         shares_of(records.columns, left, model.field_units),
                         identical=identical(records.columns, left, right))


def differing(levels: np.ndarray) -> np.ndarray:
    """How many fields of each pair (levels: pairs x fields) both records
    fill and do not agree on exactly: a pair of field records' distance."""
    return ((levels != MISSING) & (levels != EXACT)).sum(axis=1) if len(levels) else np.zeros(0, np.int64)




__all__ = ["Fitted", "Found", "Records", "differing", "fit_records", "identical", "pair_weights"]
