"""The match model, against distributions whose answer is known in closed form."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.match.em import _isotonic
from neardup_solr.match.mixture import fit
from neardup_solr.match.text_model import BINS, FALLBACK_CUT, LEVELS, MatchModel, histogram, keeps_by_similarity, with_labels
from neardup_solr.match.similarity import AGREEMENT


def isotonic_reference(values: list[float]) -> list[float]:
    """Least-squares non-decreasing fit by the min-max formula
    f_i = max_{j<=i} min_{k>=i} mean(values[j..k]): slow, and obviously right."""
    n = len(values)
    return [max(min(sum(values[j:k + 1]) / (k + 1 - j) for k in range(i, n)) for j in range(i + 1))
            for i in range(n)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=30).filter(lambda v: sum(v) > 0),
       st.booleans())
def test_monotone_fit_is_the_isotonic_regression(counts, increasing):
    weights = np.array(counts, dtype=float)
    shares = (weights / weights.sum()).tolist()
    expected = isotonic_reference(shares if increasing else shares[::-1])
    if not increasing:
        expected = expected[::-1]
    assert _isotonic(weights / weights.sum(), increasing).tolist() == pytest.approx(expected, abs=1e-12)


def beta_pdf(x: np.ndarray, a: float, b: float) -> np.ndarray:
    return x ** (a - 1) * (1 - x) ** (b - 1) / math.exp(math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))


@pytest.mark.parametrize("non_match, match, within, estimates_within", [
    # Classes that overlap little: the cut is found to within two bins, the
    # estimates to within the 0.05 the labeled sets are held to.
    ((1.5, 8.0), (14.0, 2.0), 0.02, 0.05),
    # A long tail of matches into the non-matches: where both classes are
    # thin, the histogram alone places the cut less well (the F1 check below
    # bounds the cost) and gives the tail to the non-matches, so the
    # precision is underestimated by up to 0.06.
    ((1.0, 6.0), (9.0, 1.5), 0.06, 0.06),
])
def test_recovers_the_cut_of_two_known_distributions(non_match, match, within, estimates_within):
    share, (au, bu), (am, bm) = 0.04, non_match, match
    rng = np.random.default_rng(7)
    n = 200_000
    is_match = rng.random(n) < share
    scores = np.where(is_match, rng.beta(am, bm, n), rng.beta(au, bu, n))
    # The true cut: where share * f_m(s) = (1 - share) * f_u(s), found on a fine grid.
    grid = np.linspace(0.001, 0.999, 99_801)
    true_cut = grid[np.argmax(share * beta_pdf(grid, am, bm) >= (1 - share) * beta_pdf(grid, au, bu))]
    model = fit(histogram(scores))
    assert model.cut == pytest.approx(true_cut, abs=within)
    assert model.prior == pytest.approx(share, abs=0.01)
    kept = scores >= model.cut
    estimated = model.estimates()
    assert estimated["precision"] == pytest.approx(is_match[kept].mean(), abs=estimates_within)
    assert estimated["recall"] == pytest.approx(is_match[kept].sum() / is_match.sum(), abs=estimates_within)
    assert estimated["true_pairs"] == pytest.approx(is_match.sum(), rel=2 * estimates_within)

    def f1(cut: float) -> float:
        kept = scores >= cut
        hits = (is_match & kept).sum()
        return 2 * hits / (kept.sum() + is_match.sum())

    # Wherever the cut lands, little is lost against the best cut there is
    # (0.014 of F1 where the classes overlap).
    assert f1(model.cut) >= max(f1(c) for c in np.linspace(0.3, 0.95, 66)) - 0.02


@pytest.mark.parametrize("centre, highest_non_match", [(0.5, 0.38), (0.9, 0.78)])
def test_duplicates_near_one_similarity_get_a_cut_between_the_classes(centre, highest_non_match):
    rng = np.random.default_rng(11)
    # Non-matches fall off from 0 to their highest value; duplicates sit close to the centre.
    non_matches = highest_non_match * rng.beta(1.0, 3.0, 50_000)
    duplicates = np.clip(rng.normal(centre, 0.02, 800), 0, 1)
    model = fit(histogram(np.concatenate([non_matches, duplicates])))
    assert non_matches.max() < model.cut <= duplicates.min() + 1.0 / BINS
    assert model.estimates()["true_pairs"] == pytest.approx(len(duplicates), rel=0.05)


def test_no_duplicates_no_match_class():
    rng = np.random.default_rng(3)
    scores = rng.beta(1.0, 5.0, 30_000)
    assert scores.max() < 0.99
    model = fit(histogram(scores))
    assert model.cut == 0.99  # only copies would be kept, and there are none
    assert model.estimates()["true_pairs"] == 0.0
    assert set(model.probabilities(scores)) == {0.0}


def test_too_few_candidates_are_not_fitted():
    model = fit(histogram(np.array([1.0] * 7 + [0.2, 0.31])))
    assert not model.fitted and model.cut == FALLBACK_CUT
    assert model.probability(1.0) is None and model.estimates() is None


def test_without_a_fitted_model_pairs_are_kept_by_similarity_alone():
    """The one rule for keeping pairs where no model decides: the online
    search before any report, an unfitted model, a fixed cut."""
    scores = np.array([0.2, FALLBACK_CUT - 0.01, FALLBACK_CUT, 0.95, 1.0])
    assert keeps_by_similarity(scores).tolist() == [False, False, True, True, True]
    assert keeps_by_similarity(scores, 0.95).tolist() == [False, False, False, True, True]
    unfitted = fit(histogram(np.array([1.0] * 7 + [0.2, 0.31])))
    for cut in (None, 0.1, 0.95):
        assert unfitted.keeps(scores, cut=cut).tolist() == keeps_by_similarity(scores, cut).tolist()


def test_copies_are_matches_where_no_second_class_is_found():
    rng = np.random.default_rng(4)
    model = fit(histogram(np.concatenate([rng.beta(1.0, 5.0, 5000), [1.0] * 3])))
    assert model.cut == 0.99 and model.probability(1.0) == 1.0 and model.probability(0.5) == 0.0
    assert model.estimates()["true_pairs"] == 3.0


def test_the_probability_never_falls_as_similarity_rises():
    rng = np.random.default_rng(5)
    scores = np.concatenate([rng.beta(1.2, 4.0, 20_000), rng.beta(6.0, 2.0, 2_000), rng.uniform(0, 1, 500)])
    posterior = np.asarray(fit(histogram(scores)).posterior)
    assert (np.diff(posterior) >= -1e-12).all()


def test_a_model_survives_its_dictionary():
    rng = np.random.default_rng(9)
    model = fit(histogram(np.concatenate([rng.beta(1, 6, 5000), rng.beta(9, 1.5, 300)])))
    again = MatchModel.from_dict(model.to_dict())
    assert again == model
    assert again.probability(0.99) == model.posterior[-1]


def test_number_agreement_moves_each_levels_cut_the_way_its_evidence_points():
    """Two classes that overlap in similarity, told apart by their numbers:
    a match's numbers all agree 90% of the time, a non-match's rarely. The
    levels are drawn independently of the similarity within each class, so
    the likelihood ratio of each level is known: P(level | M) / P(level | U)."""
    rng = np.random.default_rng(21)
    # The similarities of the second case above: a long tail of matches
    # into the non-matches.
    n, share, (am, bm), (au, bu) = 200_000, 0.04, (9.0, 1.5), (1.0, 6.0)
    is_match = rng.random(n) < share
    scores = np.where(is_match, rng.beta(am, bm, n), rng.beta(au, bu, n))
    match_levels = np.array([0.05, 0.01, 0.01, 0.03, 0.90])
    nonmatch_levels = np.array([0.10, 0.85, 0.03, 0.01, 0.01])
    levels = np.where(is_match, rng.choice(LEVELS, n, p=match_levels), rng.choice(LEVELS, n, p=nonmatch_levels))
    model = fit(histogram(scores, levels))
    true_ratios = match_levels / nonmatch_levels
    # Each level's ratio is found within a factor of two (the non-matches'
    # levels are read from their tail, a few thousand pairs).
    assert np.all(np.abs(np.log(np.asarray(model.ratios) / true_ratios)) < math.log(2))
    cuts = model.cuts()
    assert cuts[AGREEMENT[4]] < model.cut < cuts[AGREEMENT[1]]
    kept = model.keeps(scores, levels)

    def f1(keep: np.ndarray) -> float:
        return 2 * (keep & is_match).sum() / (keep.sum() + is_match.sum())

    # Weighing the numbers beats the best cut of the similarity alone, and
    # comes within 0.01 of the best rule there is (the Bayes rule of the
    # true distributions).
    best_alone = max(f1(scores >= c) for c in np.linspace(0.2, 0.95, 76))
    odds = share * beta_pdf(scores, am, bm) / ((1 - share) * beta_pdf(scores, au, bu))
    bayes = odds * true_ratios[levels] >= 1.0
    assert f1(kept) > best_alone + 0.02
    assert f1(kept) >= f1(bayes) - 0.01
    estimated = model.estimates()
    assert estimated["precision"] == pytest.approx(is_match[kept].mean(), abs=0.05)
    assert estimated["recall"] == pytest.approx(is_match[kept].sum() / is_match.sum(), abs=0.05)


def test_levels_change_nothing_where_there_is_no_match_class():
    rng = np.random.default_rng(22)
    scores = rng.beta(1.0, 5.0, 30_000)
    levels = rng.integers(0, LEVELS, 30_000)
    model = fit(histogram(scores, levels))
    assert not any(model.keeps(scores, levels))
    assert model.estimates()["true_pairs"] == 0.0


def test_a_model_with_levels_survives_its_dictionary():
    rng = np.random.default_rng(23)
    scores = np.concatenate([rng.beta(1, 6, 5000), rng.beta(9, 1.5, 300)])
    levels = np.concatenate([rng.integers(0, 2, 5000), np.full(300, 4)])
    model = fit(histogram(scores, levels))
    again = MatchModel.from_dict(model.to_dict())
    assert again == model
    assert again.probability(0.5, 4) == model.probability(0.5, 4) > model.probability(0.5, 1)


def test_look_alike_non_matches_below_the_cut_do_not_teach_the_matches_levels():
    """People who share a household (one surname, one address, their own
    dates of birth and id numbers) are a hump of non-matches at a middle
    similarity, where the similarity alone half takes them for matches; their
    level ("two or more numbers differ") must not be read as a match's. The
    candidates of the person-record generator, with the generator's own
    truth per cell (``tests/fixtures/people_candidates.json``): keeping the cells
    the model calls matches gives precision and recall of at least 0.98."""
    data = json.loads((Path(__file__).parent.parent / "fixtures" / "people_candidates.json").read_text())
    pairs, matches = np.array(data["pairs"], float), np.array(data["matches"], float)
    model = fit(pairs)
    kept = model._table >= 0.5
    precision = matches[kept].sum() / pairs[kept].sum()
    recall = matches[kept].sum() / data["true_pairs"]
    assert precision >= 0.98 and recall >= 0.98


def test_look_alike_non_matches_are_not_counted_as_expected_matches():
    """The same household hump, above the non-matches' bulk, is given half to
    the matches by the similarity alone (about 160 expected matches where
    the generator made 17); the pairs' levels show it is not, and the
    estimates of what is kept come within the 0.05 the labeled sets are held
    to, measured on the generator's truth per cell."""
    data = json.loads((Path(__file__).parent.parent / "fixtures" / "people_candidates.json").read_text())
    pairs, matches = np.array(data["pairs"], float), np.array(data["matches"], float)
    model = fit(pairs)
    kept = model._table >= 0.5
    estimated = model.estimates()
    assert estimated["precision"] == pytest.approx(matches[kept].sum() / pairs[kept].sum(), abs=0.05)
    assert estimated["recall"] == pytest.approx(matches[kept].sum() / matches.sum(), abs=0.05)
    assert estimated["true_pairs"] == pytest.approx(matches.sum(), rel=0.05)


def _mixture_with_look_alikes(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Unrelated pairs, a hump of look-alike non-matches at 0.58 and matches
    near 0.83: the hump makes the similarity alone misplace the cut."""
    rng = np.random.default_rng(seed)
    n = 100_000
    kind = rng.choice(3, n, p=[0.93, 0.02, 0.05])
    scores = np.select([kind == 0, kind == 1, kind == 2],
                       [rng.beta(2, 7, n), rng.beta(30, 22, n), rng.beta(12, 2.5, n)])
    return scores, kind == 2


def _labels(scores: np.ndarray, is_match: np.ndarray, picked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return histogram(scores[picked[is_match[picked]]]), histogram(scores[picked[~is_match[picked]]])


def test_labels_near_the_cut_bring_the_model_closer_to_the_truth():
    """A hundred pairs labeled at random within 0.1 of the cut, drawn ten
    times: on average the kept pairs' F1 rises and the estimated precision's
    error shrinks by a third at least (from 0.048 to 0.024 with these
    draws)."""
    scores, is_match = _mixture_with_look_alikes(5)
    model = fit(histogram(scores))

    def f1_and_error(fitted: MatchModel) -> tuple[float, float]:
        kept = fitted.keeps(scores)
        found = (kept & is_match).sum()
        return 2 * found / (kept.sum() + is_match.sum()), abs(fitted.estimates()["precision"] - found / kept.sum())

    alone_f1, alone_error = f1_and_error(model)
    rng = np.random.default_rng(6)
    near = np.flatnonzero(np.abs(scores - model.cut) < 0.1)
    labeled = [f1_and_error(with_labels(model, *_labels(scores, is_match, rng.choice(near, 100, replace=False))))
               for _ in range(10)]
    assert np.mean([f for f, _ in labeled]) > alone_f1 + 0.005
    assert np.mean([e for _, e in labeled]) < alone_error * 2 / 3


def test_labels_that_disagree_move_the_cut_their_way_and_none_change_nothing():
    scores, is_match = _mixture_with_look_alikes(7)
    model = fit(histogram(scores))
    nothing = with_labels(model, np.zeros(BINS), np.zeros(BINS))
    assert nothing.probabilities(scores[:1000]) == model.probabilities(scores[:1000])
    # Pairs just above the cut all said to be different: the cut rises; just
    # below it all said to be the same: it falls.
    above = np.full(30, model.cut + 0.015)
    below = np.full(30, model.cut - 0.015)
    raised = with_labels(model, np.zeros(BINS), histogram(above))
    lowered = with_labels(model, histogram(below), np.zeros(BINS))
    assert lowered.cut < model.cut < raised.cut
    again = MatchModel.from_dict(raised.to_dict())
    assert again.cut == raised.cut and again.estimates() == raised.estimates()
