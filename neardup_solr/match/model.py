"""The match model: which candidate pairs are duplicates, learned from the candidates alone.

No labels are needed. The similarities of all candidate pairs (``similarity.py``)
are a mixture of two classes, matches M and non-matches U::

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
  candidates' weighted histograms projected on those shapes by isotonic
  regression (pool adjacent violators), their maximum likelihood estimate
  under the constraints (Grenander), from several starts, the likeliest
  kept.

The posterior is made non-decreasing in s (its running maximum), so the
pairs with probability at least 1/2 are exactly those at or above one
similarity, the **cut**. With the classes come the
estimates a person needs without gold pairs:

- true pairs among the candidates: ``sum c_k r_k``;
- precision of the kept pairs: the mean probability of the kept pairs;
- recall: the kept pairs' expected matches over all expected matches among
  the candidates (pairs the LSH never proposed are not counted; at the
  default banding they are about 1% of the true pairs).

The numbers' agreement (``similarity.number_agreement``: none on one side,
none shared, two or more differ, one differs, all agree) is a second piece
of evidence, weighed as Fellegi and Sunter weigh a field's agreement: the
odds of the similarity alone are multiplied by the level's likelihood ratio
``P(level | M) / P(level | U)``::

    odds(s, level) = r(s) / (1 - r(s)) * a_level / b_level

Both level distributions are fitted by EM with the similarity model held
fixed, no labels: ``a`` is the levels of the candidates the similarity alone
calls matches (probability at least 1/2), weighted by their probability of
being matches; ``b`` the levels of the non-matches that look alike, weighted
by the probability of not being one, over the non-matches' tail only (where
the matches begin); each round recomputes the probabilities from the
ratios. ``a`` is read from the sure side because the similarity's
probabilities are what is in doubt below the cut: a hump of look-alike
non-matches there (a household: one surname, one address) is partly taken
for matches, and its levels read as the matches' would teach the model that
two differing dates of birth are a match's levels too. Within a class the
levels are taken to be independent of the similarity, so the sure matches'
levels are those of all matches. The
non-matches far below it are unrelated records, whose numbers almost never
agree; the ones that decide precision are those that look alike (one
chain's branches, a family at one address), which share numbers far more
often, and ``b`` from all of them would overstate what an agreeing number
says. Each level's counts get ``LEVEL_PRIOR`` added, so a level seen in only
one class does not make a pair certain.

The levels then check the similarity's share of matches in each bin. The
similarity alone cannot place a hump of look-alike non-matches above the
bulk (their class must fall off there, the matches' may rise), so it gives
the hump half to the matches: on the person records, 661 household-like
pairs at 0.49-0.56 were taken for 162 expected matches where there are 17,
and the estimated recall was 0.914 against a measured 0.999. Their
levels say otherwise: a bin of 180 pairs of which three have all numbers
but one agreeing is not 43% matches when 86% of the matches have them. So each
bin's share is fitted again from its own pairs' levels (EM for one share
per bin, ``a`` and ``b`` held fixed, starting from and drawn towards the
similarity's share by ``SHARE_PRIOR``), and it may only fall: look-alike
non-matches share numbers more often than ``b`` says (a chain's branches
one telephone number, a household one postcode), so where the levels would
raise a share they overstate the matches, as the similarity does where
they lower it, and the smaller of the two is kept. On the restaurants,
letting the levels raise a share as well took the chains' branches for
matches (F1 0.82). Each level then has its own cut; a level no candidate
has keeps the odds of the similarity alone.

Labels sharpen it where a person gave some (``with_labels``): pairs marked
the same or different recalibrate the model's log-odds by a shift and a
scale (Platt's scaling, with priors centred on the model as fitted), so a
few labels near the cut move the cut, and with none the model is what the
data alone gives.

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
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from .similarity import AGREEMENT

__all__ = ["BINS", "LEVELS", "MatchModel", "fit", "histogram", "with_labels", "keeps_by_similarity"]

# Bins of width 0.01: finer than any difference a person would act on, and
# coarse enough that a bin of a small data set is not empty by chance alone.
BINS = 100
# Fewer candidate pairs than this are too few to show two shapes: with nine,
# EM splits them any way it likes, and with a few hundred from a few dozen
# records one near copy is no class at all. A thousand is ten pairs a bin.
MIN_CANDIDATES = 1000
# The fixed cut where no match model speaks (too few candidates to fit
# one, or an online query before any report): the cut the default mode had
# before it was calibrated, measured on the restaurant data (F1 within 0.01
# of its best from 0.68 to 0.74).
FALLBACK_CUT = 0.7
# The share of the non-matches whose similarities may take any shape:
# unrelated records pile up wherever their shared words put them (several
# humps, in every labeled set measured). Only their top tenth, where the
# matches begin, is required to fall off.
BULK = 0.9
# EM starts from "pairs at s or more are matches" for each of these s and
# keeps the likeliest fit: matches may sit anywhere from a half to one.
STARTS = (0.4, 0.6, 0.8)
MAX_ROUNDS = 5000
# Fits from different starts within one nat of log-likelihood of the best
# are one answer, averaged: a likelihood ratio under e is "not worth more
# than a bare mention" (Kass and Raftery's scale of evidence). On the
# restaurants a start stuck 2.1 nats lower, averaged in with its 6%, moved a
# level's cut from 0.69 to 0.81.
TIE = 1.0
# Log-likelihood (nats) a round must still gain: a millionth of a nat moves
# no bin's probability by a visible amount.
TOLERANCE = 1e-6
# A thousandth of a pair added to every bin of each class: a class is never
# certain to be absent from a bin, so EM can move pairs between the classes
# (with exact zeros the start would be a fixed point).
PSEUDO_COUNT = 1e-3
# Levels of number agreement (``similarity.AGREEMENT``).
LEVELS = len(AGREEMENT)
# Half a pair added to each level's count in each class (Jeffreys' prior
# for a share): a level seen among the matches only, or the non-matches
# only, gets a large likelihood ratio, never an infinite one.
LEVEL_PRIOR = 0.5
# A bin's share of matches read from its pairs' levels starts from the
# similarity's share, which counts as one pair of evidence: a bin of one or
# two pairs keeps much of what the similarity says, a bin of hundreds is
# read from its own levels. (As ten pairs, the people set's estimated recall
# was off by 0.026 instead of 0.010; no other labeled set moved.)
SHARE_PRIOR = 1.0
# Labels recalibrate the model's log-odds as p' = sigmoid(a + b logit(p)),
# a and b with normal priors centred on the model as fitted (a = 0, b = 1).
# A shift of 1 multiplies every pair's odds by e; with a spread of a half,
# four labels that all contradict the model's surest pairs move it about
# that far, and five labels near the cut move it hardly at all: labels
# sharpen the model, they do not replace it.
SHIFT_SPREAD = 0.5
# A scale of 1 +- 0.1: labels can make the model surer or less sure, never
# turn it around. The scale multiplies log-odds of up to 14 (a millionth),
# so a tenth of it moves a sure pair's odds as far as a shift of 1 does.
SCALE_SPREAD = 0.1
MIN_SCALE = 0.05
# Probabilities of exactly 0 or 1 (no pair of the class in that bin) are
# taken as a millionth from them: their odds are large, not infinite.
LOGIT_BOUND = 1e-6
NEWTON_ROUNDS = 50


def keeps_by_similarity(similarities: np.ndarray, cut: float | None = None) -> np.ndarray:
    """Which pairs are kept where no model decides (none was fitted, or
    there is none yet, or a fixed ``cut`` overrides it): those at or
    above ``cut``, else at or above ``FALLBACK_CUT``."""
    return np.asarray(similarities) >= (FALLBACK_CUT if cut is None else cut)


def _bins(similarities: np.ndarray | Sequence[float]) -> np.ndarray:
    return np.clip((np.asarray(similarities, dtype=np.float64) * BINS).astype(np.int64), 0, BINS - 1)


def histogram(similarities: np.ndarray, levels: np.ndarray | None = None) -> np.ndarray:
    """Counts of similarities in ``BINS`` equal bins over [0, 1]; with the
    pairs' number agreement ``levels``, one row of ``BINS`` per level."""
    index = _bins(similarities)
    if levels is None:
        return np.bincount(index, minlength=BINS).astype(np.float64)
    flat = np.asarray(levels, dtype=np.int64) * BINS + index
    return np.bincount(flat, minlength=LEVELS * BINS).astype(np.float64).reshape(LEVELS, BINS)


def _by_level(posterior: np.ndarray, ratios: np.ndarray | Sequence[float]) -> np.ndarray:
    """Match probability per level (rows) and bin (columns), from each bin's
    probability and each level's likelihood ratio: odds times ratio (0 and
    1 stay as they are)."""
    posterior = np.asarray(posterior)[np.newaxis, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = posterior / (1.0 - posterior) * np.asarray(ratios)[:, np.newaxis]
        return np.where(posterior >= 1.0, 1.0, np.where(posterior <= 0.0, 0.0, odds / (1.0 + odds)))


def _isotonic(values: np.ndarray, increasing: bool) -> np.ndarray:
    """The non-decreasing (or non-increasing) sequence closest to ``values``
    in least squares: pool adjacent violators."""
    if not increasing:
        return _isotonic(values[::-1], True)[::-1]
    means: list[float] = []
    sizes: list[int] = []
    for value in values.tolist():
        means.append(value)
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            size = sizes[-2] + sizes[-1]
            means[-2:] = [(means[-2] * sizes[-2] + means[-1] * sizes[-1]) / size]
            sizes[-2:] = [size]
    return np.repeat(means, sizes)


def _tail_start(weights: np.ndarray) -> int:
    """The bin holding the ``BULK`` quantile of ``weights``."""
    return int(np.searchsorted(np.cumsum(weights / weights.sum()), BULK))


def _falling_tail(weights: np.ndarray) -> np.ndarray:
    """The probability vector closest to ``weights / weights.sum()`` that is
    free below its ``BULK`` quantile and non-increasing from there on."""
    shares = weights / weights.sum()
    start = _tail_start(weights)
    return np.concatenate([shares[:start], _isotonic(shares[start:], False)])


def _unimodal(weights: np.ndarray) -> np.ndarray:
    """The probability vector rising to the heaviest bin of ``weights`` and
    falling after it, closest to ``weights / weights.sum()``."""
    shares = weights / weights.sum()
    mode = int(np.argmax(shares))
    return np.concatenate([_isotonic(shares[: mode + 1], True), _isotonic(shares[mode + 1 :], False)]) \
        if mode + 1 < BINS else _isotonic(shares, True)


def _log_likelihood(counts: np.ndarray, density: np.ndarray) -> float:
    used = counts > 0
    return float(np.sum(counts[used] * np.log(np.maximum(density[used], 1e-300))))


@dataclass(frozen=True)
class MatchModel:
    """A fitted two-class model of candidate similarities.

    ``posterior[k]`` is the probability that a pair in bin k (similarity in
    ``[k / BINS, (k + 1) / BINS)``) is a match, whatever its level: the
    bin's share of matches (by the similarity, lowered where the bin's
    levels show fewer); ``counts`` the candidates per bin; ``match`` and
    ``nonmatch`` the two classes' expected pairs per bin. ``levels`` holds
    the candidates per bin for each level of number agreement and
    ``ratios`` each level's likelihood ratio (empty when the pairs' levels
    were not given: then the similarity alone decides).
    """

    prior: float
    counts: tuple[float, ...]
    match: tuple[float, ...]
    nonmatch: tuple[float, ...]
    posterior: tuple[float, ...]
    rounds: int = 0
    gain: float = 0.0
    fitted: bool = True
    levels: tuple[tuple[float, ...], ...] = ()
    ratios: tuple[float, ...] = ()
    same: tuple[tuple[float, ...], ...] = ()
    different: tuple[tuple[float, ...], ...] = ()

    @property
    def candidates(self) -> int:
        return int(round(sum(self.counts)))

    @property
    def only_copies(self) -> bool:
        """Whether the fit found no class of matches among the similarities
        (a second class did not pay for itself): only copies are kept."""
        return self.fitted and not any(self.posterior[:-1])

    @property
    def cut(self) -> float:
        """The smallest similarity whose bin is at least half matches
        (above 1 when no bin reaches it);
        ``FALLBACK_CUT`` when not fitted. Each level of number agreement has
        its own (:meth:`cuts`)."""
        if not self.fitted:
            return FALLBACK_CUT
        # Without levels the table's one row is the similarity's probability, labels included.
        return self._first_kept(self._table[0] if not self.ratios else np.asarray(self.posterior))

    def cuts(self) -> dict[str, float]:
        """The cut of each level of number agreement some candidate has."""
        if not self.fitted or not self.ratios:
            return {}
        return {AGREEMENT[level]: self._first_kept(row)
                for level, row in enumerate(self._table) if sum(self.levels[level])}

    @staticmethod
    def _first_kept(probabilities: np.ndarray) -> float:
        kept = np.flatnonzero(probabilities >= 0.5)
        return float(kept[0]) / BINS if len(kept) else math.inf

    @cached_property
    def _table(self) -> np.ndarray:
        """Match probability per level and bin (one row without levels);
        worked out once, as an online query asks it for every candidate."""
        posterior = np.asarray(self.posterior)
        if not self.ratios:
            table = posterior[np.newaxis, :]
        else:
            table = _by_level(posterior, self.ratios)
        return _labeled(table, self) if self.same else table

    def probability(self, similarity: float, level: int | None = None) -> float | None:
        """Probability that a pair of this similarity (and this level of
        number agreement, when given) is a match; ``None`` when the model was
        not fitted."""
        found = self.probabilities(np.array([similarity]), None if level is None else np.array([level]))
        return found[0]

    def probabilities(self, similarities: np.ndarray, levels: np.ndarray | None = None) -> list[float | None]:
        if not self.fitted:
            return [None] * len(similarities)
        table = self._table
        rows = np.zeros(len(similarities), np.int64) if levels is None or not self.ratios else np.asarray(levels)
        return table[rows, _bins(similarities)].tolist()

    def keeps(self, similarities: np.ndarray, levels: np.ndarray | None = None,
              cut: float | None = None) -> np.ndarray:
        """Which pairs are kept: those at or above ``cut`` when one is
        given, else the matches (probability at least 1/2; similarity at
        least ``FALLBACK_CUT`` when the model was not fitted)."""
        if cut is not None or not self.fitted:
            return keeps_by_similarity(similarities, cut)
        return np.asarray(self.probabilities(similarities, levels)) >= 0.5

    def estimates(self, cut: float | None = None) -> dict[str, float] | None:
        """Expected true pairs among the candidates, and the precision and
        recall of keeping the pairs the model calls matches (or those at or
        above a fixed ``cut``); ``None`` when the model was not fitted."""
        if not self.fitted:
            return None
        counts = np.asarray(self.levels) if self.ratios else np.asarray(self.counts)[np.newaxis, :]
        table = self._table
        expected = counts * table
        if cut is None:
            kept = table >= 0.5
        elif math.isfinite(cut):
            kept = np.broadcast_to(np.arange(BINS) >= math.ceil(cut * BINS - 1e-9), table.shape)
        else:
            kept = np.zeros(table.shape, bool)
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
                "gain": self.gain, "fitted": self.fitted, "levels": [list(row) for row in self.levels],
                "ratios": list(self.ratios), "same": [list(row) for row in self.same],
                "different": [list(row) for row in self.different]}

    @classmethod
    def from_dict(cls, data: dict) -> MatchModel:
        if data.get("bins") != BINS:
            raise ValueError(f"a model of {data.get('bins')} bins, this version reads {BINS}")
        return cls(prior=float(data["prior"]), counts=tuple(data["counts"]), match=tuple(data["match"]),
                   nonmatch=tuple(data["nonmatch"]), posterior=tuple(data["posterior"]),
                   rounds=int(data.get("rounds", 0)), gain=float(data.get("gain", 0.0)),
                   fitted=bool(data.get("fitted", True)),
                   levels=tuple(tuple(row) for row in data.get("levels", ())), ratios=tuple(data.get("ratios", ())),
                   same=tuple(tuple(row) for row in data.get("same", ())),
                   different=tuple(tuple(row) for row in data.get("different", ())))


def fit(counts: Sequence[float] | np.ndarray) -> MatchModel:
    """Fit the two-class model to a histogram of candidate similarities.

    Args:
        counts: candidate pairs per bin, ``BINS`` values, or a row of them for
            each of the ``LEVELS`` of number agreement (see :func:`histogram`).

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
        return _with_levels(fit(counts.sum(axis=0)), counts)
    if counts.shape != (BINS,):
        raise ValueError(f"need {BINS} bin counts or {LEVELS} rows of them, got {counts.shape}")
    total = counts.sum()
    single = _falling_tail(counts + PSEUDO_COUNT)
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


def with_labels(model: MatchModel, same: np.ndarray, different: np.ndarray) -> MatchModel:
    """``model`` sharpened by pairs a person labeled: every probability is
    recalibrated on the log-odds scale, ``p' = sigmoid(a + b logit(p))``,
    with a (a shift) and b (a scale) fitted to the labels by maximum a
    posteriori, their priors centred on the model as fitted (a = 0, b = 1;
    ``SHIFT_SPREAD``, ``SCALE_SPREAD``). Platt's scaling, with a prior so a
    few labels move it a little and many move it far. The order of the
    cells never changes (b > 0), so each level keeps one cut. With no
    labels the model is unchanged.

    Args:
        model: the fitted model.
        same, different: labeled candidate pairs per cell, shaped as the
            model's histogram (:func:`histogram` of the labeled pairs'
            similarities and levels).

    Returns:
        The model carrying the labels; its probabilities, cuts and
        estimates use them. An unfitted model is returned as it is.

    Raises:
        ValueError: when the label histograms do not have the model's shape.
    """
    if not model.fitted:
        return model
    same, different = np.asarray(same, np.float64), np.asarray(different, np.float64)
    rows = LEVELS if model.ratios else 1
    for name, cells in (("same", same), ("different", different)):
        if cells.reshape(-1).shape != (rows * BINS,):
            raise ValueError(f"{name} labels need {rows} rows of {BINS} bins, got {cells.shape}")
    if not (same.sum() + different.sum()):
        return replace(model, same=(), different=())
    return replace(model, same=_cells(same.reshape(rows, BINS)), different=_cells(different.reshape(rows, BINS)))


def _cells(table: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(row) for row in table.tolist())


def _labeled(table: np.ndarray, model: MatchModel) -> np.ndarray:
    """The probability table recalibrated by the model's labels
    (:func:`with_labels`)."""
    same, different = np.asarray(model.same), np.asarray(model.different)
    logits = _logit(table)
    shift, scale = _recalibration(logits, same, different)
    return 1.0 / (1.0 + np.exp(-(shift + scale * logits)))


def _logit(p: np.ndarray) -> np.ndarray:
    clipped = np.clip(p, LOGIT_BOUND, 1.0 - LOGIT_BOUND)
    return np.log(clipped / (1.0 - clipped))


def _recalibration(logits: np.ndarray, same: np.ndarray, different: np.ndarray) -> tuple[float, float]:
    """The shift a and scale b of ``p' = sigmoid(a + b logit(p))`` that the
    labels make most probable, with a normal prior on each centred on the
    model as fitted (a = 0, b = 1): Newton's method on the log posterior
    (concave), each step halved until it gains, as a full step overshoots
    where labels sit at probabilities near 0 or 1."""
    used = (same + different).reshape(-1) > 0
    z, n_same, n_diff = logits.reshape(-1)[used], same.reshape(-1)[used], different.reshape(-1)[used]
    centre = np.array([0.0, 1.0])
    precision = np.array([1.0 / SHIFT_SPREAD**2, 1.0 / SCALE_SPREAD**2])

    def log_posterior(params: np.ndarray) -> float:
        x = params[0] + params[1] * z
        # log sigmoid(x) = -log(1 + e^-x), in a form that does not overflow.
        return float(-(n_same * np.logaddexp(0.0, -x)).sum() - (n_diff * np.logaddexp(0.0, x)).sum()
                     - 0.5 * (precision * (params - centre) ** 2).sum())

    params = centre.copy()
    for _ in range(NEWTON_ROUNDS):
        p = 1.0 / (1.0 + np.exp(-(params[0] + params[1] * z)))
        residual, weight = n_same - (n_same + n_diff) * p, (n_same + n_diff) * p * (1.0 - p)
        gradient = np.array([residual.sum(), (residual * z).sum()]) - precision * (params - centre)
        hessian = -np.array([[weight.sum(), (weight * z).sum()], [(weight * z).sum(), (weight * z * z).sum()]])
        step = np.linalg.solve(hessian - np.diag(precision), gradient)
        before = log_posterior(params)
        while log_posterior(params - step) < before and np.abs(step).max() > TOLERANCE:
            step = step / 2.0
        params = params - step
        if np.abs(step).max() <= TOLERANCE:
            break
    # A scale at or below 0 would turn the order of the cells around.
    return float(params[0]), float(max(params[1], MIN_SCALE))


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


def _with_levels(model: MatchModel, levels: np.ndarray) -> MatchModel:
    """``model`` with each level's likelihood ratio: EM for the two classes'
    level distributions, the similarity's probabilities held fixed (see the
    module's docstring)."""
    if not model.fitted:
        return model
    r = np.asarray(model.posterior)
    sure = r >= 0.5
    tail = _tail_start(np.asarray(model.nonmatch) + PSEUDO_COUNT)
    ratios = np.ones(LEVELS)
    for _ in range(MAX_ROUNDS):
        p = _by_level(r, ratios)
        match = (levels[:, sure] * p[:, sure]).sum(axis=1) + LEVEL_PRIOR
        nonmatch = (levels[:, tail:] * (1.0 - p[:, tail:])).sum(axis=1) + LEVEL_PRIOR
        before, ratios = ratios, (match / match.sum()) / (nonmatch / nonmatch.sum())
        if np.allclose(ratios, before, rtol=TOLERANCE, atol=0.0):
            break
    # A level no candidate has says nothing.
    ratios[levels.sum(axis=1) == 0] = 1.0
    counts = levels.sum(axis=0)
    shares = _level_shares(r, ratios, levels, counts)
    return replace(model, prior=float((shares * counts).sum() / counts.sum()), match=tuple((shares * counts).tolist()),
                   nonmatch=tuple(((1.0 - shares) * counts).tolist()), posterior=tuple(shares.tolist()),
                   levels=_cells(levels), ratios=tuple(ratios.tolist()))


def _level_shares(r: np.ndarray, ratios: np.ndarray, levels: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each bin's share of matches as its pairs' levels tell it, never above
    the similarity's ``r``: EM for one share per bin with both classes'
    level distributions held fixed, the similarity's share counting as
    ``SHARE_PRIOR`` pairs of evidence; made non-decreasing in similarity
    again (see the module's docstring). ``counts``: the pairs per bin."""
    shares = r.copy()
    for _ in range(MAX_ROUNDS):
        p = _by_level(shares, ratios)
        before = shares
        shares = np.minimum(((levels * p).sum(axis=0) + SHARE_PRIOR * r) / (counts + SHARE_PRIOR), r)
        if np.abs(shares - before).max() < TOLERANCE:
            break
    return np.maximum.accumulate(shares)


def _classes(counts: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The M-step's shapes: non-matches free in their bulk and falling in
    their tail; matches unimodal, and absent from the non-matches' bulk,
    where any split between the classes would fit the counts equally well."""
    weights = counts * (1.0 - r) + PSEUDO_COUNT
    u = _falling_tail(weights)
    m = counts * r + PSEUDO_COUNT
    m[: _tail_start(weights)] = 0.0
    return _unimodal(m), u


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
