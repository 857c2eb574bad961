"""The reference figure, end to end through the command line, on the real Solr.

The data's README gives it: 3-word shingles, same first word, top 10 by
overlap, word edit distance <= 2 find 65 pairs, 61 of them true.
"""

import pytest

from conftest import create_core, drop_core, run_cli


@pytest.fixture(scope="module")
def indexed(solr_node, restaurants_dir, tmp_path_factory):
    work = tmp_path_factory.mktemp("restaurants")
    addresses = work / "addresses.txt"
    done = run_cli(
        "prepare-restaurants",
        "--fodors", str(restaurants_dir / "fodors.txt"),
        "--zagats", str(restaurants_dir / "zagats.txt"),
        "-o", str(addresses),
    )
    assert done.returncode == 0, done.stderr
    core = create_core(solr_node)
    done = run_cli("index-restaurants", str(addresses), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    yield core, work
    drop_core(core)


def gold_pairs(restaurants_dir):
    lines = (restaurants_dir / "gold_pairs.tsv").read_text().split("\n")
    return {frozenset(line.split()) for line in lines if line.strip()}


def report(core, work, *args):
    out = work / ("pairs" + "".join(args).replace("-", "_") + ".tsv")
    done = run_cli("report-near-dups", *args, str(out), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    return out, rows


def test_prepared_records_follow_the_reference_numbering(indexed):
    core, work = indexed
    lines = (work / "addresses.txt").read_text().splitlines()
    assert len(lines) == 864
    assert lines[2] == "3 Art's Delicatessen 12224 Ventura Blvd. Studio City"
    assert lines[535] == "536 Art's Deli 12224 Ventura Blvd. Studio City"
    assert core.count() == 864


@pytest.mark.parametrize("rows", ["10", "1000"])
def test_shingles_find_65_pairs_61_true(indexed, restaurants_dir, rows):
    core, work = indexed
    out, pairs = report(core, work, "--shingles", "--max-dist", "2", "--rows", rows)
    assert len(pairs) == 65
    assert sum(frozenset(p[:2]) in gold_pairs(restaurants_dir) for p in pairs) == 61
    assert all(int(a) < int(b) and 0 <= int(d) <= 2 for a, b, d in pairs)
    done = run_cli("evaluate", str(out), "--gold", str(restaurants_dir / "gold_pairs.tsv"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "found=65 true=61 precision=0.938 recall=0.545 f1=0.689"


def test_minhash_with_20_signatures_is_close_to_the_reference(indexed, restaurants_dir):
    core, work = indexed
    out, pairs = report(core, work, "--minhash", "--signatures", "20", "--max-dist", "2")
    true = sum(frozenset(p[:2]) in gold_pairs(restaurants_dir) for p in pairs)
    assert 60 <= len(pairs) <= 68
    assert true / len(pairs) >= 0.9
    done = run_cli("evaluate", str(out), "--gold", str(restaurants_dir / "gold_pairs.tsv"))
    assert done.stdout.strip().splitlines()[-1].startswith(f"found={len(pairs)} true={true} ")


def test_asking_for_more_signatures_than_indexed_is_a_clear_error(indexed):
    core, work = indexed
    done = run_cli("report", "--minhash", "--signatures", "64", str(work / "x.tsv"), "--solr-url", core.url)
    assert done.returncode == 1
    assert "index again with --signatures 64" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (work / "x.tsv").exists()
