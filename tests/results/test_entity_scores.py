"""Entities (each record's cluster) scored as pairs against true pairs or
true clusters, counted without listing the pairs: against plain code that
lists them."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.results.evaluate import read_membership, score_clusters
from neardup_solr.results.pairs import Pair

memberships = st.dictionaries(st.sampled_from([f"r{n}" for n in range(12)]), st.sampled_from("abcd"), min_size=1)


def _pairs(membership: dict[str, str]) -> set[frozenset[str]]:
    return {frozenset((x, y)) for x, y in combinations(sorted(membership), 2) if membership[x] == membership[y]}


@settings(max_examples=200, deadline=None)
@given(memberships, memberships)
def test_entities_score_as_the_pairs_they_hold(found, gold):
    listed, true = _pairs(found), _pairs(gold)
    for measured in (score_clusters(found, gold), score_clusters(found, true),
                     score_clusters([Pair(*sorted(p), 0) for p in listed], gold)):
        assert (measured.found, measured.true, measured.gold) == (len(listed), len(listed & true), len(true))


def test_a_membership_file_is_read_in_each_format_and_a_pair_file_is_none(tmp_path):
    (tmp_path / "e.csv").write_text("id,cluster_id\n1,1\n2,1\n3,3\n", encoding="utf-8")
    (tmp_path / "e.tsv").write_text("source\tid\tentity\na\t1\tx\nb\t1\tx\n", encoding="utf-8")
    (tmp_path / "e.jsonl").write_text('{"id": "1", "cluster": "k"}\n{"id": "2", "cluster": "k"}\n', encoding="utf-8")
    (tmp_path / "pairs.tsv").write_text("1\t2\t0\n", encoding="utf-8")
    assert read_membership(tmp_path / "e.csv") == {"1": "1", "2": "1", "3": "3"}
    assert read_membership(tmp_path / "e.tsv") == {"a/1": "x", "b/1": "x"}
    assert read_membership(tmp_path / "e.jsonl") == {"1": "k", "2": "k"}
    assert read_membership(tmp_path / "pairs.tsv") is None
