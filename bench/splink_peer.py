"""The peers of field records: splink with one generic recipe, and exact keys.

**splink** (5, on DuckDB) is the field's reference implementation of
Fellegi-Sunter matching. It needs a configuration per table; the recipe
here is written once, by the rules a person would give a new user, and
applied to every table unchanged (:func:`recipe`):

- a comparison for each column by what it holds: numbers and categories
  (at most 50 distinct values, or fewer than 2% of its values distinct)
  exact; emails splink's ``EmailComparison``; codes and dates (no space, a
  digit in most values) Levenshtein within 1 and 2; other text
  Jaro-Winkler at 0.92 and 0.8;
- blocking on each of the three most distinct columns filled in at least
  half the rows (exact agreement on one of them makes a candidate); a
  column whose rule would make more than ``MAX_RULE_PAIRS`` comparisons
  (counted first, as splink's blocking analysis counts them) is blocked on
  together with the most distinct other column that brings it under, so that
  DuckDB finishes on a million records here;
- u by random sampling (10 million pairs), m by EM on each blocking rule,
  pairs kept at match probability 0.5.

**Exact keys** (:func:`exact_key_pairs`): the pairs agreeing exactly on
first and last name where a table has both, else on its most distinct
column: the baseline every method must beat.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

# A column of at most this many distinct values, or this share, is a category.
CATEGORY_VALUES = 50
CATEGORY_SHARE = 0.02
BLOCKING_COLUMNS = 3
# Comparisons one blocking rule may make: about a minute of DuckDB's scoring here.
MAX_RULE_PAIRS = 20_000_000
U_PAIRS = 1e7


@dataclass(frozen=True)
class PeerRun:
    pairs: set[frozenset[str]]
    seconds: float
    what: str


def _table(records: Path):
    """A Parquet or CSV file as a pandas frame (CSV's values all text, as written)."""
    import pandas as pd

    if records.suffix == ".csv":
        return pd.read_csv(records, dtype=str, keep_default_na=False).replace("", None)
    return pd.read_parquet(records)


def _kinds(frame, id_column: str) -> dict[str, str]:
    """Each column's kind by the recipe's rules: number, category, email, code, text."""
    import pandas as pd

    kinds = {}
    for column in frame.columns:
        if column == id_column:
            continue
        values = frame[column].dropna()
        if values.empty:
            continue
        texts = values.astype(str)
        distinct = texts.nunique()
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            kinds[column] = "number"
        elif distinct <= CATEGORY_VALUES or distinct < CATEGORY_SHARE * len(texts):
            kinds[column] = "category"
        elif texts.str.contains("@").mean() > 0.5:
            kinds[column] = "email"
        elif (~texts.str.contains(" ")).mean() > 0.5 and texts.str.contains(r"\d").mean() > 0.5:
            kinds[column] = "code"
        else:
            kinds[column] = "text"
    return kinds


def recipe(frame, id_column: str) -> tuple[dict, list[str]]:
    """splink settings for ``frame`` by the recipe, and its blocking columns."""
    import splink.comparison_library as cl
    from splink import SettingsCreator, block_on

    kinds = _kinds(frame, id_column)
    comparisons = []
    for column, kind in kinds.items():
        if kind in ("number", "category"):
            comparisons.append(cl.ExactMatch(column))
        elif kind == "email":
            comparisons.append(cl.EmailComparison(column))
        elif kind == "code":
            comparisons.append(cl.LevenshteinAtThresholds(column, [1, 2]))
        else:
            comparisons.append(cl.JaroWinklerAtThresholds(column, [0.92, 0.8]))
    blocking = _blocking(frame, kinds)
    settings = SettingsCreator(link_type="dedupe_only", unique_id_column_name=id_column, comparisons=comparisons,
                               blocking_rules_to_generate_predictions=[block_on(*rule) for rule in blocking],
                               retain_matching_columns=False, retain_intermediate_calculation_columns=False)
    return settings, blocking


def _blocking(frame, kinds: dict[str, str]) -> list[tuple[str, ...]]:
    """The recipe's blocking rules: the most distinct columns filled in half
    the rows, each alone, or with the next most distinct column (not a
    rule alone) that keeps its comparisons within ``MAX_RULE_PAIRS``."""
    filled = [c for c in kinds if frame[c].notna().mean() >= 0.5]
    ranked = sorted(filled, key=lambda c: -frame[c].astype(str).nunique())
    rules: list[tuple[str, ...]] = []
    for column in ranked:
        # A column already a rule alone would make a subset of its pairs.
        rule = (column,) if _comparisons(frame, (column,)) <= MAX_RULE_PAIRS else next(
            ((column, other) for other in ranked if other != column and (other,) not in rules
             and _comparisons(frame, (column, other)) <= MAX_RULE_PAIRS), None)
        if rule is not None and set(rule) not in [set(r) for r in rules]:
            rules.append(rule)
        if len(rules) == BLOCKING_COLUMNS:
            break
    return rules


def _comparisons(frame, columns: Sequence[str]) -> int:
    """The pairs of rows agreeing exactly on every one of ``columns`` (none missing)."""
    sizes = frame.dropna(subset=list(columns)).groupby(list(columns)).size()
    return int((sizes * (sizes - 1) // 2).sum())


def splink_pairs(records: Path, id_column: str, seed: int = 1) -> PeerRun:
    """The recipe run on the Parquet table ``records``: pairs at match probability 0.5 or more."""
    import duckdb
    from splink import DuckDBAPI, Linker, block_on

    started = time.perf_counter()
    frame = _table(records)
    frame[id_column] = frame[id_column].astype(str)
    for column in frame.columns:
        if frame[column].dtype == object or str(frame[column].dtype) in ("string", "str", "category"):
            frame[column] = frame[column].astype("string")
    settings, blocking = recipe(frame, id_column)
    logging.getLogger("splink").setLevel(logging.ERROR)
    db = DuckDBAPI(connection=duckdb.connect())
    linker = Linker(db.register(frame), settings, log_level=logging.ERROR)
    linker.training.estimate_u_using_random_sampling(max_pairs=U_PAIRS, seed=seed)
    for rule in blocking:
        try:
            linker.training.estimate_parameters_using_expectation_maximisation(block_on(*rule))
        except Exception:  # a rule whose pairs leave EM nothing to estimate: the next one may
            continue
    found = linker.inference.predict(threshold_match_probability=0.5).as_pandas_dataframe()
    pairs = {frozenset((str(a), str(b))) for a, b in zip(found[f"{id_column}_l"], found[f"{id_column}_r"])}
    return PeerRun(pairs, time.perf_counter() - started,
                   f"blocking on {', '.join(' + '.join(rule) for rule in blocking)}")


def exact_key_pairs(records: Path, id_column: str) -> PeerRun:
    """Pairs agreeing exactly on first and last name (where both columns
    exist), else on the most distinct column."""
    started = time.perf_counter()
    frame = _table(records)
    columns = [c for c in frame.columns if c != id_column]
    key: Sequence[str] = ("first_name", "last_name") if {"first_name", "last_name"} <= set(columns) else \
        (max(columns, key=lambda c: frame[c].astype(str).nunique()),)
    pairs: set[frozenset[str]] = set()
    for _, group in frame.dropna(subset=list(key)).groupby(list(key))[id_column]:
        pairs.update(frozenset((str(a), str(b))) for a, b in combinations(group, 2))
    return PeerRun(pairs, time.perf_counter() - started, "exact " + " + ".join(key))
