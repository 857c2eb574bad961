"""The field model and its training: EM against data drawn from a known model, explanations
that add up, a fit that cannot tell saying so, rare values weighing more."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.evidence import probability
from neardup_solr.fields import training
from neardup_solr.fields.comparisons import level_names
from neardup_solr.fields.model import UNSURE, FieldModel, ambiguity
from neardup_solr.fields.training import Patterns, Round, chance, fit, units_of
from neardup_solr.match.summary import FieldSummary, ReportSummary

KINDS = ("name", "code", "category")
# Each kind's level probabilities, "missing" first (never drawn here).
# A name's: missing, exact, swapped with the other name, Jaro-Winkler >= 0.92, >= 0.8, a nickname, an initial, different.
M = [np.array([0, 0.70, 0.005, 0.10, 0.08, 0.01, 0.035, 0.07]), np.array([0, 0.80, 0.10, 0.04, 0.06]), np.array([0, 0.95, 0.05])]
U = [np.array([0, 0.002, 0.0001, 0.001, 0.01, 0.0009, 0.005, 0.981]), np.array([0, 0.001, 0.02, 0.05, 0.929]),
     np.array([0, 0.2, 0.8])]


def draw(rng: np.random.Generator, shares: list[np.ndarray], count: int) -> np.ndarray:
    return np.stack([rng.choice(len(p), size=count, p=p) for p in shares], axis=1).astype(np.int8)


def test_em_recovers_the_model_the_candidates_were_drawn_from():
    rng = np.random.default_rng(3)
    # Every pair is a candidate here (no key chose them): the prior is the candidates' share of matches.
    matches, others = 3_000, 30_000
    total = matches + others
    levels = np.concatenate([draw(rng, M, matches), draw(rng, U, others)])
    u = chance(draw(rng, U, 1_000_000), KINDS)
    model = fit(levels, u, ["a", "b", "c"], KINDS, total_pairs=total)
    assert model.prior == pytest.approx(matches / total, rel=0.05)
    for f in range(3):
        assert np.asarray(model.units[f].m[1:]) == pytest.approx(M[f][1:], abs=0.02)
    assert model.separated
    p = model.probabilities(levels)
    # Its probabilities are calibrated: the expected matches are the matches.
    assert p.sum() == pytest.approx(matches, rel=0.03)
    assert p[:matches].mean() > 0.95 and p[matches:].mean() < 0.01


def test_fields_a_key_forced_to_agree_are_learned_from_the_other_candidates():
    rng = np.random.default_rng(4)
    total = 10_000_000
    # A key on field c (the category) made most candidates: they all agree on it, matches or not.
    keyed = np.concatenate([draw(rng, M, 1_000), draw(rng, U, 40_000)])
    keyed[:, 2] = 1
    others = np.concatenate([draw(rng, M, 2_000), draw(rng, U, 2_000)])
    levels = np.concatenate([keyed, others])
    usable = np.concatenate([np.full(len(keyed), 0b011), np.full(len(others), 0b111)])
    u = chance(draw(rng, U, 1_000_000), KINDS)
    model = fit(levels, u, ["a", "b", "c"], KINDS, total_pairs=total, usable=usable)
    assert model.units[2].m[1] == pytest.approx(0.95, abs=0.02)
    forced = fit(levels, u, ["a", "b", "c"], KINDS, total_pairs=total)  # as if the key read nothing
    assert forced.units[2].m[1] > 0.98


def test_a_fit_without_matches_says_it_cannot_tell():
    rng = np.random.default_rng(5)
    levels = draw(rng, U, 20_000)
    u = chance(draw(rng, U, 1_000_000), KINDS)
    model = fit(levels, u, ["a", "b", "c"], KINDS, total_pairs=5_000_000)
    assert not model.separated
    assert model.probabilities(levels).sum() < 20


# Field a is missing in one of twenty matches and in one of five random pairs; b and c in one of ten of either.
M_MISSING, U_MISSING = 0.05, 0.2


def _with_missing(shares: np.ndarray, missing: float) -> tuple[float, ...]:
    return (missing, *(shares[1:] * (1 - missing)).tolist())


def _model() -> FieldModel:
    return FieldModel.of(names=("a", "b", "c"), kinds=KINDS,
                      m=(_with_missing(M[0], M_MISSING), *(_with_missing(x, 0.1) for x in M[1:])),
                      u=(_with_missing(U[0], U_MISSING), *(_with_missing(x, 0.1) for x in U[1:])), prior=1e-5,
                      min_share=1e-6)


@settings(max_examples=200, deadline=None)
@given(st.tuples(*(st.integers(0, len(level_names(k)) - 1) for k in KINDS)),
       st.lists(st.floats(1e-9, 1.0), min_size=3, max_size=3))
def test_an_explanation_adds_up_to_the_probability(levels, shares):
    model = _model()
    row = np.array([levels], np.int8)
    expected = float(model.probabilities(row, np.array([shares]))[0])
    why = model.explain("x", "y", list(levels), shares, ["", "", ""], ["", "", ""])
    assert why.weight == pytest.approx(float(model.weights(row, np.array([shares]))[0]), abs=1e-9)
    assert why.probability == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert [step.name for step in why.steps] == ["prior", "a", "b", "c"]
    brief = why.brief().split("; ")
    assert len(brief) == 4 and math.isclose(sum(float(s.rsplit(" ", 1)[1]) for s in brief), why.weight, abs_tol=0.02)


def test_agreeing_on_a_rare_value_weighs_more():
    model = _model()
    exact = np.array([[1, 0, 0]], np.int8)
    common, rare, rarest = (float(model.weights(exact, np.array([[share, 1, 1]]))[0]) for share in (0.1, 1e-4, 1e-9))
    assert common < rare < rarest
    # A value's share counts as at least min_share: one rare value is evidence, not proof. Its chance is
    # that of both records filling the field, and the other holding the value.
    m_exact = 0.7 * (1 - M_MISSING)
    assert rarest == pytest.approx(model.prior_weight + math.log2(m_exact / ((1 - U_MISSING) * 1e-6)))
    # Without the shares, the exact level weighs by u.
    assert float(model.weights(exact)[0]) == pytest.approx(
        model.prior_weight + math.log2(m_exact / (0.002 * (1 - U_MISSING))))
    # A field left empty weighs what matches and random pairs say of it: here matches seldom leave it empty.
    missing = np.array([[0, 0, 0]], np.int8)
    assert float(model.weights(missing)[0]) == pytest.approx(model.prior_weight + math.log2(M_MISSING / U_MISSING))


def test_a_model_saved_before_missing_was_measured_scores_as_it_did():
    # Such a model kept the missing level at 1 and 1, its other levels the shares among filled pairs.
    old = FieldModel.of(names=("a", "b", "c"), kinds=KINDS, m=tuple((1.0, *x[1:].tolist()) for x in M),
                     u=tuple((1.0, *x[1:].tolist()) for x in U), prior=1e-5, min_share=1e-6)
    old = FieldModel.from_dict(old.to_dict())
    assert float(old.weights(np.array([[0, 0, 0]], np.int8))[0]) == pytest.approx(old.prior_weight)
    exact = np.array([[1, 0, 0]], np.int8)
    assert float(old.weights(exact, np.array([[1e-4, 1, 1]]))[0]) == pytest.approx(
        old.prior_weight + math.log2(0.7 / 1e-4))
    assert old.units[0].agreement == pytest.approx(0.7)
    assert probability(0.0) == 0.5


def test_the_summary_of_field_records_reads_back_equal(tmp_path):
    about = ReportSummary.of_fields(FieldSummary(keys=("email", "name + city"), missed=0.012, random_pairs=1000,
                                                 separated=True, model=_model()),
                                    candidates=500, true_pairs=101.5, pairs=98, precision=0.97, recall=0.93)
    about.write(tmp_path / "pairs.model.json")
    assert ReportSummary.read(tmp_path / "pairs.model.json") == about
    assert about.estimated.proposed == pytest.approx(0.988) and about.model is None and about.told
    assert about.fields.ambiguity == 0.0 and not about.fields.unsure  # as files written before it was kept read
    for value in (0.26, math.inf):  # JSON holds no infinity: it is written as null
        unsure = replace(about, fields=replace(about.fields, ambiguity=value))
        unsure.write(tmp_path / "pairs.model.json")
        assert ReportSummary.read(tmp_path / "pairs.model.json") == unsure and unsure.fields.unsure


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), max_size=50))
def test_ambiguity_is_the_expected_errors_over_the_expected_matches(probabilities):
    expected = sum(probabilities)
    errors = sum(min(p, 1 - p) for p in probabilities)
    found = ambiguity(np.array(probabilities, np.float64))
    if expected == 0:
        assert found == math.inf
    else:
        assert found == pytest.approx(errors / expected, rel=1e-9, abs=1e-12)


def test_classes_drawn_apart_are_sure_and_classes_drawn_closer_tell_but_unsure():
    rng = np.random.default_rng(5)
    u = chance(draw(rng, U, 1_000_000), KINDS)
    apart = np.concatenate([draw(rng, M, 2_000), draw(rng, U, 20_000)])
    model = fit(apart, u, ["a", "b", "c"], KINDS, total_pairs=22_000)
    assert ambiguity(model.probabilities(apart)) <= UNSURE
    # Matches that often differ on the name and the code, and agree on the category as non-matches do.
    closer_m = [np.array([0, 0.40, 0, 0.10, 0.10, 0, 0.10, 0.30]), np.array([0, 0.50, 0.10, 0.10, 0.30]), U[2]]
    closer = np.concatenate([draw(rng, closer_m, 2_000), draw(rng, U, 20_000)])
    model = fit(closer, u, ["a", "b", "c"], KINDS, total_pairs=22_000)
    p = model.probabilities(closer)
    assert model.tells(p) and ambiguity(p) > UNSURE


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 30).flatmap(lambda fields: st.lists(
    st.tuples(st.lists(st.integers(0, 6), min_size=fields, max_size=fields), st.integers(0, (1 << 20) - 1)),
    min_size=1, max_size=40)))
def test_patterns_are_each_distinct_row_and_its_count(rows):
    from collections import Counter

    levels = np.array([r for r, _ in rows], np.int8)
    bits = np.array([b for _, b in rows], np.int64)
    found = Patterns.of(levels, bits)
    expected = Counter((tuple(r), b) for r, b in rows)
    assert {(tuple(r.tolist()), int(b)): c for r, b, c in zip(found.levels, found.bits, found.counts)} == expected
    assert found.pairs == len(rows)


def test_fields_that_go_together_are_compared_together_but_never_two_rare_ones():
    """A state implied by its city is one unit with it; a restaurant's name
    and address, rare values its duplicates share, stay apart, however often
    the duplicates among the random pairs agree on both."""
    from neardup_solr.fields.comparisons import EXACT, MISSING

    rng = np.random.default_rng(5)
    entities = 1500
    city = rng.integers(0, 40, entities)
    columns = {"name": np.arange(entities), "addr": np.arange(entities), "city": city, "state": city % 8,
               "kind": rng.integers(0, 5, entities)}
    # A third of the entities appear twice, as the duplicates of a small table do.
    rows = np.concatenate([np.arange(entities), rng.choice(entities, entities // 3, replace=False)])
    a, b = np.triu_indices(len(rows), 1)
    take = rng.choice(len(a), 200_000, replace=False)
    a, b = rows[a[take]], rows[b[take]]
    levels = np.stack([np.where(values[a] == values[b], EXACT, EXACT + 1) for values in columns.values()], axis=1)
    # A duplicate's name or address is often written differently.
    same = a == b
    for f, kept in ((0, 0.7), (1, 0.5)):
        levels[same & (rng.random(len(a)) > kept), f] = EXACT + 1
    levels[rng.random(levels.shape) < 0.02] = MISSING
    names = list(columns)
    found = {tuple(names[f] for f in unit) for unit in units_of(levels.astype(np.int8), len(rows))}
    assert ("city", "state") in found
    assert ("name",) in found and ("addr",) in found and ("kind",) in found


def test_look_alikes_one_key_brings_end_as_non_matches_in_the_rounds_of_the_other_keys():
    rng = np.random.default_rng(11)
    kinds = ("code", "name", "code", "code")  # an identifier, a name, a price, an agent
    # The name is left empty in one of fifty matches and in one of five random pairs.
    m = [np.array([0, 0.99, 0.004, 0.003, 0.003]), np.array(_with_missing(M[0], 0.02)),
         np.array([0, 0.97, 0.01, 0.01, 0.01]), np.array([0, 0.97, 0.01, 0.01, 0.01])]
    u = [np.array([0, 0.0005, 0.01, 0.03, 0.9595]), np.array(_with_missing(U[0], 0.2)),
         np.array([0, 0.001, 0.02, 0.05, 0.929]), np.array([0, 0.002, 0.02, 0.05, 0.928])]
    matches = draw(rng, m, 1_000)
    # Another listing by the same agent at the same price, its identifier different, its name not given.
    look_alikes = np.tile(np.array([[4, 0, 1, 1]], np.int8), (150, 1))
    levels = np.concatenate([matches, look_alikes])
    chance_u = chance(draw(rng, u, 1_000_000), kinds)
    # Keys on the identifier and on the name found the matches; a key on the price found them and the look-alikes.
    by_id = Round(Patterns.of(matches), frozenset({0}))
    by_name = Round(Patterns.of(matches), frozenset({1}))
    by_price = Round(Patterns.of(levels), frozenset({2}))
    names = ["id", "name", "price", "agent"]
    alone = fit(levels, chance_u, names, kinds, total_pairs=5_000_000)
    rounds = fit(levels, chance_u, names, kinds, total_pairs=5_000_000, rounds=[by_id, by_name, by_price])
    # On all candidates at once the look-alikes teach EM that matches' identifiers differ, and pass as matches;
    assert alone.probabilities(look_alikes).min() > 0.5 and alone.units[0].m[4] > 0.1
    # the name's key, which brings none of them, learns from its matches alone that they do not.
    p = rounds.probabilities(levels)
    assert p[:1_000].mean() > 0.99 and p[1_000:].max() < 0.5
    assert rounds.units[0].m[4] < 0.01
    assert p.sum() == pytest.approx(1_000, rel=0.05)


def test_em_measures_how_often_matches_leave_a_field_empty():
    rng = np.random.default_rng(12)
    # Field a is empty in one of fifty matches and in three of ten other pairs.
    m = [np.array(_with_missing(M[0], 0.02)), *M[1:]]
    u = [np.array(_with_missing(U[0], 0.3)), *U[1:]]
    matches, others = 3_000, 30_000
    levels = np.concatenate([draw(rng, m, matches), draw(rng, u, others)])
    model = fit(levels, chance(draw(rng, u, 1_000_000), KINDS), ["a", "b", "c"], KINDS, total_pairs=matches + others)
    assert model.units[0].m[0] == pytest.approx(0.02, abs=0.006)
    assert model.units[0].u[0] == pytest.approx(0.3, abs=0.005)
    # An empty field weighs against, by as much as it says: log2(0.02 / 0.3), about -3.9 bits.
    weights = model.ratios[0]
    assert weights[0] == pytest.approx(math.log2(0.02 / 0.3), abs=0.5)
    p = model.probabilities(levels)
    assert p.sum() == pytest.approx(matches, rel=0.03)


def test_a_round_that_finds_more_matches_than_the_fit_on_all_candidates_is_not_learned_from(monkeypatch):
    rng = np.random.default_rng(13)
    matches, others = draw(rng, M, 1_000), draw(rng, U, 20_000)
    # A key reading field a brings 200 matches and 600 branches of a chain: their a differs, their b is one edit
    # apart (837 and 840 2nd ave) and their c, the city, is the same. Scored on b and c alone, the round takes
    # the branches for matches, and learns that matches agree on c more often than they do.
    branches = draw(rng, U, 600)
    branches[:, 1], branches[:, 2] = 2, 1
    keyed = np.concatenate([matches[:200], branches])
    levels = np.concatenate([matches, others, branches])
    u = chance(draw(rng, U, 1_000_000), KINDS)
    by_a = Round(Patterns.of(keyed), frozenset({0}))
    alone = fit(levels, u, ["a", "b", "c"], KINDS, total_pairs=len(levels))
    model = fit(levels, u, ["a", "b", "c"], KINDS, total_pairs=len(levels), rounds=[by_a])
    assert model.units[2].m[1] == pytest.approx(alone.units[2].m[1])
    assert model.units[2].m[1] == pytest.approx(0.95, abs=0.02)
    monkeypatch.setattr(training, "ROUND_EXCESS", math.inf)
    believed = fit(levels, u, ["a", "b", "c"], KINDS, total_pairs=len(levels), rounds=[by_a])
    assert believed.units[2].m[1] > 0.97


def test_records_identical_in_every_field_weigh_at_least_the_identical_weight():
    """Copies of one record agree on values their many copies made common,
    which weighs little by their shares: they weigh at least IDENTICAL, and
    their explanation says what takes them there, adding up."""
    from neardup_solr.fields.model import IDENTICAL

    model = _model()
    row, common = np.array([[1, 1, 1]], np.int8), np.array([[0.3, 0.3, 0.3]])
    plain = float(model.weights(row, common)[0])
    assert plain < IDENTICAL
    assert float(model.weights(row, common, identical=np.array([True]))[0]) == IDENTICAL
    why = model.explain("x", "y", [1, 1, 1], [0.3, 0.3, 0.3], identical=True)
    assert why.steps[-1].name == "identical" and why.weight == pytest.approx(IDENTICAL)
    assert model.explain("x", "y", [1, 1, 1], [0.3, 0.3, 0.3]).weight == pytest.approx(plain)
