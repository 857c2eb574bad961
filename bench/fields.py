"""Field records with known duplicates: ``dupehell``'s development domains.

``dupehell`` (PyPI, a third-party generator of entity-resolution data) makes
tables of 40 domains with typos, OCR errors, swapped and reformatted dates,
phonetic variants and "hard negatives" (records of a different entity that
share fields with one). This module uses only the domains in
:data:`DOMAINS`; the others are kept for an independent check of the
defaults and are never generated here.

For a domain, a difficulty, a size and a seed, :func:`generate` writes

- ``records.parquet``: the domain's most frequent entity type, its columns
  as generated but for those no record fills, the answer (``master_id``),
  the generator's bookkeeping (``domain``, ``entity_type``) and the
  entity's own key (the first column of its schema, the master's surrogate
  key: every record of one master carries it, so it would give the answer
  away); the id column is ``record_id``;
- ``true_pairs.tsv``: every pair of records of one master.

``python -m bench.fields --domain crm --difficulty hell --size 5000 --seed 7
--out-dir bench/data/fields/crm-hell`` writes one set.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

# The development domains: the only ones generated here.
DOMAINS = ("academia", "agriculture", "automotive", "aviation", "biotech", "blockchain", "construction", "crm",
           "cybersecurity", "ecommerce", "education", "energy", "fashion", "fintech", "food_beverage", "gaming",
           "hospitality", "logistics", "manufacturing", "maritime", "media", "mining", "nonprofit", "pharma",
           "publishing", "realestate", "renewable_energy", "retail", "social_media", "sports", "supplychain",
           "technology")
DIFFICULTIES = ("medium", "hell")
ID_COLUMN = "record_id"
# What the generator adds to every row: the answer and its bookkeeping.
LEFT_OUT = ("master_id", "domain", "entity_type")


@dataclass(frozen=True)
class FieldSet:
    """One generated set: its records, true pairs, the entity type kept and its columns."""

    records: Path
    truth: Path
    entity: str
    columns: tuple[str, ...]
    rows: int
    true_pairs: int


def _schema_key(domain: str, entity: str) -> str:
    """The first column of ``entity``'s schema: its own key."""
    import dupehell

    schema = json.loads((Path(dupehell._default_schemas_dir()) / f"{domain}.json").read_text())
    for found in schema["entities"]:
        if found["name"] == entity:
            return found["columns"][0]["name"]
    raise SystemExit(f"dupehell's {domain} schema has no entity {entity!r}")


def generate(domain: str, difficulty: str, size: int, seed: int, out_dir: Path) -> FieldSet:
    """Generate ``domain`` at ``difficulty`` and write its most frequent entity's records and true pairs."""
    if domain not in DOMAINS:
        raise SystemExit(f"{domain!r} is not a development domain ({', '.join(DOMAINS)})")
    import dupehell
    import pandas as pd

    out_dir.mkdir(parents=True, exist_ok=True)
    made = dupehell.generate(domain, size, seed=seed, difficulty=difficulty, output_dir=str(out_dir / "generated"),
                             output_format="parquet")
    table = pd.read_parquet(made.dataset)
    entity = str(table["entity_type"].value_counts().index[0])
    rows = table[table["entity_type"] == entity].dropna(axis=1, how="all")
    key = _schema_key(domain, entity)
    dropped = [c for c in (*LEFT_OUT, key) if c in rows.columns and c != ID_COLUMN]
    kept = rows.drop(columns=dropped).reset_index(drop=True)
    kept = kept[[ID_COLUMN, *[c for c in kept.columns if c != ID_COLUMN]]]
    records = out_dir / "records.parquet"
    kept.to_parquet(records, index=False)
    truth = out_dir / "true_pairs.tsv"
    pairs = 0
    with truth.open("w", encoding="utf-8") as out:
        for members in rows.groupby("master_id", observed=True)[ID_COLUMN]:
            for a, b in combinations(sorted(members[1]), 2):
                out.write(f"{a}\t{b}\n")
                pairs += 1
    return FieldSet(records, truth, entity, tuple(c for c in kept.columns if c != ID_COLUMN), len(kept), pairs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fields", description=__doc__.split("\n\n")[0])
    parser.add_argument("--domain", required=True, choices=DOMAINS)
    parser.add_argument("--difficulty", default="medium", choices=DIFFICULTIES)
    parser.add_argument("--size", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    made = generate(args.domain, args.difficulty, args.size, args.seed, args.out_dir)
    print(f"{made.rows} {made.entity} records ({', '.join(made.columns)}), {made.true_pairs} true pairs: "
          f"{made.records}, {made.truth}")


if __name__ == "__main__":
    main()
