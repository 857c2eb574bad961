"""The match model: which candidate pairs are duplicates, learned from the candidates alone.

No labels are needed. The similarities of all candidate pairs (``similarity.py``)
are a mixture of two classes, matches M and non-matches U::

    f(s) = lam * m(s) + (1 - lam) * u(s)

with ``lam`` the share of matches. Neither class is given a parametric shape
(a beta or a normal fits neither: exact copies pile up at 1, and the
non-matches' tail is what decides the cut). The one assumption is the one
every similarity makes: **a higher similarity never makes a match less
likely**, so ``m`` is non-decreasing and ``u`` non-increasing in s. This is
the constrained EM of the record-linkage literature (Winkler) with a shape
constraint instead of bounds, on a histogram of ``BINS`` equal bins:

- E-step: each bin's probability of holding matches,
  ``r_k = lam m_k / (lam m_k + (1 - lam) u_k)``;
- M-step: ``lam = sum c_k r_k / sum c_k``; ``m`` and ``u`` are the
  candidates' weighted histograms projected on the monotone densities by
  isotonic regression (pool adjacent violators), which is their maximum
  likelihood estimate under the constraint (Grenander).

The likelihood ratio m/u is then non-decreasing in s, so the posterior
``r`` is too, and the pairs with probability at least 1/2 are exactly those
at or above one similarity, the **cut**. With the classes come the
estimates a person needs without gold pairs:

- true pairs among the candidates: ``sum c_k r_k``;
- precision of the kept pairs: the mean probability of the kept pairs;
- recall: the kept pairs' expected matches over all expected matches among
  the candidates (pairs the LSH never proposed are not counted; at the
  default banding they are about 1% of the true pairs).

Whether there are matches at all is a test of the two-class fit against a
single non-increasing class: a data set with no duplicates is described as
well by ``u`` alone, and then nothing is kept.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["BINS", "MatchModel", "fit", "histogram", "summary", "summary_path", "read_summary"]

# Bins of width 0.01: finer than any difference a person would act on, and
# coarse enough that a bin of a small data set is not empty by chance alone.
BINS = 100
# EM starts from "pairs at 0.8 or more are matches": the fit is the same
# from any start between 0.6 and 0.9 on every labeled set measured.
START = 0.8
MAX_ROUNDS = 5000
TOLERANCE = 1e-10
# The two-class fit must explain the histogram better than one class by a
# likelihood ratio that chance gives rarely: 2 * gain >= 13.8 is the 0.001
# level of a chi-square with 2 degrees of freedom (the match share and the
# match class's place), so a data set without duplicates reports none.
MIN_GAIN = 6.9
# A thousandth of a pair added to every bin of each class: a class is never
# certain to be absent from a bin, so EM can move pairs between the classes
# (with exact zeros the start would be a fixed point).
PSEUDO_COUNT = 1e-3


def histogram(similarities: np.ndarray) -> np.ndarray:
    """Counts of similarities in ``BINS`` equal bins over [0, 1]."""
    index = np.minimum((np.asarray(similarities, dtype=np.float64) * BINS).astype(np.int64), BINS - 1)
    return np.bincount(np.maximum(index, 0), minlength=BINS).astype(np.float64)


def _monotone(weights: np.ndarray, increasing: bool) -> np.ndarray:
    """The non-decreasing (or non-increasing) probability vector closest to
    ``weights / weights.sum()``: pool adjacent violators."""
    values = weights / weights.sum()
    if not increasing:
        values = values[::-1]
    means: list[float] = []
    sizes: list[int] = []
    for value in values.tolist():
        means.append(value)
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            size = sizes[-2] + sizes[-1]
            means[-2:] = [(means[-2] * sizes[-2] + means[-1] * sizes[-1]) / size]
            sizes[-2:] = [size]
    fitted = np.repeat(means, sizes)
    return fitted if increasing else fitted[::-1]


def _log_likelihood(counts: np.ndarray, density: np.ndarray) -> float:
    used = counts > 0
    return float(np.sum(counts[used] * np.log(np.maximum(density[used], 1e-300))))


@dataclass(frozen=True)
class MatchModel:
    """A fitted two-class model of candidate similarities.

    ``posterior[k]`` is the probability that a pair in bin k (similarity in
    ``[k / BINS, (k + 1) / BINS)``) is a match; ``counts`` the candidates per
    bin; ``match`` and ``nonmatch`` the two classes' expected pairs per bin.
    """

    prior: float
    counts: tuple[float, ...]
    match: tuple[float, ...]
    nonmatch: tuple[float, ...]
    posterior: tuple[float, ...]
    rounds: int = 0
    gain: float = 0.0

    @property
    def candidates(self) -> int:
        return int(round(sum(self.counts)))

    @property
    def has_matches(self) -> bool:
        return any(p >= 0.5 for p in self.posterior)

    @property
    def cut(self) -> float:
        """The smallest similarity whose match probability is at least 1/2
        (above 1 when no bin reaches it)."""
        for k, p in enumerate(self.posterior):
            if p >= 0.5:
                return k / BINS
        return math.inf

    def probability(self, similarity: float) -> float:
        """Probability that a pair of this similarity is a match."""
        k = min(max(int(similarity * BINS), 0), BINS - 1)
        return self.posterior[k]

    def probabilities(self, similarities: np.ndarray) -> np.ndarray:
        index = np.clip((np.asarray(similarities, dtype=np.float64) * BINS).astype(np.int64), 0, BINS - 1)
        return np.asarray(self.posterior)[index]

    def estimates(self, cut: float | None = None) -> dict[str, float]:
        """Expected true pairs among the candidates, and the precision and
        recall of keeping the pairs at or above ``cut`` (default: the model's)."""
        cut = self.cut if cut is None else cut
        counts, posterior = np.asarray(self.counts), np.asarray(self.posterior)
        expected = counts * posterior
        kept = np.arange(BINS) >= math.ceil(cut * BINS - 1e-9) if math.isfinite(cut) else np.zeros(BINS, bool)
        true_pairs = float(expected.sum())
        found = float(counts[kept].sum())
        hits = float(expected[kept].sum())
        return {
            "true_pairs": true_pairs,
            "pairs": found,
            "precision": hits / found if found else 1.0,
            "recall": hits / true_pairs if true_pairs else 1.0,
        }

    def to_dict(self) -> dict:
        return {"prior": self.prior, "bins": BINS, "counts": list(self.counts), "match": list(self.match),
                "nonmatch": list(self.nonmatch), "posterior": list(self.posterior), "rounds": self.rounds,
                "gain": self.gain}

    @classmethod
    def from_dict(cls, data: dict) -> MatchModel:
        if data.get("bins") != BINS:
            raise ValueError(f"a model of {data.get('bins')} bins, this version reads {BINS}")
        return cls(prior=float(data["prior"]), counts=tuple(data["counts"]), match=tuple(data["match"]),
                   nonmatch=tuple(data["nonmatch"]), posterior=tuple(data["posterior"]),
                   rounds=int(data.get("rounds", 0)), gain=float(data.get("gain", 0.0)))


def fit(counts: Sequence[float] | np.ndarray) -> MatchModel:
    """Fit the two-class model to a histogram of candidate similarities.

    Args:
        counts: candidate pairs per bin, ``BINS`` values (see :func:`histogram`).

    Returns:
        The fitted :class:`MatchModel`; with no evidence of a match class, one
        whose posterior is 0 everywhere (nothing is kept).

    Costs ``O(BINS)`` per EM round and at most ``MAX_ROUNDS`` rounds, whatever
    the number of candidates: the fit reads only the histogram.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.shape != (BINS,):
        raise ValueError(f"need {BINS} bin counts, got {counts.shape}")
    total = counts.sum()
    single = _monotone(counts + PSEUDO_COUNT, increasing=False) if total else np.full(BINS, 1.0 / BINS)
    zeros = tuple([0.0] * BINS)
    none = MatchModel(0.0, tuple(counts), zeros, tuple(single * total), zeros)
    if total == 0:
        return none
    centers = (np.arange(BINS) + 0.5) / BINS
    r = (centers >= START).astype(np.float64)
    if not (counts * r).any():
        return none
    rounds = 0
    for rounds in range(1, MAX_ROUNDS + 1):
        prior = float((counts * r).sum() / total)
        if prior <= 0.0 or prior >= 1.0:
            break
        m = _monotone(counts * r + PSEUDO_COUNT, increasing=True)
        u = _monotone(counts * (1.0 - r) + PSEUDO_COUNT, increasing=False)
        joint_m, joint_u = prior * m, (1.0 - prior) * u
        fresh = np.divide(joint_m, joint_m + joint_u, out=np.zeros(BINS), where=(joint_m + joint_u) > 0)
        done = np.abs(fresh - r).max() < TOLERANCE
        r = fresh
        if done:
            break
    prior = float((counts * r).sum() / total)
    m = _monotone(counts * r + PSEUDO_COUNT, increasing=True)
    u = _monotone(counts * (1.0 - r) + PSEUDO_COUNT, increasing=False)
    gain = _log_likelihood(counts, prior * m + (1.0 - prior) * u) - _log_likelihood(counts, single)
    if gain < MIN_GAIN:
        return MatchModel(0.0, tuple(counts), zeros, tuple(single * total), zeros, rounds, gain)
    return MatchModel(prior, tuple(counts), tuple(m * prior * total), tuple(u * (1 - prior) * total),
                      tuple(r), rounds, gain)


def summary_path(pairs_path: Path | str) -> Path:
    """Where a report keeps its model beside its pair file: ``pairs.tsv`` ->
    ``pairs.model.json``."""
    return Path(pairs_path).with_suffix(".model.json")


def summary(model: MatchModel, cut: float, forced: bool) -> dict:
    """What a report says of its model: the cut used (``forced`` when a fixed
    threshold replaced the model's), the estimates at that cut, the model."""
    return {
        "cut": cut if math.isfinite(cut) else None,
        "model_cut": model.cut if math.isfinite(model.cut) else None,
        "forced": forced,
        "candidates": model.candidates,
        "estimated": model.estimates(cut),
        "model": model.to_dict(),
    }


def read_summary(pairs_path: Path | str) -> dict | None:
    """The summary beside a pair file, or ``None`` when there is none or it
    cannot be read."""
    try:
        data = json.loads(summary_path(pairs_path).read_text(encoding="utf-8"))
        MatchModel.from_dict(data["model"])
        return data
    except (OSError, ValueError, KeyError, TypeError):
        return None
