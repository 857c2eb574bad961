"""splink's example data: historical people with many records each, as field records.

``python -m bench.historical --out-dir bench/data/historical`` writes
``records.parquet`` (``unique_id`` and the fields ``first_name surname dob
birth_place postcode_fake gender occupation``) and ``true_pairs.tsv`` (every
pair of records of one person, 303,961) from the copy in
``bench/datasets/historical_50k`` (MIT, with its licence), checked against
its SHA-256 first. ``full_name`` and ``first_and_surname`` are left out:
they are made of the other fields. ``cluster`` is the answer.

It is the set where entities have many records: 5,156 people with 3 to 21
records each, written with typos, nicknames, missing values and swapped
fields.
"""

from __future__ import annotations

import argparse
import hashlib
from itertools import combinations
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "datasets" / "historical_50k"
FILE = "historical_figures_with_errors_50k.parquet"
ID_COLUMN = "unique_id"
# Each record's person, as `neardup evaluate --gold` reads true clusters.
CLUSTERS = "true_clusters.csv"
ANSWER = "cluster"
FIELDS = ("first_name", "surname", "dob", "birth_place", "postcode_fake", "gender", "occupation")


def checked(source: Path = SOURCE) -> Path:
    """The data file, once its SHA-256 is the one ``SHA256SUMS`` names."""
    expected = dict(reversed(line.split()) for line in (source / "SHA256SUMS").read_text().splitlines() if line)
    path = source / FILE
    found = hashlib.sha256(path.read_bytes()).hexdigest()
    if found != expected[FILE]:
        raise SystemExit(f"{path}: SHA-256 {found} is not the {expected[FILE]} SHA256SUMS names")
    return path


def generate(out_dir: Path, size: int | None = None) -> tuple[Path, Path]:
    """Write ``records.parquet`` and ``true_pairs.tsv`` into ``out_dir``: every
    record, or with ``size`` the records of the first people (in the file's
    order) up to about that many."""
    import pandas as pd

    table = pd.read_parquet(checked())
    if size is not None and size < len(table):
        people = table[ANSWER].drop_duplicates()
        counts = table[ANSWER].value_counts()
        kept = people[counts[people].cumsum().to_numpy() <= size]
        table = table[table[ANSWER].isin(set(kept))]
    out_dir.mkdir(parents=True, exist_ok=True)
    records, truth = out_dir / "records.parquet", out_dir / "true_pairs.tsv"
    table[[ID_COLUMN, *FIELDS]].to_parquet(records, index=False)
    table[[ID_COLUMN, ANSWER]].rename(columns={ID_COLUMN: "id"}).to_csv(out_dir / CLUSTERS, index=False)
    with truth.open("w", encoding="utf-8") as out:
        for _, members in table.groupby(ANSWER, sort=True)[ID_COLUMN]:
            for a, b in combinations(sorted(members), 2):
                out.write(f"{a}\t{b}\n")
    return records, truth


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.historical", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--size", type=int, help="about this many records (whole people); default: all")
    args = parser.parse_args(argv)
    records, truth = generate(args.out_dir, args.size)
    print(f"{records}, {truth}")


if __name__ == "__main__":
    main()
