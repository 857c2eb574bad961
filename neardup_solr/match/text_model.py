"""The text model: which candidate pairs are duplicates, as a fitted
:class:`MatchModel` answers it, by a pair's similarity and its numbers'
agreement.

It reads the candidates' similarities on a histogram of ``BINS`` equal
bins (:func:`histogram`; a row of them for each of the ``LEVELS`` of number
agreement). :mod:`~neardup_solr.match.mixture` fits it without labels,
:mod:`~neardup_solr.match.number_levels` weighs the numbers' agreement beside the
similarity, and labels a person gave sharpen it (:func:`with_labels`,
:mod:`~neardup_solr.match.calibration`). Where no model speaks, pairs are
kept from ``FALLBACK_CUT`` (:func:`keeps_by_similarity`).

A pair is a match when its probability is at least 1/2; probabilities never
fall as the similarity rises, so the matches of a level are the pairs at or
above one similarity, its **cut**. With the classes come the estimates a
person needs without gold pairs:

- true pairs among the candidates: ``sum c_k r_k``;
- precision of the kept pairs: the mean probability of the kept pairs;
- recall: the kept pairs' expected matches over all expected matches among
  the candidates (pairs the LSH never proposed are not counted; at the
  default banding they are about 1% of the true pairs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from .calibration import recalibration
from .similarity import AGREEMENT

__all__ = ["BINS", "LEVELS", "MatchModel", "histogram", "with_labels", "keeps_by_similarity"]

# Bins of width 0.01: finer than any difference a person would act on, and
# coarse enough that a bin of a small data set is not empty by chance alone.
BINS = 100
# The fixed cut where no match model speaks: the default mode's cut before it was calibrated (docs/scale.md).
FALLBACK_CUT = 0.7
# Levels of number agreement (``similarity.AGREEMENT``).
LEVELS = len(AGREEMENT)
# Probabilities of exactly 0 or 1 (no pair of the class in that bin) are
# taken as a millionth from them: their odds are large, not infinite.
LOGIT_BOUND = 1e-6


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


def by_level(posterior: np.ndarray, ratios: np.ndarray | Sequence[float]) -> np.ndarray:
    """Match probability per level (rows) and bin (columns), from each bin's
    probability and each level's likelihood ratio: odds times ratio (0 and
    1 stay as they are)."""
    posterior = np.asarray(posterior)[np.newaxis, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = posterior / (1.0 - posterior) * np.asarray(ratios)[:, np.newaxis]
        return np.where(posterior >= 1.0, 1.0, np.where(posterior <= 0.0, 0.0, odds / (1.0 + odds)))


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
            table = by_level(posterior, self.ratios)
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


def with_labels(model: MatchModel, same: np.ndarray, different: np.ndarray) -> MatchModel:
    """``model`` sharpened by pairs a person labeled: every probability is
    recalibrated on the log-odds scale, ``p' = sigmoid(a + b logit(p))``,
    with a (a shift) and b (a scale) fitted to the labels by maximum a
    posteriori, their priors centred on the model as fitted (a = 0, b = 1;
    :mod:`~neardup_solr.match.calibration`). Platt's scaling, with a prior so a
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
    return replace(model, same=as_tuples(same.reshape(rows, BINS)), different=as_tuples(different.reshape(rows, BINS)))


def as_tuples(table: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(row) for row in table.tolist())


def _labeled(table: np.ndarray, model: MatchModel) -> np.ndarray:
    """The probability table recalibrated by the model's labels
    (:func:`with_labels`)."""
    same, different = np.asarray(model.same), np.asarray(model.different)
    logits = _logit(table)
    shift, scale = recalibration(logits, same, different)
    return 1.0 / (1.0 + np.exp(-(shift + scale * logits)))


def _logit(p: np.ndarray) -> np.ndarray:
    clipped = np.clip(p, LOGIT_BOUND, 1.0 - LOGIT_BOUND)
    return np.log(clipped / (1.0 - clipped))
