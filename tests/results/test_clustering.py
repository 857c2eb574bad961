"""Clusters that do not chain: average linkage on match weights, against
plain checks of what it promises."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.results import clustering
from neardup_solr.results.clustering import MISSING, average_linkage, bits, bits_of, split, split_pairs
from neardup_solr.results.clusters import cluster_pairs
from neardup_solr.results.pairs import Pair


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 9).flatmap(lambda n: st.lists(st.floats(-20, 20), min_size=n * (n - 1) // 2,
                                                      max_size=n * (n - 1) // 2).map(lambda w: (n, w))))
def test_average_linkage_stops_where_no_two_clusters_are_matches_on_the_whole(case):
    size, flat = case
    weights = np.zeros((size, size))
    for (a, b), w in zip(combinations(range(size), 2), flat):
        weights[a, b] = weights[b, a] = w
    found = average_linkage(weights)
    rounding = 1e-9  # sums taken in another order differ by this much: a mean of 1e-69 is a tie
    assert sorted(x for group in found for x in group) == list(range(size))
    for group in found:
        if len(group) > 1:  # merged only while the mean across was positive: so is the mean inside
            assert np.mean([weights[a, b] for a, b in combinations(group, 2)]) > -rounding
    for x, y in combinations(found, 2):  # and no two clusters left would merge
        assert np.mean([weights[a, b] for a in x for b in y]) <= rounding


def test_a_chain_of_different_entities_is_cut_and_a_true_cluster_is_not():
    # 0-1-2-3-4-5, each linked to the next by a pair at 0.999 and to no other:
    # six records chained through look-alike neighbours.
    chain = [(str(i), str(i + 1), 0.999) for i in range(5)]
    groups = split_pairs([str(i) for i in range(6)], chain)
    assert all(len(g) <= 2 for g in groups)
    # Three records of one entity, one pair of them below the cut: still one cluster.
    three = [("a", "b", 0.9999), ("b", "c", 0.9999)]
    assert split_pairs(["a", "b", "c"], three) == [["a", "b", "c"]]
    # Connected components would have joined the chain (the pairs carry no probability).
    assert [c.size for c in cluster_pairs([(a, b) for a, b, _ in chain])] == [6]
    assert [c.size for c in cluster_pairs([Pair(a, b, 0, 0.9, p) for a, b, p in chain])] == [2, 2, 2]


def test_a_caller_that_weighs_every_pair_decides_the_missing_ones():
    left, right, weights = np.array([0, 1]), np.array([1, 2]), np.array([10.0, 10.0])
    assert split(3, left, right, weights) == [[0, 1, 2]]  # 0-2 missing: mean (10 - 4) / 2 > 0
    strongly_apart = split(3, left, right, weights, weigh=lambda a, b: np.where((a == 0) & (b == 2), -25.0, 10.0))
    assert sorted(map(len, strongly_apart)) == [2]  # 0-2 weighed at -25: c stays out


def test_large_components_are_split_by_pivots(monkeypatch):
    monkeypatch.setattr(clustering, "AVERAGED", 3)
    # A star of 5 around record 0 and a pair 5-6 joined to it by a weak link from 4.
    left = np.array([0, 0, 0, 0, 5, 4])
    right = np.array([1, 2, 3, 4, 6, 5])
    weights = np.array([20, 20, 20, 20, 20, 1.0])
    assert split(7, left, right, weights) == [[0, 1, 2, 3, 4], [5, 6]]


@given(st.lists(st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0, 5e-324, 1 - 1e-16])), max_size=40))
def test_bits_of_many_are_the_bits_of_each(probabilities):
    assert np.allclose(bits_of(np.array(probabilities)), [bits(p) for p in probabilities], rtol=0, atol=1e-12)


def test_bits():
    assert bits(0.5) == 0 and bits(1.0) == clustering.STRONGEST and bits(0.0) == -clustering.STRONGEST
    assert bits(0.8) == pytest.approx(2.0) and bits(None) == clustering.STRONGEST
    assert MISSING < 0


def test_a_large_entity_seen_through_a_window_is_one_cluster_and_one_false_link_joins_none():
    """Two people of 1,500 records each, every record linked to its next ten
    in its person's order (as a key's window links them), and one strong
    pair across them: within a person any two records weigh +3 bits (alike
    but not identical), across them -10. The people come out whole, the
    false pair joins nothing: no cap on a cluster's size, no chaining."""
    size = 1500
    left, right = [], []
    for first in (0, size):
        for at in range(size):
            for step in range(1, 11):
                if at + step < size:
                    left.append(first + at)
                    right.append(first + at + step)
    left, right = np.array(left + [7]), np.array(right + [size + 9])
    weights = np.full(len(left), 3.0)
    weights[-1] = 25.0

    def weigh(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.where((a < size) == (b < size), 3.0, -10.0)

    assert split(2 * size, left, right, weights, weigh=weigh) == [list(range(size)), list(range(size, 2 * size))]
    # Weighed by nothing but the pairs given, the large component falls to pivots: the person is cut up.
    assert len(split(2 * size, left, right, weights)) > 2


def test_records_written_again_stay_together_where_their_pairs_lead_to_two_clusters(monkeypatch):
    """Two clusters of 20 records each (chains; across them -1 bit), and
    one record written twice (40, 41) whose copies have a pair each, one
    into each cluster, but none with each other. Weighed one by one, each
    copy joins the cluster its pair leads to; as one record written again
    they stay together, in one of the two, and the two stay apart; unless
    the model weighs the copies as different."""
    monkeypatch.setattr(clustering, "AVERAGED", 10)
    half = 20
    left = np.array(list(range(half - 1)) + list(range(half, 2 * half - 1)) + [0, half])
    right = np.array(list(range(1, half)) + list(range(half + 1, 2 * half)) + [40, 41])
    weights = np.full(len(left), 3.0)

    def weigh(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        side_a, side_b = np.minimum(a // half, 2), np.minimum(b // half, 2)
        return np.where((side_a == side_b) | (side_a == 2) | (side_b == 2), 3.0, -1.0)

    together = np.arange(42)
    together[41] = 40
    kept = split(42, left, right, weights, weigh=weigh, together=together)
    assert len(kept) == 2 and any({40, 41} <= set(group) for group in kept)
    assert sorted(map(len, kept)) == [20, 22]
    apart = [list(range(half)) + [40], list(range(half, 2 * half)) + [41]]
    assert sorted(map(sorted, split(42, left, right, weights, weigh=weigh))) == apart

    def copies_differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # a value too common to tell people apart
        return np.where((a >= 2 * half) & (b >= 2 * half), -5.0, weigh(a, b))

    assert sorted(map(sorted, split(42, left, right, weights, weigh=copies_differ, together=together))) == apart
