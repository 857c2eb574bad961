"""How well any rule on the mentions' fields could do: the set's ceiling.

``python -m bench.mentions_ceiling --dir bench/data/quality/fields-mentions``
reads a ``bench.mentions`` set (``records.csv``, ``true_clusters.csv``; the
one ``bench.quality`` makes for ``fields-mentions``, or any other) and
describes every pair of mentions whose surnames have the same letters (a
typo swaps two letters, so every true pair is among them) by what can be
seen of it: the given name the same or not, the middle initials (both there
and equal, both there and different, not both there), the surname written
the same, city, state and employer the same, and how many mentions bear
the more common of the two full names (a power of two). Each pattern's
share of true pairs is then read off the truth, and pairs are taken
pattern by pattern from the most likely down: the best F1 on the way is the
best any pairwise rule on these comparisons can reach, fitted to the answer
itself. Taking the connected components of the pairs kept (transitivity)
is measured at a few cuts too.

It prints those figures; it writes nothing. The set needs no Solr.
"""

from __future__ import annotations

import argparse
import csv
import math
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components


def _codes(values: list[str]) -> np.ndarray:
    seen: dict[str, int] = {}
    return np.array([seen.setdefault(v, len(seen)) for v in values], dtype=np.int64)


def patterns(folder: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of mentions of same-lettered surnames (a, b), its
    pattern and whether it is one person; and each mention's person."""
    rows = list(csv.DictReader((folder / "records.csv").open(encoding="utf-8")))
    person_of = {r["id"]: r["cluster"] for r in csv.DictReader((folder / "true_clusters.csv").open(encoding="utf-8"))}
    given = [r["first_name"].split() for r in rows]
    base = _codes([g[0] if g else "" for g in given])
    initial = _codes([g[1] if len(g) > 1 else "" for g in given])
    has_initial = np.array([len(g) > 1 for g in given])
    last, city, state, employer = (_codes([r[c] for r in rows]) for c in ("last_name", "city", "state", "employer"))
    full = [f"{g[0] if g else ''} {r['last_name']}" for g, r in zip(given, rows)]
    bearers = Counter(full)
    common = np.array([min(int(math.log2(bearers[name])), 15) for name in full])
    person = _codes([person_of[r["id"]] for r in rows])
    blocks: dict[str, list[int]] = defaultdict(list)
    for at, r in enumerate(rows):
        blocks["".join(sorted(r["last_name"]))].append(at)
    parts = []
    for members in blocks.values():
        if len(members) < 2:
            continue
        idx = np.array(members)
        i, j = np.triu_indices(len(idx), 1)
        a, b = idx[i], idx[j]
        initials = np.where(has_initial[a] & has_initial[b], np.where(initial[a] == initial[b], 2, 0), 1)
        code = (base[a] == base[b]) * 3 + initials
        for same in (last[a] == last[b], city[a] == city[b], state[a] == state[b], employer[a] == employer[b]):
            code = code * 2 + same
        code = code * 16 + np.maximum(common[a], common[b])
        parts.append((a, b, code, person[a] == person[b]))
    a, b, code, same = (np.concatenate([p[k] for p in parts]) for k in range(4))
    return a, b, code, same, person


def _pairs(groups: np.ndarray) -> int:
    """Pairs within the groups of these labels."""
    return sum(n * (n - 1) // 2 for n in Counter(groups.tolist()).values())


def ceiling(folder: Path) -> dict:
    a, b, code, same, person = patterns(folder)
    truth = _pairs(person)
    pairs = np.bincount(code)
    true = np.bincount(code, weights=same, minlength=len(pairs))
    share = np.divide(true, pairs, out=np.zeros(len(pairs)), where=pairs > 0)
    order = np.argsort(-share, kind="stable")
    tp, kept = np.cumsum(true[order]), np.cumsum(pairs[order])
    useful = kept > 0
    precision = np.divide(tp, kept, out=np.zeros(len(tp)), where=useful)
    recall = tp / truth
    f1 = np.divide(2 * precision * recall, precision + recall, out=np.zeros(len(tp)), where=precision + recall > 0)
    best = int(np.argmax(f1))
    count = len(person)
    components = {}
    for cut in (0.9, 0.8, 0.6, 0.5):
        keep = share[code] >= cut
        graph = coo_matrix((np.ones(int(keep.sum())), (a[keep], b[keep])), shape=(count, count))
        _, label = connected_components(graph, directed=False)
        found, right = _pairs(label), _pairs(label * count + person)
        p, r = right / found if found else 1.0, right / truth
        components[cut] = (p, r, 2 * p * r / (p + r) if p + r else 0.0)
    return {"pairs": int(len(code)), "true pairs": truth, "true pairs among them": int(same.sum()), "patterns": int((pairs > 0).sum()),
            "best": (float(precision[best]), float(recall[best]), float(f1[best])), "components": components}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.mentions_ceiling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, required=True, help="a bench.mentions set (records.csv, true_clusters.csv)")
    found = ceiling(parser.parse_args(argv).dir)
    p, r, f = found["best"]
    print(f"{found['pairs']:,} pairs of same-lettered surnames hold {found['true pairs among them']:,} of the "
          f"{found['true pairs']:,} true pairs, in {found['patterns']} patterns")
    print(f"best pairwise rule on the patterns, fitted to the truth: precision {p:.3f}, recall {r:.3f}, F1 {f:.3f}")
    for cut, (p, r, f) in found["components"].items():
        print(f"components of the patterns whose share of true pairs is {cut:g} or more: "
              f"precision {p:.3f}, recall {r:.3f}, F1 {f:.3f}")


if __name__ == "__main__":
    main()
