"""The text model fitted to the candidates' similarities alone, without
labels: a mixture of matches and non-matches (:func:`fit`).

The similarities of all candidate pairs (``similarity.py``) are a mixture
of two classes, matches M and non-matches U::

    f(s) = lam * m(s) + (1 - lam) * u(s)

with ``lam`` the share of matches. Neither class is given a parametric shape
(a beta or a normal fits neither: exact copies pile up at 1, and unrelated
records pile up in several humps wherever their shared words put them).
The assumptions are few and stated:

- the bulk of the non-matches (the lower ``BULK`` = 90% of them) may have
  any shape; above it, where the matches begin, they only fall off;
- matches are a minority of the candidates (under a tenth: the banding that
  ``index`` chooses gives a record up to 50 chance candidates, and a record
  has far fewer duplicates), rise to one peak and fall after it, and are
  absent from the non-matches' bulk, where no split could be told apart;
- a higher similarity never makes a match less likely.

This is the constrained EM of the record-linkage literature (Winkler) with
shape constraints instead of bounds, on a histogram of ``BINS`` equal bins:

- E-step: each bin's probability of holding matches,
  ``r_k = lam m_k / (lam m_k + (1 - lam) u_k)``;
- M-step: ``lam = sum c_k r_k / sum c_k``; ``m`` and ``u`` are the
  candidates' weighted histograms projected on those shapes
  (:mod:`~neardup_solr.match.em`), from several starts, the likeliest
  kept.

The posterior is made non-decreasing in s (its running maximum), so the
pairs with probability at least 1/2 are exactly those at or above one
similarity, the cut. With the numbers' agreement given, each level's
likelihood ratio is fitted next (:mod:`~neardup_solr.match.number_levels`).

Whether there are matches at all is a test of the two-class fit against a
single class: a data set with no duplicates is described as well by one
class alone, and then nothing is kept but copies: a pair in the top bin
(similarity 0.99 or more: the same words, the same rarities, the same
places) is a match whatever the fit, as the exact-copy fast path always
made it. A data set too small to show two shapes (fewer than ``MIN_CANDIDATES``
candidate pairs: up to a few hundred records) is not fitted at all: its pairs are
cut at the fixed ``FALLBACK_CUT`` and carry no probability.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .em import MAX_ROUNDS, PSEUDO_COUNT, TOLERANCE, falling_tail, tail_start, unimodal
from .number_levels import with_levels
from .text_model import BINS, LEVELS, MatchModel

__all__ = ["fit"]

# Fewer candidate pairs than this are too few to show two shapes: with nine,
# EM splits them any way it likes, and with a few hundred from a few dozen
# records one near copy is no class at all. A thousand is ten pairs a bin.
MIN_CANDIDATES = 1000
# EM starts from "pairs at s or more are matches" for each of these s and
# keeps the likeliest fit: matches may sit anywhere from a half to one.
STARTS = (0.4, 0.6, 0.8)
# Fits within one nat of the best are one answer, averaged: a ratio under e is barely worth a mention (docs/scale.md).
TIE = 1.0


def fit(counts: Sequence[float] | np.ndarray) -> MatchModel:
    """Fit the two-class model to a histogram of candidate similarities.

    Args:
        counts: candidate pairs per bin, ``BINS`` values, or a row of them for
            each of the ``LEVELS`` of number agreement (see
            :func:`~neardup_solr.match.text_model.histogram`).

    Returns:
        The fitted :class:`MatchModel`; with no evidence of a match class, one
        whose posterior is 0 everywhere but in the top bin (only copies are
        kept).

    Raises:
        ValueError: when ``counts`` has neither shape.

    Costs ``O(BINS)`` per EM round and at most ``MAX_ROUNDS`` rounds, whatever
    the number of candidates: the fit reads only the histogram.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.shape == (LEVELS, BINS):
        return with_levels(fit(counts.sum(axis=0)), counts)
    if counts.shape != (BINS,):
        raise ValueError(f"need {BINS} bin counts or {LEVELS} rows of them, got {counts.shape}")
    total = counts.sum()
    single = falling_tail(counts + PSEUDO_COUNT)
    if total < MIN_CANDIDATES:
        zeros = tuple([0.0] * BINS)
        return MatchModel(0.0, tuple(counts), zeros, tuple(counts), zeros, fitted=False)

    def only_copies(rounds: int = 0, gain: float = 0.0) -> MatchModel:
        copies = counts * (np.arange(BINS) == BINS - 1)
        return MatchModel(float(copies.sum() / total), tuple(counts), tuple(copies), tuple(single * total),
                          tuple(float(k == BINS - 1) for k in range(BINS)), rounds, gain)

    fits = [found for start in STARTS
            if (found := _em(counts, (np.arange(BINS) >= int(start * BINS)).astype(np.float64))) is not None]
    if not fits:
        return only_copies()
    likelihood, prior, m, u, r, rounds = _averaged(fits)
    gain = likelihood - _log_likelihood(counts, single)
    # A second class must pay for itself as the Bayesian information
    # criterion asks: half ln(n) of log-likelihood for each of its two more
    # free values (its share and its place). A data set without duplicates
    # is one unimodal class, with nothing to gain.
    if gain < math.log(total):
        return only_copies(rounds, gain)
    # The likelihood ratio m/u is taken to rise with similarity: past the
    # match class's mode both classes fall, and a bin's probability is never
    # below that of a less similar bin.
    posterior = np.maximum.accumulate(r)
    posterior[-1] = 1.0
    return MatchModel(prior, tuple(counts), tuple(m * prior * total), tuple(u * (1 - prior) * total),
                      tuple(posterior.tolist()), rounds, gain)


def _averaged(fits: list[tuple]) -> tuple:
    """The fits from several starts that end within ``TIE`` of the likeliest,
    each weighted by its likelihood (``exp(log-likelihood - best)``): two
    starts that stop on one ridge of the likelihood, a few hundredths of a
    nat apart, count alike, so a cut does not jump with which of them
    happened to stop a hair higher; a start stuck on a worse fit counts for
    nothing."""
    best = max(fit[0] for fit in fits)
    fits = [fit for fit in fits if fit[0] >= best - TIE]
    weights = np.array([math.exp(fit[0] - best) for fit in fits])
    weights /= weights.sum()
    prior = float(sum(w * fit[1] for w, fit in zip(weights, fits)))
    shapes = [sum(w * fit[k] for w, fit in zip(weights, fits)) for k in (2, 3, 4)]
    return (best, prior, *shapes, max(fit[5] for fit in fits))


def _classes(counts: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The M-step's shapes: non-matches free in their bulk and falling in
    their tail; matches unimodal, and absent from the non-matches' bulk,
    where any split between the classes would fit the counts equally well."""
    weights = counts * (1.0 - r) + PSEUDO_COUNT
    u = falling_tail(weights)
    m = counts * r + PSEUDO_COUNT
    m[: tail_start(weights)] = 0.0
    return unimodal(m), u


def _em(counts: np.ndarray, r: np.ndarray) -> tuple | None:
    """EM from the match probabilities ``r`` per bin: (log-likelihood, prior,
    m, u, r, rounds), or ``None`` when a class empties. Stops when a round
    gains less than ``TOLERANCE`` in log-likelihood."""
    total = counts.sum()
    likelihood = -math.inf
    rounds = 0
    for rounds in range(1, MAX_ROUNDS + 1):
        prior = float((counts * r).sum() / total)
        if not 0.0 < prior < 1.0:
            return None
        m, u = _classes(counts, r)
        joint_m, joint_u = prior * m, (1.0 - prior) * u
        mixture = joint_m + joint_u
        r = joint_m / mixture
        before, likelihood = likelihood, _log_likelihood(counts, mixture)
        if likelihood - before < TOLERANCE:
            break
    return likelihood, prior, m, u, r, rounds


def _log_likelihood(counts: np.ndarray, density: np.ndarray) -> float:
    used = counts > 0
    return float(np.sum(counts[used] * np.log(np.maximum(density[used], 1e-300))))
