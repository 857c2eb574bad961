"""The quality suite: defaults only, through the command line, its table
agreeing with `neardup evaluate` on the same pair files."""

import json
import re
import subprocess
import sys
from dataclasses import replace

import numpy as np

from bench.quality import estimates, field_markdown, markdown
from conftest import ROOT, run_cli
from neardup_solr.match.mixture import fit
from neardup_solr.match.text_model import histogram
from neardup_solr.fields.model import FieldModel
from neardup_solr.match.summary import Estimates, FieldSummary, ReportSummary

SETS = {"records-heavy": 600, "people": 400, "documents": 60}


def table(text):
    """The first table of the results file: data set -> its cells."""
    rows = [line.strip("|").split("|") for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| ---")]
    header = [cell.strip() for cell in rows[0]]
    body = {}
    for row in rows[1:]:
        cells = [cell.strip() for cell in row]
        if len(cells) != len(header) or cells[0] in body:
            break  # the next table
        body[cells[0]] = dict(zip(header, cells))
    return body


def test_a_small_run_scores_each_set_as_neardup_evaluate_does(core, tmp_path):
    out, data = tmp_path / "QUALITY.md", tmp_path / "data"
    done = subprocess.run(
        [sys.executable, "-m", "bench.quality", "--sets", ",".join(SETS), *(f"--n={k}={v}" for k, v in SETS.items()),
         "--seed", "3", "--data", str(data), "--solr-url", core.url, "--out", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=900,
    )
    assert done.returncode == 0, done.stderr
    rows = table(out.read_text())
    assert list(rows) == list(SETS)
    for name, size in SETS.items():
        row, folder = rows[name], data / name
        evaluated = run_cli("evaluate", str(folder / "pairs.tsv"), "--gold", str(folder / "true_pairs.tsv"), "--no-plot")
        assert evaluated.returncode == 0, evaluated.stderr
        numbers = dict(re.findall(r"(\w+)=([\d.]+)", evaluated.stdout.splitlines()[-1]))
        assert row["records"] == f"{size:,}"
        assert row["true pairs"] == f"{len((folder / 'true_pairs.tsv').read_text().splitlines()):,}"
        assert row["pairs"] == f"{int(numbers['found']):,}"
        for column in ("precision", "recall", "F1"):
            assert row[column] == numbers[column.lower()]
        # The report's own estimates, as its model file beside the pairs holds them
        # (n/a where it had too few candidates to fit), beside the measured numbers.
        estimated = json.loads((folder / "pairs.model.json").read_text())["estimated"]
        for column in ("precision", "recall"):
            shown = "n/a" if estimated is None else f"{estimated[column]:.3f}"
            assert row[f"est. {column} / measured"] == f"{shown} / {numbers[column]}"
        candidates = float(row["LSH candidates"].split()[0])
        assert float(numbers["recall"]) <= candidates <= 1.0  # only candidates can be reported
        index_s, report_s = map(float, re.findall(r"[\d.]+", row["seconds (index + report)"])[1:])
        assert index_s > 0 and report_s > 0
    assert f"--sets {','.join(SETS)}" in out.read_text()
    # The cores made for the sets are gone again; the one given is left as it was.
    assert core.count() == 0


def test_estimates_are_read_from_the_model_file_beside_the_pairs(tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("1\t2\t0\t0.9\n")
    assert estimates(pairs) is None
    # A model file as the report writes it, its estimates set to known values.
    about = ReportSummary.of(fit(histogram(np.linspace(0, 1, 500))), 0.62, forced=True)
    known = Estimates(precision=0.95, recall=0.9, true_pairs=120.5, pairs=100.0)
    replace(about, estimated=known).write(tmp_path / "pairs.model.json")
    assert estimates(pairs) == {"precision": 0.95, "recall": 0.9, "true_pairs": 120.5, "cut": 0.62, "unsure": None}
    replace(about, estimated=None).write(tmp_path / "pairs.model.json")  # too few candidates to fit
    assert estimates(pairs) is None
    replace(about, estimated=known).write(tmp_path / "pairs.model.json")
    row = {"name": "people", "records": 10, "true_pairs": 4, "pairs": 4, "precision": 0.75, "recall": 0.75,
           "f1": 0.75, "estimated": estimates(pairs), "candidates_kept": 1.0, "candidates_any": 1.0,
           "missed_not_candidates": 0, "missed_below_cut": 1, "index_seconds": 1.0, "report_seconds": 2.0}
    shown = table(markdown("python -m bench.quality", {"cores": "2"}, [row]))["people"]
    assert shown["est. precision / measured"] == "0.950 / 0.750"
    assert shown["est. recall / measured"] == "0.900 / 0.750"


def test_estimates_a_report_said_were_unsure_are_shown_so(tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("1\t2\t0\t0.9\n")
    model = FieldModel.of(names=("a",), kinds=("category",), m=((1.0, 0.9, 0.1),), u=((1.0, 0.1, 0.9),), prior=0.01)
    row = {"name": "fields-x", "records": 10, "true_pairs": 4, "pairs": 4, "precision": 0.96, "recall": 0.64,
           "f1": 0.77, "index_seconds": 1.0, "report_seconds": 2.0,
           "peers": {"splink": {"f1": 0.5, "seconds": 3.0}, "exact keys": {"f1": 0.1, "seconds": 0.1}}}
    for ambiguity, unsure in ((0.26, "fields-x"), (0.01, "none")):
        ReportSummary.of_fields(FieldSummary(keys=(), missed=0.0, random_pairs=10, separated=True, model=model,
                                             ambiguity=ambiguity), candidates=50, true_pairs=5.0, pairs=4,
                                precision=0.94, recall=0.78).write(tmp_path / "pairs.model.json")
        lines = field_markdown([row | {"estimated": estimates(pairs)}])
        shown = table("\n".join(lines))["fields-x"]
        said = "0.780 (unsure by 26%) / 0.640" if unsure != "none" else "0.780 / 0.640"
        assert shown["est. recall / measured"] == said
        # Off by more than 0.05 either way; said so, or not.
        assert f"measured: fields-x (the report said they were unsure on {unsure})." in lines[4]


def test_a_solr_that_does_not_answer_ends_the_run_with_a_message(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "bench.quality", "--sets", "people", "--n", "people=100", "--data", str(tmp_path),
         "--solr-url", "http://127.0.0.1:9/solr/none", "--out", str(tmp_path / "Q.md")],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "bench.quality:" in done.stderr
    assert not (tmp_path / "Q.md").exists()
