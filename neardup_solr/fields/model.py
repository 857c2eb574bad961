"""The match model of field records: Fellegi and Sunter, chance measured on random pairs.

Each field of a pair falls in a level of its comparison (``comparisons.py``);
fields that depend on each other are compared together as one **unit**.
For unit f and level l::

    m_f(l) = P(level l | the two records are one entity)   (a match)
    u_f(l) = P(level l | they are not)                     (a non-match)

and, units taken as independent given the class, a pair's **match weight**
is the sum of its units' log-ratios, its probability follows from it and
the prior ``lambda`` (the share of matches among all pairs of records)::

    w = log2(lambda / (1 - lambda)) + sum_f log2(m_f(l_f) / u_f(l_f))
    p = 2^w / (1 + 2^w)

Each level of each unit holds its own m and u (:class:`Level`), as it
holds its label. A value missing on either side (level 0) is a level like
the others: it weighs what it is measured to say, nothing where matches
miss a field as often as random pairs do, against where matches seldom
miss it (the sparse record that shares a rare price and an agent with a
full one, and nothing more). Models saved before kept it at 1 and 1,
weighing nothing. The terms of the sum are the pair's explanation
(:meth:`FieldModel.explain`).

**Agreement on a rare value says more than on a common one**: at the exact
level the average chance ``u_f(exact)`` is replaced by the value's own
share of the index ``p(v)``, so agreeing on a surname borne by one record
in a million weighs more than on the commonest (term-frequency adjustment;
``p(v)`` at least ``min_share``).

How m, u and the prior are found (u on random pairs, m and the prior by
EM on the candidates) is ``training.py``. **A fit that cannot tell says so**
(:attr:`FieldModel.separated`): when EM ends with almost no matches or
almost all, or when its matches agree no more than chance does, the
estimates are not printed as if they held.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..evidence import Explanation, Step, probability
from .comparisons import EXACT, MISSING, level_names

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
# Two records identical in every field are one record written twice: their
# match weight is at least this (a probability of 1 to nine decimals),
# however common their values (one entity's many copies make its values
# common, and their agreement on them weak evidence by the values' shares).
IDENTICAL = 30.0
# Past this ambiguity the estimates are said to be unsure: as large a share
# of the expected matches as the error the estimates are held to rests on
# probabilities between 0 and 1, whose calibration no fit without labels checks.
UNSURE = 0.05


@dataclass(frozen=True)
class Level:
    """A fitted level of a unit: its label, and its probability among
    matches (``m``) and among non-matches (``u``)."""

    label: str
    m: float
    u: float



@dataclass(frozen=True)
class Unit:
    """A field, or fields compared together: its name (``"city + state"``),
    its kind (a joint kind for several, ``comparisons.joint_kind``), its
    fields (by their place in the index's fields) and its levels, "missing"
    first."""

    name: str
    kind: str
    fields: tuple[int, ...]
    levels: tuple[Level, ...]

    @property
    def m(self) -> tuple[float, ...]:
        return tuple(level.m for level in self.levels)

    @property
    def u(self) -> tuple[float, ...]:
        return tuple(level.u for level in self.levels)

    @property
    def filled_m(self) -> float:
        """The share of matches whose records both fill the unit (:func:`filled`)."""
        return filled(self.m)

    @property
    def agreement(self) -> float:
        """The chance that a match agrees exactly on the unit where both records fill it."""
        return float(self.levels[EXACT].m / self.filled_m)


def filled(shares: Sequence[float]) -> float:
    """The share of pairs whose records both fill the field, of a class
    whose level ``shares`` these are; 1 in a model saved before the missing
    level was measured (its entry 1, the other levels' shares then among
    filled pairs)."""
    return 1.0 - shares[MISSING] if shares[MISSING] < 1.0 else 1.0


@dataclass(frozen=True)
class FieldModel:
    """A fitted Fellegi-Sunter model: its ``units`` with their levels' m and u;
    ``prior`` the share of matches among all pairs of records (there were
    ``total_pairs``); ``pairs`` how many candidates it was fitted to,
    ``random_pairs`` how many random pairs measured u, ``rounds`` how many
    EM rounds its fit on all candidates took, ``min_share`` the smallest
    share of the index a value counts as, and ``filled`` how many records
    filled each field then (what a value's share of the index is counted
    against).
    """

    units: tuple[Unit, ...]
    prior: float
    pairs: int = 0
    random_pairs: int = 0
    rounds: int = 0
    min_share: float = 0.0
    filled: tuple[int, ...] = ()
    total_pairs: float = 0.0

    @classmethod
    def of(cls, names: Sequence[str], kinds: Sequence[str], m: Sequence[Sequence[float]],
           u: Sequence[Sequence[float]], prior: float, units: Sequence[Sequence[int]] = (), **rest) -> FieldModel:
        """The model of units ``names`` of ``kinds`` whose levels (in
        ``comparisons.level_names`` order) have ``m`` and ``u``; ``units``:
        each unit's fields (default: each field alone)."""
        fields = [tuple(unit) for unit in units] or [(f,) for f in range(len(names))]
        return cls(units=tuple(
            Unit(name, kind, unit_fields, tuple(Level(label, float(x), float(y))
                                                for label, x, y in zip(level_names(kind), unit_m, unit_u)))
            for name, kind, unit_fields, unit_m, unit_u in zip(names, kinds, fields, m, u)), prior=prior, **rest)

    def unit(self, name: str) -> Unit:
        """The unit called ``name``."""
        return next(unit for unit in self.units if unit.name == name)

    @property
    def field_units(self) -> tuple[tuple[int, ...], ...]:
        """The fields of each unit."""
        return tuple(unit.fields for unit in self.units)

    @property
    def prior_weight(self) -> float:
        return math.log2(self.prior / (1.0 - self.prior))

    @cached_property
    def ratios(self) -> list[np.ndarray]:
        """Each unit's level weights, ``log2(m / u)``."""
        return [np.log2(np.asarray(unit.m) / np.asarray(unit.u)) for unit in self.units]

    def weights(self, levels: np.ndarray, shares: np.ndarray | None = None,
                unknown: Sequence[int] = (), identical: np.ndarray | None = None) -> np.ndarray:
        """Each pair's match weight (bits), prior included.

        Args:
            levels: pairs x units levels.
            shares: pairs x units share of the index of the value the
                two records agree on exactly (used at the exact level only;
                ``None``: no term-frequency adjustment).
            unknown: units that weigh nothing (a lookup that gives some
                fields says nothing of the others).
            identical: whether each pair's records are identical in every
                field: they weigh at least :data:`IDENTICAL`.
        """
        total = np.full(len(levels), self.prior_weight)
        for f in range(len(self.units)):
            if f not in unknown:
                total += self._unit_weight(f, levels[:, f], None if shares is None else shares[:, f])
        return total if identical is None else np.where(identical, np.maximum(total, IDENTICAL), total)

    def _unit_weight(self, f: int, level: np.ndarray, share: np.ndarray | None) -> np.ndarray:
        weight = self.ratios[f][level.astype(np.int64)]
        if share is not None:
            exact = level == EXACT
            if exact.any():
                # u of agreeing on this value: both records fill the field, and the other holds it too.
                unit = self.units[f]
                adjusted = np.log2(unit.levels[EXACT].m / (filled(unit.u) * np.maximum(share[exact], self.min_share)))
                weight = weight.copy()
                weight[exact] = adjusted
        return weight

    def probabilities(self, levels: np.ndarray, shares: np.ndarray | None = None,
                      unknown: Sequence[int] = (), identical: np.ndarray | None = None) -> np.ndarray:
        return probability(self.weights(levels, shares, unknown, identical))

    def explain(self, a: str, b: str, levels: Sequence[int], shares: Sequence[float] | None = None,
                values_a: Sequence[str] = (), values_b: Sequence[str] = (), identical: bool = False) -> Explanation:
        """Why pair (``a``, ``b``) of ``levels`` (one a unit) has its
        probability: the prior, then each unit's level and weight, with the
        two records' values of it when given, and for records ``identical``
        in every field what takes them to :data:`IDENTICAL`; the steps add
        up to the pair's match weight, whose probability is the pair's."""
        steps = [Step("prior", "", self.prior_weight)]
        for f, unit in enumerate(self.units):
            at = np.array([levels[f]], np.int8)
            weight = self._unit_weight(f, at, None if shares is None else np.array([shares[f]]))
            steps.append(Step(unit.name, unit.levels[int(levels[f])].label, float(weight[0]),
                              values_a[f] if values_a else "", values_b[f] if values_b else ""))
        if identical:
            so_far = math.fsum(step.weight for step in steps)
            if so_far < IDENTICAL:
                steps.append(Step("identical", "in every field", IDENTICAL - so_far))
        return Explanation(a, b, tuple(steps))

    @property
    def separation(self) -> float:
        """How far the matches' level distributions are from the
        non-matches', in bits (the Kullback-Leibler divergence of m from u,
        summed over the units)."""
        total = 0.0
        for unit in self.units:
            m, u = np.asarray(unit.m[1:]), np.asarray(unit.u[1:])
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
        return {"names": [unit.name for unit in self.units], "kinds": [unit.kind for unit in self.units],
                "m": [list(unit.m) for unit in self.units], "u": [list(unit.u) for unit in self.units],
                "prior": self.prior, "pairs": self.pairs, "random_pairs": self.random_pairs, "rounds": self.rounds,
                "min_share": self.min_share, "filled": list(self.filled), "total_pairs": self.total_pairs,
                "units": [list(unit.fields) for unit in self.units]}

    @classmethod
    def from_dict(cls, data: dict) -> FieldModel:
        return cls.of(names=tuple(data["names"]), kinds=tuple(data["kinds"]), m=data["m"], u=data["u"],
                      prior=float(data["prior"]), units=[tuple(int(f) for f in unit) for unit in data.get("units", ())],
                      pairs=int(data.get("pairs", 0)), random_pairs=int(data.get("random_pairs", 0)),
                      rounds=int(data.get("rounds", 0)), min_share=float(data.get("min_share", 0.0)),
                      filled=tuple(int(x) for x in data.get("filled", ())),
                      total_pairs=float(data.get("total_pairs", 0.0)))


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


# Candidates the model gives at least this much and under 1/2 are doubted:
# they may be matches it takes for look-alikes (``hidden``).
DOUBTED = 0.05


def hidden(probabilities: np.ndarray, expected: float) -> float:
    """How many more true pairs than the ``expected`` matches the candidates
    the model doubts could hold, as a share of them: ``sum (1 - p)`` over
    those of probability :data:`DOUBTED` to 1/2. The recall's estimate may
    be high by about as much where the model gives matches low odds (two
    records of one person, one with a nickname and little more): a bound no
    fit without labels can narrow.

    Example: candidates of 0.3 and 0.1 beside 18 expected matches could
    hide 1.6 more: 0.09."""
    p = np.asarray(probabilities, np.float64)
    doubted = (p >= DOUBTED) & (p < 0.5)
    return float((1.0 - p[doubted]).sum()) / expected if expected > 0 else math.inf


__all__ = ["FieldModel", "IDENTICAL", "Level", "UNSURE", "Unit", "ambiguity", "filled", "hidden", "probability"]
