"""The peer: datasketch's MinHash and in-memory MinHashLSH on the same records.

``python -m bench.peer RECORDS PAIRS_OUT --bands B --band-rows R [--shingles words]``
does what a datasketch user would: the same shingles as ``neardup index``
builds its LSH signatures from (character 3-grams of the repaired text, or
with ``--shingles words`` its word 3-shingles, as ``--lsh-shingles words``),
MinHash of ``B*R`` permutations with its fastest bulk API and hash function,
an LSH index with exactly B bands of R rows, every record inserted, then
every record queried; the candidates it returns are its pairs. It prints
one JSON line of timings and its peak memory. ``--build-only`` stops once
every record is in (``bench.peer_memory`` measures the memory that takes).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import mmh3
from datasketch import MinHash, MinHashLSH

from neardup_solr.records.record import id_key
from neardup_solr.records.readers import RecordReader
from neardup_solr.text.repair import repair
from neardup_solr.text import analysis

BATCH = 10_000


def murmur(data: bytes) -> int:
    """datasketch's hash function slot, filled with the fastest one we know."""
    return mmh3.hash(data, 42, signed=False)


def lsh_shingles(text: str, kind: str = "chars") -> list[str]:
    """The shingles ``neardup index`` signs for LSH, of the text repaired."""
    return analysis.lsh_shingles(repair(text), kind)


def shingle_bytes(text: str, kind: str = "chars") -> list[bytes]:
    return [s.encode("utf-8") for s in lsh_shingles(text, kind)]


def peak_rss_mb() -> float:
    """This process's own peak resident memory: VmHWM, which starts again at exec, where
    getrusage also counts the size of the process it was forked from."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")) / 1024


def run(records_path: str, pairs_path: str | None, bands: int, band_rows: int, kind: str = "chars"
        ) -> dict[str, float]:
    """Build from every record, then (unless ``pairs_path`` is None) query with every record and write the pairs."""
    started = time.perf_counter()
    lsh = MinHashLSH(num_perm=bands * band_rows, params=(bands, band_rows))
    keys, signatures = [], []
    batch_ids, batch_shingles = [], []

    def flush() -> None:
        with lsh.insertion_session() as session:
            for key, m in zip(batch_ids, MinHash.bulk(batch_shingles, num_perm=bands * band_rows, hashfunc=murmur)):
                session.insert(key, m, check_duplication=False)
                keys.append(key)
                signatures.append(m)
        batch_ids.clear()
        batch_shingles.clear()

    for record in RecordReader(records_path):
        batch_ids.append(record.id)
        batch_shingles.append(shingle_bytes(record.text, kind))
        if len(batch_ids) >= BATCH:
            flush()
    flush()
    built = time.perf_counter()
    if pairs_path is None:
        return {"records": len(keys), "build_seconds": built - started, "peak_rss_mb": peak_rss_mb()}
    pairs = []
    for key, m in zip(keys, signatures):
        rank = id_key(key)
        pairs.extend((key, other) for other in lsh.query(m) if id_key(other) > rank)
    queried = time.perf_counter()
    with open(pairs_path, "w", encoding="utf-8") as out:
        out.writelines(f"{a}\t{b}\n" for a, b in pairs)
    return {
        "build_seconds": built - started,
        "query_seconds": queried - built,
        "seconds": queried - started,
        "pairs": len(pairs),
        "peak_rss_mb": peak_rss_mb(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.peer", description=__doc__.split("\n\n")[0])
    parser.add_argument("records")
    parser.add_argument("pairs_out", nargs="?", help="where the pairs go (not with --build-only)")
    parser.add_argument("--bands", type=int, required=True)
    parser.add_argument("--band-rows", type=int, required=True)
    parser.add_argument("--shingles", choices=("chars", "words"), default="chars",
                        help="character 3-grams (short records) or word 3-shingles (documents)")
    parser.add_argument("--build-only", action="store_true", help="stop once every record is in: no queries, no pairs")
    args = parser.parse_args()
    if (args.pairs_out is None) != args.build_only:
        parser.error("give PAIRS_OUT, or --build-only without it")
    pairs_out = None if args.build_only else args.pairs_out
    print(json.dumps(run(args.records, pairs_out, args.bands, args.band_rows, args.shingles)), file=sys.stdout)


if __name__ == "__main__":
    main()
