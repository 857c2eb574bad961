"""An output that cannot be written to the end (a full disk, a file-size
limit) is one line naming it, exit code 1, and no file that looks finished:
the report in every format, clusters, the HTML page and its figure, the
new records' pairs of `index --append`, and standard output.

The commands run as users run them, in a child process; the disk fills
for real on standard output (``/dev/full``) and, for files, a file-size
limit (RLIMIT_FSIZE, which any user may lower) stops the writes past it
with EFBIG, as a full disk stops them with ENOSPC."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli, write_records

LIMIT = 2048  # bytes a file may grow to: less than every output below
STREETS = ["Ventura Blvd.", "Stone Canyon Rd.", "N. Alameda St.", "Horn Ave.", "Robertson Blvd."]


def limited(*args: str) -> subprocess.CompletedProcess:
    """The command line with files limited to LIMIT bytes."""
    return run_cli(*args, file_size_limit=LIMIT)


def to_full_disk(*args: str) -> subprocess.CompletedProcess:
    """The command line with standard output on a device that is always full."""
    with open("/dev/full", "w") as full:
        return run_cli(*args, stdout=full.fileno())


def records(path, start: int = 0, count: int = 300):
    return write_records(path, [f"{n} Place {n // 2} on {100 + n // 2} {STREETS[n % 5]} Los Angeles"
                                for n in range(start, start + count)])


@pytest.fixture
def indexed(core, tmp_path):
    done = run_cli("index", str(records(tmp_path / "r.txt")), "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    done = run_cli("report", str(tmp_path / "pairs.tsv"), "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    assert os.path.getsize(tmp_path / "pairs.tsv") > LIMIT
    return core


def failed_to_write(done: subprocess.CompletedProcess, name: str, why: str) -> None:
    """One error line naming the output and why, exit code 1, no traceback."""
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line.lower() or "Errno" in line]
    assert errors == [errors[-1]] and errors[0].startswith(f"neardup: error: cannot write {name}: {why}"), done.stderr
    assert "(hint: " in errors[0] and "Traceback" not in done.stderr and "Exception" not in done.stderr


def no_output(folder, *names: str) -> None:
    left = sorted(p.name for p in folder.iterdir())
    assert not [n for n in left if n in names or n.endswith(".partial")], left


@pytest.mark.parametrize("name", ["out.tsv", "out.csv", "out.jsonl", "out.jsonl.gz", "out.parquet"])
def test_a_report_that_does_not_fit_is_one_line_and_no_file(indexed, tmp_path, name):
    out = tmp_path / "out"
    out.mkdir()
    done = limited("report", str(out / name), "--with-text", "--solr-url", indexed.url, "-q")
    failed_to_write(done, str(out / name), "File too large")
    no_output(out, name, Path(name).with_suffix(".model.json").name)


def test_clusters_the_page_and_its_figure_that_do_not_fit_are_one_line_and_no_file(indexed, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    pairs = tmp_path / "pairs.tsv"
    (tmp_path / "pairs.model.json").rename(out / "p.model.json")  # the page alone, without the model's figure
    for args, name in ((["clusters", str(pairs), "-o", str(out / "c.tsv"), "--with-text"], "c.tsv"),
                       (["clusters", str(pairs), "-o", str(out / "c.json"), "--json"], "c.json"),
                       (["clusters", str(pairs), "-o", str(out / "c.parquet"), "--with-text"], "c.parquet"),
                       (["html", str(pairs), "-o", str(out / "page.html")], "page.html")):
        done = limited(*args, "--solr-url", indexed.url)
        failed_to_write(done, str(out / name), "File too large")
        no_output(out, name)
    # With the report's model beside the pair file, the page draws it there first: that figure is an output too.
    (out / "p.tsv").write_bytes(pairs.read_bytes())
    done = limited("html", str(out / "p.tsv"), "-o", "-", "--solr-url", indexed.url)
    failed_to_write(done, str(out / "p.model.png"), "File too large")
    no_output(out, "p.model.png")


def test_the_new_records_pairs_that_do_not_fit_are_one_line_and_no_file(indexed, tmp_path):
    more = records(tmp_path / "more.txt", start=300)
    done = limited("index", "--append", str(more), "--pairs", str(tmp_path / "new.csv"), "--solr-url", indexed.url,
                   "-q")
    failed_to_write(done, str(tmp_path / "new.csv"), "File too large")
    no_output(tmp_path, "new.csv")


def test_standard_output_on_a_full_disk_is_one_line(indexed, tmp_path):
    more = records(tmp_path / "more.txt", start=600)
    for args in (["report", "-"], ["clusters", str(tmp_path / "pairs.tsv"), "-o", "-"],
                 ["html", str(tmp_path / "pairs.tsv"), "-o", "-"], ["query", "Place 4 on 104 Horn Ave. Los Angeles"],
                 ["index", "--append", str(more)]):
        done = to_full_disk(*args, "--solr-url", indexed.url, *(["-q"] if args[0] in ("report", "index") else []))
        failed_to_write(done, "standard output", "No space left on device")
