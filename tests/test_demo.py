"""The README's main job, run as users run it, with data fetched from PyPI."""

import re

from conftest import free_port, run_cli
from test_restaurants import DEFAULT_MODE_FIGURES, REFERENCE_MODE_FIGURES


def test_demo_starts_solr_fetches_data_indexes_reports_and_evaluates(tmp_path):
    data_dir, work = tmp_path / "solr", tmp_path / "work"
    done = run_cli("demo", "--workdir", str(work), "--port", str(free_port()), "--data-dir", str(data_dir), "--quiet")
    try:
        assert done.returncode == 0, done.stderr
    finally:
        assert run_cli("solr", "stop", "--data-dir", str(data_dir)).returncode == 0
    records = (work / "restaurants" / "addresses.txt").read_text().splitlines()
    gold = [line.split("\t") for line in (work / "restaurants" / "gold_pairs.tsv").read_text().splitlines()]
    assert len(records) == 864 and len(gold) == 112
    ids = {line.split(" ", 1)[0] for line in records}
    assert len(ids) == 864 and all(a in ids and b in ids for a, b in gold)
    gold_set = {frozenset(pair) for pair in gold}
    documented = {"lsh": DEFAULT_MODE_FIGURES["PyPI copy"], **REFERENCE_MODE_FIGURES["PyPI copy"]}
    for mode in ("lsh", "shingles", "minhash"):
        pairs = [line.split("\t") for line in (work / f"pairs-{mode}.tsv").read_text().splitlines()]
        true = sum(frozenset(p[:2]) in gold_set for p in pairs)
        row = re.search(rf"^{mode} +found=(\d+) true=(\d+) ", done.stdout, re.M)
        assert row and (int(row[1]), int(row[2])) == (len(pairs), true), done.stdout
        assert true / len(pairs) >= 0.9
        assert re.search(rf"^{mode} +{re.escape(documented[mode])} seconds=", done.stdout, re.M), done.stdout
    # The default mode reaches F1 >= 0.93 on this copy too (its own ids and matches).
    pairs = (work / "pairs-lsh.tsv").read_text().splitlines()
    true = sum(frozenset(line.split("\t")[:2]) in gold_set for line in pairs)
    precision, recall = true / len(pairs), true / len(gold_set)
    assert 2 * precision * recall / (precision + recall) >= 0.93
