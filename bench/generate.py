"""Synthetic business records with known near duplicates, for benchmarks.

``python -m bench.generate --n 1000000 --seed 1 --out-dir bench/data/1m``
writes ``records.txt`` (``ID TEXT``, ids 1..N in file order) and
``true_pairs.tsv`` (every pair inside each near-duplicate cluster, smaller id
first). About 10% of the records sit in clusters of 2-5: an original and
variants made from it. Cluster members land at random places in the file.

``--noise`` says how far a variant strays from its original:

- ``light`` (the default; the scale benchmark's data): one or two
  realistic edits (a word dropped or added, a word abbreviated or spelled
  out, a typo, two words swapped);
- ``heavy``: two to four edits, typos in one to three words plus one edit
  of another kind;
- ``words``: three to five word-level changes of different kinds (a street
  suffix, direction or state left out; a word such as ``Inc`` or a suite
  number added; another word for the kind of business, the state spelled
  out; the partners' names or the address and the name in another order),
  so most duplicates differ in three words or more while the name's own
  words, the number and the street stay.

``--two-sources`` writes two sources to link instead (``a.txt`` and
``b.txt``, N records each, ids 1..N in each file, and ``true_pairs.tsv``
as ``a ID b ID`` lines): half the records of each source stand for a
business the other source holds too, as a variant of it (the original in
``a``, its variant in ``b``); the others are in one source only. So every
true pair is across the sources, and each record has at most one.

Light, heavy and words variants of the same seed share their originals, so
the levels differ only in the noise. The same seed, size and noise give the
same bytes; ``light`` writes what this generator wrote before the other
levels existed. Records are made one at a time from small numpy arrays of
choices, so a million of them never sit in memory as strings.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from . import words as w

CLUSTER_SHARE = 0.10
CLUSTER_SIZES = (2, 3, 4, 5)
ABBREVIATIONS = {**dict(w.SUFFIXES), **dict(w.DIRECTIONS), "Saint": "St", "&": "and", "Mount": "Mt"}
EXPANSIONS = {short: full for full, short in ABBREVIATIONS.items() if short != full}
# Street suffixes and directions, each to its other spelling (``St`` is only ever ``Street`` here).
SPELLINGS = {a: b for full, short in (*w.SUFFIXES, *w.DIRECTIONS) if full != short for a, b in ((full, short), (short, full))}


class Layout:
    """Which record sits where, for any kind of record.

    Logical record i < ``bases`` is base record i; the first ``len(sizes)``
    bases are the cluster originals. Then come each cluster's variants,
    cluster by cluster. ``layout`` maps a position in the file to a logical
    record. ``rng`` is left for the caller to draw the records' own choices
    from, after the layout's draws.
    """

    def __init__(self, n: int, seed: int, share: float = CLUSTER_SHARE, sizes: tuple[int, ...] = CLUSTER_SIZES):
        rng = np.random.default_rng(seed)
        drawn: list[int] = []
        total = 0
        while total < share * n:
            drawn.append(int(rng.choice(sizes)))
            total += drawn[-1]
        if total > n:
            drawn = []
        self.n = n
        self.sizes = np.array(drawn, dtype=np.int64)
        variants = int((self.sizes - 1).sum())
        self.bases = n - variants
        self.variant_cluster = np.repeat(np.arange(len(drawn)), self.sizes - 1)
        self.layout = rng.permutation(n)
        self.rng = rng
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

    def original(self, logical: int) -> int | None:
        """The base record a variant was made from; None for a base record."""
        return None if logical < self.bases else int(self.variant_cluster[logical - self.bases])

    def variant_rng(self, logical: int) -> random.Random:
        """The edits of one variant come from a generator of its own, so records
        can be made one at a time in any order."""
        return random.Random(f"{self.seed}:{logical}")

    def write(self, out_dir: Path, text: Callable[[int], str]) -> tuple[Path, Path]:
        """``records.txt`` (``ID TEXT``, one record at a time, in file order) and
        ``true_pairs.tsv`` (every pair inside each cluster, smaller id first)."""
        out_dir.mkdir(parents=True, exist_ok=True)
        records, pairs = out_dir / "records.txt", out_dir / "true_pairs.tsv"
        with open(records, "w", encoding="utf-8", newline="\n") as out:
            for position, logical in enumerate(self.layout.tolist(), start=1):
                out.write(f"{position} {text(logical)}\n")
        found = sorted((a, b) for members in self.clusters() for k, a in enumerate(members) for b in members[k + 1 :])
        with open(pairs, "w", encoding="utf-8", newline="\n") as out:
            out.writelines(f"{a}\t{b}\n" for a, b in found)
        return records, pairs


class Plan(Layout):
    """Business records: base records from small arrays of choices, variants at one noise level."""

    def __init__(self, n: int, seed: int, noise: str = "light", share: float = CLUSTER_SHARE,
                 sizes: tuple[int, ...] = CLUSTER_SIZES):
        if noise not in NOISE:
            raise ValueError(f"noise must be one of {', '.join(NOISE)}")
        super().__init__(n, seed, share, sizes)
        self.choices = _choices(self.rng, self.bases)
        self.noise = noise

    def text(self, logical: int) -> str:
        cluster = self.original(logical)
        if cluster is None:
            return _base_text(self.choices, logical)
        return NOISE[self.noise](_base_parts(self.choices, cluster), self.variant_rng(logical))


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


def _base_parts(c: dict[str, np.ndarray], i: int) -> list[tuple[str, str]]:
    """Base record ``i`` as (role, word) pairs: the roles let word-level noise
    keep what makes the business recognisable (its name words, its number)."""
    kind = [("kind", word) for word in w.KINDS[c["kind"][i]].split()]
    shape = c["shape"][i]
    if shape == 0:
        name = [("given", w.GIVEN[c["given"][i]]), ("surname", w.SURNAMES[c["surname"][i]]), *kind]
    elif shape == 1:
        name = [("word", w.BUSINESS_WORDS[c["word"][i]]), *kind]
    elif shape == 2:
        name = [("word", w.BUSINESS_WORDS[c["word"][i]]), ("word", w.BUSINESS_WORDS[c["word2"][i]]), *kind]
    else:
        name = [("surname", w.SURNAMES[c["surname"][i]]), ("and", "&"), ("surname", w.SURNAMES[c["surname2"][i]]), *kind]
    direction = c["direction"][i]
    street = []
    if direction < len(w.DIRECTIONS):  # a quarter of the streets have a direction
        street.append(("direction", w.DIRECTIONS[direction][c["spelled"][i]]))
    full, short = w.SUFFIXES[c["suffix"][i]]
    street += [("street", w.STREETS[c["street"][i]]), ("suffix", full if c["spelled"][i] else short)]
    return [*name, ("number", str(c["number"][i])), *street, ("town", w.TOWNS[c["town"][i]]),
            ("state", w.STATES[c["state"][i]])]


def _base_text(c: dict[str, np.ndarray], i: int) -> str:
    return _joined(_base_parts(c, i))


def _joined(parts: list[tuple[str, str]]) -> str:
    return " ".join(word for _, word in parts)


def light(parts: list[tuple[str, str]], rng: random.Random) -> str:
    """One or two edits (the benchmark's noise since its first run)."""
    return variant(_joined(parts), rng)


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


def heavy(parts: list[tuple[str, str]], rng: random.Random) -> str:
    """Two to four edits: typos in one to three words, then one edit of
    another kind (a word dropped or added, abbreviated or spelled out, two
    words swapped)."""
    text = _joined(parts)
    words = text.split()
    for _ in range(rng.randint(1, 3)):
        words = _typo(words, rng)
    words = rng.choice((_drop, _add, _abbreviate, _swap))(words, rng)
    edited = " ".join(words)
    return edited if edited != text else " ".join(_typo(words, rng))


Parts = list[tuple[str, str]]


def _places(parts: Parts, *roles: str) -> list[int]:
    return [i for i, (role, _) in enumerate(parts) if role in roles]


def _drop_optional(parts: Parts, rng: random.Random) -> Parts | None:
    """A word listings often leave out: the direction, street suffix or state."""
    places = _places(parts, "direction", "suffix", "state")
    if not places:
        return None
    i = rng.choice(places)
    return parts[:i] + parts[i + 1 :]


def _add_descriptor(parts: Parts, rng: random.Random) -> Parts | None:
    extra = rng.choice(w.EXTRA_WORDS)
    i = _places(parts, "given", "surname", "word")[0] if extra == "The" else _places(parts, "kind")[-1] + 1
    return parts[:i] + [("extra", extra)] + parts[i:]


def _add_unit(parts: Parts, rng: random.Random) -> Parts | None:
    i = _places(parts, "street", "suffix")[-1] + 1
    unit = [("unit", rng.choice(w.UNITS)), ("unit", str(rng.randint(1, 40)))]  # small numbers, as suites are
    return parts[:i] + unit + parts[i:]


def _kind_synonym(parts: Parts, rng: random.Random) -> Parts | None:
    places = _places(parts, "kind")
    other = w.KIND_SYNONYMS.get(" ".join(parts[i][1] for i in places))
    if not other:
        return None
    return parts[: places[0]] + [("kind", word) for word in rng.choice(other).split()] + parts[places[-1] + 1 :]


def _state_name(parts: Parts, rng: random.Random) -> Parts | None:
    places = _places(parts, "state")
    if not places:
        return None
    i = places[0]
    return parts[:i] + [("state", word) for word in w.STATE_NAMES[parts[i][1]].split()] + parts[i + 1 :]


def _spell_other_way(parts: Parts, rng: random.Random) -> Parts | None:
    """A street suffix or direction abbreviated, or spelled out."""
    places = [i for i in _places(parts, "direction", "suffix") if parts[i][1] in SPELLINGS]
    if not places:
        return None
    i = rng.choice(places)
    role, word = parts[i]
    return parts[:i] + [(role, SPELLINGS[word])] + parts[i + 1 :]


def _and_spelled(parts: Parts, rng: random.Random) -> Parts | None:
    places = _places(parts, "and")
    return None if not places else parts[: places[0]] + [("and", "and")] + parts[places[0] + 1 :]


def _partners_swapped(parts: Parts, rng: random.Random) -> Parts | None:
    """``Smith & Jones`` -> ``Jones & Smith``."""
    if not _places(parts, "and"):
        return None
    first, second = _places(parts, "surname")
    swapped = list(parts)
    swapped[first], swapped[second] = parts[second], parts[first]
    return swapped


def _address_first(parts: Parts, rng: random.Random) -> Parts | None:
    """The street address before the name, as some listings print it."""
    street = _places(parts, "number", "direction", "street", "suffix", "unit")
    rest = [i for i in range(len(parts)) if i not in street]
    return [parts[i] for i in street] + [parts[i] for i in rest]


# Word-level edits and how often each is chosen relative to the others: what
# listings most often do to a name (drop or add a word, another word for the
# kind of business) more often than moving whole blocks around.
WORD_EDITS = ((_drop_optional, 3), (_add_descriptor, 2), (_add_unit, 2), (_kind_synonym, 3), (_state_name, 2),
              (_spell_other_way, 2), (_and_spelled, 1), (_partners_swapped, 1), (_address_first, 1))


def reworded(parts: Parts, rng: random.Random) -> str:
    """Three to five word-level changes (a word dropped, added or replaced,
    blocks reordered), each of a different kind; the name's own words, the
    street number and the street name stay, so a person still sees one
    business."""
    # Weighted order without replacement: key u^(1/weight), largest first.
    order = sorted(WORD_EDITS, key=lambda edit: rng.random() ** (1 / edit[1]), reverse=True)
    wanted, done = rng.choice((3, 3, 4, 5)), 0
    for edit, _ in order:
        changed = edit(parts, rng)
        if changed is not None:
            parts, done = changed, done + 1
            if done == wanted:
                break
    return _joined(parts)


# The noise levels of the variants.
NOISE = {"light": light, "heavy": heavy, "words": reworded}


def generate(n: int, seed: int, out_dir: Path, noise: str = "light") -> tuple[Path, Path]:
    """Write ``records.txt`` and ``true_pairs.tsv`` into ``out_dir``."""
    plan = Plan(n, seed, noise)
    return plan.write(out_dir, plan.text)


# Of two sources' records, the share in a pair across them (one original, one variant).
LINKED_SHARE = 0.5
SOURCES = ("a", "b")


def generate_linked(n: int, seed: int, out_dir: Path, noise: str = "light") -> tuple[Path, Path, Path]:
    """Write two sources of ``n`` records each, ``a.txt`` and ``b.txt`` (``ID
    TEXT``, ids 1..n in file order in each), and ``true_pairs.tsv`` (``a ID
    b ID``, by a's id): ``LINKED_SHARE`` of the records are pairs of an
    original (in ``a``) and its variant (in ``b``)."""
    plan = Plan(2 * n, seed, noise, LINKED_SHARE, (2,))
    pairs = len(plan.sizes)
    # Logical records 0..n-1 (the originals, then bases) are a's; n..2n-1 (bases, then the variants) b's.
    rng = np.random.default_rng([seed, len(SOURCES)])
    out_dir.mkdir(parents=True, exist_ok=True)
    files, id_of = [], np.empty(2 * n, np.int64)
    for number, name in enumerate(SOURCES):
        logical = rng.permutation(n) + number * n
        id_of[logical] = np.arange(1, n + 1)
        files.append(out_dir / f"{name}.txt")
        with open(files[-1], "w", encoding="utf-8", newline="\n") as out:
            for position, record in enumerate(logical.tolist(), start=1):
                out.write(f"{position} {plan.text(record)}\n")
    truth = out_dir / "true_pairs.tsv"
    found = sorted((int(id_of[c]), int(id_of[plan.bases + c])) for c in range(pairs))
    with open(truth, "w", encoding="utf-8", newline="\n") as out:
        out.writelines(f"{SOURCES[0]}\t{a}\t{SOURCES[1]}\t{b}\n" for a, b in found)
    return files[0], files[1], truth


def command_line(prog: str, doc: str, example: str, make: Callable[[argparse.Namespace], tuple[Path, Path]],
                 argv: list[str] | None = None, options: Callable[[argparse.ArgumentParser], None] | None = None) -> None:
    """The generators' shared command line: ``--n --seed --out-dir`` (and
    ``options``), then ``make(args)`` writes the records (one file, or one a
    source) and ``true_pairs.tsv``, and returns their paths."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=f"example: {example}")
    parser.add_argument("--n", type=int, required=True, help="number of records")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--out-dir", type=Path, required=True, help="folder for records.txt and true_pairs.tsv")
    if options:
        options(parser)
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("--n must be at least 1")
    started = time.monotonic()
    *records, pairs = make(args)
    count = sum(1 for _ in open(pairs))
    print(f"wrote {args.n} records{' each' if len(records) > 1 else ''} to {' and '.join(map(str, records))} and "
          f"{count} true pairs to {pairs} in {time.monotonic() - started:.1f} s", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    def noise(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--noise", choices=tuple(NOISE), default="light", help="how far variants stray (default light)")
        parser.add_argument("--two-sources", action="store_true",
                            help="two sources to link, a.txt and b.txt of N records each, true pairs across them")

    def make(args: argparse.Namespace) -> tuple[Path, ...]:
        if args.two_sources:
            return generate_linked(args.n, args.seed, args.out_dir, args.noise)
        return generate(args.n, args.seed, args.out_dir, args.noise)

    command_line("python -m bench.generate", __doc__, "python -m bench.generate --n 10000 --seed 1 --out-dir bench/data/10k",
                 make, argv, noise)


if __name__ == "__main__":
    main()
