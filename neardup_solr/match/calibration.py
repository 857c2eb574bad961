"""Labels a person gave, as the text model reads them: its log-odds
recalibrated as ``p' = sigmoid(a + b logit(p))`` (Platt's scaling), the
shift a and scale b those labels make most probable with priors centred on
the model as fitted, so a few labels near the cut move the cut, and with
none the model is what the data alone gives
(:func:`~neardup_solr.match.text_model.with_labels`).
"""

from __future__ import annotations

import numpy as np

from .em import TOLERANCE

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
NEWTON_ROUNDS = 50


def recalibration(logits: np.ndarray, same: np.ndarray, different: np.ndarray) -> tuple[float, float]:
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
