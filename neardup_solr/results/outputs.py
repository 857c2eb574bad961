"""Results for people and their next tool: pairs, clusters and query
matches as TSV, CSV or JSON Lines, optionally with the records' texts.

Every result is a table, written in one of :data:`OUTPUT_FORMATS`:

- ``tsv``: tab-separated cells; numbers of similarity or probability with 4
  decimals; a cell that is missing at the end of a row is left out, one in
  the middle is empty. Tabs and line breaks inside a text become spaces.
  Pair files have no header unless they hold texts or sources (so a plain
  pair file stays ``id<TAB>neighbour<TAB>distance[<TAB>similarity[<TAB>probability]]``);
  cluster files have one.
- ``csv``: a header row, then one row each, as Python's ``csv`` module
  writes them (fields quoted where they hold commas, quotes or line breaks).
- ``jsonl``: one JSON object a line, keyed by the column names, a missing
  value left out.
- ``parquet`` (files only, with pyarrow, an extra): the CSV columns, typed
  (ids and texts as strings, distance as int64, similarity and probability
  as float64 rounded to 4 decimals, a list as a list of strings), written
  by :mod:`neardup_solr.results.arrow`.

Columns that no row has a value for (a similarity in the reference modes, a
probability without a fitted model) are left out of the table. Files are
written under a temporary name and renamed when complete (a name ending in
``.gz`` is gzip-compressed), so a crash never leaves a file that looks
finished.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from ..errors import InputError
from ..files import atomic_output
from ..records.record import id_key, split_key
from ..records.sources import format_from_name

OUTPUT_FORMATS = ("tsv", "csv", "jsonl")
# What a file may be written as: the text formats, and Parquet.
FILE_FORMATS = (*OUTPUT_FORMATS, "parquet")
_BY_SUFFIX = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
# Similarity and probability are shown to 4 decimals: finer steps say
# nothing a person or a cut could use, and the files stay stable.
DECIMALS = 4
CLUSTER_COLUMNS = ("cluster_id", "size", "members")
# One row a record: which cluster it is in (a record without a near duplicate is one of its own).
MEMBERSHIP_COLUMNS = ("id", "cluster_id")
# Rows a notebook shows of a result (``_repr_html_``); the rest is counted.
HTML_ROWS = 10
# Texts of a table's ids: called once with every id the table needs.
TextLookup = Callable[[Sequence[str]], Mapping[str, str]]


def output_format(path: Path | str, given: str | None = None) -> str:
    """``given``, or the format ``path``'s name implies (TSV when it implies none)."""
    return given or format_from_name(path, _BY_SUFFIX, default="tsv")


@dataclass(frozen=True)
class Table:
    """``rows`` of values (``None`` where a row has none) under ``columns``.
    ``optional`` columns are left out when no row has a value for them;
    ``tsv_header`` says whether TSV starts with the column names."""

    columns: tuple[str, ...]
    rows: list[list[Any]]
    tsv_header: bool = False
    optional: frozenset[str] = frozenset()

    def shown(self) -> Table:
        """The table without the optional columns nobody has a value for."""
        keep = [i for i, name in enumerate(self.columns)
                if name not in self.optional or any(row[i] is not None for row in self.rows)]
        if len(keep) == len(self.columns):
            return self
        return Table(tuple(self.columns[i] for i in keep), [[row[i] for i in keep] for row in self.rows],
                     self.tsv_header)

    def column_values(self) -> tuple[tuple[str, ...], list[list[Any]]]:
        """The shown columns' names and each one's values, numbers rounded
        as the outputs hold them (for Arrow and Parquet)."""
        shown = self.shown()
        return shown.columns, [[rounded(row[at]) for row in shown.rows] for at in range(len(shown.columns))]


def rounded(value: Any) -> Any:
    """A similarity or probability to :data:`DECIMALS` places, as the
    outputs hold it; any other value as it is."""
    return round(value, DECIMALS) if isinstance(value, float) else value


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{DECIMALS}f}"
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


def _tsv_cell(value: Any) -> str:
    cell = _cell(value)
    if "\n" in cell or "\r" in cell:  # rare: the pattern only where it has work
        cell = _LINE_BREAK.sub(" ", cell)
    return cell.replace("\t", " ")


_LINE_BREAK = re.compile(r"\r\n|[\r\n]")
_UNSAFE_IN_LISTS = (",", "\t", "\n", "\r")


def _check_lists(table: Table) -> None:
    """A list is one cell of items joined by commas: an item may not hold one."""
    for row in table.rows:
        for value in row:
            if isinstance(value, list):
                for item in value:
                    if any(c in item for c in _UNSAFE_IN_LISTS):
                        raise InputError(f"id {item!r} cannot be listed in one TSV or CSV cell (it holds a comma, "
                                         "tab or line break)", hint="write JSON Lines instead")


def write_table(out: IO[str], table: Table, format: str) -> int:
    """Write ``table`` to ``out`` as ``format``; returns the rows written.

    A list value is one cell of comma-joined items in TSV and CSV, a JSON
    array in JSON Lines.
    """
    table = table.shown()
    if format in ("tsv", "csv"):
        _check_lists(table)
    if format == "tsv":
        if table.tsv_header:
            out.write("\t".join(table.columns) + "\n")
        for row in table.rows:
            while not table.tsv_header and row and row[-1] is None:
                row = row[:-1]
            out.write("\t".join(_tsv_cell(v) for v in row) + "\n")
    elif format == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(table.columns)
        writer.writerows([_cell(v) for v in row] for row in table.rows)
    elif format == "jsonl":
        for row in table.rows:
            out.write(json.dumps({k: rounded(v) for k, v in zip(table.columns, row) if v is not None},
                                 ensure_ascii=False) + "\n")
    else:
        raise ValueError(f"format must be one of {OUTPUT_FORMATS}")
    return len(table.rows)


def check_format(path: Path | str, format: str | None = None) -> None:
    """Fail now if a table could not be written to ``path`` as ``format``
    (or as its name implies) for want of a package: Parquet needs pyarrow.

    Raises:
        MissingExtra: the format's package is not installed.
    """
    if output_format(path, format) == "parquet":
        from .arrow import check_writable  # pyarrow, an extra: imported only when used

        check_writable()


def save_table(path: Path | str, table: Table, format: str | None = None) -> int:
    """Write ``table`` to the file ``path`` atomically, as ``format`` or as
    its name implies; returns the rows written."""
    format = output_format(path, format)
    if format == "parquet":
        from .arrow import write_parquet  # pyarrow, an extra: imported only when used

        return write_parquet(path, *table.column_values())
    with atomic_output(path) as out:
        return write_table(out, table, format)


def pair_table(pairs: Iterable, texts: TextLookup | None = None) -> Table:
    """Pairs (``a``, ``b``, ``distance``, ``similarity``, ``probability``) in
    id order, with both records' texts when ``texts`` looks them up.

    When a record of any pair has a source (``record.keyed``), or the pairs
    say their records have (``sourced``, as a report's do, pairs or none),
    each id is two columns, its source and its id in the source
    (``source_a, id_a, source_b, id_b``), and TSV has a header too: without
    it the two ids could not be told from four."""
    said = getattr(pairs, "sourced", False)
    rows = sorted(pairs, key=lambda p: (id_key(p.a), id_key(p.b)))
    sourced = said or any(split_key(p.a)[0] or split_key(p.b)[0] for p in rows)
    columns: tuple[str, ...] = ("distance", "similarity", "probability")
    # Each row made once, in one pass: a million pairs' rows are a large part of a report's memory.
    if sourced:
        columns = ("source_a", "id_a", "source_b", "id_b") + columns
        values = [[*split_key(p.a), *split_key(p.b), p.distance, p.similarity, p.probability] for p in rows]
    else:
        columns = ("id_a", "id_b") + columns
        values = [[split_key(p.a)[1], split_key(p.b)[1], p.distance, p.similarity, p.probability] for p in rows]
    if texts is not None:
        found = texts(sorted({i for p in rows for i in (p.a, p.b)}, key=id_key))
        columns += ("text_a", "text_b")
        for p, row in zip(rows, values):
            row += [found.get(p.a), found.get(p.b)]
    explained = any(getattr(p, "explanation", None) for p in rows)
    if explained:
        columns += ("explanation",)
        for p, row in zip(rows, values):
            row.append(getattr(p, "explanation", None))
    return Table(columns, values, tsv_header=texts is not None or sourced or explained,
                 optional=frozenset({"similarity", "probability"}))


def cluster_table(clusters: Iterable, texts: TextLookup | None = None) -> Table:
    """Clusters (``id``, ``members``) one a row; with ``texts``, one member a
    row with its text (and its source beside its id when members have sources)."""
    clusters = list(clusters)
    if texts is None:
        return Table(CLUSTER_COLUMNS, [[c.id, len(c.members), list(c.members)] for c in clusters],
                     tsv_header=True)
    found = texts(sorted({m for c in clusters for m in c.members}, key=id_key))
    if any(split_key(m)[0] for c in clusters for m in c.members):
        # Records of sources: each member's source and id in two columns, as in pair files.
        return Table(("cluster_id", "size", "source", "id", "text"),
                     [[c.id, len(c.members), *split_key(m), found.get(m)] for c in clusters for m in c.members],
                     tsv_header=True)
    return Table(("cluster_id", "size", "id", "text"),
                 [[c.id, len(c.members), split_key(m)[1], found.get(m)] for c in clusters for m in c.members],
                 tsv_header=True)


def membership_table(clusters: Iterable) -> Table:
    """Every member of ``clusters`` one a row, ``id, cluster_id``, in id
    order (with ``source`` before ``id`` when members have sources; the
    cluster's id stays a key, ``source/id``)."""
    rows = sorted(((m, c.id) for c in clusters for m in c.members), key=lambda row: id_key(row[0]))
    if any(split_key(m)[0] for m, _ in rows):
        return Table(("source", *MEMBERSHIP_COLUMNS), [[*split_key(m), c] for m, c in rows], tsv_header=True)
    return Table(MEMBERSHIP_COLUMNS, [[m, c] for m, c in rows], tsv_header=True)


def match_table(matches: Iterable) -> Table:
    """Query matches (dataclasses with ``similarity``, ``distance``, ``id``,
    ``text`` and maybe ``probability``), in the order given."""
    rows = [asdict(m) for m in matches]
    columns = ("similarity", "distance", "id", "text", "probability")
    return Table(columns, [[row.get(c) for c in columns] for row in rows], optional=frozenset({"probability"}))


def counted(count: int, one: str, many: str | None = None) -> str:
    """``count`` and the word for that many: ``1 pair``, ``114 pairs``."""
    return f"{count:,} {one if count == 1 else many or one + 's'}"


def html_table(table: Table, limit: int = HTML_ROWS) -> str:
    """``table``'s first ``limit`` rows as a small HTML table (what a
    notebook shows of a result), a line saying how many rows there are in all."""
    from html import escape

    table = table.shown()
    head = "".join(f"<th>{escape(name)}</th>" for name in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{escape(_cell(v))}</td>" for v in row) + "</tr>"
                   for row in table.rows[:limit])
    more = f"<p>{len(table.rows):,} rows; the first {limit} shown.</p>" if len(table.rows) > limit else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


class TableForms:
    """A result that is a table: :meth:`to_arrow`, :meth:`to_pandas` and
    :meth:`to_polars` give the columns of its CSV output, and a notebook
    shows its first rows (``_repr_html_``). A subclass says what the table
    is (:meth:`table`). pyarrow, pandas and polars are extras
    (``[parquet]``, ``[pandas]``, ``[polars]``), imported only when used."""

    def table(self) -> Table:
        raise NotImplementedError

    def to_arrow(self):
        """As a pyarrow Table (pyarrow is an extra: ``[parquet]``)."""
        from .arrow import arrow_table  # pyarrow, an extra: imported only when used

        return arrow_table(*self.table().column_values())

    def to_pandas(self):
        """As a pandas DataFrame (pandas is an extra: ``[pandas]``)."""
        from ..extras import require

        require("pandas", "to_pandas()")
        return self.to_arrow().to_pandas()

    def to_polars(self):
        """As a polars DataFrame (polars is an extra: ``[polars]``)."""
        from ..extras import require

        polars = require("polars", "to_polars()")
        return polars.from_arrow(self.to_arrow())

    def _repr_html_(self) -> str:
        return html_table(self.table())


class Matches(list, TableForms):
    """Query matches, best first: a list that converts to a table
    (``similarity, distance, id, text, probability``: :class:`TableForms`)."""

    def table(self) -> Table:
        return match_table(self)

    def __repr__(self) -> str:
        """One line: how many, and the best by its similarity (or, for a
        record of fields, which has none, its match probability)."""
        best = ""
        if self:
            first = self[0]
            measure = next(((name, value) for name, value in (("similarity", first.similarity),
                                                               ("probability", first.probability))
                            if value is not None), None)
            best = f", the best {first.id}" + ("" if measure is None else f" at {measure[0]} {measure[1]:.2f}")
        return f"Matches({counted(len(self), 'match', 'matches')}{best})"
