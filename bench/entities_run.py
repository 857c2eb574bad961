"""Entities with many records at scale: a million mentions, people mentioned up to 2,000 times.

``python -m bench.entities_run --n 1000000 --largest 2000`` generates
``bench.mentions`` with a power law of mentions a person (``--largest`` at
most; two in five of a much-mentioned person's mentions copies of an
earlier one), then, as users run them, on a fresh local Solr (or a fresh
core beside the one ``--solr-url`` names):

1. ``neardup index records.csv --id-column id``;
2. ``neardup report --entities entities.csv``;

and scores the entities against each mention's person: pairwise (every two
records of one entity a pair, counted from the clusters), B-cubed, and
whether every person's identical records are in one entity. It adds a
section to ``bench/out/RESULTS.md`` (``--out``) with the seconds and the
report's peak memory. Timings are measured, never asserted.
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from neardup_solr.index.solr import Solr
from neardup_solr.match.summary import ReportSummary, summary_path
from neardup_solr.results.evaluate import cluster_scores, groups_of, read_membership, score_clusters

from . import mentions
from .quality import Cores
from .results import RESULTS, add_section, machine
from .run import bench_solr

HERE = Path(__file__).resolve().parent


def timed(*command: str) -> tuple[float, str, float]:
    """Run ``command``: its wall seconds, its stderr and its peak memory
    (MB, the largest of this run's children so far); a failure ends the run."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=HERE.parent)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()[-2000:]}")
    return time.perf_counter() - started, done.stderr, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def identical_apart(records: Path, truth: dict[str, str], found: dict[str, str]) -> tuple[int, int]:
    """How many groups of a person's identical records there are (two or
    more records), and in how many of them the records are not all in one
    entity."""
    groups: dict[tuple, list[str]] = {}
    with records.open(encoding="utf-8", newline="") as rows:
        reader = csv.reader(rows)
        next(reader)
        for row in reader:
            groups.setdefault((truth[row[0]], *row[1:]), []).append(row[0])
    copies = [ids for ids in groups.values() if len(ids) > 1]
    return len(copies), sum(1 for ids in copies if len({found[i] for i in ids}) > 1)


def run(args: argparse.Namespace) -> dict:
    folder = args.data or HERE / "data" / f"entities-{args.n}-{args.largest}-{args.seed}"
    started = time.perf_counter()
    records, clusters = mentions.generate(args.n, args.seed, folder, args.largest)
    truth = read_membership(clusters)
    sizes = sorted((len(g) for g in groups_of(truth)), reverse=True)
    results: dict = {"n": args.n, "largest": args.largest, "seed": args.seed, "records": len(truth),
                     "people": len(sizes), "largest_people": sizes[:5],
                     "true_pairs": sum(s * (s - 1) // 2 for s in sizes),
                     "generated_seconds": time.perf_counter() - started,
                     "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    entities = folder / "entities.csv"
    with bench_solr(args.solr_url) as url:
        cores = Cores(url)
        core = cores.create("entities_run")
        try:
            index_s, said, _ = timed(sys.executable, "-m", "neardup_solr", "index", str(records), "--id-column", "id",
                                     "--solr-url", core, "--quiet")
            report_s, reported, peak = timed(sys.executable, "-m", "neardup_solr", "report", "--entities",
                                             str(entities), "--solr-url", core, "--quiet")
            results["machine"] = machine(Solr(core), packages=("numpy", "rapidfuzz", "pysolr", "neardup-solr"))
        finally:
            cores.remove("entities_run")
    found = read_membership(entities)
    measured = score_clusters(found, truth)
    bcubed = cluster_scores(groups_of(found), groups_of(truth), list(truth))
    copies, apart = identical_apart(records, truth, found)
    about = ReportSummary.read(summary_path(entities))
    results["ours"] = {
        "index_seconds": index_s, "report_seconds": report_s, "peak_mb": peak, "entities": len(set(found.values())),
        "precision": measured.precision, "recall": measured.recall, "f1": measured.f1,
        "bcubed": {"precision": bcubed.bcubed_precision, "recall": bcubed.bcubed_recall, "f1": bcubed.bcubed_f1},
        "identical_groups": copies, "identical_apart": apart,
        "estimated": None if about is None or about.entities is None else
        {"precision": about.entities.precision, "recall": about.entities.recall, "caveat": about.caveat},
        "said": [line for line in (said + reported).strip().splitlines() if line.strip()]}
    return results


def markdown(command: str, r: dict) -> str:
    ours = r["ours"]
    estimated = ours["estimated"]
    return "\n".join([
        f"## Entities at scale: {r['records']:,} mentions of {r['people']:,} people, up to {r['largest']:,} each",
        "",
        f"Command: `{command}`, {r['date']}. The largest people: {', '.join(map(str, r['largest_people']))} "
        f"mentions; {r['true_pairs']:,} true pairs.",
        "",
        "| index s | report s | report peak MB | entities | pairwise P | R | F1 | B-cubed F1 | identical groups "
        "split | estimated P / R |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| {ours['index_seconds']:.1f} | {ours['report_seconds']:.1f} | {ours['peak_mb']:.0f} | {ours['entities']:,} "
        f"| {ours['precision']:.3f} | {ours['recall']:.3f} | {ours['f1']:.3f} | {ours['bcubed']['f1']:.3f} "
        f"| {ours['identical_apart']} of {ours['identical_groups']:,} | "
        + ("n/a" if estimated is None else f"{estimated['precision']:.3f} / {estimated['recall']:.3f}"
           + (f" ({estimated['caveat']})" if estimated["caveat"] else "")) + " |",
        "",
        "What the commands said:",
        "",
        *(f"    {line}" for line in ours["said"]),
        "",
    ])


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.entities_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="mentions (default a million)")
    parser.add_argument("--largest", type=int, default=2000, help="mentions of a person at most (default 2000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data", type=Path, help="folder for the data (default bench/data/entities-...)")
    parser.add_argument("--solr-url", help="a running Solr: a fresh core is made beside this one's")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results file a section is added to")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = arguments()
    args = parser.parse_args(argv)
    results = run(args)
    shown = ["python -m bench.entities_run"] + [f"--{name} {getattr(args, name)}" for name in ("n", "largest", "seed")
                                                if getattr(args, name) != parser.get_default(name)]
    add_section(args.out, markdown(" ".join(shown), results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(markdown(" ".join(shown), results))


if __name__ == "__main__":
    main()
