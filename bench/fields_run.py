"""Field records at scale: neardup-solr against splink on the same records, in one run.

``python -m bench.fields_run --domain crm --difficulty medium --size 2000000``
generates ``dupehell``'s domain (``bench.fields``: its most frequent
entity's records, about half of ``--size`` for ``crm``), then times, one
after the other on the same machine:

1. ``neardup index records.parquet --id-column record_id`` and ``neardup
   report pairs.tsv``, as users run them, on a fresh local Solr (or the one
   ``--solr-url`` names, a fresh core beside it);
2. splink with the generic recipe (``bench.splink_peer``) on the same
   Parquet file, in a child process;

and scores both against the true pairs, with the peak memory of each
process tree, and adds a section to ``bench/out/RESULTS.md`` (``--out``).
Timings are measured, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from neardup_solr.results.evaluate import read_gold, score
from neardup_solr.results.pairs import read_pairs
from neardup_solr.index.solr import Solr
from neardup_solr.match.summary import ReportSummary, summary_path

from . import fields
from .quality import Cores
from .results import RESULTS, add_section, machine
from .run import bench_solr

HERE = Path(__file__).resolve().parent


def timed(*command: str) -> tuple[float, str]:
    """Run ``command``, its wall seconds and its stderr; a failure ends the run."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=HERE.parent)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()[-2000:]}")
    return time.perf_counter() - started, done.stderr


def peak_mb() -> float:
    """The largest resident set of a child process so far, in MB (run before
    splink's: ours, the command line's processes; Solr's JVM is no child)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


SPLINK_CHILD = """
import json, resource, sys
from pathlib import Path
from bench import splink_peer
done = splink_peer.splink_pairs(Path(sys.argv[1]), "record_id")
with open(sys.argv[2], "w") as out:
    out.writelines(f"{a}\\t{b}\\n" for a, b in (sorted(p) for p in done.pairs))
print(json.dumps({"seconds": done.seconds, "what": done.what,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), file=sys.stderr)
"""


def run(args: argparse.Namespace) -> dict:
    folder = args.data or HERE / "data" / f"fields-{args.domain}-{args.difficulty}-{args.size}-{args.seed}"
    started = time.perf_counter()
    made = fields.generate(args.domain, args.difficulty, args.size, args.seed, folder)
    results: dict = {"domain": args.domain, "difficulty": args.difficulty, "size": args.size, "seed": args.seed,
                     "entity": made.entity, "records": made.rows, "true_pairs": made.true_pairs,
                     "generated_seconds": time.perf_counter() - started,
                     "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    gold = read_gold(made.truth)
    with bench_solr(args.solr_url) as url:
        cores = Cores(url)
        core = cores.create("fields_run")
        try:
            pairs = folder / "pairs.tsv"
            index_s, said = timed(sys.executable, "-m", "neardup_solr", "index", str(made.records), "--id-column",
                                  fields.ID_COLUMN, "--solr-url", core, "--quiet")
            report_s, reported = timed(sys.executable, "-m", "neardup_solr", "report", str(pairs), "--solr-url", core,
                                       "--quiet")
            results["machine"] = machine(Solr(core), packages=("numpy", "rapidfuzz", "pysolr", "splink", "duckdb",
                                                               "dupehell", "neardup-solr"))
        finally:
            cores.remove("fields_run")
    ours_mb = peak_mb()
    measured = score(read_pairs(pairs), gold)
    about = ReportSummary.read(summary_path(pairs))
    results["ours"] = {"index_seconds": index_s, "report_seconds": report_s, "pairs": measured.found,
                       "precision": measured.precision, "recall": measured.recall, "f1": measured.f1,
                       "estimated": None if about is None or about.estimated is None else
                       {"precision": about.estimated.precision, "recall": about.estimated.recall},
                       "said": shown_lines(said + reported, folder), "peak_mb": ours_mb}
    splink_pairs_file = folder / "splink-pairs.tsv"
    started = time.perf_counter()
    # DuckDB spills into .tmp of its working folder (tens of GB at a million records): a folder of the run's
    # own, removed with what a killed child left in it.
    with tempfile.TemporaryDirectory(prefix="splink-") as spill:
        try:
            done = subprocess.run([sys.executable, "-c", SPLINK_CHILD, str(made.records.resolve()),
                                   str(splink_pairs_file.resolve())],
                                  capture_output=True, text=True, cwd=spill, timeout=args.splink_timeout,
                                  env={**os.environ, "PYTHONPATH": str(HERE.parent)})
        except subprocess.TimeoutExpired as stopped:
            done = subprocess.CompletedProcess(stopped.cmd, None, "", stopped.stderr or "")
    splink_s = time.perf_counter() - started
    if done.returncode != 0:
        # A peer that cannot finish on this machine is a result, not a reason to lose ours.
        how = f"stopped at the run's limit of {args.splink_timeout:.0f} s" if done.returncode is None else \
            f"killed by {signal.Signals(-done.returncode).name}" if done.returncode < 0 else \
            f"exit {done.returncode}"
        said = done.stderr if isinstance(done.stderr, str) else done.stderr.decode(errors="replace")
        last = said.strip().splitlines()[-1:] or [""]
        results["splink"] = {"seconds": splink_s, "failed": how, "said": last[0][-300:], "peak_mb": peak_mb()}
        return results
    splink_said = json.loads(done.stderr.strip().splitlines()[-1])
    found = {frozenset(line.split("\t")) for line in splink_pairs_file.read_text().splitlines() if line}
    true = len(found & gold)
    precision, recall = (true / len(found) if found else 0.0), (true / len(gold) if gold else 0.0)
    results["splink"] = {"seconds": splink_s, "pairs": len(found), "precision": precision, "recall": recall,
                         "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
                         "peak_mb": splink_said["peak_mb"], "what": splink_said["what"]}
    return results


def shown_lines(said: str, folder: Path) -> list[str]:
    """What the commands said, the data folder named as in the checkout
    (``bench/data/...``), or as ``DATA`` where it lies outside it."""
    folder = folder.resolve()
    shown = str(folder.relative_to(HERE.parent)) if folder.is_relative_to(HERE.parent) else "DATA"
    return [line.replace(str(folder), shown) for line in said.strip().splitlines()]


def command_of(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    """The command that makes this run again, as the results file shows it:
    the options that change what is measured, not where data, Solr or the
    results live."""
    shown = ["python -m bench.fields_run"]
    for name in ("domain", "difficulty", "size", "seed", "splink_timeout"):
        value = getattr(args, name)
        if value != parser.get_default(name):
            shown += [f"--{name.replace('_', '-')}", f"{value:g}" if isinstance(value, float) else str(value)]
    return " ".join(shown)


def markdown(command: str, r: dict) -> str:
    ours, peer = r["ours"], r["splink"]
    total = ours["index_seconds"] + ours["report_seconds"]
    estimated = ours["estimated"]
    return "\n".join([
        f"## Field records at scale: {r['records']:,} {r['entity']} records of dupehell's {r['domain']} "
        f"({r['difficulty']}) — {r['date']}",
        "",
        f"`{command}`: {r['records']:,} records, {r['true_pairs']:,} true pairs (generated in "
        f"{r['generated_seconds']:.0f} s). Ours is `neardup index` + `neardup report` with defaults on a local "
        "Solr; splink the generic recipe of `bench/splink_peer.py` on the same Parquet file, after ours, in the "
        "same run.",
        "",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in r["machine"].items()) + ".",
        "",
        "| | seconds | pairs | precision | recall | F1 | peak RSS (MB) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        f"| neardup-solr | {total:.0f} (index {ours['index_seconds']:.0f} + report {ours['report_seconds']:.0f}) | "
        f"{ours['pairs']:,} | {ours['precision']:.3f} | {ours['recall']:.3f} | {ours['f1']:.3f} | "
        f"{ours['peak_mb']:.0f} |",
        f"| splink (recipe) | did not finish: {peer['failed']} after {peer['seconds']:.0f} s | | | | | "
        f"{peer['peak_mb']:.0f} |" if "failed" in peer else
        f"| splink (recipe) | {peer['seconds']:.0f} | {peer['pairs']:,} | {peer['precision']:.3f} | "
        f"{peer['recall']:.3f} | {peer['f1']:.3f} | {peer['peak_mb']:.0f} |",
        "",
        (f"splink did not finish ({peer['failed']}; its last line: {peer['said'] or 'none'}); ours ended in "
         f"{total / peer['seconds']:.2f} of the time splink ran." if "failed" in peer else
         f"Ratio of times, ours / splink's: {total / peer['seconds']:.2f}.")
        + ("" if estimated is None else
           f" Our report's estimates: precision {estimated['precision']:.3f}, recall {estimated['recall']:.3f}."),
        "",
        "What the commands said:",
        "",
        *(f"    {line}" for line in ours["said"]),
        "",
    ])


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.fields_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--domain", default="crm", choices=fields.DOMAINS)
    parser.add_argument("--difficulty", default="medium", choices=fields.DIFFICULTIES)
    parser.add_argument("--size", type=int, default=2_000_000, help="dupehell's size (all entities of the domain)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data", type=Path, help="folder for the data and pairs")
    parser.add_argument("--solr-url", help="a core on an existing local Solr (default: a fresh one)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results file a section is added to")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    parser.add_argument("--splink-timeout", type=float, metavar="SECONDS",
                        help="stop splink after this long and write down that it did not finish (default: no limit)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = arguments()
    args = parser.parse_args(argv)
    command = command_of(args, parser)
    results = run(args)
    add_section(args.out, markdown(command, results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    ours, peer = results["ours"], results["splink"]
    print(f"ours {ours['f1']:.3f} in {ours['index_seconds'] + ours['report_seconds']:.0f} s; "
          + (f"splink did not finish ({peer['failed']}) in {peer['seconds']:.0f} s" if "failed" in peer else
             f"splink {peer['f1']:.3f} in {peer['seconds']:.0f} s"), file=sys.stderr)


if __name__ == "__main__":
    main()
