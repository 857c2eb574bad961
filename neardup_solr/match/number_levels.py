"""The numbers' agreement, a second piece of evidence beside the
similarity (:func:`with_levels`).

The numbers' agreement (``similarity.number_agreement``: none on one side,
none shared, two or more differ, one differs, all agree) is weighed as
Fellegi and Sunter weigh a field's agreement: the odds of the similarity
alone are multiplied by the level's likelihood ratio
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
the hump half to the matches. Their levels say otherwise: a bin in which
few pairs have the numbers most matches have is not half matches. So each
bin's share is fitted again from its own pairs' levels (EM for one share
per bin, ``a`` and ``b`` held fixed, starting from and drawn towards the
similarity's share by ``SHARE_PRIOR``), and it may only fall: look-alike
non-matches share numbers more often than ``b`` says (a chain's branches
one telephone number, a household one postcode), so where the levels would
raise a share they overstate the matches, as the similarity does where
they lower it, and the smaller of the two is kept (docs/scale.md has what
both measured). Each level then has its own cut; a level no candidate has
keeps the odds of the similarity alone.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .em import MAX_ROUNDS, PSEUDO_COUNT, TOLERANCE, tail_start
from .text_model import LEVELS, MatchModel, as_tuples, by_level

# Half a pair added to each level's count in each class (Jeffreys' prior
# for a share): a level seen among the matches only, or the non-matches
# only, gets a large likelihood ratio, never an infinite one.
LEVEL_PRIOR = 0.5
# The similarity's share counts as one pair: small bins keep it, large ones follow their levels (docs/scale.md).
SHARE_PRIOR = 1.0


def with_levels(model: MatchModel, levels: np.ndarray) -> MatchModel:
    """``model`` with each level's likelihood ratio: EM for the two classes'
    level distributions, the similarity's probabilities held fixed (see the
    module's docstring)."""
    if not model.fitted:
        return model
    r = np.asarray(model.posterior)
    sure = r >= 0.5
    tail = tail_start(np.asarray(model.nonmatch) + PSEUDO_COUNT)
    ratios = np.ones(LEVELS)
    for _ in range(MAX_ROUNDS):
        p = by_level(r, ratios)
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
                   levels=as_tuples(levels), ratios=tuple(ratios.tolist()))


def _level_shares(r: np.ndarray, ratios: np.ndarray, levels: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each bin's share of matches as its pairs' levels tell it, never above
    the similarity's ``r``: EM for one share per bin with both classes'
    level distributions held fixed, the similarity's share counting as
    ``SHARE_PRIOR`` pairs of evidence; made non-decreasing in similarity
    again (see the module's docstring). ``counts``: the pairs per bin."""
    shares = r.copy()
    for _ in range(MAX_ROUNDS):
        p = by_level(shares, ratios)
        before = shares
        shares = np.minimum(((levels * p).sum(axis=0) + SHARE_PRIOR * r) / (counts + SHARE_PRIOR), r)
        if np.abs(shares - before).max() < TOLERANCE:
            break
    return np.maximum.accumulate(shares)
