"""The scale benchmark on 5,000 records (and 1,000 documents), as the suite runs it: correctness only, no timing."""

import json
import os
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from bench.results import RESULTS, add_section
from conftest import ROOT, _homes, write_records

from neardup_solr import NearDuplicates

# Large enough that every side has thousands of signatures and hundreds of true pairs to find.
RECORDS = 5000
DOCUMENTS = 1000


def run_bench(core, tmp_path, corpus, n, *extra):
    out, raw = tmp_path / "RESULTS.md", tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.run", "--corpus", corpus, "--n", str(n), "--data", str(tmp_path / "data"),
         "--solr-url", core.url, "--solr-home", str(_homes[int(urlsplit(core.url).port)]), "--queries", "50",
         # Correctness only: ten untimed queries warm up, not the thousand a timed run makes.
         "--warm-up", "10", "--sample", "2000", "--out", str(out), "--json", str(raw), *extra],
        capture_output=True, text=True, cwd=ROOT, timeout=1800,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(raw.read_text()), out.read_text()


def test_benchmark_runs_end_to_end_and_every_side_finds_the_duplicates(core, tmp_path):
    # Solr's MinHash peer is left to the documents' run and to test_bench_solr_peer.py: its one query per
    # record would cost a minute here.
    results, text = run_bench(core, tmp_path, "records", RECORDS, "--no-solr-minhash")
    ours, peer = results["ours"], results["datasketch"]
    truth = (tmp_path / "data" / "true_pairs.tsv").read_text().splitlines()
    assert ours["true"] <= len(truth) and peer["true"] <= len(truth)
    assert ours["recall"] >= 0.9 and ours["precision"] >= 0.9
    assert peer["recall"] >= 0.9
    # The report's own estimate of its recall stands beside the measured one in the targets.
    assert 0.8 <= ours["estimated_recall"] <= 1.0
    assert f"estimated {ours['estimated_recall']:.3f}, measured {ours['recall']:.3f}" in text
    assert results["solr_minhash"] is None and "Solr's MinHash was not run: it was left out" in text
    assert core.count() == RECORDS
    # The defaults ran: the banding neardup index chose is the one both peers were given.
    settings = results["settings"]
    assert settings["chose"].startswith(f"bands: {settings['bands']} x {settings['band_rows']}")
    assert results["forced"] == {"bands": None, "band_rows": None, "cut": None}
    assert results["latency_ms"]["queries"] == 50
    assert results["signatures"]["shingles"] > 2000
    # Where the time goes: every phase, each core's share and the JVM's and ours between 0 and 1.
    phases = {p["phase"]: p for p in results["cpu"]}
    assert {"neardup index", "neardup report", "datasketch build + query", "rensa pipeline"} <= set(phases)
    for phase in phases.values():
        assert len(phase["cores_busy"]) == os.cpu_count()
        assert all(0 <= share <= 1 for share in [*phase["cores_busy"], phase["jvm"], phase["python"]])
    assert phases["neardup report"]["python"] > 0
    assert "### Targets" in text and "| neardup-solr (index + report, Solr in the loop) |" in text
    assert "### Where the time goes" in text
    # Where the recall goes counts the true pairs found as the score does.
    assert results["recall"]["true"] == len(truth) and results["recall"]["found_true"] == ours["true"]
    assert "Where our recall goes: At " in text
    assert (f"`python -m bench.run --corpus records --n {RECORDS} --queries 50 --warm-up 10 --sample 2000 "
            "--no-solr-minhash`") in text
    # rensa ran at the same banding; its pairs at its best cut are scored as the others are, and both rensa
    # targets are called met or missed (never "not measured": both sides ran).
    rensa = results["rensa"]
    assert rensa["records"] == RECORDS and rensa["recall"] >= 0.9 and rensa["true"] <= rensa["candidates_true"]
    precision, recall = rensa["precision"], rensa["recall"]
    assert rensa["f1"] == pytest.approx(2 * precision * recall / (precision + recall))
    targets = text.split("### Targets", 1)[1].split("###", 1)[0]
    for target in ("end to end <= 1.0x the rensa pipeline",
                   "F1 (defaults, no labels) >= rensa's best-in-hindsight F1, with precision >= 0.99"):
        row = next(line for line in targets.splitlines() if line.startswith(f"| {target} |"))
        assert row.endswith(("| met |", "| MISSED |"))
    assert "| rensa RMinHashLSH + exact Jaccard at its best cut in hindsight |" in text
    our_f1 = f"| {ours['recall']:.3f} | {ours['f1']:.3f} |"
    assert our_f1 in text  # our F1 beside our recall
    # A results file from before rensa (and F1) renders: rensa not run, nothing said of it met or missed.
    for side in ("ours", "datasketch"):
        del results[side]["f1"]
    del results["rensa"]
    old, out = tmp_path / "old.json", tmp_path / "OLD.md"
    old.write_text(json.dumps(results))
    done = subprocess.run([sys.executable, "-m", "bench.run", "--render", str(old), "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    rendered = out.read_text()
    assert "| end to end <= 1.0x the rensa pipeline | rensa not run | not measured |" in rendered
    assert "rensa was not run: it was not yet part of the benchmark" in rendered
    assert our_f1 in rendered  # F1 from precision and recall


def test_benchmark_of_documents_uses_word_shingles_on_both_sides(core, tmp_path):
    results, text = run_bench(core, tmp_path, "documents", DOCUMENTS)
    assert results["settings"]["lsh_shingles"] == "words"
    ours, peer, solr_minhash = results["ours"], results["datasketch"], results["solr_minhash"]
    assert ours["recall"] >= 0.9 and ours["precision"] >= 0.9
    assert peer["recall"] >= 0.9
    # Solr's MinHash finds the true pairs among its candidates; our verification keeps them and drops the rest.
    assert solr_minhash["candidates"]["recall"] >= 0.9
    assert solr_minhash["verified"]["precision"] >= 0.9 and solr_minhash["verified"]["recall"] >= 0.9
    assert solr_minhash["latency_ms"]["queries"] == 50
    assert "LSH over word 3-shingles" in text and "| Solr MinHashFilter + `{!min_hash}` |" in text


def test_a_run_too_large_for_the_peers_and_the_report_indexes_and_queries_only(core, tmp_path):
    results, text = run_bench(core, tmp_path, "records", 2000, "--no-solr-minhash", "--no-datasketch", "--no-rensa",
                              "--index-only")
    assert core.count() == 2000
    assert results["datasketch"] is None and results["rensa"] is None and results["ours"]["report_seconds"] is None
    assert not (tmp_path / "data" / "pairs-ours.tsv").exists()
    assert not (tmp_path / "data" / "pairs-datasketch.tsv").exists()
    assert not (tmp_path / "data" / "pairs-rensa.tsv").exists()
    phases = {p["phase"] for p in results["cpu"]}
    assert "neardup index" in phases
    assert not phases & {"neardup report", "datasketch build + query", "rensa pipeline"}
    assert results["latency_ms"]["queries"] == 50
    # Nothing the run did not measure is called met or missed.
    targets = text.split("### Targets", 1)[1].split("###", 1)[0]
    assert "| end to end <= 0.4x datasketch's build + query | datasketch and the report not run | not measured |" \
        in targets
    assert "the report not run | not measured |" in targets and "recall" in targets
    assert "| end to end <= 1.0x the rensa pipeline | rensa and the report not run | not measured |" in targets
    assert "| neardup-solr (index only, Solr in the loop) |" in text and "`neardup report` was not run" in text
    assert "datasketch was not run (`--no-datasketch`)" in text and "rensa was not run (`--no-rensa`)" in text
    assert text.count("--no-datasketch --no-rensa --index-only`") == 1


def test_index_only_is_refused_with_solr_minhash_whose_verification_needs_the_report(tmp_path):
    done = subprocess.run([sys.executable, "-m", "bench.run", "--n", "10", "--index-only", "--out",
                           str(tmp_path / "RESULTS.md")], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "--index-only needs --no-solr-minhash" in done.stderr
    assert not (tmp_path / "RESULTS.md").exists()


def test_a_new_run_keeps_the_earlier_runs_sections(tmp_path):
    out = tmp_path / "RESULTS.md"
    add_section(out, "## Records, n = 10 (first)\n\nmeasured once\n")
    add_section(out, "## Documents, n = 20 (second)\n\nmeasured again\n")
    text = out.read_text()
    assert text.index("(second)") < text.index("(first)") and "measured once" in text and "measured again" in text
    assert text.startswith("# Benchmark results")


def test_runs_write_by_default_into_a_folder_of_their_own_that_git_ignores(tmp_path):
    out = tmp_path / "out" / "RESULTS.md"
    add_section(out, "## Records, n = 10 (first)\n\nmeasured once\n")
    assert out.read_text().startswith("# Benchmark results")
    assert RESULTS.parent == ROOT / "bench" / "out"
    if (ROOT / ".git").exists():
        ignored = subprocess.run(["git", "check-ignore", "-q", str(RESULTS.relative_to(ROOT))], cwd=ROOT)
        assert ignored.returncode == 0


def test_load_bench_counts_every_query_and_no_errors_against_a_live_index(core, tmp_path):
    records = tmp_path / "records.txt"
    subprocess.run([sys.executable, "-m", "bench.generate", "--n", "2000", "--seed", "3", "--out-dir", str(tmp_path)],
                   check=True, capture_output=True, cwd=ROOT)
    subprocess.run([sys.executable, "-m", "neardup_solr", "index", str(records), "--solr-url", core.url, "--quiet"],
                   check=True, capture_output=True, cwd=ROOT)
    raw, out = tmp_path / "load.json", tmp_path / "RESULTS.md"
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", "--solr-url", core.url, "--records", str(records), "--clients", "3",
         "--seconds", "3", "--warm-up", "1", "--json", str(raw), "--out", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(raw.read_text())
    assert result["errors"] == 0 and result["clients"] == 3 and result["mode"] == "in-process"
    # Every client went round its loop, not just once: the latencies are a sample of each.
    assert len(result["requests_per_client"]) == 3 and min(result["requests_per_client"]) >= 2
    assert sum(result["requests_per_client"]) == result["requests"] == result["latency_ms"]["all"]["requests"]
    latency = result["latency_ms"]["all"]
    assert 0 < latency["p50"] <= latency["p95"] <= latency["p99"] <= latency["max"]
    assert f"{result['requests']:,} requests" in done.stdout
    assert result["records_indexed"] == 2000 and "## Online query load in process, n = 2,000" in out.read_text()


def test_load_bench_over_http_starts_the_service_and_every_answer_is_right(core, tmp_path):
    records = write_records(tmp_path / "records.txt", [
        "1 Art's Deli 12224 Ventura Blvd. Studio City", "2 Arts Deli 12224 Ventura Boulevard Studio City",
        "3 Hotel Bel-Air 701 Stone Canyon Rd. Bel Air", "4 Hotel Bel-Air 701 Stone Canyon Road Bel Air",
        "5 Philippe the Original 1001 N. Alameda St. Los Angeles", "6 Campanile 624 S. La Brea Ave. Los Angeles"])
    truth = write_records(tmp_path / "truth.tsv", ["1\t2", "3\t4"])
    NearDuplicates(core).index([tuple(line.split(" ", 1)) for line in records.read_text().splitlines()])
    raw, out = tmp_path / "load.json", tmp_path / "RESULTS.md"
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", "--mode", "http", "--solr-url", core.url, "--records", str(records),
         "--truth", str(truth), "--clients", "2", "--seconds", "2", "--warm-up", "1", "--text-share", "0.5",
         "--writers", "1", "--json", str(raw), "--out", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(raw.read_text())
    assert result["mode"] == "http" and result["started_service"] and result["records_indexed"] == 6
    # The writer's records were acknowledged, each batch's found by the lookup after it, and deleted at the end.
    written = result["written"]
    assert written["acknowledged"] > 0 and 0 < written["looked_up"] == written["found_next"]
    assert result["latency_ms"]["write"]["requests"] > 0 and core.count() == 6
    assert result["requests"] > 0 and result["errors"] == 0
    assert {"record", "text"} <= set(result["latency_ms"])  # both kinds of request were sent
    # Every answer about records 1-4 named its known duplicate (the others have none to check).
    assert 0 < result["known"]["checked"] == result["known"]["complete"]
    section = out.read_text()
    assert "## Service load over HTTP, n = 6" in section and "Errors: 0 " in section
    assert "| GET /records/{id}/duplicates |" in section and "| GET /duplicates?text={its text} |" in section
    assert "| POST /records (5 new records) |" in section and "found by the next lookup" in section


def test_load_bench_reports_errors_and_fails_when_solr_is_gone(tmp_path):
    records = tmp_path / "records.txt"
    records.write_text("1 Art's Deli 12224 Ventura Blvd. Studio City\n")
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", "--solr-url", "http://127.0.0.1:9/solr/none", "--records", str(records),
         "--clients", "1", "--seconds", "1", "--warm-up", "0", "--out", str(tmp_path / "RESULTS.md")],
        capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 1
    assert "error:" in done.stderr
    assert not (tmp_path / "RESULTS.md").exists()  # nothing was measured


def test_peer_memory_measures_each_size_and_reads_the_line_through_them_at_the_size_asked(tmp_path):
    out, raw = tmp_path / "RESULTS.md", tmp_path / "memory.json"
    done = subprocess.run([sys.executable, "-m", "bench.peer_memory", "--n", "800", "400", "--to", "8000",
                           "--data", str(tmp_path), "--out", str(out), "--json", str(raw)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    results = json.loads(raw.read_text())
    small, large = results["sizes"]
    assert (small["n"], large["n"]) == (400, 800) and (small["records"], large["records"]) == (400, 800)
    assert len((tmp_path / "800" / "records.txt").read_text().splitlines()) == 800
    # datasketch's process of its own, not this one's size: more than the interpreter, less than a gigabyte.
    assert all(10 < s["peak_rss_mb"] < 1024 for s in (small, large))
    # Two sizes: the need at --to is the straight line through both, read there.
    slope = (large["peak_rss_mb"] - small["peak_rss_mb"]) / (large["n"] - small["n"])
    assert abs(results["need_mb"] - (small["peak_rss_mb"] + slope * (8000 - small["n"]))) < 1e-6 * large["peak_rss_mb"]
    text = out.read_text()
    assert "## datasketch's memory, n = 400 and 800 (" in text
    assert "`python -m bench.peer_memory --n 400 800 --to 8000`" in text and "| 800 |" in text
    assert f"about {results['need_mb'] / 1024:.1f} GiB" in text


def test_peer_build_only_takes_no_pairs_file(tmp_path):
    records = tmp_path / "records.txt"
    records.write_text("1 a b c\n")
    done = subprocess.run([sys.executable, "-m", "bench.peer", str(records), str(tmp_path / "pairs.tsv"),
                           "--build-only", "--bands", "2", "--band-rows", "2"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "--build-only without it" in done.stderr
    assert not (tmp_path / "pairs.tsv").exists()


def test_a_run_says_how_much_other_work_it_measured_on_the_machine_and_claims_no_more():
    from bench.run import load_text

    def run(*others):
        return {"cpu": [{"other": share} for share in others]}

    assert load_text(run(0.02, 0.31)).startswith("Other work took up to 31% of the machine in a phase")
    assert "under that load" in load_text(run(0.02, 0.31))
    quiet = load_text(run(0.0, 0.01))
    assert quiet.startswith("Other work took at most 1% of the machine") and "load" not in quiet
    assert "not measured" in load_text({"cpu": None})


def test_where_the_recall_goes_splits_the_missed_true_pairs_by_what_lsh_was_expected_to_do():
    from bench.recall import where_recall_goes

    same = "Fiona Gibson Electric 12 Main Street Springfield"
    records = [("1", same), ("2", same), ("3", "abc"), ("4", "xyz"), ("5", f"{same} X"), ("6", f"{same} X")]
    gold = {frozenset(p) for p in (("1", "2"), ("3", "4"), ("5", "6"))}
    figures = where_recall_goes(records, gold, {frozenset(("1", "2"))}, 16, 8)
    # 1-2 and 5-6 are identical (Jaccard 1: certain candidates), 3-4 share no 3-gram (never candidates).
    assert figures["true"] == 3 and figures["found_true"] == 1 and figures["missed"] == 2
    assert figures["expected_candidates"] == 2.0 and figures["missed_by_lsh"] == 1.0
    assert figures["jaccard_found"] == [1.0, 1.0, 1.0]
    # The missed are 0 and 1: their percentiles lie on the line between them.
    assert figures["jaccard_missed"] == pytest.approx([0.1, 0.5, 0.9])


def test_bench_recall_adds_a_section_naming_no_folder_outside_the_checkout(tmp_path):
    data = tmp_path / "run"
    data.mkdir()
    write_records(data / "records.txt", ["1 Art's Deli Ventura Blvd", "2 Art's Deli Ventura Blvd.", "3 Bel-Air Hotel"])
    (data / "true_pairs.tsv").write_text("1\t2\n")
    (data / "pairs-ours.tsv").write_text("1\t2\t0\t1.0\t1.0\n")
    out = tmp_path / "RESULTS.md"
    done = subprocess.run([sys.executable, "-m", "bench.recall", "--data", str(data), "--bands", "16",
                           "--band-rows", "8", "--out", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "`python -m bench.recall --data run --bands 16 --band-rows 8`" in text and str(tmp_path) not in text
    assert "100.0% were reported" in text
    missing = subprocess.run([sys.executable, "-m", "bench.recall", "--data", str(tmp_path / "none"), "--bands", "2",
                              "--band-rows", "2"], capture_output=True, text=True, cwd=ROOT)
    assert missing.returncode == 2 and "not found" in missing.stderr


def test_a_run_on_a_given_local_solr_counts_its_jvm_as_solr(solr_node, core):
    from bench.run import bench_node

    with bench_node(core.url) as node:
        assert node.pid == solr_node.pid
    with bench_node("http://127.0.0.1:1/solr/elsewhere") as node:  # no Solr there: its CPU is not known
        assert node.pid is None
