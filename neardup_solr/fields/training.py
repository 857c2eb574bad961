"""Fitting the field model without labels: u on random pairs, m and the prior by EM.

- **u is measured, not learned from the candidates.** Almost every random
  pair of records is a non-match whatever the data, so ``u`` is each
  level's share among pairs of records drawn at random from the whole
  index (:func:`chance`). The candidates are the wrong place for it: they
  were chosen for looking alike, and their non-matches agree far more
  often than chance (namesakes, one household, one chain's branches).
- **Which fields are compared together** is read off the same random
  pairs (:func:`units_of`): fields whose exact agreements depend on each
  other (a city and its state) are one unit, so one agreement is not
  counted twice.
- **m and lambda by EM on the candidates**, u held fixed: each pair's
  posterior from the current m and lambda, then m as the posterior-weighted
  share of each level and lambda as the mean posterior, until they settle
  (:func:`fit`). Counts are smoothed (``M_PRIOR``) so a level never seen
  among matches is unlikely, not impossible. Each key's candidates are
  fitted again on their own without the key's fields (:class:`Round`), and
  each unit keeps the estimate least mixed with look-alike non-matches.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .comparisons import EXACT, MISSING, level_names
from .model import EDGE, FieldModel

# Pseudo-counts added to each level of each class: a level seen among the
# random pairs (or the matches) zero times keeps a small share. Among the
# matches a tenth of a pair, about half a pair a field spread over its
# levels: a level none of n matches shows is then about 1 / (10 n) likely,
# not 1 / (2 n) as with half a pair a level (docs/fields.md).
U_PRIOR = 0.5
M_PRIOR = 0.1
MAX_ROUNDS = 500
# A key's training round counts only with at least this many expected matches,
# and only if it finds no more than this share more of them among its pairs
# than the fit on all candidates finds there: scoring on fewer fields, a round
# that finds more has taken look-alikes for matches (a chain's branches).
MIN_ROUND_MATCHES = 20.0
ROUND_EXCESS = 0.1
TOLERANCE = 1e-7
# Pairs weighed or scored at a time: beside its result, memory holds a chunk's numbers, not every pair's.
CHUNK = 1 << 20


def chance(levels: np.ndarray, kinds: Sequence[str]) -> list[np.ndarray]:
    """u: each field's level shares among random pairs' ``levels`` (pairs x
    fields), the missing level one of them, each level given ``U_PRIOR``
    pairs more."""
    found = []
    for f, kind in enumerate(kinds):
        count = len(level_names(kind))
        counts = np.bincount(levels[:, f].astype(np.int64), minlength=count)[:count].astype(np.float64)
        counts += U_PRIOR
        found.append(counts / counts.sum())
    return found


@dataclass(frozen=True)
class Patterns:
    """Candidates' level patterns, each once: the distinct rows of levels
    (with each pair's usable bits, see :func:`fit`) and how many pairs have
    each, and, when given, each pattern's pairs' weights summed for each
    unit (see :func:`fill_weights`). EM reads these, not the pairs: a
    million candidates of fifteen fields have a few thousand patterns."""

    levels: np.ndarray
    counts: np.ndarray
    bits: np.ndarray
    pairs: int
    weights: np.ndarray | None = None

    @classmethod
    def of(cls, levels: np.ndarray, usable: np.ndarray | None = None,
           weights: Callable[[slice], np.ndarray] | None = None) -> Patterns:
        """The patterns of ``levels`` (pairs x units), with ``weights`` of
        the pairs in a slice (pairs x units) where given, asked a chunk of
        :data:`CHUNK` pairs at a time. Costs a sort of one number a pair (its
        row packed into 64 bits, or its bytes when the row does not fit)."""
        bits = np.zeros(len(levels), np.int64) if usable is None else np.asarray(usable, np.int64)
        if not len(levels):
            width = levels.shape[1] if levels.ndim == 2 else 0
            return cls(np.zeros((0, width), np.int16), np.zeros(0), bits, 0,
                       None if weights is None else np.zeros((0, width)))
        levels = np.asarray(levels)
        radix = levels.max(axis=0).astype(np.int64) + 1
        bit_width = int(bits.max()).bit_length() if len(bits) else 0
        if np.log2(radix).sum() + bit_width < 62:
            # Each row as one number in mixed radix, its bits above: sorting numbers is fast.
            code = np.zeros(len(levels), np.int64)
            for f in range(levels.shape[1]):
                code *= radix[f]
                code += levels[:, f]
            code |= bits << int(np.ceil(np.log2(np.prod(radix.astype(float)) + 1)))
            # np.unique's, with what it holds at once cut to the order and the sorted numbers.
            order = np.argsort(code, kind="stable")
            code = code[order]
            new = np.concatenate(([True], code[1:] != code[:-1]))
            del code
            starts = np.flatnonzero(new)
            first, counts = order[starts], np.diff(np.append(starts, len(levels)))
            if weights is not None:
                inverse = np.empty(len(levels), np.int64)
                inverse[order] = np.cumsum(new) - 1
            del order, new
        else:
            rows = np.ascontiguousarray(np.concatenate([levels.astype(np.int64), bits[:, None]], axis=1))
            _, first, inverse, counts = np.unique(
                rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel(),
                return_index=True, return_inverse=True, return_counts=True)
        summed = None
        if weights is not None:
            inverse = inverse.ravel()
            summed = np.zeros((len(first), levels.shape[1]))
            for start in range(0, len(levels), CHUNK):
                at = slice(start, start + CHUNK)
                chunk = weights(at)
                for f in range(chunk.shape[1]):  # in pair order, as one bincount of every pair would sum them
                    np.add.at(summed[:, f], inverse[at], chunk[:, f])
        return cls(levels[first].astype(np.int16), counts.astype(np.float64), bits[first], len(levels), summed)


@dataclass(frozen=True)
class Round:
    """One key's candidates (as :class:`Patterns`) and the units its key
    reads (``left_out``): a training round of :func:`fit` on them."""

    patterns: Patterns
    left_out: frozenset[int]


def fill_factors(key_fields: Sequence[Sequence[int]], random_units: np.ndarray, random_fields: np.ndarray,
                 most: float = 20.0) -> np.ndarray:
    """Keys x units x (filled, empty): how much a candidate a key found
    counts when the share of matches leaving a unit empty is learned, so
    that it is not learned short. A key needs its fields filled in both
    records, and where records that leave one field empty leave others
    empty too, the pairs it finds leave the unit empty less often than
    matches do. A pair counts as the inverse of how much more (or less)
    often random pairs fill the key's fields in both records given their
    own state of the unit than overall (``random_units``, ``random_fields``:
    the random pairs' levels by unit and by field), at most ``most`` times."""
    out = np.ones((len(key_fields), random_units.shape[1], 2))
    empty_random = random_units == MISSING
    filled_random = random_fields != MISSING
    for k, fields in enumerate(key_fields):
        both = filled_random[:, list(fields)].all(axis=1)
        overall = max(float(both.mean()), 1e-9)
        for f in range(random_units.shape[1]):
            empty = empty_random[:, f]
            for state, those in ((0, ~empty), (1, empty)):
                given = float(both[those].mean()) if those.any() else overall
                out[k, f, state] = min(overall / max(given, 1e-9), most)
    return out


def fill_weights(unit_levels: np.ndarray, selected: np.ndarray, factors: np.ndarray) -> np.ndarray:
    """Pairs x units: each candidate's count for the unit's empty share
    (:func:`fill_factors`), by the key that found it for the unit
    (``selected``: its number, -1 for none: a count of 1)."""
    out = np.ones(unit_levels.shape, np.float64)
    if not len(factors):
        return out
    for f in range(unit_levels.shape[1]):
        chosen = selected[:, f] >= 0
        out[chosen, f] = factors[selected[chosen, f], f, (unit_levels[chosen, f] == MISSING).astype(np.int64)]
    return out


def _start(kinds: Sequence[str]) -> list[np.ndarray]:
    """Matches agreeing exactly in most fields: m of the exact level 0.8,
    the rest spread over the other levels (missing one of them)."""
    m = []
    for kind in kinds:
        count = len(level_names(kind))
        start = np.full(count, 0.2 / max(count - 1, 1))
        start[EXACT] = 0.8
        m.append(start)
    return m


def _posterior(patterns: np.ndarray, m: Sequence[np.ndarray], u: Sequence[np.ndarray], lam: float,
               scored: Sequence[int]) -> np.ndarray:
    """Each pattern's chance of a match from its ``scored`` units and the prior ``lam``."""
    score = np.full(len(patterns), math.log(lam / (1 - lam)))
    for f in scored:
        score += np.log(m[f] / u[f])[patterns[:, f].astype(np.int64)]
    # Past 700 nats either way exp overflows, and the chance is 0 or 1 to the last bit anyway.
    return 1.0 / (1.0 + np.exp(-np.clip(score, -700.0, 700.0)))


def _em(found: Patterns, u: Sequence[np.ndarray], kinds: Sequence[str], m: list[np.ndarray], lam: float,
        total_pairs: float, *, scored: Sequence[int], learned: Sequence[int], usable_for: Sequence[np.ndarray] | None,
        found_share: float = 1.0) -> tuple[list[np.ndarray], float, int]:
    """EM on ``found``'s patterns, u held fixed: a pair's posterior from the
    ``scored`` units and ``lam`` (the matches' share of ``total_pairs``),
    then m of the ``learned`` units (each from its ``usable_for`` patterns)
    and ``lam``, until they settle. Returns m, lam and the rounds run."""
    patterns, counts = found.levels, found.counts
    rounds = 0
    if not len(patterns):
        return m, lam, rounds
    for rounds in range(1, MAX_ROUNDS + 1):
        weight = counts * _posterior(patterns, m, u, lam, scored)
        matches = weight.sum() / max(found_share, 1e-3)
        new_lam = float(np.clip(matches / total_pairs, EDGE / total_pairs, 1 - EDGE))
        new_m = list(m)
        posterior = weight / counts
        for f in learned:
            size = len(level_names(kinds[f]))
            mask = usable_for[f] if usable_for is not None else slice(None)
            counted = weight if found.weights is None else posterior * found.weights[:, f]
            per = np.bincount(patterns[mask, f].astype(np.int64), weights=counted[mask], minlength=size)[:size]
            per += M_PRIOR
            new_m[f] = per / per.sum()
        change = max(abs(math.log(new_lam / lam)), *(float(np.abs(a - b).max()) for a, b in zip(new_m, m)))
        m, lam = new_m, new_lam
        if change < TOLERANCE:
            break
    return m, lam, rounds


def fit(levels: np.ndarray | Patterns, u: Sequence[np.ndarray], names: Sequence[str], kinds: Sequence[str], *,
        total_pairs: float, usable: np.ndarray | None = None, random_pairs: int = 0, min_share: float = 0.0,
        found_share: float = 1.0, rounds: Sequence[Round] = (), units: Sequence[Sequence[int]] = (),
        filled: Sequence[int] = ()) -> FieldModel:
    """m and the prior by EM on the candidates' ``levels`` (pairs x fields), u held fixed.

    The prior is that of any pair of records (matches over ``total_pairs``,
    all the pairs there are): a candidate's levels alone then give its
    probability, however it became a candidate, as the keys and bands that
    make candidates read nothing but the records. Each field's m is learned
    only from the candidates that some key or band not reading that field
    found (bit f of ``usable``, when given): where a key made the field
    agree, its agreement says nothing of how often matches agree on it.
    ``found_share`` is the share of all matches estimated to be among the
    candidates: the prior counts the others too. ``levels`` may be given
    as their :class:`Patterns` already (``usable`` is then read from them).
    ``names``, ``kinds``, ``units`` (each one's fields) and ``filled`` are
    the model's units' and the index's, kept with it.

    Each of ``rounds`` (a key's candidates) is fitted once more on its own,
    its key's units left out of the pairs' scores and of what is learned
    (splink's training on a blocking rule): there the look-alikes other
    keys bring (two records sharing a rare price and an agent, their ids
    different) are absent or few among many matches, and end as
    non-matches. Non-matches taken for matches mostly make matches look
    less alike in the fields no key chose them by (not always: a chain's
    branches, brought by a name key, share the city), so each unit's m is the
    estimate, of the fit on all candidates and of each round with at least
    ``MIN_ROUND_MATCHES`` expected matches and at most ``ROUND_EXCESS``
    more than that fit finds among the round's pairs, whose matches agree
    exactly most often; the prior is then fitted again to all candidates with m
    held.

    Runs on the distinct level patterns with their counts (a million
    candidates of 15 fields have a few thousand), so a round costs the
    patterns, not the pairs; at most ``MAX_ROUNDS`` rounds an EM.

    Returns:
        The fitted model. Each EM starts from matches agreeing exactly in
        most fields, the fit on all candidates from a tenth of them as
        matches, a round (mostly matches, being one key's) from half.
    """
    found = levels if isinstance(levels, Patterns) else Patterns.of(levels, usable)
    fields = len(kinds)
    u = [np.asarray(x, np.float64) for x in u]
    total_pairs = max(float(total_pairs), 1.0)
    lam = min(0.1 * max(found.pairs, 1) / total_pairs, 0.5)
    counts, bits = found.counts, found.bits
    usable_for = [((bits >> f) & 1).astype(bool) if bits.any() else np.ones(len(counts), bool) for f in range(fields)]
    usable_for = [mask if (counts[mask].sum() > 0) else np.ones(len(counts), bool) for mask in usable_for]
    every = list(range(fields))
    m, lam, ran = _em(found, u, kinds, _start(kinds), lam, total_pairs, scored=every, learned=every,
                      usable_for=usable_for, found_share=found_share)
    estimates = [[x] for x in m]
    for training in rounds:
        kept = [f for f in every if f not in training.left_out]
        pairs = max(training.patterns.pairs, 1)
        learned, share, _ = _em(training.patterns, u, kinds, _start(kinds), 0.5, float(pairs), scored=kept,
                                learned=kept, usable_for=None)
        matches = share * pairs
        found_there = float((training.patterns.counts * _posterior(training.patterns.levels, m, u, lam, every)).sum())
        if MIN_ROUND_MATCHES <= matches <= found_there * (1.0 + ROUND_EXCESS):
            for f in kept:
                estimates[f].append(learned[f])
    if rounds:
        m = [max(found_m, key=lambda x: float(x[EXACT])) for found_m in estimates]
        m, lam, _ = _em(found, u, kinds, m, lam, total_pairs, scored=every, learned=(), usable_for=None,
                        found_share=found_share)
    return FieldModel.of(names, kinds, [x.tolist() for x in m], [x.tolist() for x in u], prior=lam, units=units,
                         pairs=found.pairs, random_pairs=random_pairs, rounds=ran, min_share=min_share,
                         filled=tuple(filled), total_pairs=total_pairs)


# Fields whose exact agreements among random pairs come together this many
# times more often than if they were independent are dependent (a city and
# its state, a postcode and its city), and are compared together.
DEPENDENT_LIFT = 3.0
# A field is distinctive when random pairs share its values less often than
# this many times the share of random pairs that are matches (about one in
# as many pairs as there are records, a duplicate a record): a tenth or more
# of its agreements among them may then be matches'.
DISTINCTIVE = 10.0
# Joint agreements seen among the random pairs before a lift is believed.
DEPENDENT_SEEN = 5
# At most this many fields are compared together (their levels multiply).
UNIT_FIELDS = 3


def units_of(levels: np.ndarray, records: int, non_match: np.ndarray | None = None,
             apart: Sequence[int] = ()) -> list[tuple[int, ...]]:
    """Which fields are compared together: those whose exact agreements
    among random pairs' ``levels`` (pairs x fields) depend on each other
    (:data:`DEPENDENT_LIFT`), joined strongest first, at most
    :data:`UNIT_FIELDS` in a unit; every other field alone. In field order.
    Each pair counts by ``non_match``, its chance of being no match (by a
    model of the fields alone), when given: where entities have many
    records, the matches among random pairs are many, and agree together.
    The fields ``apart`` are never joined (a person's given and family names:
    their joint levels, a name's by a name's, could be learned from no key
    reading either, and the namesakes of one family are what the model
    must tell from matches).

    The model takes its units to be independent of each other within each
    class; a city and its state are not (one implies the other), and
    counted apart they would count one agreement twice. A distinctive field
    (values random pairs of ``records`` rarely share, :data:`DISTINCTIVE`)
    stays alone, and pairs whose agreements on the other fields are together
    as rare as a distinctive value are left out of the count: among random
    pairs those are likely matches, which agree together for another reason
    than dependence."""
    exact = levels == EXACT
    filled = levels != MISSING
    filled_share = np.maximum(filled.mean(axis=0), 1e-12)
    chance_exact = np.maximum(exact.mean(axis=0) / filled_share, 1e-12)
    rare = min(DISTINCTIVE / max(records, 1), 0.5)
    distinctive = chance_exact < rare
    # How rare each pair's agreements are, as -log of their chance taken independently.
    rarity = -np.log(chance_exact)
    agreed = exact @ rarity
    found = []
    for f in range(levels.shape[1]):
        for g in range(f + 1, levels.shape[1]):
            # Among random pairs a rare value shared is mostly a match's, which agree on other fields too:
            # how a distinctive field depends cannot be told from them (and matters little, few non-matches share it).
            if distinctive[f] or distinctive[g] or f in apart or g in apart:
                continue
            # Among a few thousand records every pair is "random", and some are matches.
            others = agreed - exact[:, f] * rarity[f] - exact[:, g] * rarity[g]
            apart = others < -np.log(rare)
            both = filled[:, f] & filled[:, g] & apart
            weight = both.astype(np.float64) if non_match is None else both * non_match
            counted = float(weight.sum())
            if not counted:
                continue
            a, b = float(weight @ exact[:, f]) / counted, float(weight @ exact[:, g]) / counted
            joint_share = float(weight @ (exact[:, f] & exact[:, g])) / counted
            if 0 < a < 0.5 and 0 < b < 0.5 and joint_share * counted >= DEPENDENT_SEEN:
                lift = joint_share / (a * b)
                if lift >= DEPENDENT_LIFT:
                    found.append((lift, f, g))
    unit = {f: (f,) for f in range(levels.shape[1])}
    for _, f, g in sorted(found, reverse=True):
        merged = tuple(sorted(unit[f] + unit[g]))
        if unit[f] is not unit[g] and len(merged) <= UNIT_FIELDS:
            for member in merged:
                unit[member] = merged
    return sorted(set(unit.values()))


__all__ = ["Patterns", "Round", "chance", "fill_factors", "fill_weights", "fit", "units_of"]
