"""The scale benchmark at 10k records, as CI runs it: correctness only, no timing."""

import json
import subprocess
import sys

from conftest import ROOT


def test_benchmark_runs_end_to_end_and_both_sides_find_the_duplicates(core, tmp_path):
    out, raw = tmp_path / "RESULTS.md", tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.run", "--n", "10000", "--data", str(tmp_path / "data"), "--solr-url", core.url,
         "--queries", "50", "--sample", "5000", "--out", str(out), "--json", str(raw)],
        capture_output=True, text=True, cwd=ROOT, timeout=900,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(raw.read_text())
    ours, peer = results["ours"], results["datasketch"]
    truth = (tmp_path / "data" / "true_pairs.tsv").read_text().splitlines()
    assert ours["true"] <= len(truth) and peer["true"] <= len(truth)
    assert ours["recall"] >= 0.9 and ours["precision"] >= 0.9
    assert peer["recall"] >= 0.9
    assert core.count() == 10000
    assert results["latency_ms"]["queries"] == 50
    assert results["signatures"]["shingles"] > 5000
    text = out.read_text()
    assert "## Targets" in text and "| neardup-solr (index + report, Solr in the loop) |" in text
