"""The default mode's verification similarity."""

import math

import Levenshtein
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.match.similarity import (AGREEMENT, CLOSE, ROUNDING, CloseWords, Weights, number_agreement, numbers,
                                           similarity)


def soft(a, b):
    return similarity(a, b, CloseWords([*a, *b]))


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


def test_similarity_bounds_and_symmetry():
    weights = Weights(doc_count=50, doc_freq={"x": 5, "y": 20, "z": 40})
    a, b = weights.vector(["x", "y", "z"]), weights.vector(["z", "y"])
    assert soft(a, a) == pytest.approx(1.0)
    assert soft(a, weights.vector(["q"])) == 0.0
    assert soft(a, b) == pytest.approx(soft(b, a))
    assert 0.0 < soft(a, b) < 1.0


def test_records_differing_in_leading_rare_words_score_below_records_differing_in_trailing_ones():
    """Two restaurants at one address versus one restaurant with two addresses."""
    df = {"bistro": 3, "roma": 2, "palace": 2, "court": 5, "3570": 4, "las": 60, "vegas": 60, "blvd": 200, "s": 150}
    weights = Weights(doc_count=1000, doc_freq=df)
    hotel_a = weights.vector("bistro roma 3570 las vegas blvd s las vegas".split())
    hotel_b = weights.vector("palace court 3570 las vegas blvd s las vegas".split())
    moved_a = weights.vector("palace court 3570 las vegas blvd s las vegas".split())
    moved_b = weights.vector("palace court 3400 las vegas blvd las vegas".split())
    assert soft(moved_a, moved_b) > 0.7 > soft(hotel_a, hotel_b)


def test_without_typos_it_is_the_plain_cosine():
    weights = Weights(doc_count=100, doc_freq={"alpha": 3, "beta": 40, "gamma": 7, "delta": 12})
    a, b = weights.vector(["alpha", "beta", "gamma"]), weights.vector(["beta", "gamma", "delta"])
    plain = sum(w * b.get(word, 0.0) for word, w in a.items())
    assert soft(a, b) == pytest.approx(plain)


def test_a_typo_costs_a_little_not_the_whole_word():
    weights = Weights(doc_count=1000, doc_freq={"valley": 20, "vslley": 1, "grill": 30, "main": 300})
    right = weights.vector("valley grill main".split())
    typo = weights.vector("vslley grill main".split())
    unrelated = weights.vector("summit grill main".split())
    exact_only = sum(w * typo.get(word, 0.0) for word, w in right.items())
    assert soft(right, typo) > 0.9 > exact_only
    assert soft(right, unrelated) < 0.7
    assert soft(right, typo) == pytest.approx(soft(typo, right))


@given(st.lists(st.text(alphabet="abcdeilnorstuvy", min_size=1, max_size=9), max_size=25))
def test_close_words_are_those_within_jaro_winkler_close(words):
    close = CloseWords(words).close
    for word in set(words):
        expected = {other for other in set(words) - {word}
                    if Levenshtein.jaro_winkler(word, other) >= CLOSE - ROUNDING}
        assert set(close.get(word, {})) == expected
        for other, score in close.get(word, {}).items():
            assert score == pytest.approx(Levenshtein.jaro_winkler(word, other))


@given(st.lists(st.text(alphabet="abcdeilnorstuvy", min_size=1, max_size=9), max_size=15),
       st.lists(st.text(alphabet="abcdeilnorstuvy", min_size=1, max_size=9), max_size=25))
def test_close_words_against_others_are_the_whole_vocabulary_s_between_them(words, others):
    """Compared only with ``against``, a word has the close words it has
    among them in the whole vocabulary, with the same scores."""
    across = CloseWords(words, others).close
    whole = CloseWords([*words, *others]).close
    for word in set(words):
        assert {other: score for other, score in across.get(word, {}).items() if other != word} == \
            {other: score for other, score in whole.get(word, {}).items() if other in set(others)}


def plain_similarity(a, b, close):
    """The soft cosine written out plainly: every pair of missing words looked up, in order."""
    exact = sum(weight * b[word] for word, weight in a.items() if word in b)
    only_a = [word for word in a if word not in b]
    only_b = [word for word in b if word not in a]
    best_a, best_b = {}, {}
    for word in only_a:
        for other in only_b:
            score = close.close.get(word, {}).get(other)
            if score is not None:
                best_a[word] = max(best_a.get(word, 0.0), b[other] * score)
                best_b[other] = max(best_b.get(other, 0.0), a[word] * score)
    soft_a = sum(a[word] * weight for word, weight in best_a.items())
    soft_b = sum(b[word] * weight for word, weight in best_b.items())
    return min(1.0, exact + (soft_a + soft_b) / 2.0)


_WORD = st.text(alphabet="abcdeilnorst", min_size=1, max_size=6)


@settings(max_examples=150)
@given(st.dictionaries(_WORD, st.floats(0.01, 1.0), max_size=40), st.dictionaries(_WORD, st.floats(0.01, 1.0), max_size=40))
def test_similarity_is_the_plain_soft_cosine_bit_for_bit(a, b):
    """However few or many close words and missing words (each side's way of
    looking pairs up), the same terms in the same order: the same float."""
    close = CloseWords([*a, *b])
    assert similarity(a, b, close) == plain_similarity(a, b, close)
    assert similarity(a, b, CloseWords(a, b)) == plain_similarity(a, b, close)


def test_a_typo_in_a_short_leading_word_is_close():
    assert set(CloseWords(["iris", "irts", "a", "aa", "john", "mary"]).close) == {"iris", "irts", "a", "aa"}


def agreement_reference(a: list[str], b: list[str]) -> int:
    """The levels of number agreement as sets say them."""
    na = {w for w in a if any(c in "0123456789" for c in w)}
    nb = {w for w in b if any(c in "0123456789" for c in w)}
    if not na or not nb:
        return AGREEMENT.index("a record has no number")
    if not na & nb:
        return AGREEMENT.index("no number shared")
    differ = max(len(na), len(nb)) - len(na & nb)
    return AGREEMENT.index({0: "all numbers agree", 1: "one number differs"}.get(differ, "two or more numbers differ"))


words_and_numbers = st.lists(st.sampled_from(["main", "st", "12", "12b", "4th", "90210", "x7", "007", "7", "ave"]),
                             max_size=8)


@settings(max_examples=300, deadline=None)
@given(words_and_numbers, words_and_numbers)
def test_number_agreement_is_the_set_reference(a, b):
    assert number_agreement(numbers(a), numbers(b)) == agreement_reference(a, b)
    assert number_agreement(numbers(a), numbers(b)) == number_agreement(numbers(b), numbers(a))


def test_number_agreement_levels_on_records():
    def level(x: str, y: str) -> str:
        return AGREEMENT[number_agreement(numbers(x.split()), numbers(y.split()))]

    assert level("joes diner 12 main st 90210", "joes diner 12 main st 90210") == "all numbers agree"
    assert level("ann lee 12 oak 90210 19800101", "ann lee 12 oak 90210 19800110") == "one number differs"
    assert level("ann lee 12 oak 90210 19800101 555", "bob lee 12 oak 90210 19751212 556") == "two or more numbers differ"
    assert level("joes diner 12 main st", "joes diner 14 main st") == "no number shared"
    assert level("joes diner main st", "joes diner 14 main st") == "a record has no number"
