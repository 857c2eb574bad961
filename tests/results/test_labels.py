"""Labels files: read with every valid line kept, appended durably, turned
into gold pairs, and scored against by `neardup evaluate --labels`."""

from __future__ import annotations

import pytest

from conftest import run_cli

from neardup_solr.errors import InputError
from neardup_solr.results.evaluate import read_gold, score_labels
from neardup_solr.results.labels import LabelStore, append_label, gold_text, read_labels
from neardup_solr.results.pairs import Pair

PAIRS = "1\t2\t0\n1\t3\t1\n4\t5\t2\n6\t7\t1\n8\t9\t3\n"
# Line 6 is bad; (1, 2) is labeled twice, the later line saying same.
LABELS = ("1\t2\tdifferent\n3\t1\tsame\n4\t5\tdifferent\n10\t11\tsame\n12 13 same\n6\t7\tmaybe\n"
          "2\t1\tsame\n\n6\t7\tsame\n")


def test_the_latest_label_wins_and_a_bad_line_skips_only_itself(tmp_path):
    path = tmp_path / "labels.tsv"
    path.write_text(LABELS)
    bad = []
    labels = read_labels(path, on_bad=bad.append)
    assert labels == {frozenset(("1", "2")): True, frozenset(("1", "3")): True, frozenset(("4", "5")): False,
                      frozenset(("10", "11")): True, frozenset(("12", "13")): True, frozenset(("6", "7")): True}
    assert [(b.line, b.reason) for b in bad] == [(6, "label 'maybe' is neither same nor different")]
    assert str(bad[0]) == f"{path}:6: label 'maybe' is neither same nor different"


@pytest.mark.parametrize(("line", "reason"), [
    ("1\t2", "expected id_a<TAB>id_b<TAB>same|different (or source_a, id_a, source_b, id_b, label), found 2 fields"),
    ("1\t2\tsame\textra", "found 4 fields"),
    ("1\t1\tsame", "a pair needs two ids, not '1' twice"),
    ("a,b\t2\tsame", "breaks the id rule"),
    ("1\t2\tSame", "label 'Same' is neither same nor different"),
])
def test_without_a_handler_a_bad_line_is_an_input_error_naming_file_and_line(tmp_path, line, reason):
    path = tmp_path / "labels.tsv"
    path.write_text(f"3\t4\tsame\n{line}\n")
    with pytest.raises(InputError) as raised:
        read_labels(path)
    assert raised.value.message.startswith(f"{path}:2: ") and reason in raised.value.message
    assert raised.value.hint


def test_a_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read labels from"):
        read_labels(tmp_path / "absent.tsv")


def test_appending_after_a_torn_last_line_starts_a_line_of_its_own(tmp_path):
    path = tmp_path / "sub" / "labels.tsv"
    assert append_label(path, "9", "10", "same") == ("9", "10", "same")
    assert append_label(path, "b", "a", "different") == ("a", "b", "different")
    with path.open("a") as handle:
        handle.write("3\t4\tsa")  # a write cut short by a crash
    append_label(path, "5", "6", "same")
    assert path.read_text() == "9\t10\tsame\na\tb\tdifferent\n3\t4\tsa\n5\t6\tsame\n"
    bad = []
    assert read_labels(path, on_bad=bad.append) == {frozenset(("9", "10")): True, frozenset(("a", "b")): False,
                                                    frozenset(("5", "6")): True}
    assert [b.line for b in bad] == [3]
    with pytest.raises(InputError, match="neither same nor different"):
        append_label(path, "5", "6", "maybe")
    assert path.read_text().endswith("5\t6\tsame\n")  # nothing of a refused label is written


def test_a_store_reads_the_file_and_keeps_what_it_adds(tmp_path):
    path = tmp_path / "labels.tsv"
    store = LabelStore(path)
    assert store.labels() == {} and not path.exists()
    store.add("2", "1", "same")
    store.add("1", "2", "different")
    assert LabelStore(path).labels() == {frozenset(("1", "2")): False} == store.labels()


def test_gold_text_is_the_same_pairs_as_read_gold_reads_them(tmp_path):
    path = tmp_path / "labels.tsv"
    path.write_text(LABELS)
    text = gold_text(read_labels(path, on_bad=lambda _: None))
    assert text == "1\t2\n1\t3\n6\t7\n10\t11\n12\t13\n"
    gold = tmp_path / "gold.tsv"
    gold.write_text(text)
    assert read_gold(gold) == {frozenset(p) for p in (("1", "2"), ("1", "3"), ("6", "7"), ("10", "11"),
                                                      ("12", "13"))}


def test_score_counts_labeled_pairs_only():
    labels = {frozenset(("a", "b")): True, frozenset(("c", "d")): False, frozenset(("e", "f")): True}
    found = score_labels([Pair("a", "b", 0), Pair("c", "d", 1), Pair("x", "y", 1)], labels)
    assert (found.found, found.judged, found.true, found.false, found.same, found.different) == (3, 2, 1, 1, 2, 1)
    assert found.precision == 0.5 and found.recall == 0.5
    nothing = score_labels([Pair("x", "y", 1)], labels)
    assert nothing.lines()[-1].endswith("precision=n/a recall=0.000 f1=n/a")


def test_evaluate_with_labels_prints_the_counts_and_the_score(tmp_path):
    (tmp_path / "pairs.tsv").write_text(PAIRS)
    (tmp_path / "labels.tsv").write_text(LABELS)
    done = run_cli("evaluate", str(tmp_path / "pairs.tsv"), "--labels", str(tmp_path / "labels.tsv"))
    # Labels: (1,2) (1,3) (6,7) (10,11) (12,13) same, (4,5) different. Of the 5
    # reported pairs, (1,2) (1,3) (6,7) are labeled same, (4,5) different, (8,9)
    # not at all: precision 3/4, recall 3/5, F1 2 * 0.75 * 0.6 / 1.35 = 0.667.
    assert done.returncode == 6, done.stderr  # a bad line was skipped
    assert f"{tmp_path / 'labels.tsv'}:6: label 'maybe' is neither same nor different" in done.stderr
    assert done.stdout.splitlines() == [
        "labels: 5 pairs same, 1 different; 5 pairs reported, 4 of them labeled (3 same, 1 different)",
        "labeled: found=5 judged=4 true=3 false=1 same=5 precision=0.750 recall=0.600 f1=0.667",
    ]
    assert "Traceback" not in done.stderr


def test_evaluate_with_gold_and_labels_prints_both(tmp_path):
    (tmp_path / "pairs.tsv").write_text(PAIRS)
    (tmp_path / "labels.tsv").write_text("1\t2\tsame\n4\t5\tdifferent\n")
    (tmp_path / "gold.tsv").write_text("1 2\n8 9\n20 21\n")
    done = run_cli("evaluate", str(tmp_path / "pairs.tsv"), "--gold", str(tmp_path / "gold.tsv"), "--labels",
                   str(tmp_path / "labels.tsv"), "--no-plot")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # Gold: the clusters' scores, then 2 of the 5 reported pairs are true, of 3 true pairs.
    assert lines[0].startswith("clusters: records=11 ")
    assert lines[1] == "found=5 true=2 precision=0.400 recall=0.667 f1=0.500"
    assert lines[-1] == "labeled: found=5 judged=2 true=1 false=1 same=1 precision=0.500 recall=1.000 f1=0.667"


def test_evaluate_needs_gold_or_labels(tmp_path):
    (tmp_path / "pairs.tsv").write_text(PAIRS)
    done = run_cli("evaluate", str(tmp_path / "pairs.tsv"))
    assert done.returncode == 2 and "give --gold, --labels or both" in done.stderr
    done = run_cli("evaluate", str(tmp_path / "pairs.tsv"), "--labels", str(tmp_path / "pairs.tsv"), "--missed")
    assert done.returncode == 2 and "--missed" in done.stderr
