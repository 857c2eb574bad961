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


def test_load_bench_counts_every_query_and_no_errors_against_a_live_index(core, tmp_path):
    records = tmp_path / "records.txt"
    subprocess.run([sys.executable, "-m", "bench.generate", "--n", "2000", "--seed", "3", "--out-dir", str(tmp_path)],
                   check=True, capture_output=True, cwd=ROOT)
    subprocess.run([sys.executable, "-m", "neardup_solr", "index", str(records), "--solr-url", core.url, "--quiet"],
                   check=True, capture_output=True, cwd=ROOT)
    raw = tmp_path / "load.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", "--solr-url", core.url, "--records", str(records), "--clients", "3",
         "--seconds", "3", "--json", str(raw)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(raw.read_text())
    assert result["errors"] == 0 and result["clients"] == 3
    # Every client went round its loop, not just once: the latencies are a sample of each.
    assert len(result["queries_per_client"]) == 3 and min(result["queries_per_client"]) >= 2
    assert sum(result["queries_per_client"]) == result["queries"]
    assert 0 < result["p50_ms"] <= result["p99_ms"] <= result["max_ms"]
    assert f"{result['queries']:,} queries" in done.stdout


def test_load_bench_reports_errors_and_fails_when_solr_is_gone(tmp_path):
    records = tmp_path / "records.txt"
    records.write_text("1 Art's Deli 12224 Ventura Blvd. Studio City\n")
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", "--solr-url", "http://127.0.0.1:9/solr/none", "--records", str(records),
         "--clients", "1", "--seconds", "1"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 1
    assert "error:" in done.stderr
