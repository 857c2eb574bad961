"""Where the recall goes: true pairs that LSH is not expected to bring as candidates, and those lost after.

A true pair whose LSH shingles have Jaccard similarity s shares a band of
b bands x r rows with probability P(s) = 1 - (1 - s^r)^b (``bands.py``).
The sum of P over the true pairs is how many of them the banding is
expected to make candidates; the true pairs a run did not report are
split the same way: those LSH was expected to miss (the sum of 1 - P over
them) and the rest, expected candidates that the bucket limit or the
verification left out. The shingles are the ones ``neardup index`` signs
(``bench.peer.lsh_shingles``).

``python -m bench.recall --data bench/data/10000000 --bands 16 --band-rows 8``
reads ``records.txt``, ``true_pairs.tsv`` and ``pairs-ours.tsv`` from a
``bench.run`` data folder and adds a section to ``bench/out/RESULTS.md``
(``--out``);
``bench.run`` puts the same figures in each run's section.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from neardup_solr.lsh.bands import collision_probability
from neardup_solr.results.evaluate import read_gold
from neardup_solr.results.pairs import read_pairs
from neardup_solr.records.readers import RecordReader
from neardup_solr.text.shingles import jaccard

from .peer import lsh_shingles
from .results import RESULTS, add_section

HERE = Path(__file__).resolve().parent
# The Jaccard percentiles shown for the pairs found and missed.
PERCENTILES = (10, 50, 90)


def where_recall_goes(records: Iterable[tuple[str, str]], gold: set[frozenset[str]], found: set[frozenset[str]],
                      bands: int, band_rows: int, kind: str = "chars") -> dict:
    """The true pairs ``gold``: how many the banding is expected to make candidates, and of those not ``found``,
    how many it was expected to miss; the Jaccard percentiles of the true pairs found and missed.

    Args:
        records: the records, (id, text) each; only the true pairs' records are shingled.
        gold: the true pairs.
        found: the pairs a run reported.
        bands, band_rows: the banding the run used.
        kind: the LSH shingles, ``chars`` or ``words``.

    Returns:
        A dict of ``true``, ``found_true``, ``expected_candidates``, ``missed``, ``missed_by_lsh`` (expected),
        and ``jaccard_found``/``jaccard_missed`` (the ``PERCENTILES``, or None when there are no such pairs).
    """
    wanted = set().union(*gold) if gold else set()
    shingles = {record_id: set(lsh_shingles(text, kind)) for record_id, text in records if record_id in wanted}
    pairs = [tuple(pair) for pair in gold]
    similarity = np.array([jaccard(shingles[a], shingles[b]) for a, b in pairs])
    collide = np.array([collision_probability(s, bands, band_rows) for s in similarity])
    hit = np.array([frozenset(pair) in found for pair in pairs], bool)

    def percentiles(values: np.ndarray) -> list[float] | None:
        return [float(v) for v in np.percentile(values, PERCENTILES)] if len(values) else None

    return {"true": len(pairs), "found_true": int(hit.sum()), "bands": bands, "band_rows": band_rows,
            "expected_candidates": float(collide.sum()), "missed": int((~hit).sum()),
            "missed_by_lsh": float((1 - collide[~hit]).sum()),
            "jaccard_found": percentiles(similarity[hit]), "jaccard_missed": percentiles(similarity[~hit])}


def sentences(r: dict) -> str:
    """The figures of :func:`where_recall_goes` in a paragraph."""
    if not r["true"]:
        return "There are no true pairs to follow."
    text = (f"At {r['bands']} x {r['band_rows']} bands, {r['expected_candidates'] / r['true']:.1%} of the "
            f"{r['true']:,} true pairs are expected to share a band (by their LSH shingles' Jaccard similarity); "
            f"{r['found_true'] / r['true']:.1%} were reported. Of the {r['missed']:,} missed, about "
            f"{r['missed_by_lsh']:,.0f} were expected never to be candidates and about "
            f"{r['missed'] - r['missed_by_lsh']:,.0f} to be candidates, left out by the bucket limit or the "
            "verification.")
    spans = [(name, r[key]) for name, key in (("found", "jaccard_found"), ("missed", "jaccard_missed")) if r[key]]
    if spans:
        low, high = PERCENTILES[0], PERCENTILES[-1]
        text += (f" Jaccard similarity, {low}th / {PERCENTILES[1]}th / {high}th percentile: "
                 + "; ".join(f"{name} {' / '.join(f'{v:.2f}' for v in values)}" for name, values in spans) + ".")
    return text


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.recall", description=__doc__.split("\n\n")[0],
                                     epilog="example: python -m bench.recall --data bench/data/10000000 "
                                            "--bands 16 --band-rows 8")
    parser.add_argument("--data", type=Path, required=True,
                        help="a bench.run data folder: records.txt, true_pairs.tsv, pairs-ours.tsv")
    parser.add_argument("--bands", type=int, required=True, help="the bands the run used")
    parser.add_argument("--band-rows", type=int, required=True, help="the rows per band the run used")
    parser.add_argument("--shingles", choices=["chars", "words"], default="chars", help="the LSH shingles")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results file a section is added to")
    args = parser.parse_args()
    paths = [args.data / name for name in ("records.txt", "true_pairs.tsv", "pairs-ours.tsv")]
    if missing := [str(p) for p in paths if not p.exists()]:
        parser.error(f"{', '.join(missing)} not found: give the folder of a bench.run that ran the report")
    records, truth, ours = paths
    found = {pair.key for pair in read_pairs(ours)}
    figures = where_recall_goes(((r.id, r.text) for r in RecordReader(records)), read_gold(truth), found,
                                args.bands, args.band_rows, args.shingles)
    # The folder as the checkout names it: a results file names no path of the machine it ran on.
    shown = args.data.resolve().relative_to(HERE.parent) if args.data.resolve().is_relative_to(HERE.parent) \
        else args.data.name
    command = (f"python -m bench.recall --data {shown} --bands {args.bands} --band-rows {args.band_rows}"
               + (f" --shingles {args.shingles}" if args.shingles != "chars" else ""))
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    add_section(args.out, f"## Where the recall goes, {args.data.name} ({date})\n\n`{command}`: the true pairs of "
                          f"`{args.data.name}` against the pairs of its last run (`pairs-ours.tsv`).\n\n"
                          + sentences(figures) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
