"""A command's --records (evaluate, clusters, html) reads a records file as
`neardup index` reads its RECORDS: in any format, with its id and text in
the columns or fields the same options name."""

from __future__ import annotations

import json

import pytest

from conftest import one_line_error, run_cli

PEOPLE = [("p1", "Ann Smith", "Boston", "2020"), ("p2", "Anne Smith", "Boston", "2021"),
          ("p3", "Bob Jones", "Denver", "2019"), ("p4", "Robert Jones", "Denver", "2018"),
          ("p5", "Carl Wu", "Austin", "2017")]


def people_csv(path):
    path.write_text("person_id,name,city,joined\n" + "".join(",".join(row) + "\n" for row in PEOPLE))
    return path


def people_jsonl(path):
    path.write_text("".join(json.dumps({"code": p, "name": n, "city": c, "joined": int(j)}) + "\n"
                            for p, n, c, j in PEOPLE))
    return path


@pytest.mark.parametrize(("write", "name", "options"), [
    (people_csv, "people.csv", ["--id-column", "person_id", "--text-columns", "name,city"]),
    # Named like ID TEXT lines, read as JSON Lines because --input-format says so.
    (people_jsonl, "people.txt", ["--input-format", "jsonl", "--id-field", "code", "--text-fields", "name,city"]),
])
def test_evaluate_reads_its_records_with_the_options_index_takes(tmp_path, write, name, options):
    (tmp_path / "pairs.tsv").write_text("p1\tp2\t1\n")
    (tmp_path / "gold.tsv").write_text("p1 p2\np3 p4\n")
    records = write(tmp_path / name)
    done = run_cli("evaluate", str(tmp_path / "pairs.tsv"), "--gold", str(tmp_path / "gold.tsv"), "--no-plot",
                   "--missed", "--records", str(records), *options)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # The missed pair with its texts (the named columns joined, the year left out), and every record of the
    # file counted for the clusters, p5 alone in its own.
    assert lines[0] == "missed\tp3\tp4\tBob Jones Denver\tRobert Jones Denver"
    assert lines[1].startswith("clusters: records=5 ")
    assert lines[2] == "found=1 true=1 precision=1.000 recall=0.500 f1=0.667"


def test_a_records_layout_without_records_is_a_usage_error(tmp_path):
    (tmp_path / "pairs.tsv").write_text("p1\tp2\t1\n")
    (tmp_path / "gold.tsv").write_text("p1 p2\n")
    done = run_cli("evaluate", str(tmp_path / "pairs.tsv"), "--gold", str(tmp_path / "gold.tsv"), "--no-plot",
                   "--id-column", "person_id")
    assert done.returncode == 2
    assert "give it" in one_line_error(done) and "--records" in done.stderr


def test_a_missing_id_column_of_records_names_the_option(tmp_path):
    (tmp_path / "pairs.tsv").write_text("p1\tp2\t1\n")
    (tmp_path / "gold.tsv").write_text("p1 p2\n")
    records = people_csv(tmp_path / "people.csv")
    done = run_cli("evaluate", str(tmp_path / "pairs.tsv"), "--gold", str(tmp_path / "gold.tsv"), "--no-plot",
                   "--records", str(records))
    assert done.returncode == 4
    assert one_line_error(done).endswith("(hint: name the id column with --id-column)")


def test_clusters_and_html_read_their_records_as_index_does(tmp_path):
    (tmp_path / "pairs.tsv").write_text("p1\tp2\t1\n")
    records = people_csv(tmp_path / "people.csv")
    columns = ["--records", str(records), "--id-column", "person_id", "--text-columns", "name,city"]
    # No Solr is named or needed: ids and texts come from the file.
    done = run_cli("clusters", str(tmp_path / "pairs.tsv"), "-o", str(tmp_path / "membership.csv"), "--membership",
                   *columns)
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr  # one --format: the output's
    assert (tmp_path / "membership.csv").read_text().splitlines() == [
        "id,cluster_id", "p1,p1", "p2,p1", "p3,p3", "p4,p4", "p5,p5"]
    done = run_cli("html", str(tmp_path / "pairs.tsv"), "-o", str(tmp_path / "page.html"), *columns)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "page.html").read_text()
    # Each text the named columns joined (the word that differs from the first record's marked), no year.
    assert '<td class="text">Ann Smith Boston</td>' in page and "Anne</mark> Smith Boston</td>" in page
    assert "2020" not in page and "2021" not in page
