"""The rensa peer: rensa's RMinHash and RMinHashLSH, then exact Jaccard at the best cut in hindsight.

``python -m bench.rensa_peer RECORDS TRUE_PAIRS PAIRS_OUT --bands B --band-rows R [--shingles words]``
does in one process what a rensa user would: the same shingles as
``neardup index`` signs for LSH (``bench.peer.lsh_shingles``: character
3-grams of the repaired text, or word 3-shingles with ``--shingles words``),
as a list and a set per record; ``RMinHash.from_token_sets`` makes every
record's MinHash from the lists of ``B*R`` permutations in one call; an ``RMinHashLSH`` of
exactly B bands of R rows takes them all (``insert_many``) and is queried
with all of them (``query_all``); each candidate pair, once, is verified by
the exact Jaccard of the two shingle sets in plain Python
(``neardup_solr.text.shingles.jaccard``).

A rensa user has no labels to choose the cut with; this peer is given the
true pairs and takes the cut with the best F1 in hindsight (every distinct
Jaccard of the candidates tried; true pairs never proposed count as missed),
its best case. ``PAIRS_OUT`` gets the pairs at that cut. It prints one JSON
line: each phase's seconds (shingles, digests, LSH build, queries,
verification; ``seconds`` is their sum, the cut's search is not in it), the
candidates, the cut, its pairs, precision, recall and F1, and its peak
memory.

``RMinHash.digest_matrix_from_token_sets`` makes the same digests a little
faster (0.023 s against 0.031 s for 20,000 records) but an ``RMinHashLSH``
is queried only with ``RMinHash`` objects, which the matrix would then have
to be made into as well. Lists are given, not the sets: rensa reads them
faster (0.027 s against 0.048 s for the same 20,000 records).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from itertools import groupby

from rensa import RMinHash, RMinHashLSH

from neardup_solr.errors import NeardupError
from neardup_solr.results.evaluate import Score, read_gold
from neardup_solr.files import atomic_output
from neardup_solr.records.readers import RecordReader
from neardup_solr.text.shingles import jaccard

from .peer import lsh_shingles, peak_rss_mb

SEED = 42  # rensa's permutations' seed; any fixed one, the one its examples use


def shingles(records_path: str, kind: str = "chars") -> tuple[list[str], list[list[str]], list[frozenset[str]]]:
    """Every record's id and its distinct LSH shingles, as a list (for rensa) and a set (for verification),
    in file order."""
    ids, lists = [], []
    for record in RecordReader(records_path):
        ids.append(record.id)
        lists.append(lsh_shingles(record.text, kind))
    return ids, lists, [frozenset(group) for group in lists]


def digests(token_lists: list[list[str]], num_perm: int) -> list[RMinHash]:
    """Every record's RMinHash, made in one call (rensa hashes the tokens in Rust)."""
    return RMinHash.from_token_sets(token_lists, num_perm=num_perm, seed=SEED)


def index(minhashes: list[RMinHash], bands: int, band_rows: int) -> RMinHashLSH:
    """An RMinHashLSH of ``bands`` bands of ``band_rows`` rows holding every MinHash, keyed by its position.

    Its ``threshold`` is kept only for ``is_similar``, not used here; it is given the banding's own,
    (1/b)^(1/r), where the chance of sharing a band rises through one half.
    """
    lsh = RMinHashLSH(threshold=(1 / bands) ** (1 / band_rows), num_perm=bands * band_rows, num_bands=bands)
    lsh.insert_many(minhashes)
    return lsh


def candidate_pairs(lsh: RMinHashLSH, minhashes: list[RMinHash]) -> list[tuple[int, int]]:
    """Every record queried: the pairs (i, j), i < j, of records that share a band, each once."""
    pairs = []
    for i, found in enumerate(lsh.query_all(minhashes)):
        pairs.extend((i, j) for j in found if j > i)
    return pairs


def verify(pairs: list[tuple[int, int]], sets: list[frozenset[str]]) -> list[float]:
    """Each pair's exact Jaccard similarity of its two shingle sets."""
    return [jaccard(sets[i], sets[j]) for i, j in pairs]


def best_cut(similarities: list[float], true: list[bool], gold: int) -> tuple[float | None, Score]:
    """The cut (keep similarity >= cut) with the best F1 against ``gold`` true pairs in all, and its score.

    Every distinct similarity is tried, from the highest down; a tie in F1
    keeps the higher cut. No candidates: no cut (None) and nothing kept.
    Costs a sort of the candidates.
    """
    best: tuple[float | None, Score] = (None, Score(found=0, true=0, gold=gold))
    kept = found_true = 0
    ordered = sorted(zip(similarities, true), key=lambda pair: pair[0], reverse=True)
    for cut, group in groupby(ordered, key=lambda pair: pair[0]):
        for _, is_true in group:
            kept += 1
            found_true += is_true
        score = Score(found=kept, true=found_true, gold=gold)
        if score.f1 > best[1].f1:
            best = (cut, score)
    return best


def run(records_path: str, truth_path: str, pairs_path: str, bands: int, band_rows: int, kind: str = "chars"
        ) -> dict[str, float | int | None]:
    """The whole pipeline, timed by phase; the pairs at the best cut written to ``pairs_path``."""
    gold = read_gold(truth_path)
    started = time.perf_counter()
    ids, lists, sets = shingles(records_path, kind)
    shingled = time.perf_counter()
    minhashes = digests(lists, bands * band_rows)
    del lists
    digested = time.perf_counter()
    lsh = index(minhashes, bands, band_rows)
    built = time.perf_counter()
    pairs = candidate_pairs(lsh, minhashes)
    queried = time.perf_counter()
    similarities = verify(pairs, sets)
    verified = time.perf_counter()
    true = [frozenset((ids[i], ids[j])) in gold for i, j in pairs]
    cut, score = best_cut(similarities, true, len(gold))
    searched = time.perf_counter()
    with atomic_output(pairs_path) as out:
        if cut is not None:
            out.writelines(f"{ids[i]}\t{ids[j]}\n" for (i, j), s in zip(pairs, similarities) if s >= cut)
    return {
        "records": len(ids),
        "shingles_seconds": shingled - started,
        "digest_seconds": digested - shingled,
        "build_seconds": built - digested,
        "query_seconds": queried - built,
        "verify_seconds": verified - queried,
        "seconds": verified - started,
        "cut_search_seconds": searched - verified,
        "candidates": len(pairs),
        "candidates_true": sum(true),
        "gold": len(gold),
        "cut": cut,
        "pairs": score.found,
        "true": score.true,
        "precision": score.precision,
        "recall": score.recall,
        "f1": score.f1,
        "peak_rss_mb": peak_rss_mb(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.rensa_peer", description=__doc__.split("\n\n")[0],
        epilog="example: python -m bench.rensa_peer bench/data/20000/records.txt bench/data/20000/true_pairs.tsv "
               "pairs-rensa.tsv --bands 21 --band-rows 6")
    parser.add_argument("records")
    parser.add_argument("true_pairs", help="the true pairs, two ids a line: they choose the cut in hindsight")
    parser.add_argument("pairs_out", help="where the pairs at the best cut go")
    parser.add_argument("--bands", type=int, required=True)
    parser.add_argument("--band-rows", type=int, required=True)
    parser.add_argument("--shingles", choices=("chars", "words"), default="chars",
                        help="character 3-grams (short records) or word 3-shingles (documents)")
    args = parser.parse_args()
    if args.bands < 1 or args.band_rows < 1:
        parser.error("--bands and --band-rows must be 1 or more")
    try:
        result = run(args.records, args.true_pairs, args.pairs_out, args.bands, args.band_rows, args.shingles)
    except NeardupError as err:
        print(f"python -m bench.rensa_peer: error: {err}", file=sys.stderr)
        raise SystemExit(err.exit_code) from None
    print(json.dumps(result), file=sys.stdout)


if __name__ == "__main__":
    main()
