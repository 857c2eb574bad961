"""Cluster-level scores (B-cubed precision and recall, the adjusted Rand
index) against plain reference code that follows their definitions record
by record and pair by pair, and against published values."""

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.results.clusters import cluster_pairs
from neardup_solr.results.evaluate import cluster_scores


def groups_of(labels: list[int]) -> list[set[str]]:
    """A labelling of records 0..n-1 as clusters of ids."""
    found: dict[int, set[str]] = {}
    for record, label in enumerate(labels):
        found.setdefault(label, set()).add(str(record))
    return list(found.values())


def reference(found: list[int], true: list[int]) -> tuple[float, float, float]:
    """B-cubed and the adjusted Rand index from their definitions: for each
    record the share of its found cluster that shares its true label (and
    back); for each pair of records whether the two agree, with the index's
    expectation under random labellings of the same cluster sizes."""
    n = len(found)
    precision = sum(sum(found[j] == found[i] and true[j] == true[i] for j in range(n))
                    / sum(found[j] == found[i] for j in range(n)) for i in range(n)) / n
    recall = sum(sum(found[j] == found[i] and true[j] == true[i] for j in range(n))
                 / sum(true[j] == true[i] for j in range(n)) for i in range(n)) / n
    pairs = list(combinations(range(n), 2))
    both = sum(found[i] == found[j] and true[i] == true[j] for i, j in pairs)
    in_found = sum(found[i] == found[j] for i, j in pairs)
    in_true = sum(true[i] == true[j] for i, j in pairs)
    expected = in_found * in_true / len(pairs) if pairs else 0.0
    best = (in_found + in_true) / 2
    rand = 1.0 if best == expected else (both - expected) / (best - expected)
    return precision, recall, rand


def test_published_values_of_the_adjusted_rand_index():
    # The examples of scikit-learn's adjusted_rand_score documentation.
    assert cluster_scores(groups_of([0, 0, 1, 2]), groups_of([0, 0, 1, 1])).adjusted_rand == pytest.approx(0.5714285714)
    assert cluster_scores(groups_of([0, 0, 1, 1]), groups_of([1, 1, 0, 0])).adjusted_rand == 1.0
    assert cluster_scores(groups_of([0, 0, 0, 0]), groups_of([0, 0, 1, 1])).adjusted_rand == 0.0
    assert cluster_scores(groups_of([0, 1, 2, 3]), groups_of([0, 0, 1, 1])).adjusted_rand == 0.0
    assert cluster_scores(groups_of([0, 0, 1, 1]), groups_of([0, 1, 0, 1])).adjusted_rand == pytest.approx(-0.5)


def test_b_cubed_of_a_worked_example():
    # Found {1,2,3} {4}; true {1,2} {3,4}: precision (2/3+2/3+1/3+1)/4, recall (1+1+1/2+1/2)/4.
    score = cluster_scores([{"1", "2", "3"}], [("1", "2"), ("3", "4")], records=["1", "2", "3", "4"])
    assert score.records == 4
    assert score.bcubed_precision == pytest.approx((2 / 3 + 2 / 3 + 1 / 3 + 1) / 4)
    assert score.bcubed_recall == pytest.approx(0.75)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=25))
def test_the_scores_are_those_of_the_definitions(labels):
    found, true = [a for a, _ in labels], [b for _, b in labels]
    score = cluster_scores(groups_of(found), groups_of(true))
    precision, recall, rand = reference(found, true)
    assert score.records == len(labels)
    assert score.bcubed_precision == pytest.approx(precision)
    assert score.bcubed_recall == pytest.approx(recall)
    assert score.adjusted_rand == pytest.approx(rand)


def test_pairs_and_their_clusters_score_alike_and_records_in_no_pair_are_alone():
    found = [("1", "2"), ("2", "3"), ("7", "8")]
    gold = [("1", "2"), ("3", "9")]
    everyone = [str(n) for n in range(1, 11)]
    by_pairs = cluster_scores(found, gold, everyone)
    assert by_pairs == cluster_scores(cluster_pairs(found), cluster_pairs(gold), everyone)
    labels_found = [0, 0, 0, 3, 4, 5, 6, 6, 8, 9]  # records 1..10: 1-2-3 one cluster, 7-8 one
    labels_true = [0, 0, 2, 3, 4, 5, 6, 7, 2, 9]   # 1-2 and 3-9
    assert (by_pairs.bcubed_precision, by_pairs.bcubed_recall, by_pairs.adjusted_rand) == pytest.approx(
        reference(labels_found, labels_true))
    # Without the records, only those either side names count.
    assert cluster_scores(found, gold).records == 6
    assert "bcubed_precision=" in by_pairs.line() and by_pairs.line().startswith("clusters: records=10 ")
