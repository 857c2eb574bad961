"""The restaurant data end to end through the command line, on the real Solr.

The data is the copy `neardup demo` fetches (py_entitymatching 0.4.2 from
PyPI, checked by SHA-256): every mode must give the figures the results
table of docs/quality.md shows for it, and the step-by-step figures of
docs/usage.md are those of that table.
"""

import io
import json
import re
import subprocess
import sys

import pytest
from tqdm import tqdm

from bench import kernel_check
from conftest import ROOT, child_env, create_core, documented, drop_core, run_cli
from neardup_solr.modes import text_report
from neardup_solr.match import buckets, kernel, weighing
from neardup_solr.cli.common import bar_progress
from neardup_solr.index.state import IndexSettings

# The results table of docs/quality.md for the copy the demo fetches.
# The reference workflow's options: they do not move with the default mode.
REFERENCE_OPTIONS = {"shingles": ["--shingles", "--max-dist", "2"],
                     "minhash": ["--minhash", "--minhash-values", "20", "--max-dist", "2"]}


# Runs the command line with an audit hook that fails the process if
# anything opens the forbidden file.
GUARDED = """
import os, sys
forbidden = os.stat(sys.argv[1])
def guard(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        try:
            found = os.stat(args[0])
        except OSError:
            return
        if (found.st_dev, found.st_ino) == (forbidden.st_dev, forbidden.st_ino):
            os.write(2, b"opened the gold file\\n")
            os._exit(99)
sys.addaudithook(guard)
sys.argv = ["neardup"] + sys.argv[2:]
from neardup_solr.cli import main
main()
"""


def run_without_reading(forbidden, *args):
    return subprocess.run([sys.executable, "-c", GUARDED, str(forbidden), *args], capture_output=True, text=True,
                          env=child_env())


@pytest.fixture(scope="module")
def indexed(solr_node, restaurants_dir, tmp_path_factory):
    work = tmp_path_factory.mktemp("restaurants")
    addresses = work / "addresses.txt"
    addresses.write_bytes((restaurants_dir / "addresses.txt").read_bytes())
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


def test_prepare_restaurants_numbers_both_guides_and_cuts_each_line_before_its_phone(restaurants_dir, tmp_path):
    """The raw guide lines' form (`name address city phone genre`, Fodor's
    phones 310/555-..., Zagat's 310-555-... and CRLF), made of the fetched
    copy's names and addresses: records are numbered from 1, Fodor's first,
    each line cut before its phone."""
    guides = {}
    for name, phone in (("fodors", "310/555-01{:02d}"), ("zagats", "310-555-01{:02d}")):
        rows = [line.split(",") for line in (restaurants_dir / f"{name}.csv").read_text().splitlines()[1:]]
        rows = [r for r in rows if len(r) == 4]  # names and addresses without a comma of their own
        guides[name] = [" ".join(r[1:]) for r in rows]
        ending = "\r\n" if name == "zagats" else "\n"
        (tmp_path / f"{name}.txt").write_text(
            "".join(f"{text} {phone.format(n % 100)} Genre{ending}" for n, text in enumerate(guides[name]))
            + ending, encoding="utf-8")
    done = run_cli("prepare-restaurants", "--fodors", str(tmp_path / "fodors.txt"),
                   "--zagats", str(tmp_path / "zagats.txt"), "-o", str(tmp_path / "addresses.txt"))
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "addresses.txt").read_text(encoding="utf-8").splitlines()
    texts = guides["fodors"] + guides["zagats"]
    assert len(guides["fodors"]) > 500 and len(guides["zagats"]) > 300 and len(lines) == len(texts)
    assert [line.split(" ", 1)[0] for line in lines] == [str(n) for n in range(1, len(texts) + 1)]
    # Each line is its text up to the phone; a text holding a phone's shape
    # itself (a street number as 293-b) is cut there, the rule's known wart.
    cut = [text != line.split(" ", 1)[1] for text, line in zip(texts, lines)]
    assert all(text.startswith(line.split(" ", 1)[1]) for text, line in zip(texts, lines))
    assert all(re.search(r"\d{3}[/-]", text) for text, short in zip(texts, cut) if short)
    assert sum(cut) < 10



@pytest.mark.parametrize("rows", ["10", "1000"])
def test_shingles_give_the_documented_figures(indexed, restaurants_dir, rows):
    core, work = indexed
    out, pairs = report(core, work, *REFERENCE_OPTIONS["shingles"], "--candidates", rows)
    true = sum(frozenset(p[:2]) in gold_pairs(restaurants_dir) for p in pairs)
    assert documented("shingles").startswith(f"found={len(pairs)} true={true} ")
    assert all(int(a) < int(b) and 0 <= int(d) <= 2 for a, b, d in pairs)
    done = run_cli("evaluate", str(out), "--gold", str(restaurants_dir / "gold_pairs.tsv"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == documented("shingles")


def test_minhash_with_20_values_gives_the_documented_figures(indexed, restaurants_dir):
    core, work = indexed
    out, pairs = report(core, work, *REFERENCE_OPTIONS["minhash"])
    true = sum(frozenset(p[:2]) in gold_pairs(restaurants_dir) for p in pairs)
    assert documented("minhash").startswith(f"found={len(pairs)} true={true} ")
    done = run_cli("evaluate", str(out), "--gold", str(restaurants_dir / "gold_pairs.tsv"))
    assert done.stdout.strip().splitlines()[-1] == documented("minhash")


def test_asking_for_more_minhash_values_than_indexed_is_a_clear_error(indexed):
    core, work = indexed
    # --signatures: the option's old name, kept for a release.
    done = run_cli("report", "--minhash", "--signatures", "64", str(work / "x.tsv"), "--solr-url", core.url)
    assert done.returncode == 1
    assert re.search(r"record \d+ has 20 MinHash values, 64 were asked for", done.stderr), done.stderr
    assert "index again with --minhash-values 64" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (work / "x.tsv").exists()


def test_default_mode_gives_the_documented_figures_without_reading_the_gold_file(solr_node, restaurants_dir,
                                                                                 tmp_path):
    """The documented figures with the defaults (above the bar of F1 >= 0.96
    the self-calibration is held to on the restaurants); detection never
    opens the gold file."""
    gold = restaurants_dir / "gold_pairs.tsv"
    (tmp_path / "addresses.txt").write_bytes((restaurants_dir / "addresses.txt").read_bytes())
    core = create_core(solr_node)
    try:
        steps = [
            ["index", str(tmp_path / "addresses.txt"), "--solr-url", core.url],
            ["report", str(tmp_path / "pairs.tsv"), "--solr-url", core.url],
        ]
        for step in steps:
            done = run_without_reading(gold, *step)
            assert done.returncode == 0, done.stderr
    finally:
        drop_core(core)
    pairs = [line.split("\t") for line in (tmp_path / "pairs.tsv").read_text().splitlines()]
    true = sum(frozenset(p[:2]) in gold_pairs(restaurants_dir) for p in pairs)
    precision, recall = true / len(pairs), true / 112
    assert 2 * precision * recall / (precision + recall) >= 0.96
    # Every pair carries its similarity and probability; the pairs kept are
    # those the fitted model gives at least 1/2, at or above its cut.
    about = json.loads((tmp_path / "pairs.model.json").read_text())
    assert about["forced"] is False and 0.0 < about["cut"] < 1.0
    assert all(len(p) == 5 and float(p[3]) >= about["cut"] and float(p[4]) >= 0.5 for p in pairs)
    done = run_cli("evaluate", str(tmp_path / "pairs.tsv"), "--gold", str(gold), "--no-plot")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == documented("default")
    # The guard works: evaluate, which must read the file, is stopped by it.
    done = run_without_reading(gold, "evaluate", str(tmp_path / "pairs.tsv"), "--gold", str(gold), "--no-plot")
    assert done.returncode == 99 and "opened the gold file" in done.stderr


def test_evaluate_saves_a_histogram_and_lists_missed_pairs(indexed, restaurants_dir):
    core, work = indexed
    out, pairs = report(core, work, "--lsh")
    plot = work / "hist.png"
    done = run_cli("evaluate", str(out), "--gold", str(restaurants_dir / "gold_pairs.tsv"), "--plot", str(plot),
                   "--missed", "--records", str(work / "addresses.txt"))
    assert done.returncode == 0, done.stderr
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = done.stdout.strip().splitlines()
    found_keys = {frozenset(p[:2]) for p in pairs}
    missed = [line.split("\t") for line in lines[:-3]]
    assert {frozenset(m[1:3]) for m in missed} == gold_pairs(restaurants_dir) - found_keys
    assert all(m[0] == "missed" and len(m) == 5 for m in missed)
    # The report's model stands beside the measured figures, and its histogram beside the plot.
    true = len(found_keys & gold_pairs(restaurants_dir))
    assert lines[-3].startswith("estimated precision=") and lines[-3].endswith(
        f"measured precision={true / len(pairs):.3f} recall={true / 112:.3f} true={true}")
    # The clusters' scores, over every record of --records.
    assert lines[-2].startswith("clusters: records=864 bcubed_precision=")
    assert (out.with_suffix(".model.png")).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert lines[-1].startswith(f"found={len(pairs)} ")


def test_verification_on_forked_workers_gives_the_same_pairs(indexed, monkeypatch):
    # Forking starts at a size the restaurants never reach; forced here, in
    # spans of 50 candidates, the pairs and their order must not change.
    core, _ = indexed
    alone = text_report.lsh_pairs(core).pairs
    monkeypatch.setattr(weighing, "FORK_FROM", 0)
    monkeypatch.setattr(weighing, "VERIFY_SPAN", 50)
    forked = text_report.lsh_pairs(core).pairs
    assert len(alone) > 100
    assert forked == alone


def test_a_report_held_to_small_blocks_of_memory_gives_the_same_pairs_and_model(indexed, monkeypatch):
    core, _ = indexed
    whole = text_report.lsh_pairs(core)
    # Every record weighed in a piece of its own, buckets read seven members
    # a request, the pairs met folded into the distinct ones from 5 on and
    # recoded 13 at a time, candidates scored and their missing words
    # gathered 100 at a time, the kept pairs' texts read 30 pairs at a time.
    monkeypatch.setattr(weighing, "WEIGH_CHARACTERS", 1)
    monkeypatch.setattr(buckets, "DOCS_PER_QUERY", 7)
    monkeypatch.setattr(buckets, "PAIR_BLOCK", 5)
    monkeypatch.setattr(buckets, "RECODE_SPAN", 13)
    monkeypatch.setattr(weighing, "SCORE_SPAN", 100)
    monkeypatch.setattr(kernel, "MISSING_SPAN", 100)
    monkeypatch.setattr(text_report, "KEPT_BLOCK", 30)
    blocks = text_report.lsh_pairs(core)
    assert len(whole.pairs) > 100
    assert blocks.pairs == whole.pairs
    assert blocks.model == whole.model


def test_the_kernel_scores_every_candidate_as_the_plain_similarity_does(indexed):
    # Every candidate pair of the restaurants, to the last bit (the quality
    # benchmark checks every labeled set's candidates the same way).
    core, _ = indexed
    assert kernel_check.check(core).pairs > 10_000


def test_the_report_bar_goes_on_until_every_candidate_is_verified(indexed):
    core, _ = indexed
    bar = tqdm(total=IndexSettings.load(core).bands, file=io.StringIO(), disable=False)
    pairs = text_report.lsh_pairs(core, progress=bar_progress(bar, {"verifying candidates": "pair"})).pairs
    assert bar.desc.startswith("verifying candidates") and bar.unit == "pair"
    # Every candidate counted once: more candidates than verified pairs, all of them done.
    assert bar.total > len(pairs) > 100
    assert bar.n == bar.total



def test_the_step_by_step_figures_are_the_results_tables():
    steps = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    assert f"# {documented('default')}   (and pairs.png" in steps
    assert f"# {documented('shingles')}\n" in steps
