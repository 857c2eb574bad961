"""datasketch's memory as the records grow, and what it would need at a size it cannot run at here.

``python -m bench.peer_memory --n 1000000 2000000 --to 10000000`` generates
each size's records as ``bench.run`` does (``bench.generate``, the same seed
and folders), builds datasketch's MinHashLSH from every record in a process
of its own (``bench.peer --build-only``: the shingles, permutations and
banding ``bench.run`` gives it), and takes that process's own peak resident
memory (VmHWM). datasketch keeps each record's MinHash and, per band, its
key in a dict, so its memory grows in a straight line with the records: the
least-squares line through the sizes measured, read at ``--to``, is its
need there. The section goes to ``bench/out/RESULTS.md`` (``--out``) like
``bench.run``'s.

The banding is given (``--bands/--band-rows``, default 21 x 6: the banding
``neardup index`` chose for 1M records); queries are not run, as they only
add the pairs' list to the memory.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .generate import generate
from .results import RESULTS, add_section, machine

HERE = Path(__file__).resolve().parent
MB_PER_GIB = 1024
# The banding neardup index chose for the 1M records (bench/RESULTS.md), as bench.run gave datasketch.
BANDS, BAND_ROWS = 21, 6


def measure(n: int, seed: int, bands: int, band_rows: int, data: Path) -> dict[str, float]:
    """Build datasketch's index from ``n`` records in a process of its own: its build time and peak memory."""
    records = data / "records.txt"
    if not records.exists():
        generate(n, seed, data)
    done = subprocess.run([sys.executable, "-m", "bench.peer", str(records), "--build-only",
                           "--bands", str(bands), "--band-rows", str(band_rows)],
                          capture_output=True, text=True, cwd=HERE.parent)
    if done.returncode != 0:
        raise SystemExit(f"bench.peer on {n:,} records failed: {done.stderr.strip()}")
    return {"n": n, **json.loads(done.stdout)}


def line(sizes: list[dict[str, float]]) -> tuple[float, float]:
    """The least-squares line through (records, peak MB): its MB at no records and its MB per record."""
    slope, intercept = np.polyfit([s["n"] for s in sizes], [s["peak_rss_mb"] for s in sizes], 1)
    return float(intercept), float(slope)


def markdown(results: dict) -> str:
    intercept, slope = results["line"]
    to, need = results["to"], results["need_mb"]
    sizes = " and ".join(f"{s['n']:,}" for s in results["sizes"])
    memory = results["machine"]["memory"]
    fits = need / MB_PER_GIB <= float(memory.split()[0])
    lines = [
        f"## datasketch's memory, n = {sizes} ({results['date']})",
        "",
        f"`{results['command']}`: datasketch's MinHashLSH built from every record of `bench/generate.py`'s records "
        f"(seed {results['seed']}), {results['bands']} bands x {results['band_rows']} rows over the character "
        "3-grams of the repaired text, in a process of its own (`bench.peer --build-only`); its own peak resident "
        "memory (VmHWM). No queries.",
        "",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in results["machine"].items()) + ".",
        "",
        "| records | build seconds | peak RSS | MB per million records |",
        "| --- | --- | --- | --- |",
        *(f"| {s['n']:,} | {s['build_seconds']:.1f} | {s['peak_rss_mb']:.0f} MB | "
          f"{s['peak_rss_mb'] / s['n'] * 1e6:.0f} |" for s in results["sizes"]),
        "",
        f"The straight line through these: {intercept:.0f} MB + {slope * 1e6:.0f} MB per million records. At "
        f"{to:,} records datasketch would need about {need / MB_PER_GIB:.1f} GiB; this machine has {memory}, so it "
        + ("fits." if fits else "does not fit."),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.peer_memory", description=__doc__.split("\n\n")[0],
                                     epilog="example: python -m bench.peer_memory --n 1000000 2000000 --to 10000000")
    parser.add_argument("--n", type=int, nargs="+", required=True, help="the sizes measured (two or more)")
    parser.add_argument("--to", type=int, default=10_000_000, help="the size extrapolated to (default 10,000,000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bands", type=int, default=BANDS)
    parser.add_argument("--band-rows", type=int, default=BAND_ROWS)
    parser.add_argument("--data", type=Path, help="folder the sizes' data folders go in [bench/data]")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results file a section is added to")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args()
    if len(set(args.n)) < 2:
        parser.error("--n needs two or more different sizes to draw a line through")
    folder = args.data or HERE / "data"
    sizes = [measure(n, args.seed, args.bands, args.band_rows, folder / str(n)) for n in sorted(set(args.n))]
    intercept, slope = line(sizes)
    command = " ".join(["python -m bench.peer_memory --n", *map(str, sorted(set(args.n))), "--to", str(args.to),
                        *([f"--seed {args.seed}"] if args.seed != 1 else []),
                        *([f"--bands {args.bands} --band-rows {args.band_rows}"]
                          if (args.bands, args.band_rows) != (BANDS, BAND_ROWS) else [])])
    results = {"command": command, "seed": args.seed, "bands": args.bands, "band_rows": args.band_rows,
               "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(),
               "sizes": sizes, "line": [intercept, slope], "to": args.to, "need_mb": intercept + slope * args.to}
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    add_section(args.out, markdown(results))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
