"""The match model of field records: Fellegi and Sunter, chance measured on random pairs.

Each field of a pair falls in a level of its comparison (``comparisons.py``).
For field f and level l::

    m_f(l) = P(level l | the two records are one entity)   (a match)
    u_f(l) = P(level l | they are not)                     (a non-match)

and, fields taken as independent given the class, a pair's **match weight**
is the sum of its fields' log-ratios, its probability follows from it and
the prior ``lambda`` (the share of matches among the candidates)::

    w = log2(lambda / (1 - lambda)) + sum_f log2(m_f(l_f) / u_f(l_f))
    p = 2^w / (1 + 2^w)

A value missing on either side (level 0) is a level like the others: it
weighs what it is measured to say, nothing where matches miss a field as
often as random pairs do, against where matches seldom miss it (the sparse
record that shares a rare price and an agent with a full one, and nothing
more). Models saved before kept it at 1 and 1, weighing nothing. The terms
of the sum are the pair's explanation (:meth:`FieldModel.explain`).

- **u is measured, not learned from the candidates.** Almost every random
  pair of records is a non-match whatever the data, so ``u`` is each
  level's share among pairs of records drawn at random from the whole
  index (:func:`chance`). The candidates are the wrong place for it: they
  were chosen for looking alike, and their non-matches agree far more
  often than chance (namesakes, one household, one chain's branches).
- **m and lambda by EM on the candidates**, u held fixed: each pair's
  posterior from the current m and lambda, then m as the posterior-weighted
  share of each level and lambda as the mean posterior, until they settle
  (:func:`fit`). Counts are smoothed (``M_PRIOR``) so a level never seen
  among matches is unlikely, not impossible. Each key's candidates are
  fitted again on their own without the key's fields (:class:`Round`), and
  each field keeps the estimate least mixed with look-alike non-matches.
- **Agreement on a rare value says more than on a common one**: at the
  exact level the average chance ``u_f(exact)`` is replaced by the value's
  own share of the index ``p(v)``, so agreeing on a surname borne by one
  record in a million weighs more than on the commonest (term-frequency
  adjustment; ``p(v)`` at least ``min_share``).
- **A fit that cannot tell says so** (:attr:`FieldModel.separated`): when
  EM ends with almost no matches or almost all, or when its matches agree
  no more than chance does, the estimates are not printed as if they held.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..fields.comparisons import EXACT, MISSING, level_names

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
# A value's share of the index is taken as at least this many records' worth,
# so one rare value is strong evidence, never proof.
MIN_RECORDS_SHARE = 2
# lambda is kept off 0 and 1 by this much: a fit that reaches it has no second class.
EDGE = 1e-6
# Below this much information (bits) between the matches' and the
# non-matches' level distributions, summed over the fields, the two classes
# are not told apart.
MIN_SEPARATION = 1.0
# Fewer expected matches than this among all pairs is no class of matches.
MIN_MATCHES = 1.0
# A model whose candidates' probabilities hold more expected errors than
# this share of its expected matches is guessing: most of its pairs sit
# near 1/2 (a fit on look-alikes, not on matches).
MAX_AMBIGUITY = 0.5
# Past this ambiguity the estimates are said to be unsure: as large a share
# of the expected matches as the error the estimates are held to rests on
# probabilities between 0 and 1, whose calibration no fit without labels checks.
UNSURE = 0.05


@dataclass(frozen=True)
class FieldModel:
    """A fitted Fellegi-Sunter model of ``names`` fields of ``kinds``.

    ``m[f][l]`` and ``u[f][l]`` are level l's probability (index 0 is the
    missing level: 1 and 1 in a model saved before it was measured) among
    matches and non-matches;
    ``prior`` the share of matches among all pairs of records (there were
    ``total_pairs``); ``pairs`` how many candidates it was fitted to,
    ``random_pairs`` how many random pairs measured u, and ``filled`` how
    many records filled each field then (what a value's share of the index
    is counted against). ``names`` and ``kinds`` are those of the model's
    units: a field, or fields compared together (``units``: the fields of
    each, by their place in the index's fields; a joint kind,
    ``comparisons.joint_kind``); empty ``units``: each field alone.
    """

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    m: tuple[tuple[float, ...], ...]
    u: tuple[tuple[float, ...], ...]
    prior: float
    pairs: int = 0
    random_pairs: int = 0
    rounds: int = 0
    min_share: float = 0.0
    filled: tuple[int, ...] = ()
    total_pairs: float = 0.0
    units: tuple[tuple[int, ...], ...] = ()

    @property
    def field_units(self) -> tuple[tuple[int, ...], ...]:
        """The fields of each unit (each field alone when ``units`` is empty)."""
        return self.units or tuple((f,) for f in range(len(self.names)))

    @property
    def levels(self) -> tuple[tuple[str, ...], ...]:
        return tuple(level_names(kind) for kind in self.kinds)

    def agreement(self, f: int) -> float:
        """The chance that a match agrees exactly on unit ``f`` where both records fill it."""
        return float(self.m[f][EXACT] / _filled(self.m[f]))

    def log2_ratios(self) -> list[np.ndarray]:
        """Each field's level weights ``log2(m / u)``."""
        found = []
        for m, u in zip(self.m, self.u):
            found.append(np.log2(np.asarray(m) / np.asarray(u)))
        return found

    @property
    def prior_weight(self) -> float:
        return math.log2(self.prior / (1.0 - self.prior))

    def weights(self, levels: np.ndarray, shares: np.ndarray | None = None) -> np.ndarray:
        """Each pair's match weight (bits), prior included.

        Args:
            levels: pairs x fields levels (int8).
            shares: pairs x fields share of the index of the value the
                two records agree on exactly (used at the exact level only;
                ``None``: no term-frequency adjustment).
        """
        total = np.full(len(levels), self.prior_weight)
        for f, ratio in enumerate(self.log2_ratios()):
            total += self._field_weight(f, ratio, levels[:, f], None if shares is None else shares[:, f])
        return total

    def _field_weight(self, f: int, ratio: np.ndarray, level: np.ndarray, share: np.ndarray | None) -> np.ndarray:
        weight = ratio[level.astype(np.int64)]
        if share is not None:
            exact = level == EXACT
            if exact.any():
                # u of agreeing on this value: both records fill the field, and the other holds it too.
                adjusted = np.log2(self.m[f][EXACT] / (_filled(self.u[f]) * np.maximum(share[exact], self.min_share)))
                weight = weight.copy()
                weight[exact] = adjusted
        return weight

    def probabilities(self, levels: np.ndarray, shares: np.ndarray | None = None) -> np.ndarray:
        return probability(self.weights(levels, shares))

    def explain(self, level: Sequence[int], share: Sequence[float] | None = None) -> list[tuple[str, str, float]]:
        """One pair's waterfall: ("prior", "", weight), then each field's
        (name, level name, weight); the weights add up to the pair's match
        weight, whose :func:`probability` is the pair's."""
        rows = [("prior", "", self.prior_weight)]
        ratios = self.log2_ratios()
        for f, name in enumerate(self.names):
            at = np.array([level[f]], np.int8)
            weight = self._field_weight(f, ratios[f], at, None if share is None else np.array([share[f]]))
            rows.append((name, self.levels[f][int(level[f])], float(weight[0])))
        return rows

    @property
    def separation(self) -> float:
        """How far the matches' level distributions are from the
        non-matches', in bits (the Kullback-Leibler divergence of m from u,
        summed over the fields)."""
        total = 0.0
        for m, u in zip(self.m, self.u):
            m, u = np.asarray(m[1:]), np.asarray(u[1:])
            m, u = m / m.sum(), u / u.sum()
            total += float(np.sum(m * np.log2(m / u)))
        return total

    @property
    def separated(self) -> bool:
        """Whether the fit found two classes it can tell apart: matches
        neither absent nor everything, and agreeing more than chance."""
        return self.prior * self.total_pairs >= MIN_MATCHES and self.prior < 1 - EDGE * 10 \
            and self.separation >= MIN_SEPARATION

    def tells(self, probabilities: np.ndarray) -> bool:
        """Whether the model tells the matches among candidates whose
        ``probabilities`` it gave: :attr:`separated`, and sure of most of
        the matches it expects (:func:`ambiguity` at most ``MAX_AMBIGUITY``)."""
        return self.separated and ambiguity(probabilities) <= MAX_AMBIGUITY

    def to_dict(self) -> dict:
        return {"names": list(self.names), "kinds": list(self.kinds), "m": [list(x) for x in self.m],
                "u": [list(x) for x in self.u], "prior": self.prior, "pairs": self.pairs,
                "random_pairs": self.random_pairs, "rounds": self.rounds, "min_share": self.min_share,
                "filled": list(self.filled), "total_pairs": self.total_pairs,
                "units": [list(unit) for unit in self.units]}

    @classmethod
    def from_dict(cls, data: dict) -> FieldModel:
        return cls(names=tuple(data["names"]), kinds=tuple(data["kinds"]), m=tuple(tuple(x) for x in data["m"]),
                   u=tuple(tuple(x) for x in data["u"]), prior=float(data["prior"]), pairs=int(data.get("pairs", 0)),
                   random_pairs=int(data.get("random_pairs", 0)), rounds=int(data.get("rounds", 0)),
                   min_share=float(data.get("min_share", 0.0)), filled=tuple(int(x) for x in data.get("filled", ())),
                   total_pairs=float(data.get("total_pairs", 0.0)),
                   units=tuple(tuple(int(f) for f in unit) for unit in data.get("units", ())))


def _filled(shares: Sequence[float]) -> float:
    """The share of pairs whose records both fill the field, of a class
    whose level ``shares`` these are; 1 in a model saved before the missing
    level was measured (its entry 1, the other levels' shares then among
    filled pairs)."""
    return 1.0 - shares[MISSING] if shares[MISSING] < 1.0 else 1.0


def probability(weight: np.ndarray | float) -> np.ndarray | float:
    """The probability of a match weight in bits: ``2^w / (1 + 2^w)``."""
    return 1.0 / (1.0 + np.exp2(-np.asarray(weight, np.float64)))


def ambiguity(probabilities: np.ndarray) -> float:
    """The expected errors of keeping the candidates of probability 1/2 or
    more, ``sum min(p, 1 - p)``, as a share of the expected matches,
    ``sum p`` (infinite when none is expected). Both estimates rest on it:
    precision on the kept pairs' ``1 - p``, recall on the others' ``p``.

    Example: probabilities 1, 1, 0.5 and 0.1 expect 2.6 matches and 0.6
    errors: 0.23."""
    expected = float(np.sum(probabilities))
    errors = float(np.sum(np.minimum(probabilities, 1.0 - probabilities)))
    return errors / expected if expected > 0 else math.inf


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
    each. EM reads these, not the pairs: a million candidates of fifteen
    fields have a few thousand patterns."""

    levels: np.ndarray
    counts: np.ndarray
    bits: np.ndarray
    pairs: int

    @classmethod
    def of(cls, levels: np.ndarray, usable: np.ndarray | None = None) -> Patterns:
        """Costs a sort of one number a pair (its row packed into 64 bits,
        or its bytes when the row does not fit)."""
        bits = np.zeros(len(levels), np.int64) if usable is None else np.asarray(usable, np.int64)
        if not len(levels):
            return cls(np.zeros((0, levels.shape[1] if levels.ndim == 2 else 0), np.int16), np.zeros(0), bits, 0)
        levels = np.asarray(levels, np.int64)
        radix = levels.max(axis=0) + 1
        bit_width = int(bits.max()).bit_length() if len(bits) else 0
        if np.log2(radix).sum() + bit_width < 62:
            # Each row as one number in mixed radix, its bits above: sorting numbers is fast.
            code = np.zeros(len(levels), np.int64)
            for f in range(levels.shape[1]):
                code = code * radix[f] + levels[:, f]
            code = (bits << int(np.ceil(np.log2(np.prod(radix.astype(float)) + 1)))) | code
            _, first, counts = np.unique(code, return_index=True, return_counts=True)
        else:
            rows = np.ascontiguousarray(np.concatenate([levels, bits[:, None]], axis=1))
            _, first, counts = np.unique(rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel(),
                                         return_index=True, return_counts=True)
        return cls(levels[first].astype(np.int16), counts.astype(np.float64), bits[first], len(levels))


@dataclass(frozen=True)
class Round:
    """One key's candidates (as :class:`Patterns`) and the units its key
    reads (``left_out``): a training round of :func:`fit` on them."""

    patterns: Patterns
    left_out: frozenset[int]


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
    return 1.0 / (1.0 + np.exp(-score))


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
        for f in learned:
            size = len(level_names(kinds[f]))
            mask = usable_for[f] if usable_for is not None else slice(None)
            per = np.bincount(patterns[mask, f].astype(np.int64), weights=weight[mask], minlength=size)[:size]
            per += M_PRIOR
            new_m[f] = per / per.sum()
        change = max(abs(math.log(new_lam / lam)), *(float(np.abs(a - b).max()) for a, b in zip(new_m, m)))
        m, lam = new_m, new_lam
        if change < TOLERANCE:
            break
    return m, lam, rounds


def fit(levels: np.ndarray | Patterns, u: Sequence[np.ndarray], names: Sequence[str], kinds: Sequence[str], *,
        total_pairs: float, usable: np.ndarray | None = None, random_pairs: int = 0, min_share: float = 0.0,
        found_share: float = 1.0, rounds: Sequence[Round] = ()) -> FieldModel:
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
    return FieldModel(names=tuple(names), kinds=tuple(kinds), m=tuple(tuple(x.tolist()) for x in m),
                      u=tuple(tuple(x.tolist()) for x in u), prior=lam, pairs=found.pairs,
                      random_pairs=random_pairs, rounds=ran, min_share=min_share, total_pairs=total_pairs)


__all__ = ["FieldModel", "Patterns", "Round", "ambiguity", "chance", "fit", "probability"]
