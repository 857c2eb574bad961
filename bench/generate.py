"""Synthetic business records with known near duplicates, for benchmarks.

``python -m bench.generate --n 1000000 --seed 1 --out-dir bench/data/1m``
writes ``records.txt`` (``ID TEXT``, ids 1..N in file order) and
``true_pairs.tsv`` (every pair inside each near-duplicate cluster, smaller id
first). About 10% of the records sit in clusters of 2-5: an original and
variants made from it by one or two realistic edits (a word dropped or
added, a word abbreviated or spelled out, a typo, two words swapped).
Cluster members land at random places in the file.

The same seed and size give the same bytes. Records are made one at a time
from small numpy arrays of choices, so a million of them never sit in memory
as strings.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from . import words as w

CLUSTER_SHARE = 0.10
CLUSTER_SIZES = (2, 3, 4, 5)
ABBREVIATIONS = {**dict(w.SUFFIXES), **dict(w.DIRECTIONS), "Saint": "St", "&": "and", "Mount": "Mt"}
EXPANSIONS = {short: full for full, short in ABBREVIATIONS.items() if short != full}


class Plan:
    """Which record sits where: base records and the variants of cluster originals."""

    def __init__(self, n: int, seed: int):
        rng = np.random.default_rng(seed)
        sizes: list[int] = []
        while sum(sizes) < CLUSTER_SHARE * n:
            sizes.append(int(rng.choice(CLUSTER_SIZES)))
        if sum(sizes) > n:
            sizes = []
        self.n = n
        self.sizes = np.array(sizes, dtype=np.int64)
        variants = int((self.sizes - 1).sum())
        self.bases = n - variants
        # Logical record i < bases is base record i; the first len(sizes) bases are
        # the cluster originals. Then each cluster's variants, cluster by cluster.
        self.variant_cluster = np.repeat(np.arange(len(sizes)), self.sizes - 1)
        self.layout = rng.permutation(n)  # position in the file -> logical record
        self.choices = _choices(rng, self.bases)
        self.seed = seed

    def clusters(self) -> Iterator[list[int]]:
        """Each cluster's ids (file positions + 1)."""
        id_of = np.empty(self.n, dtype=np.int64)
        id_of[self.layout] = np.arange(1, self.n + 1)
        start = self.bases
        for cluster, size in enumerate(self.sizes.tolist()):
            members = [int(id_of[cluster])] + id_of[start : start + size - 1].tolist()
            start += size - 1
            yield sorted(members)

    def text(self, logical: int) -> str:
        if logical < self.bases:
            return _base_text(self.choices, logical)
        cluster = int(self.variant_cluster[logical - self.bases])
        return variant(_base_text(self.choices, cluster), random.Random(f"{self.seed}:{logical}"))


def _choices(rng: np.random.Generator, count: int) -> dict[str, np.ndarray]:
    def pick(options: list | int) -> np.ndarray:
        return rng.integers(0, options if isinstance(options, int) else len(options), count)

    return {
        "shape": pick(4),
        "given": pick(w.GIVEN), "surname": pick(w.SURNAMES), "surname2": pick(w.SURNAMES),
        "word": pick(w.BUSINESS_WORDS), "word2": pick(w.BUSINESS_WORDS), "kind": pick(w.KINDS),
        "number": rng.integers(1, 10000, count), "direction": pick(len(w.DIRECTIONS) * 3),
        "street": pick(w.STREETS), "suffix": pick(w.SUFFIXES), "spelled": pick(2),
        "town": pick(w.TOWNS), "state": pick(w.STATES),
    }


def _base_text(c: dict[str, np.ndarray], i: int) -> str:
    kind = w.KINDS[c["kind"][i]]
    shape = c["shape"][i]
    if shape == 0:
        name = f"{w.GIVEN[c['given'][i]]} {w.SURNAMES[c['surname'][i]]} {kind}"
    elif shape == 1:
        name = f"{w.BUSINESS_WORDS[c['word'][i]]} {kind}"
    elif shape == 2:
        name = f"{w.BUSINESS_WORDS[c['word'][i]]} {w.BUSINESS_WORDS[c['word2'][i]]} {kind}"
    else:
        name = f"{w.SURNAMES[c['surname'][i]]} & {w.SURNAMES[c['surname2'][i]]} {kind}"
    direction = c["direction"][i]
    street = ""
    if direction < len(w.DIRECTIONS):  # a quarter of the streets have a direction
        street = w.DIRECTIONS[direction][c["spelled"][i]] + " "
    full, short = w.SUFFIXES[c["suffix"][i]]
    street += f"{w.STREETS[c['street'][i]]} {full if c['spelled'][i] else short}"
    return f"{name} {c['number'][i]} {street} {w.TOWNS[c['town'][i]]} {w.STATES[c['state'][i]]}"


def variant(text: str, rng: random.Random) -> str:
    """``text`` after one or two edits, never the same text."""
    words = text.split()
    for _ in range(rng.choice((1, 1, 2))):
        words = rng.choice(EDITS)(words, rng)
    edited = " ".join(words)
    return edited if edited != text else " ".join(_typo(text.split(), rng))


def _drop(words: list[str], rng: random.Random) -> list[str]:
    if len(words) <= 4:
        return _typo(words, rng)
    i = rng.randrange(len(words))
    return words[:i] + words[i + 1 :]


def _add(words: list[str], rng: random.Random) -> list[str]:
    extra = rng.choice(w.EXTRA_WORDS)
    i = 0 if extra == "The" else rng.randrange(1, len(words))
    return words[:i] + [extra] + words[i:]


def _abbreviate(words: list[str], rng: random.Random) -> list[str]:
    places = [i for i, word in enumerate(words) if word in ABBREVIATIONS or word in EXPANSIONS]
    if not places:
        return _typo(words, rng)
    i = rng.choice(places)
    word = words[i]
    replacement = ABBREVIATIONS[word] if word in ABBREVIATIONS and ABBREVIATIONS[word] != word else EXPANSIONS.get(word, word)
    return words[:i] + [replacement] + words[i + 1 :]


def _typo(words: list[str], rng: random.Random) -> list[str]:
    places = [i for i, word in enumerate(words) if len(word) >= 4 and word.isalpha()]
    if not places:
        return words + [rng.choice(w.EXTRA_WORDS)]
    i = rng.choice(places)
    word, j = words[i], rng.randrange(1, len(words[i]) - 1)
    how = rng.randrange(4)
    if how == 0:
        word = word[:j] + word[j + 1] + word[j] + word[j + 2 :]
    elif how == 1:
        word = word[:j] + word[j + 1 :]
    elif how == 2:
        word = word[:j] + word[j] + word[j:]
    else:
        word = word[:j] + rng.choice("aeioulnrst".replace(word[j].lower(), "")) + word[j + 1 :]
    return words[:i] + [word] + words[i + 1 :]


def _swap(words: list[str], rng: random.Random) -> list[str]:
    i = rng.randrange(len(words) - 1)
    return words[:i] + [words[i + 1], words[i]] + words[i + 2 :]


EDITS = (_drop, _add, _abbreviate, _typo, _swap)


def generate(n: int, seed: int, out_dir: Path) -> tuple[Path, Path]:
    """Write ``records.txt`` and ``true_pairs.tsv`` into ``out_dir``."""
    plan = Plan(n, seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    records, pairs = out_dir / "records.txt", out_dir / "true_pairs.tsv"
    with open(records, "w", encoding="utf-8", newline="\n") as out:
        for position, logical in enumerate(plan.layout.tolist(), start=1):
            out.write(f"{position} {plan.text(logical)}\n")
    found = sorted((a, b) for members in plan.clusters() for k, a in enumerate(members) for b in members[k + 1 :])
    with open(pairs, "w", encoding="utf-8", newline="\n") as out:
        out.writelines(f"{a}\t{b}\n" for a, b in found)
    return records, pairs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.generate", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="example: python -m bench.generate --n 10000 --seed 1 --out-dir bench/data/10k")
    parser.add_argument("--n", type=int, required=True, help="number of records")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--out-dir", type=Path, required=True, help="folder for records.txt and true_pairs.tsv")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("--n must be at least 1")
    started = time.monotonic()
    records, pairs = generate(args.n, args.seed, args.out_dir)
    count = sum(1 for _ in open(pairs))
    print(f"wrote {args.n} records to {records} and {count} true pairs to {pairs} "
          f"in {time.monotonic() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
