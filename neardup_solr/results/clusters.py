"""Clusters: the near-duplicate pairs grouped into the things they are.

Pairs say "a looks like b"; a reader usually wants "these records are one
thing". Where the pairs carry match probabilities (the default mode), each
connected component of the pair graph is split so that a cluster's members
are matches of each other, not a chain through one weak link
(:mod:`neardup_solr.results.clustering`: average linkage on the pairs' log-odds);
pairs without probabilities (the reference modes) give their connected
components (a chain a-b, b-c puts a and c together).

Output is deterministic, so two runs over the same pairs write the same
bytes: clusters are sorted by size, largest first, then by their smallest
member; members are in id order (numeric ids numerically, see
:func:`neardup_solr.records.record.id_key`). A cluster's id is its smallest
member's key, so it stays put across runs, and across appends that do not
bring a smaller member into it: a cluster that grows keeps its id, and
two that merge take the smaller of their two ids.

For review, clusters can also come least certain first: by the lowest
match probability among each cluster's pairs (:func:`least_certain_first`).

Only ids that occur in a pair are clustered, unless every record's id is
given (``ids``): then each record without a near duplicate is a cluster of
its own, and the membership (:func:`neardup_solr.results.outputs.membership_table`:
``id, cluster_id``, one row a record) lists every record. A pair of an id
with itself says nothing and is ignored.

Files (written atomically, see :func:`neardup_solr.files.atomic_output`):

- TSV: a header line ``cluster_id<TAB>size<TAB>members``, then one line per
  cluster, ``1<TAB>3<TAB>4,17,230``. The header is there because, unlike a
  pair file, the columns are not obvious from the data; :func:`read_clusters`
  skips it. Members are joined with commas, which the id rule never allows
  in an id; ids with a comma, tab or line break are refused.
- CSV and JSON Lines: the same table (:mod:`neardup_solr.results.outputs`); with
  the records' texts, one member a row, ``cluster_id, size, id, text``.
- JSON: ``[{"cluster": "4", "size": 3, "members": ["4", "17", "230"]}, ...]``.
- Membership (:func:`write_membership`): ``id, cluster_id`` a row, every
  record once, in TSV (with a header), CSV, JSON Lines or Parquet.
"""

from __future__ import annotations

import json as jsonlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from .clustering import connected, split_pairs
from ..errors import InputError
from ..files import atomic_output, read_text
from .outputs import (CLUSTER_COLUMNS, Table, TableForms, TextLookup, cluster_table, counted, membership_table,
                      save_table)
from .pairs import Pair, read_pairs
from ..records.record import id_key

TSV_HEADER = "\t".join(CLUSTER_COLUMNS)


class Cluster(NamedTuple):
    """A cluster: its id (its smallest member's key) and its members in id order."""

    id: str
    members: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.members)


class Clusters(list, TableForms):
    """A list of clusters, largest first, that converts to a table
    (``cluster_id, size, members``: :class:`~neardup_solr.results.outputs.TableForms`);
    :meth:`membership` gives each record's cluster instead."""

    def table(self) -> Table:
        return cluster_table(self)

    def membership(self) -> Membership:
        """Every member's cluster, one row a record: ``id, cluster_id``."""
        return Membership(self)

    def __repr__(self) -> str:
        records = sum(c.size for c in self)
        largest = f", the largest of {max(c.size for c in self)}" if self else ""
        return f"Clusters({counted(len(self), 'cluster')} of {counted(records, 'record')}{largest})"


class Membership(TableForms):
    """Which cluster each record is in: ``id, cluster_id`` (with ``source``
    first for records of sources), one row a record, in id order."""

    def __init__(self, clusters: Iterable[Cluster]):
        self.clusters = list(clusters)

    def table(self) -> Table:
        return membership_table(self.clusters)

    def __iter__(self):
        return ((member, c.id) for c in self.clusters for member in c.members)

    def __repr__(self) -> str:
        records = sum(c.size for c in self.clusters)
        return f"Membership({counted(records, 'record')} in {counted(len(self.clusters), 'cluster')})"


class Entities(Membership):
    """Each record's entity: the cluster it is in, every record once
    (``id, cluster_id``, as :class:`Membership`), and the ``summary`` of the
    report that found them (its estimates of the entities taken as pairs)."""

    def __init__(self, clusters: Iterable[Cluster], summary):
        super().__init__(clusters)
        self.summary = summary

    def __repr__(self) -> str:
        records = sum(c.size for c in self.clusters)
        many = sum(1 for c in self.clusters if c.size > 1)
        told = ""
        estimated = getattr(self.summary, "entities", None)
        if estimated is not None:
            told = f", estimated precision {estimated.precision:.2f} recall {estimated.recall:.2f}"
        return (f"Entities({counted(records, 'record')} in {counted(len(self.clusters), 'entity', 'entities')}, "
                f"{many} of two records or more{told})")


def _ends(pair: Sequence[str]) -> tuple[str, str]:
    # Works for Pair (a, b, distance, similarity) and for plain (a, b) tuples.
    return pair[0], pair[1]


def cluster_pairs(pairs: Iterable[Sequence[str]], ids: Iterable[str] | None = None) -> Clusters:
    """Clusters of ``pairs`` (``Pair`` objects or ``(a, b)`` tuples), in the
    deterministic order described in the module docstring: when every pair
    carries a match probability, its components split so that members are
    matches of each other (:func:`neardup_solr.results.clustering.split_pairs`);
    else the connected components. With ``ids`` (every record's), each of
    them in no cluster is a cluster of its own."""
    pairs = [p for p in pairs if _ends(p)[0] != _ends(p)[1]]
    if pairs and all(getattr(p, "probability", None) is not None for p in pairs):
        members = sorted({i for p in pairs for i in _ends(p)}, key=id_key)
        groups = split_pairs(members, [(p.a, p.b, p.probability) for p in pairs])
    else:
        groups = connected(_ends(pair) for pair in pairs)
    return clusters_of_groups(groups, ids)


def clusters_of_groups(groups: Iterable[Iterable[str]], ids: Iterable[str] | None = None) -> Clusters:
    """Groups of ids as clusters, in the deterministic order described in
    the module docstring; with ``ids``, each of them in no group a cluster
    of its own."""
    groups = [sorted(group, key=id_key) for group in groups]
    grouped = {member for group in groups for member in group}
    groups += [[record] for record in ids or () if record not in grouped]
    groups.sort(key=lambda members: (-len(members), id_key(members[0])))
    return Clusters(Cluster(members[0], tuple(members)) for members in groups)


def pairs_by_cluster(clusters: Iterable[Cluster], pairs: Iterable[Sequence[str]]) -> dict[str, list]:
    """The pairs inside each of ``clusters``, by cluster id, in the order given."""
    clusters = list(clusters)
    home = {member: c.id for c in clusters for member in c.members}
    by_cluster: dict[str, list] = {c.id: [] for c in clusters}
    for pair in pairs:
        a, b = _ends(pair)
        if a in home and home[a] == home.get(b):
            by_cluster[home[a]].append(pair)
    return by_cluster


def certainty_of(pairs: Iterable[Pair]) -> str | None:
    """How sure the pairs of a file are of themselves: "probability" when
    each carries a match probability (the report fitted its model), else
    "similarity" when each carries one, else ``None``."""
    pairs = list(pairs)
    for measure in ("probability", "similarity"):
        if all(getattr(p, measure) is not None for p in pairs):
            return measure
    return None


def least_certain_first(clusters: Iterable[Cluster], by_cluster: Mapping[str, Sequence[Pair]],
                        measure: str) -> list[Cluster]:
    """``clusters`` by the lowest ``measure`` (see :func:`certainty_of`)
    among each one's pairs, lowest first: the cluster whose weakest link is
    the least sure comes first. Ties keep the order given."""
    def weakest(cluster: Cluster) -> float:
        # Probability and similarity are at most 1: a cluster given no pairs goes last.
        return min((getattr(p, measure) for p in by_cluster[cluster.id]), default=1.0)

    return sorted(clusters, key=weakest)


def cluster_pair_file(path: Path | str, ids: Iterable[str] | None = None) -> Clusters:
    """Clusters of the pairs in a pair file (see :func:`neardup_solr.results.pairs.read_pairs`),
    each of ``ids`` in no pair one of its own."""
    return cluster_pairs(read_pairs(path), ids)


def write_membership(path: Path | str, clusters: Iterable[Cluster], format: str | None = None) -> int:
    """Write every member's cluster, ``id, cluster_id`` a row, in ``format``
    (by default as the name implies, TSV for other names); returns the rows."""
    return save_table(path, membership_table(clusters), format)


def write_clusters(path: Path | str, clusters: Iterable[Cluster], json: bool = False, format: str | None = None,
                   texts: TextLookup | None = None) -> int:
    """Write ``clusters`` as a table in ``format`` (by default as the name
    implies, TSV for other names; with ``texts``, one member a row with its
    text) or, with ``json=True``, as one JSON array; returns how many.

    The file appears only when complete, so a crash never leaves half of it.
    """
    clusters = list(clusters)
    if not json:
        save_table(path, cluster_table(clusters, texts), format)
        return len(clusters)
    with atomic_output(path) as out:
        rows = [{"cluster": c.id, "size": c.size, "members": list(c.members)} for c in clusters]
        out.write(jsonlib.dumps(rows, ensure_ascii=False, indent=1) + "\n")
    return len(clusters)


def read_clusters(path: Path | str) -> list[Cluster]:
    """Read a file written by :func:`write_clusters` (TSV or JSON, told apart
    by its first character), checking that each size matches its members."""
    content = read_text(path, "clusters")
    if content.lstrip().startswith("["):
        try:
            rows = [(row["cluster"], row["size"], row["members"]) for row in jsonlib.loads(content)]
        except (ValueError, TypeError, KeyError) as err:
            raise InputError(f"{path}: not a cluster JSON file: {err}") from None
        clusters = []
        for number, size, members in rows:
            if not isinstance(members, list) or size != len(members):
                raise InputError(f"{path}: cluster {number}: size {size} does not match its members")
            clusters.append(Cluster(str(number), tuple(str(m) for m in members)))
        return clusters
    clusters = []
    for line_number, line in enumerate(content.splitlines(), start=1):
        if not line.strip() or (line_number == 1 and line == TSV_HEADER):
            continue
        fields = line.split("\t")
        if len(fields) != 3 or not fields[0] or not fields[1].isdigit():
            raise InputError(f"{path}:{line_number}: expected cluster_id<TAB>size<TAB>member,member,...")
        members = tuple(fields[2].split(",")) if fields[2] else ()
        if int(fields[1]) != len(members):
            raise InputError(f"{path}:{line_number}: size {fields[1]} but {len(members)} members")
        clusters.append(Cluster(fields[0], members))
    return clusters
