import csv
import json
import random
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.results.clusters import (
    TSV_HEADER,
    Cluster,
    certainty_of,
    cluster_pair_file,
    cluster_pairs,
    least_certain_first,
    pairs_by_cluster,
    read_clusters,
    write_clusters,
    write_membership,
)
from neardup_solr.errors import InputError
from neardup_solr.compiled import chosen
from neardup_solr.results import clustering
from neardup_solr.results.clustering import components, connected
from neardup_solr.results.pairs import Pair, write_pairs
from neardup_solr.records.record import id_key


def members(clusters):
    return [list(c.members) for c in clusters]


def check_consistent(clusters, pairs):
    """Every pair inside one cluster, no id in two clusters, each named by its smallest member, sizes right."""
    where = {}
    for c in clusters:
        assert c.size == len(c.members) >= 2
        for m in c.members:
            assert m not in where, f"{m} in clusters {where[m]} and {c.id}"
            where[m] = c.id
    for a, b in pairs:
        if a != b:
            assert where[a] == where[b]
    assert [c.id for c in clusters] == [c.members[0] for c in clusters]
    assert set(where) == {x for a, b in pairs if a != b for x in (a, b)}


def bfs_components(pairs):
    adjacency = {}
    for a, b in pairs:
        if a != b:
            adjacency.setdefault(a, set()).add(b)
            adjacency.setdefault(b, set()).add(a)
    seen, components = set(), []
    for start in adjacency:
        if start in seen:
            continue
        seen.add(start)
        queue, component = deque([start]), []
        while queue:
            node = queue.popleft()
            component.append(node)
            for nxt in adjacency[node] - seen:
                seen.add(nxt)
                queue.append(nxt)
        components.append(frozenset(component))
    return components


def test_chain_is_one_cluster():
    pairs = [("1", "2"), ("2", "3"), ("3", "4"), ("4", "5")]
    assert members(cluster_pairs(pairs)) == [["1", "2", "3", "4", "5"]]


def test_long_chain_needs_no_recursion():
    pairs = [(str(i), str(i + 1)) for i in range(50_000)]
    random.Random(1).shuffle(pairs)
    [cluster] = cluster_pairs(pairs)
    assert cluster.size == 50_001
    assert cluster.members[:3] == ("0", "1", "2")


def test_star_is_one_cluster():
    pairs = [("hub", leaf) for leaf in ("a", "b", "c", "d")]
    assert members(cluster_pairs(pairs)) == [["a", "b", "c", "d", "hub"]]


def test_disjoint_pairs_stay_apart():
    pairs = [("1", "2"), ("3", "4"), ("5", "6")]
    assert members(cluster_pairs(pairs)) == [["1", "2"], ["3", "4"], ["5", "6"]]


def test_duplicate_and_reversed_pairs_change_nothing():
    once = cluster_pairs([("1", "2"), ("2", "3")])
    assert cluster_pairs([("1", "2"), ("2", "1"), ("2", "3"), ("3", "2"), ("1", "2")]) == once


def test_self_pairs_are_ignored():
    assert cluster_pairs([("7", "7")]) == []
    assert members(cluster_pairs([("7", "7"), ("7", "8")])) == [["7", "8"]]


def test_no_pairs_no_clusters():
    assert cluster_pairs([]) == []


def test_pair_objects_work_like_tuples():
    pairs = [Pair("1", "2", 0, 0.9), Pair("2", "3", 1, None)]
    assert cluster_pairs(pairs) == cluster_pairs([("1", "2"), ("2", "3")])


def test_order_size_then_smallest_member_numeric_ids_numerically():
    pairs = [("10", "11"), ("9", "30"), ("2", "20"), ("20", "21"), ("b", "a"), ("100", "5"), ("5", "x")]
    clusters = cluster_pairs(pairs)
    assert members(clusters) == [
        ["2", "20", "21"],     # size 3, smallest 2
        ["5", "100", "x"],     # size 3, smallest 5; numeric ids before others, "100" after "5"
        ["9", "30"],           # size 2: 9 < 10 numerically (not "10" < "9" as strings)
        ["10", "11"],
        ["a", "b"],
    ]
    assert [c.id for c in clusters] == ["2", "5", "9", "10", "a"]  # each its smallest member
    assert [c.size for c in clusters] == [3, 3, 2, 2, 2]


def test_order_does_not_depend_on_input_order():
    pairs = [(str(a), str(b)) for a, b in [(1, 2), (3, 4), (4, 5), (6, 7), (8, 9), (9, 1), (12, 11), (30, 31)]]
    expected = cluster_pairs(pairs)
    rng = random.Random(7)
    for _ in range(20):
        shuffled = [p if rng.random() < 0.5 else (p[1], p[0]) for p in pairs]
        rng.shuffle(shuffled)
        assert cluster_pairs(shuffled) == expected


def test_a_chain_longer_than_the_recursion_limit_is_one_component():
    n = 50_000
    chain = np.arange(n - 1)
    [component] = components(n, chain[::-1], chain[::-1] + 1)
    assert component.tolist() == list(range(n))


def test_connected_groups_of_any_size_keep_every_id_once():
    found = connected([("a", "b"), ("c",), ("d", "e", "f"), ("b", "g"), ("f", "h")])
    assert sorted(sorted(c) for c in found) == [["a", "b", "g"], ["c"], ["d", "e", "f", "h"]]


ids = st.one_of(st.integers(0, 40).map(str), st.sampled_from(["a", "b", "c", "x-1", "y.2", "Z:3"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(ids, ids), max_size=60))
def test_same_components_as_breadth_first_search(pairs):
    clusters = cluster_pairs(pairs)
    check_consistent(clusters, pairs)
    assert {frozenset(c.members) for c in clusters} == set(bfs_components(pairs))
    for c in clusters:
        assert list(c.members) == sorted(c.members, key=id_key)
    keys = [(-c.size, id_key(c.members[0])) for c in clusters]
    assert keys == sorted(keys)
    assert cluster_pairs(list(reversed(pairs))) == clusters


@pytest.fixture
def sample():
    return cluster_pairs([("1", "2"), ("2", "3"), ("10", "x-1"), ("a.b", "c:d")])


def test_tsv_round_trip_with_header(tmp_path, sample):
    path = tmp_path / "clusters.tsv"
    assert write_clusters(path, sample) == 3
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines == [TSV_HEADER, "1\t3\t1,2,3", "10\t2\t10,x-1", "a.b\t2\ta.b,c:d"]
    assert read_clusters(path) == sample


def test_json_round_trip(tmp_path, sample):
    path = tmp_path / "clusters.json"
    assert write_clusters(path, sample, json=True) == 3
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data[0] == {"cluster": "1", "size": 3, "members": ["1", "2", "3"]}
    assert [row["cluster"] for row in data] == ["1", "10", "a.b"]
    assert read_clusters(path) == sample


def test_same_pairs_same_bytes(tmp_path):
    pairs = [("3", "1"), ("2", "1"), ("7", "8")]
    write_clusters(tmp_path / "one.tsv", cluster_pairs(pairs))
    write_clusters(tmp_path / "two.tsv", cluster_pairs(reversed(pairs)))
    assert (tmp_path / "one.tsv").read_bytes() == (tmp_path / "two.tsv").read_bytes()


def test_empty_round_trip(tmp_path):
    write_clusters(tmp_path / "e.tsv", [])
    write_clusters(tmp_path / "e.json", [], json=True)
    assert read_clusters(tmp_path / "e.tsv") == []
    assert read_clusters(tmp_path / "e.json") == []


def test_from_a_pair_file(tmp_path):
    path = tmp_path / "pairs.tsv"
    write_pairs(path, [Pair("1", "2", 0, 0.95), Pair("2", "3", 1, 0.8), Pair("5", "6", 2, 0.7)])
    assert members(cluster_pair_file(path)) == [["1", "2", "3"], ["5", "6"]]


def test_a_crash_leaves_no_file(tmp_path):
    class Boom(Exception):
        pass

    def clusters():
        yield Cluster("1", ("1", "2"))
        raise Boom

    with pytest.raises(Boom):
        write_clusters(tmp_path / "c.tsv", clusters())
    assert list(tmp_path.iterdir()) == []


def test_a_crash_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "c.tsv"
    write_clusters(path, [Cluster("1", ("1", "2"))])
    before = path.read_bytes()

    def broken_dumps(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("neardup_solr.results.clusters.jsonlib.dumps", broken_dumps)
    with pytest.raises(OSError):
        write_clusters(path, [Cluster("3", ("3", "4"))], json=True)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["c.tsv"]


def test_ids_that_would_break_the_tsv_are_refused(tmp_path):
    with pytest.raises(InputError, match="comma"):
        write_clusters(tmp_path / "c.tsv", [Cluster("a,b", ("a,b", "c"))])
    assert not (tmp_path / "c.tsv").exists()
    write_clusters(tmp_path / "c.json", [Cluster("a,b", ("a,b", "c"))], json=True)
    assert read_clusters(tmp_path / "c.json") == [Cluster("a,b", ("a,b", "c"))]


@pytest.mark.parametrize("content", ["1\t3\t1,2\n", "\t2\t1,2\n", "1\t2\n", '[{"cluster": 1}]', "[1, 2"])
def test_broken_cluster_files_are_input_errors(tmp_path, content):
    path = tmp_path / "c.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError):
        read_clusters(path)


def test_least_certain_first_goes_by_each_clusters_weakest_pair():
    pairs = [Pair("1", "2", 0, 0.99, 0.999), Pair("2", "3", 1, 0.81, 0.62),  # cluster 1, weakest 0.62
             Pair("1", "3", 1, 0.83, 0.95),                                   # (3 is a match of 1 too)
             Pair("10", "11", 1, 0.85, 0.97),                                 # cluster 2
             Pair("20", "21", 2, 0.74, 0.55),                                 # cluster 3, the least sure
             Pair("30", "31", 1, 0.88, 0.97)]                                 # cluster 4, ties cluster 2
    clusters = cluster_pairs(pairs)
    by_cluster = pairs_by_cluster(clusters, pairs)
    assert by_cluster == {"1": pairs[:3], "10": [pairs[3]], "20": [pairs[4]], "30": [pairs[5]]}
    assert certainty_of(pairs) == "probability"
    assert [c.id for c in least_certain_first(clusters, by_cluster, "probability")] == ["20", "1", "10", "30"]
    assert [c.id for c in least_certain_first(clusters, by_cluster, "similarity")] == ["20", "1", "10", "30"]


def test_certainty_is_what_every_pair_carries():
    assert certainty_of([Pair("1", "2", 0, 0.9), Pair("3", "4", 0, 0.8, 0.7)]) == "similarity"
    assert certainty_of([Pair("1", "2", 0), Pair("3", "4", 0, 0.8)]) is None


def test_a_clusters_id_stays_put_when_records_join_it_or_runs_repeat():
    """The id is the smallest member's: the same pairs in another order give
    the same ids, and pairs appended later (a new member, a cluster merged
    in from above) leave the id of the cluster that had the smallest member."""
    first = cluster_pairs([("7", "12"), ("12", "30"), ("40", "41")])
    assert [(c.id, c.members) for c in first] == [("7", ("7", "12", "30")), ("40", ("40", "41"))]
    assert cluster_pairs([("41", "40"), ("30", "12"), ("12", "7")]) == first
    grown = cluster_pairs([("7", "12"), ("12", "30"), ("40", "41"), ("30", "55"), ("41", "30"), ("60", "61")])
    assert [c.id for c in grown] == ["7", "60"]  # 40-41 merged into 7's cluster, which keeps its id


def test_membership_lists_every_record_once_singletons_included(tmp_path):
    clusters = cluster_pairs([("2", "10"), ("10", "3"), ("b", "a")], ids=["1", "2", "3", "10", "a", "b", "9"])
    assert [(c.id, c.size) for c in clusters] == [("2", 3), ("a", 2), ("1", 1), ("9", 1)]
    assert write_membership(tmp_path / "m.tsv", clusters) == 7
    assert (tmp_path / "m.tsv").read_text().splitlines() == [
        "id\tcluster_id", "1\t1", "2\t2", "3\t2", "9\t9", "10\t2", "a\ta", "b\ta"]
    write_membership(tmp_path / "m.csv", clusters)
    with open(tmp_path / "m.csv", newline="") as handle:
        assert {row["id"]: row["cluster_id"] for row in csv.DictReader(handle)} == {
            "1": "1", "2": "2", "3": "2", "9": "9", "10": "2", "a": "a", "b": "a"}
    write_membership(tmp_path / "m.jsonl", clusters)
    assert json.loads((tmp_path / "m.jsonl").read_text().splitlines()[-1]) == {"id": "b", "cluster_id": "a"}
    assert list(clusters.membership())[:3] == [("2", "2"), ("3", "2"), ("10", "2")]


def test_membership_of_records_of_sources_names_the_source(tmp_path):
    clusters = cluster_pairs([("ours/1", "theirs/1")], ids=["ours/1", "ours/2", "theirs/1"])
    write_membership(tmp_path / "m.tsv", clusters)
    assert (tmp_path / "m.tsv").read_text().splitlines() == [
        "source\tid\tcluster_id", "ours\t1\tours/1", "ours\t2\tours/2", "theirs\t1\tours/1"]


def test_clusters_show_short_and_convert_to_tables():
    clusters = cluster_pairs([("1", "2"), ("2", "3"), ("5", "6")], ids=[str(n) for n in range(1, 8)])
    assert repr(clusters) == "Clusters(4 clusters of 7 records, the largest of 3)"
    assert repr(clusters.membership()) == "Membership(7 records in 4 clusters)"
    frame = clusters.to_pandas()
    assert list(frame.columns) == ["cluster_id", "size", "members"] and list(frame["cluster_id"]) == ["1", "5", "4", "7"]
    members = clusters.membership().to_pandas()
    assert list(members.columns) == ["id", "cluster_id"] and len(members) == 7
    assert dict(zip(members["id"], members["cluster_id"]))["3"] == "1"
    assert clusters.membership().to_polars().shape == (7, 2)
    shown = clusters._repr_html_()
    assert shown.startswith("<table>") and shown.count("<tr>") == 5  # a header and four clusters


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.tuples(st.integers(0, n - 1),
                                                                                      st.integers(0, n - 1)),
                                                                            max_size=50))))
def test_components_of_record_numbers_as_breadth_first_search_compiled_or_not(case):
    count, pairs = case
    left = np.array([a for a, _ in pairs], np.int64)
    right = np.array([b for _, b in pairs], np.int64)
    expected = sorted(sorted(c) for c in bfs_components(pairs))
    assert [c.tolist() for c in components(count, left, right)] == expected  # in the order of their smallest numbers
    smallest = {x: min(c) for c in expected for x in c}
    for compiled in (True, False):
        roots = chosen(clustering._roots, compiled)(count, left, right)
        assert roots.tolist() == [smallest.get(x, x) for x in range(count)]
