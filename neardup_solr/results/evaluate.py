"""Scoring reported pairs against known true pairs, or against labels.

Against gold pairs every reported pair counts: precision = true / found,
recall = true / gold, F1 their harmonic mean. Pairs are unordered (``a b``
is ``b a``).

Against labels (:mod:`neardup_solr.results.labels`: pairs a person called same or
different) only labeled pairs count, since nothing is known of the rest:
precision is the share labeled same among the reported pairs that are
labeled, recall the share of the pairs labeled same that were reported.

Clusters are scored too (:func:`cluster_scores`), since a chain of pairs
puts records together that no pair joined: the found pairs' connected
components against the gold pairs' (or gold clusters), over every record
(a record in no pair is a cluster of its own on either side), by B-cubed
precision and recall (for each record, the share of its found cluster that
is in its true one, and of its true cluster that is in its found one,
averaged over the records) and the adjusted Rand index (the agreement of
the two partitions on every pair of records, 0 for chance and 1 for the
same partition).
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..extras import require
from ..files import read_text
from .clustering import connected
from .pairs import Pair, distance_name
from ..records.record import id_key, keyed


class Rates:
    """Precision, recall and F1 from :meth:`counts`: the true pairs, the
    pairs they are among (reported), the pairs there are to find (each
    rate 0 where its whole is 0)."""

    def counts(self) -> tuple[int, int, int]:
        raise NotImplementedError

    @property
    def precision(self) -> float:
        true, reported, _ = self.counts()
        return true / reported if reported else 0.0

    @property
    def recall(self) -> float:
        true, _, relevant = self.counts()
        return true / relevant if relevant else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass(frozen=True)
class Score(Rates):
    found: int
    true: int
    gold: int

    def counts(self) -> tuple[int, int, int]:
        return self.true, self.found, self.gold

    def line(self) -> str:
        return (
            f"found={self.found} true={self.true} precision={self.precision:.3f} "
            f"recall={self.recall:.3f} f1={self.f1:.3f}"
        )


def _ratio(part: int, whole: int) -> str:
    """``part / whole`` to 3 decimals, or n/a when ``whole`` is 0."""
    return f"{part / whole:.3f}" if whole else "n/a"


@dataclass(frozen=True)
class LabeledScore(Rates):
    """Reported pairs against labels: ``found`` pairs reported, of which
    ``true`` are labeled same and ``false`` labeled different; ``same`` and
    ``different`` pairs labeled in all."""

    found: int
    true: int
    false: int
    same: int
    different: int

    @property
    def judged(self) -> int:
        """Reported pairs that are labeled."""
        return self.true + self.false

    def counts(self) -> tuple[int, int, int]:
        """Precision counts the labeled pairs reported, recall the pairs labeled same."""
        return self.true, self.judged, self.same

    def lines(self) -> list[str]:
        """What the score says in words, then its numbers on one line (n/a
        where nothing is labeled to measure by)."""
        judged = self.judged
        f1 = f"{self.f1:.3f}" if judged and self.same else "n/a"
        return [
            f"labels: {self.same} pairs same, {self.different} different; {self.found} pairs reported, "
            f"{judged} of them labeled ({self.true} same, {self.false} different)",
            f"labeled: found={self.found} judged={judged} true={self.true} false={self.false} same={self.same} "
            f"precision={_ratio(self.true, judged)} recall={_ratio(self.true, self.same)} f1={f1}",
        ]


def read_gold(path: Path | str) -> set[frozenset[str]]:
    """Gold pairs: two ids per line, separated by a tab or spaces; or, for
    records with sources, four: ``source_a id_a source_b id_b`` (read as
    the keys :func:`~neardup_solr.records.record.keyed` makes)."""
    gold = set()
    lines = read_text(path, "gold pairs").splitlines()
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) == 4:
            fields = [keyed(fields[0], fields[1]), keyed(fields[2], fields[3])]
        elif len(fields) != 2:
            raise InputError(f"{path}:{number}: expected two ids (or source, id, source, id), found {len(fields)} "
                             "fields")
        gold.add(frozenset(fields))
    return gold


def score(pairs: Iterable[Pair], gold: set[frozenset[str]]) -> Score:
    found = {p.key for p in pairs}
    return Score(found=len(found), true=len(found & gold), gold=len(gold))


# The columns a membership file (each record's cluster or entity) names its cluster by.
CLUSTER_NAMES = ("cluster_id", "cluster", "entity_id", "entity")


def read_membership(path: Path | str) -> dict[str, str] | None:
    """Each record's cluster, from a file of one record a row whose header
    names ``id`` and a cluster (one of :data:`CLUSTER_NAMES`; with ``source``
    too for records of sources): a membership file (``report --entities``,
    ``clusters --membership``) or gold clusters, as CSV, TSV, JSON Lines
    or Parquet. ``None`` for a file of another shape (pairs)."""
    rows = _table_rows(path)
    if rows is None:
        return None
    columns, values = rows
    named = next((c for c in CLUSTER_NAMES if c in columns), None)
    if "id" not in columns or named is None:
        return None
    at, cluster = columns.index("id"), columns.index(named)
    source = columns.index("source") if "source" in columns else None
    return {(keyed(row[source], row[at]) if source is not None else row[at]): row[cluster]
            for row in values if len(row) > max(at, cluster)}


def _table_rows(path: Path | str) -> tuple[list[str], list[list[str]]] | None:
    """A small table's header and rows as text, by its format (Parquet by
    its first bytes; else JSON Lines, CSV or TSV by its first line)."""
    with open(path, "rb") as start:
        parquet = start.read(4) == b"PAR1"
    if parquet:
        table = require("pyarrow.parquet", "reading Parquet").read_table(path)
        return table.column_names, [["" if v is None else str(v) for v in row]
                                    for row in zip(*(table.column(c).to_pylist() for c in table.column_names))]
    lines = read_text(path, "clusters").splitlines()
    if not lines:
        return None
    if lines[0].lstrip().startswith("{"):
        objects = [json.loads(line) for line in lines if line.strip()]
        columns = list(objects[0]) if objects else []
        return columns, [[str(o.get(c, "")) for c in columns] for o in objects]
    separator = "\t" if "\t" in lines[0] else ","
    rows = list(csv.reader(lines, delimiter=separator))
    return rows[0], rows[1:]


def groups_of(membership: Mapping[str, str]) -> list[list[str]]:
    """The clusters of a membership: the records of each cluster."""
    found: dict[str, list[str]] = {}
    for record, cluster in membership.items():
        found.setdefault(cluster, []).append(record)
    return list(found.values())


def score_clusters(found: Mapping[str, str] | Iterable[Pair], gold: Mapping[str, str] | set[frozenset[str]]) -> Score:
    """Pairwise scores where either side is clusters (a membership: every
    two records of one cluster are a pair) and the other pairs or clusters,
    counted without listing the clusters' pairs."""
    if not isinstance(found, Mapping):
        pairs = {p.key for p in found}
        true = sum(1 for pair in pairs if _together(gold, pair))
        return Score(found=len(pairs), true=true, gold=_pairs_in(gold))
    if isinstance(gold, Mapping):
        both = Counter((cluster, gold[record]) for record, cluster in found.items() if record in gold)
        true = sum(n * (n - 1) // 2 for n in both.values())
    else:
        true = sum(1 for pair in gold if _together(found, pair))
    return Score(found=_pairs_in(found), true=true, gold=_pairs_in(gold))


def _together(side: Mapping[str, str] | set[frozenset[str]], pair: frozenset[str]) -> bool:
    if not isinstance(side, Mapping):
        return pair in side
    a, b = tuple(pair)
    return a in side and b in side and side[a] == side[b]


def _pairs_in(side: Mapping[str, str] | set[frozenset[str]]) -> int:
    if not isinstance(side, Mapping):
        return len(side)
    return sum(n * (n - 1) // 2 for n in Counter(side.values()).values())


def score_labels(pairs: Iterable[Pair], labels: Mapping[frozenset[str], bool]) -> LabeledScore:
    """``pairs`` scored against ``labels`` (pair -> labeled same), only labeled pairs counting."""
    found = {p.key for p in pairs}
    verdicts = [labels[key] for key in found if key in labels]
    same = sum(labels.values())
    return LabeledScore(found=len(found), true=sum(verdicts), false=len(verdicts) - sum(verdicts), same=same,
                        different=len(labels) - same)


def missed(pairs: Iterable[Pair], gold: set[frozenset[str]]) -> list[tuple[str, str]]:
    """True pairs not reported, in id order."""
    found = {p.key for p in pairs}
    return sorted((tuple(sorted(g, key=id_key)) for g in gold - found), key=lambda p: (id_key(p[0]), id_key(p[1])))


def values_by_truth(pairs: list[Pair], gold: set[frozenset[str]]) -> tuple[list[float], list[float], str]:
    """Each reported pair's similarity (or, without one, its distance),
    split into true and false pairs, with the value's name: a distance is
    of words, but of fields for pairs of field records (the pairs with a
    match probability and no similarity)."""
    if pairs and all(p.similarity is not None for p in pairs):
        value, label = (lambda p: p.similarity), "similarity"
    else:
        value, label = (lambda p: float(p.distance)), distance_name(pairs)
    true = [value(p) for p in pairs if p.key in gold]
    false = [value(p) for p in pairs if p.key not in gold]
    return true, false, label


@dataclass(frozen=True)
class ClusterScore:
    """Found clusters against true ones over ``records`` records: B-cubed
    precision and recall, and the adjusted Rand index (see the module docstring)."""

    records: int
    bcubed_precision: float
    bcubed_recall: float
    adjusted_rand: float

    @property
    def bcubed_f1(self) -> float:
        p, r = self.bcubed_precision, self.bcubed_recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def line(self) -> str:
        return (f"clusters: records={self.records} bcubed_precision={self.bcubed_precision:.3f} "
                f"bcubed_recall={self.bcubed_recall:.3f} bcubed_f1={self.bcubed_f1:.3f} "
                f"adjusted_rand={self.adjusted_rand:.3f}")


def _partition(groups: Iterable[Collection[str]], records: set[str]) -> dict[str, str]:
    """Each record's cluster (named by a member): the connected components
    of ``groups`` (pairs or clusters), each record in none alone."""
    home = {member: component[0] for component in connected(groups) for member in component}
    return {record: home.get(record, record) for record in records}


def _pairs_within(sizes: Iterable[int]) -> int:
    return sum(n * (n - 1) // 2 for n in sizes)


def cluster_scores(found: Iterable[Collection[str]], gold: Iterable[Collection[str]],
                   records: Iterable[str] | None = None) -> ClusterScore:
    """Clusters of ``found`` against those of ``gold``: each is pairs (``Pair``s,
    ``(a, b)``, ``frozenset``s) or clusters (any collections of ids; a
    :class:`~neardup_solr.results.clusters.Cluster`'s members), taken through their
    connected components, so pairs and clusters score alike.

    Args:
        found: the pairs or clusters found.
        gold: the true pairs or clusters.
        records: every record's id (a record in no group of a side is a
            cluster of its own there); default the ids either side names.

    Returns:
        B-cubed precision and recall and the adjusted Rand index (1.0 when
        both sides put every record alone, or all in one: no pair to tell
        them apart). Costs time and memory linear in the records and groups.
    """
    found = [_members(group) for group in found]
    gold = [_members(group) for group in gold]
    universe = set(records or ()) | {m for group in found for m in group} | {m for group in gold for m in group}
    if not universe:
        return ClusterScore(0, 1.0, 1.0, 1.0)
    mine, true = _partition(found, universe), _partition(gold, universe)
    together = Counter((mine[r], true[r]) for r in universe)  # the contingency table
    mine_sizes, true_sizes = Counter(mine.values()), Counter(true.values())
    precision = sum(n * n / mine_sizes[a] for (a, _), n in together.items()) / len(universe)
    recall = sum(n * n / true_sizes[b] for (_, b), n in together.items()) / len(universe)
    both = _pairs_within(together.values())
    in_mine, in_true = _pairs_within(mine_sizes.values()), _pairs_within(true_sizes.values())
    expected = in_mine * in_true / (len(universe) * (len(universe) - 1) / 2) if len(universe) > 1 else 0.0
    spread = (in_mine + in_true) / 2 - expected
    rand = 1.0 if spread == 0 else (both - expected) / spread
    return ClusterScore(len(universe), precision, recall, rand)


def _members(group) -> tuple[str, ...]:
    """A group's ids: a Cluster's members, a Pair's two ends, or the ids of a collection."""
    if hasattr(group, "members"):
        return tuple(group.members)
    if isinstance(group, Pair):
        return (group.a, group.b)
    return tuple(group)
