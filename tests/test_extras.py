"""Without the optional extras (service, plots, cloud, tables) the core
indexes and reports, and a command that needs one says which to install,
in one line: each run in a Python where importing them fails."""

from __future__ import annotations

from conftest import write_records, without

EXTRA_PACKAGES = ("fastapi", "uvicorn", "matplotlib", "kazoo", "pyarrow", "pyarrow.parquet", "pandas", "polars")
RUN = "from neardup_solr.cli import main\nmain()\n"
RECORDS = ["1 Art's Deli 12224 Ventura Blvd. Studio City", "2 Arts Deli 12224 Ventura Boulevard Studio City",
           "3 Hotel Bel-Air 701 Stone Canyon Rd. Bel Air", "4 Bel-Air Hotel 701 Stone Canyon Road Bel Air",
           "5 Philippe the Original 1001 N. Alameda St. Los Angeles"]


def neardup(*args: str):
    return without(EXTRA_PACKAGES, f"import sys\nsys.argv = ['neardup', *{list(args)!r}]\n" + RUN)


def test_the_core_indexes_reports_and_scores_without_any_extra(core, tmp_path):
    records = write_records(tmp_path / "r.txt", RECORDS)
    done = neardup("index", str(records), "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    done = neardup("report", "--cut", "0.5", str(tmp_path / "p.tsv"), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    pairs = [line.split("\t")[:2] for line in (tmp_path / "p.tsv").read_text().splitlines()]
    assert pairs == [["1", "2"], ["3", "4"]]
    gold = write_records(tmp_path / "gold.tsv", ["1\t2", "3\t4"])
    done = neardup("evaluate", str(tmp_path / "p.tsv"), "--gold", str(gold), "--no-plot")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "found=2 true=2 precision=1.000 recall=1.000 f1=1.000"


def test_a_command_that_needs_an_extra_names_it_in_one_line(core, tmp_path):
    records = write_records(tmp_path / "r.txt", RECORDS)
    (tmp_path / "p.tsv").write_text("1\t2\t1\n")
    gold = write_records(tmp_path / "gold.tsv", ["1\t2"])
    for args, feature, package, extra in (
            (["serve", "--solr-url", core.url], "neardup serve", "fastapi", "service"),
            (["evaluate", str(tmp_path / "p.tsv"), "--gold", str(gold)], "drawing plots", "matplotlib", "plots"),
            (["tune", "--low", "0.1", "--high", "0.5"], "drawing plots", "matplotlib", "plots"),
            (["index", str(records), "--zk-host", "127.0.0.1:1"],
             "finding a collection by ZooKeeper", "kazoo", "cloud")):
        done = neardup(*args)
        assert done.returncode == 7, (args, done.stderr)
        # evaluate can score without its histogram, and says so.
        also = ", or add --no-plot to score without the histogram" if args[0] == "evaluate" else ""
        assert done.stderr.splitlines()[-1] == (f"neardup: error: {feature} needs {package}, which is not installed "
                                                f"(hint: pip install 'neardup-solr[{extra}]'{also})"), args
        assert "Traceback" not in done.stderr


def test_the_command_line_starts_without_posix_only_modules():
    """As on Windows: no module of the package imports fcntl, termios,
    resource, pwd or grp at its top, and --help runs."""
    code = """
import importlib, pkgutil, sys
import neardup_solr
for module in pkgutil.walk_packages(neardup_solr.__path__, "neardup_solr."):
    if module.name != "neardup_solr.__main__":  # it runs the command line
        importlib.import_module(module.name)
sys.argv = ["neardup", "--help"]
from neardup_solr.cli import main
main()
"""
    done = without(("fcntl", "termios", "resource", "pwd", "grp"), code)
    assert done.returncode == 0 and "Usage: neardup" in done.stdout, done.stderr
