"""The default mode's verification similarity."""

import math

import pytest

from neardup_solr.similarity import Weights, cosine


def test_idf_is_bm25s():
    weights = Weights(doc_count=100, doc_freq={"common": 90, "rare": 1})
    assert weights.idf("common") == pytest.approx(math.log(1 + (100 - 90 + 0.5) / (90 + 0.5)))
    assert weights.idf("rare") == pytest.approx(math.log(1 + 99.5 / 1.5))
    assert weights.idf("unseen") == pytest.approx(math.log(1 + 100.5 / 0.5))


def test_vector_weights_rarity_and_position_and_is_unit_length():
    weights = Weights(doc_count=100, doc_freq={"a": 10, "b": 10, "c": 10})
    vec = weights.vector(["a", "b", "c", "a"])
    assert set(vec) == {"a", "b", "c"}
    assert sum(w * w for w in vec.values()) == pytest.approx(1.0)
    # Equal rarity: weight ratio is the lead factor 1 + 0.5 ** position.
    assert vec["a"] / vec["b"] == pytest.approx(2.0 / 1.5)
    assert vec["b"] / vec["c"] == pytest.approx(1.5 / 1.25)


def test_cosine_bounds_and_symmetry():
    weights = Weights(doc_count=50, doc_freq={"x": 5, "y": 20, "z": 40})
    a, b = weights.vector(["x", "y", "z"]), weights.vector(["z", "y"])
    assert cosine(a, a) == pytest.approx(1.0)
    assert cosine(a, weights.vector(["q"])) == 0.0
    assert cosine(a, b) == pytest.approx(cosine(b, a))
    assert 0.0 < cosine(a, b) < 1.0


def test_records_differing_in_leading_rare_words_score_below_records_differing_in_trailing_ones():
    """Two restaurants at one address versus one restaurant with two addresses."""
    df = {"bistro": 3, "roma": 2, "palace": 2, "court": 5, "3570": 4, "las": 60, "vegas": 60, "blvd": 200, "s": 150}
    weights = Weights(doc_count=1000, doc_freq=df)
    hotel_a = weights.vector("bistro roma 3570 las vegas blvd s las vegas".split())
    hotel_b = weights.vector("palace court 3570 las vegas blvd s las vegas".split())
    moved_a = weights.vector("palace court 3570 las vegas blvd s las vegas".split())
    moved_b = weights.vector("palace court 3400 las vegas blvd las vegas".split())
    assert cosine(moved_a, moved_b) > 0.7 > cosine(hotel_a, hotel_b)
