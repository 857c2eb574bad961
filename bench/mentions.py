"""Mentions of people in different places: pre-blocked data, every name shared by many.

``python -m bench.mentions --n 20000 --seed 1 --out-dir bench/data/mentions``
writes ``records.csv`` (``id,first_name,last_name,city,state,country,employer``),
``true_pairs.tsv`` (every pair of mentions of one person) and
``true_clusters.csv`` (``id,cluster``: each mention's person).

With ``--largest N`` a person is mentioned 1 to N times, as a power law
draws it (half the people once, a few thousand times at a million
mentions: the way a customer has a record per order, or an inventor one
per patent); a person mentioned many times moves and changes jobs a few
times in all, and two in five of their mentions copy an earlier one to the
letter. The true pairs are then too many to list: only ``true_clusters.csv``
is written.

Each person is mentioned one to four times (the way an inventor appears on
several patents or an author on several papers): their name, written the
same way or with a middle initial or a typo; the city and employer of the
time, which change between mentions now and then (a move, a new job). Names
come from small pools drawn with Zipf's law, so the common ones are borne
by many different people: at 20,000 mentions the commonest full name is
held by hundreds, and every record shares its name's letters with
thousands of others. Neither text similarity nor a name tells these people
apart; the fields beside the name (a city, an employer, both) do.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
from itertools import combinations
from pathlib import Path

from . import words as w

FIRST = ["James", "Mary", "John", "Patricia", "Robert", "Jennifer", "Michael", "Linda", "David", "Elizabeth",
         "William", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas", "Karen", "Wei", "Li", "Hiroshi",
         "Yuki", "Maria", "Jose", "Anna", "Peter", "Hans", "Ming", "Jun", "Sarah"]
LAST = ["Smith", "Wang", "Zhang", "Li", "Johnson", "Kim", "Lee", "Brown", "Garcia", "Mueller", "Tanaka", "Chen",
        "Liu", "Suzuki", "Williams", "Jones", "Miller", "Davis", "Wilson", "Schmidt", "Nguyen", "Sato", "Park", "Lopez"]
STATES = ["CA", "NY", "TX", "WA", "MA", "IL", "NJ", "PA", "MI", "MN", "OR", "NC"]
EMPLOYER_WORDS = ["Systems", "Technologies", "Labs", "Devices", "Semiconductor", "Networks", "Instruments",
                  "Research", "Dynamics", "Photonics", "Materials", "Robotics"]
COLUMNS = ("id", "first_name", "last_name", "city", "state", "country", "employer")
MENTIONS = (1, 1, 2, 2, 3, 4)


def _zipf(rng: random.Random, values: list[str]) -> str:
    weights = [1 / (rank + 1) for rank in range(len(values))]
    return rng.choices(values, weights)[0]


def _typo(rng: random.Random, word: str) -> str:
    if len(word) < 4:
        return word
    at = rng.randrange(1, len(word) - 1)
    return word[:at] + word[at + 1] + word[at] + word[at + 2:]


# A person of more mentions than this changes jobs and moves about as often
# in all as one of this many does; a tenth more of those mentions are copies.
FEW = 4
COPIED = 0.4
CLUSTERS = "true_clusters.csv"


def mentions_of(rng: random.Random, largest: int | None) -> int:
    """How many times a person is mentioned: as the small sets have it, or
    1 to ``largest`` by a power law of exponent 2."""
    if largest is None:
        return rng.choice(MENTIONS)
    return min(int(1.0 / (1.0 - rng.random() * (1.0 - 1.0 / (largest + 1)))), largest)


def generate(n: int, seed: int, out_dir: Path, largest: int | None = None) -> tuple[Path, Path]:
    """Write ``records.csv``, ``true_clusters.csv`` and (without ``largest``)
    ``true_pairs.tsv`` of about ``n`` mentions into ``out_dir``; returns the
    records and the truth (the pairs, or with ``largest`` the clusters)."""
    rng = random.Random(seed)
    # Each city lies in one state, as places do.
    cities = [(f"{rng.choice(w.TOWNS)} {rng.choice(['Park', 'Falls', 'Hills', 'City', 'Springs'])}", rng.choice(STATES))
              for _ in range(max(30, n // 100))]
    employers = [f"{rng.choice(w.BUSINESS_WORDS)} {rng.choice(EMPLOYER_WORDS)}" for _ in range(max(40, n // 60))]
    out_dir.mkdir(parents=True, exist_ok=True)
    records, truth, clusters = out_dir / "records.csv", out_dir / "true_pairs.tsv", out_dir / CLUSTERS
    number, person = 0, 0
    with records.open("w", newline="", encoding="utf-8") as out, clusters.open("w", encoding="utf-8") as members, \
            (truth.open("w", encoding="utf-8") if largest is None else open(os.devnull, "w")) as pairs:
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        members.write("id,cluster\n")
        while number < n:
            person += 1
            first, last = _zipf(rng, FIRST), _zipf(rng, LAST)
            middle = rng.choice("ABCDEFGHJKLMNPRSTW")
            (city, state), employer = rng.choice(cities), rng.choice(employers)
            ids, written = [], []
            count = mentions_of(rng, largest)
            scale = min(1.0, FEW / count)
            for mention in range(count):
                if written and count > FEW and rng.random() < COPIED:
                    row = rng.choice(written)  # the same record again: another order, another patent
                else:
                    if mention and rng.random() < 0.25 * scale:
                        employer = rng.choice(employers)  # a new job
                    if mention and rng.random() < 0.15 * scale:
                        city, state = rng.choice(cities)  # a move
                    given = f"{first} {middle}." if rng.random() < 0.3 else first
                    surname = _typo(rng, last) if rng.random() < 0.05 else last
                    row = [given, surname, city, state, "US", employer]
                    written.append(row)
                number += 1
                ids.append(str(number))
                writer.writerow([number, *row])
                members.write(f"{number},{person}\n")
            if largest is None:
                pairs.writelines(f"{a}\t{b}\n" for a, b in combinations(ids, 2))
    return records, (truth if largest is None else clusters)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.mentions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--largest", type=int, help="mentions of a person at most, by a power law (default: 1-4)")
    args = parser.parse_args(argv)
    print(*generate(args.n, args.seed, args.out_dir, args.largest))


if __name__ == "__main__":
    main()
