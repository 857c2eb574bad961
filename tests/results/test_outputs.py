"""Results in the user's format: pair, cluster and match tables as TSV, CSV
and JSON Lines, read back by Python's own csv and json modules."""

import csv
import gzip
import io
import json
from dataclasses import dataclass

import pytest

from neardup_solr.modes.text_search import Match
from neardup_solr.results.clusters import Cluster, write_clusters
from neardup_solr.errors import InputError
from neardup_solr.results.outputs import match_table, output_format, write_table
from neardup_solr.results.pairs import Pair, ordered, read_pairs, write_pairs

PAIRS = [ordered("10", "9", 1, 0.81234), ordered("2", "1", 0, 1.0), ordered("a-1", "b:2", 2, 0.7)]
TEXTS = {"1": "Art's Deli, Studio City", "2": 'Art\'s "Deli"\tStudio City', "9": "Spago\nHollywood",
         "10": "Spago Hollywood", "a-1": "x", "b:2": "y"}


def lookup(ids):
    return {i: TEXTS[i] for i in ids}


def as_pairs(rows):
    """Pairs from rows read by csv or json: (id_a, id_b, distance, similarity)."""
    return [(r["id_a"], r["id_b"], int(r["distance"]), float(r["similarity"])) for r in rows]


# The documented pair file: ids smaller first and in id order (9 before 10),
# similarity to 4 decimals.
EXPECTED = [("1", "2", 0, 1.0), ("9", "10", 1, 0.8123), ("a-1", "b:2", 2, 0.7)]


@pytest.mark.parametrize("name, format", [("p.tsv", "tsv"), ("p.txt", "tsv"), ("p.csv", "csv"),
                                          ("p.CSV.gz", "csv"), ("p.jsonl", "jsonl"), ("p.ndjson.gz", "jsonl"),
                                          ("p.out", "csv")])
def test_output_format_from_the_name_unless_given(name, format):
    assert output_format(name, "csv" if name == "p.out" else None) == format


def test_tsv_pairs_are_the_documented_lines(tmp_path):
    path = tmp_path / "p.tsv"
    assert write_pairs(path, [Pair(a, b, d, s) for a, b, d, s in reversed(EXPECTED)]) == 3
    assert path.read_text() == "1\t2\t0\t1.0000\n9\t10\t1\t0.8123\na-1\tb:2\t2\t0.7000\n"
    write_pairs(path, [ordered("3", "1", 2), Pair("1", "2", 0, 0.75, 0.9)])
    assert path.read_text() == "1\t2\t0\t0.7500\t0.9000\n1\t3\t2\n"  # nothing stands for a missing value


def test_csv_pairs_with_texts_read_back_by_the_csv_module(tmp_path):
    path = tmp_path / "p.csv"
    write_pairs(path, PAIRS, texts=lookup)
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert as_pairs(rows) == EXPECTED
    assert list(rows[0]) == ["id_a", "id_b", "distance", "similarity", "text_a", "text_b"]
    # Commas, quotes, tabs and line breaks survive CSV quoting.
    assert [(r["text_a"], r["text_b"]) for r in rows[:2]] == [(TEXTS["1"], TEXTS["2"]), (TEXTS["9"], TEXTS["10"])]
    assert [tuple(p) for p in read_pairs(path)] == [(*p, None, None) for p in EXPECTED]


def test_json_lines_pairs_read_back_by_the_json_module(tmp_path):
    path = tmp_path / "p.jsonl.gz"
    write_pairs(path, PAIRS + [Pair("3", "4", 0, 0.9, 0.97)])
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    assert as_pairs(rows[:1] + rows[2:]) == EXPECTED
    assert rows[1] == {"id_a": "3", "id_b": "4", "distance": 0, "similarity": 0.9, "probability": 0.97}
    assert "probability" not in rows[0]  # a value a pair does not have is left out
    assert read_pairs(path)[1] == Pair("3", "4", 0, 0.9, 0.97)


def test_tsv_pairs_with_texts_have_a_header_and_one_line_each(tmp_path):
    path = tmp_path / "p.tsv"
    write_pairs(path, [Pair("1", "2", 0), Pair("9", "10", 1)], texts=lookup)
    lines = path.read_text().splitlines()
    # No similarity in the reference modes: the column is left out.
    assert lines == ["id_a\tid_b\tdistance\ttext_a\ttext_b",
                     "1\t2\t0\tArt's Deli, Studio City\tArt's \"Deli\" Studio City",
                     "9\t10\t1\tSpago Hollywood\tSpago Hollywood"]
    assert read_pairs(path) == [Pair("1", "2", 0), Pair("9", "10", 1)]


def test_a_crash_while_writing_leaves_no_file(tmp_path):
    def pairs():
        yield Pair("1", "2", 0)
        raise KeyboardInterrupt

    for name in ("p.csv", "p.jsonl.gz"):
        with pytest.raises(KeyboardInterrupt):
            write_pairs(tmp_path / name, pairs())
    assert list(tmp_path.iterdir()) == []


def test_the_same_pairs_give_the_same_gzip_bytes(tmp_path):
    write_pairs(tmp_path / "one.csv.gz", PAIRS)
    write_pairs(tmp_path / "two.csv.gz", list(reversed(PAIRS)))
    assert (tmp_path / "one.csv.gz").read_bytes() == (tmp_path / "two.csv.gz").read_bytes()


CLUSTERS = [Cluster("1", ("1", "2", "10")), Cluster("a-1", ("a-1", "b:2"))]


def test_clusters_as_csv_and_json_lines(tmp_path):
    write_clusters(tmp_path / "c.csv", CLUSTERS)
    with open(tmp_path / "c.csv", newline="") as handle:
        assert list(csv.reader(handle)) == [["cluster_id", "size", "members"], ["1", "3", "1,2,10"],
                                            ["a-1", "2", "a-1,b:2"]]
    write_clusters(tmp_path / "c.jsonl", CLUSTERS)
    rows = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert rows == [{"cluster_id": "1", "size": 3, "members": ["1", "2", "10"]},
                    {"cluster_id": "a-1", "size": 2, "members": ["a-1", "b:2"]}]


def test_clusters_with_texts_list_one_member_a_row(tmp_path):
    write_clusters(tmp_path / "c.csv", CLUSTERS, texts=lookup)
    with open(tmp_path / "c.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["cluster_id"], r["size"], r["id"], r["text"]) for r in rows] == [
        ("1", "3", "1", TEXTS["1"]), ("1", "3", "2", TEXTS["2"]), ("1", "3", "10", TEXTS["10"]),
        ("a-1", "2", "a-1", "x"), ("a-1", "2", "b:2", "y")]
    write_clusters(tmp_path / "c.tsv", CLUSTERS, texts=lookup)
    assert (tmp_path / "c.tsv").read_text().splitlines()[:3] == [
        "cluster_id\tsize\tid\ttext", "1\t3\t1\tArt's Deli, Studio City", "1\t3\t2\tArt's \"Deli\" Studio City"]


def test_a_member_with_a_comma_is_refused_in_a_cell_of_members_but_not_in_json_lines(tmp_path):
    odd = [Cluster("a,b", ("a,b", "c"))]
    with pytest.raises(InputError, match="comma"):
        write_clusters(tmp_path / "c.csv", odd)
    assert not (tmp_path / "c.csv").exists()
    write_clusters(tmp_path / "c.jsonl", odd)
    assert json.loads((tmp_path / "c.jsonl").read_text())["members"] == ["a,b", "c"]


@dataclass(frozen=True)
class ProbableMatch(Match):
    """A match with a probability, as a fitted model gives one."""

    probability: float = 0.0


def test_matches_in_each_format():
    matches = [Match("536", 1.0, 0, "Art's Deli"), Match("3", 0.78519, 1, "Art's Delicatessen, LA")]
    out = io.StringIO()
    write_table(out, match_table(matches), "tsv")
    assert out.getvalue() == "1.0000\t0\t536\tArt's Deli\n0.7852\t1\t3\tArt's Delicatessen, LA\n"
    out = io.StringIO()
    write_table(out, match_table(matches), "csv")
    assert list(csv.DictReader(io.StringIO(out.getvalue())))[1] == {
        "similarity": "0.7852", "distance": "1", "id": "3", "text": "Art's Delicatessen, LA"}
    out = io.StringIO()
    write_table(out, match_table([ProbableMatch("3", 0.78519, 1, "x", 0.93)]), "jsonl")
    assert json.loads(out.getvalue()) == {"similarity": 0.7852, "distance": 1, "id": "3", "text": "x",
                                          "probability": 0.93}
