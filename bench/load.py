"""Load: concurrent clients asking for the near duplicates of single records.

``python -m bench.load --solr-url URL --records bench/data/100000/records.txt``
runs ``--clients`` processes (8 by default) for ``--seconds`` (30), each
asking, one record after another, for the near duplicates of random records
of the file through the ``neardup query`` path (``OnlineSearch.find``, two
Solr requests and the verification). Processes, not threads, so the
clients' own Python work does not queue on one interpreter lock and the
latencies are those a client sees. Every failure counts as an error; the
run exits 1 if there was any. Index the records first (``neardup index
FILE --solr-url URL``, or ``python -m bench.run`` which leaves its index).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import time
from pathlib import Path

import numpy as np

from neardup_solr.search import OnlineSearch
from neardup_solr.records import RecordReader
from neardup_solr.solr import Solr


def client(url: str, records: list[tuple[str, str]], seconds: float, seed: int, start: float) -> dict:
    """One client's latencies (ms) and errors, from ``start`` for ``seconds``."""
    pick = random.Random(seed)
    took: list[float] = []
    errors: list[str] = []
    try:
        search = OnlineSearch(Solr(url, timeout=30, retries=0))
    except Exception as error:  # a client that cannot even start is an error too
        return {"took": took, "errors": [f"{type(error).__name__}: {error}"[:200]]}
    while time.time() < start:
        time.sleep(0.01)
    end = start + seconds
    while (now := time.perf_counter()) and time.time() < end:
        record_id, text = pick.choice(records)
        try:
            search.find(text, exclude=record_id)
        except Exception as error:  # every failure is the measurement
            errors.append(f"{type(error).__name__}: {error}"[:200])
            continue
        took.append((time.perf_counter() - now) * 1000)
    return {"took": took, "errors": errors}


def run(url: str, records_file: Path, clients: int, seconds: float, sample: int, seed: int) -> dict:
    records = [(r.id, r.text) for _, r in zip(range(sample), RecordReader(records_file))]
    start = time.time() + 3  # every client connected and warm before the clock runs
    with multiprocessing.get_context("spawn").Pool(clients) as pool:
        results = pool.starmap(client, [(url, records, seconds, seed + i, start) for i in range(clients)])
    took = np.array([t for r in results for t in r["took"]])
    errors = [e for r in results for e in r["errors"]]
    return {
        "clients": clients, "seconds": seconds, "queries": int(took.size),
        "queries_per_client": [len(r["took"]) for r in results], "errors": len(errors),
        "first_errors": errors[:5], "queries_per_second": took.size / seconds,
        "p50_ms": float(np.percentile(took, 50)) if took.size else None,
        "p99_ms": float(np.percentile(took, 99)) if took.size else None,
        "max_ms": float(took.max()) if took.size else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--solr-url", required=True, help="the indexed core or collection")
    parser.add_argument("--records", type=Path, required=True, help="the indexed records, queried at random")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--sample", type=int, default=100_000, help="records read from the file to pick from")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    result = run(args.solr_url, args.records, args.clients, args.seconds, args.sample, args.seed)
    summary = (f"{result['clients']} clients, {result['seconds']:.0f} s: {result['queries']:,} queries "
               f"({result['queries_per_second']:.0f}/s), {result['errors']} errors")
    if result["queries"]:
        summary += f", p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms, max {result['max_ms']:.1f} ms"
    print(summary)
    for error in result["first_errors"]:
        print(f"error: {error}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    sys.exit(1 if result["errors"] or not result["queries"] else 0)


if __name__ == "__main__":
    main()
