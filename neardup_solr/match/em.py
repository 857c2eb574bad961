"""What the text model's EM fits share: the shapes its classes are held
to, a class's floor in every bin, and when a fit stops.

The non-matches may take any shape in their bulk (the lower ``BULK`` of
them) and only fall off above it (:func:`falling_tail`); the matches rise
to one peak and fall after it (:func:`unimodal`). Each shape is a class's
weighted histogram projected on it by isotonic regression (pool adjacent
violators), its maximum likelihood estimate under the constraint
(Grenander).
"""

from __future__ import annotations

import numpy as np

# The share of the non-matches whose similarities may take any shape:
# unrelated records pile up wherever their shared words put them (several
# humps, in every labeled set measured). Only their top tenth, where the
# matches begin, is required to fall off.
BULK = 0.9
MAX_ROUNDS = 5000
# Log-likelihood (nats) a round must still gain: a millionth of a nat moves
# no bin's probability by a visible amount.
TOLERANCE = 1e-6
# A thousandth of a pair added to every bin of each class: a class is never
# certain to be absent from a bin, so EM can move pairs between the classes
# (with exact zeros the start would be a fixed point).
PSEUDO_COUNT = 1e-3


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


def tail_start(weights: np.ndarray) -> int:
    """The bin holding the ``BULK`` quantile of ``weights``."""
    return int(np.searchsorted(np.cumsum(weights / weights.sum()), BULK))


def falling_tail(weights: np.ndarray) -> np.ndarray:
    """The probability vector closest to ``weights / weights.sum()`` that is
    free below its ``BULK`` quantile and non-increasing from there on."""
    shares = weights / weights.sum()
    start = tail_start(weights)
    return np.concatenate([shares[:start], _isotonic(shares[start:], False)])


def unimodal(weights: np.ndarray) -> np.ndarray:
    """The probability vector rising to the heaviest bin of ``weights`` and
    falling after it, closest to ``weights / weights.sum()``."""
    shares = weights / weights.sum()
    mode = int(np.argmax(shares))
    return np.concatenate([_isotonic(shares[: mode + 1], True), _isotonic(shares[mode + 1 :], False)]) \
        if mode + 1 < len(shares) else _isotonic(shares, True)
