"""The field-records scale run's results file: ours beside splink's, or beside a splink that did not finish."""

from bench.fields_run import HERE, arguments, command_of, markdown, shown_lines

COMMAND = "python -m bench.fields_run --domain crm --size 2000"


def results(splink: dict) -> dict:
    return {"records": 1000, "entity": "contact", "domain": "crm", "difficulty": "medium", "true_pairs": 600,
            "generated_seconds": 1.0, "date": "2026-11-27 09:00 UTC", "machine": {"cpus": 2},
            "ours": {"index_seconds": 30.0, "report_seconds": 10.0, "pairs": 590, "precision": 0.99, "recall": 0.97,
                     "f1": 0.98, "estimated": {"precision": 0.995, "recall": 0.96}, "said": ["indexed 1000"],
                     "peak_mb": 300.0},
            "splink": splink}


def test_a_splink_that_finished_is_scored_and_timed_beside_ours():
    text = markdown(COMMAND, results({"seconds": 80.0, "pairs": 600, "precision": 0.9, "recall": 0.9, "f1": 0.9,
                                      "peak_mb": 900.0, "what": "blocking on email"}))
    assert "| neardup-solr | 40 (index 30 + report 10) | 590 | 0.990 | 0.970 | 0.980 | 300 |" in text
    assert "| splink (recipe) | 80 | 600 | 0.900 | 0.900 | 0.900 | 900 |" in text
    assert "Ratio of times, ours / splink's: 0.50." in text


def test_a_splink_that_could_not_finish_is_written_down_and_ours_kept():
    # At a million records splink's process can outgrow the machine's memory and be killed: that is the
    # peer's result, and ours, measured before it, stays in the file.
    failed = {"seconds": 1600.0, "failed": "killed by SIGKILL", "said": "", "peak_mb": 21000.0}
    text = markdown(COMMAND, results(failed))
    assert "| neardup-solr | 40 (index 30 + report 10) | 590 | 0.990 | 0.970 | 0.980 | 300 |" in text
    assert "| splink (recipe) | did not finish: killed by SIGKILL after 1600 s | | | | | 21000 |" in text
    assert "splink did not finish (killed by SIGKILL; its last line: none); ours ended in 0.03 of the time" in text
    assert "Ratio of times" not in text


def test_the_section_names_no_folder_outside_the_checkout(tmp_path):
    inside = HERE / "data" / "fields-crm-medium-2000-1"
    said = f"indexed 10 records from {inside}/records.parquet in 1.0 s\nwrote 5 pairs to {inside}/pairs.tsv\n"
    assert shown_lines(said, inside) == ["indexed 10 records from bench/data/fields-crm-medium-2000-1/records.parquet "
                                         "in 1.0 s", "wrote 5 pairs to bench/data/fields-crm-medium-2000-1/pairs.tsv"]
    outside = said.replace(str(inside), str(tmp_path))
    assert shown_lines(outside, tmp_path)[0] == "indexed 10 records from DATA/records.parquet in 1.0 s"
    parser = arguments()
    args = parser.parse_args(["--size", "2000", "--splink-timeout", "1800", "--data", str(tmp_path), "--json",
                              str(tmp_path / "r.json"), "--out", str(tmp_path / "R.md")])
    assert command_of(args, parser) == "python -m bench.fields_run --size 2000 --splink-timeout 1800"
