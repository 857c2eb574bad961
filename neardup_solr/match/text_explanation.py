"""Why a pair of records of one text has its probability.

A pair of records of one text has two pieces of evidence (``text_model.py``):
its text similarity, whose share of matches gives the first step, and the
agreement of its numbers, the rest of the way to the pair's probability.
"""

from __future__ import annotations

import math

import numpy as np

from ..evidence import Explanation, Step
from .text_model import BINS, LOGIT_BOUND, MatchModel
from .similarity import AGREEMENT


def _bits(p: float) -> float:
    p = min(max(p, LOGIT_BOUND), 1.0 - LOGIT_BOUND)
    return math.log2(p / (1.0 - p))


def of_text(a: str, b: str, model: MatchModel | None, similarity: float, level: int) -> Explanation:
    """The explanation of a pair of records of one text: the odds its
    similarity's bin gives, then what its numbers' agreement adds or takes
    (the rest of the way to its probability under ``model``)."""
    first = Step("similarity", f"{similarity:.3f}", 0.0)
    numbers = Step("numbers", AGREEMENT[level], 0.0)
    if model is None or not model.fitted:
        return Explanation(a, b, (first, numbers), fitted=False)
    p = model.probability(similarity, level)
    shown = model.probabilities(np.array([similarity]))[0] if not model.ratios else \
        model.posterior[min(int(similarity * BINS), BINS - 1)]
    alone = _bits(float(shown))
    return Explanation(a, b, (Step("similarity", f"{similarity:.3f}", alone),
                              Step("numbers", AGREEMENT[level], _bits(float(p)) - alone)))
