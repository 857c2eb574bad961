"""The tables people hold: Parquet files, pyarrow Tables, pandas and polars
DataFrames, as records in (pairs out as tables: :mod:`neardup_solr.results.arrow`).

pyarrow, pandas and polars are extras (``pip install
'neardup-solr[parquet]'``, ``[pandas]``, ``[polars]``): this module is
imported only when one of them is used, and each package only when a
table needs it; a missing one is :class:`~neardup_solr.errors.MissingExtra`
naming the extra that installs it.

- **Records from a table.** The id column and the text columns are found
  as in a CSV file (:func:`neardup_solr.records.rows.table_layout`: the text
  columns joined in the order named, by default every other column that
  has a text form), and each row is checked and joined by the CSV reader's
  own rules (:func:`neardup_solr.records.rows.table_entry`). A value's text is
  pyarrow's cast to a string, as pyarrow's CSV writer writes it: whole
  numbers as digits (``42``, also from a pandas float column that holds
  whole numbers and a missing value), other floats shortest-exact
  (``2.5``, ``1e+20``), booleans ``true``/``false``, dates ``2024-01-31``,
  timestamps ``2024-01-31 12:00:05.000000``; a null is an empty cell;
  a list's items are joined with ``; `` (as a JSON array's are). Structs
  and binary columns have no text form. Tables are
  converted a batch of :data:`BATCH_ROWS` rows at a time: pandas and
  polars through pyarrow (a pandas frame a slice at a time), so every
  kind of table gives the same texts.
- **Parquet in.** :class:`ParquetRows` reads the columns needed a batch
  at a time (``ParquetFile.iter_batches``), so memory holds a batch and the
  row group being decoded, whatever the file's length. Rows are numbered
  from 1, the first row of data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import ModuleType
from typing import Any

from ..errors import InputError
from ..extras import require
from .record import MAX_LINE_BYTES, Record, field_problem, record_problem
from .rows import LIST_SEPARATOR, Entry, table_entry, table_layout
from .sources import Layout, RecordFile, cannot_read

# Rows converted at a time: about 1 MB of text for records of 100
# characters, and the per-batch cost of pyarrow's calls is nothing beside
# the rows' own.
BATCH_ROWS = 8192


def library_of(table: Any) -> str | None:
    """Which library's table ``table`` is ("pandas", "polars", "pyarrow"),
    told by its type's module, so nothing is imported to ask; ``None`` for
    anything else (an iterable of records)."""
    kind = type(table)
    root = kind.__module__.split(".")[0]
    if root == "pandas" and kind.__name__ == "DataFrame":
        return "pandas"
    if root == "polars" and kind.__name__ == "DataFrame":
        return "polars"
    if root == "pyarrow" and kind.__name__ in ("Table", "RecordBatch"):
        return "pyarrow"
    return None


def _textual(kind: Any) -> bool:
    """Whether an Arrow type's values have a text form (see the module docstring)."""
    pa = require("pyarrow", "reading tables")
    types = pa.types
    if types.is_dictionary(kind):
        return _textual(kind.value_type)
    if types.is_list(kind) or types.is_large_list(kind) or getattr(types, "is_list_view", bool)(kind):
        return _textual(kind.value_type)
    return (types.is_string(kind) or types.is_large_string(kind) or types.is_integer(kind)
            or types.is_floating(kind) or types.is_decimal(kind) or types.is_boolean(kind) or types.is_date(kind)
            or types.is_timestamp(kind) or types.is_time(kind) or types.is_null(kind)
            or getattr(types, "is_string_view", bool)(kind))


def _texts(column: Any) -> list[str | None]:
    """A column's values as text (``None`` for a null), by pyarrow's cast.

    A string column may hold bytes that are not UTF-8 (Arrow does not
    check what a writer gives it): its values are then decoded one by one,
    the bad ones with ``surrogateescape``, which
    :func:`~neardup_solr.records.record.field_problem` names as not UTF-8, so the row
    is skipped and its neighbours kept."""
    pa = require("pyarrow", "reading tables")
    types = pa.types
    if types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if types.is_list(column.type) or types.is_large_list(column.type):
        # A list's items joined into one value, as a JSON array's are.
        items = _texts(column.flatten()) if len(column) else []
        offsets = column.offsets.to_pylist()
        valid = column.is_valid().to_pylist()
        return [LIST_SEPARATOR.join(v for v in items[offsets[i] - offsets[0]:offsets[i + 1] - offsets[0]] if v is not None)
                if valid[i] else None for i in range(len(column))]
    if not (types.is_string(column.type) or types.is_large_string(column.type)
            or getattr(types, "is_string_view", bool)(column.type)):
        column = column.cast(pa.string())
    try:
        return column.to_pylist()
    except UnicodeDecodeError:
        raw = pa.large_binary() if types.is_large_string(column.type) else (
            pa.binary_view() if getattr(types, "is_string_view", bool)(column.type) else pa.binary())
        return [None if value is None else value.decode("utf-8", "surrogateescape")
                for value in column.cast(raw).to_pylist()]


def _not_whole(column: Any, texts: list[str | None]) -> dict[int, str]:
    """The positions of a float column's values that are no whole number
    (2.5, NaN, infinity), each with its text: no id, which is a string or a
    whole number."""
    return {at: texts[at] or "" for at, value in enumerate(column.to_pylist())
            if value is not None and not (math.isfinite(value) and float(value).is_integer())}


class _Columns:
    """The id and text columns of a table's ``names`` (with their Arrow
    types ``kinds``) under ``source``'s layout, checked: each must have a
    text form."""

    def __init__(self, names: Sequence[str], kinds: Sequence[Any], source: RecordFile):
        id_at, text_at = table_layout(names, source, usable=lambda i: _textual(kinds[i]))
        # Read by name, a column named twice cannot be told from its twin (a CSV file's is renamed instead).
        if twice := next((names[i] for i in text_at if names.count(names[i]) > 1), None):
            raise InputError(f"{source.name}: column {twice!r} appears {names.count(twice)} times in the header",
                             hint="give each column its own name")
        for at, role in ((id_at, "id"), *((i, "text") for i in text_at)):
            if not _textual(kinds[at]):
                raise InputError(f"{source.name}: column {names[at]!r} holds {kinds[at]}, which has no text form",
                                 hint=f"name {'an id column' if role == 'id' else 'text columns'} of text, numbers, "
                                 "dates or booleans")
        self.names = [names[i] for i in (id_at, *text_at)]
        self.text_at = list(range(1, len(self.names)))
        self.float_id = require("pyarrow", "reading tables").types.is_floating(kinds[id_at])

    def entries(self, batches: Iterable[tuple[Any, dict[int, str]]], limit: int,
                first_row: int = 1) -> Iterator[Entry]:
        """Each row of ``batches`` (Arrow record batches of :attr:`names`,
        in order, each with the reasons some of its rows, by position, are
        no record) as an entry, numbered from ``first_row``."""
        row = first_row - 1
        for batch, problems in batches:
            values = [_texts(batch.column(i)) for i in range(len(self.names))]
            if self.float_id:
                problems = {at: f"id {text} in column {self.names[0]!r} is no whole number"
                            for at, text in _not_whole(batch.column(0), values[0]).items()} | problems
            for at, cells in enumerate(zip(*values)):
                row += 1
                if at in problems:
                    yield Entry(row, row, reason=problems[at])
                    continue
                cells = ["" if v is None else v for v in cells]
                if sum(map(len, cells)) > limit:
                    yield Entry(row, row, reason=f"row longer than {limit} characters")
                else:
                    yield table_entry(row, row, cells, "", self.names, 0, self.text_at)


class ParquetRows:
    """The rows of a Parquet file as entries, a batch at a time.

    Opening reads the file's footer (its schema and row groups) and finds
    the columns, so a file that is no Parquet, or lacks the id column,
    fails before any row. :meth:`entries` reads only the id and text
    columns, :data:`BATCH_ROWS` rows at a time; :attr:`bytes_read` is the
    share of the file's bytes its rows read so far stand for.
    """

    def __init__(self, source: RecordFile, limit: int = MAX_LINE_BYTES):
        pa = require("pyarrow", "reading Parquet", "parquet")
        pq = require("pyarrow.parquet", "reading Parquet")
        self.source = source
        self.limit = limit
        self.rows_read = 0
        try:
            with open(source.path, "rb"):  # a missing or unreadable file, in the words the other formats use
                pass
            # Pages written with checksums are checked against them: a damaged one is found, not read as data.
            self.file = pq.ParquetFile(source.path, page_checksum_verification=True)
        except (OSError, pa.ArrowException) as err:
            if _system_error(err):
                raise cannot_read(source.name, err) from None
            raise InputError(f"{source.name}: not a Parquet file ({_one_line(err)})",
                             hint="give a Parquet file, or name the format the file is in") from None
        schema = self.file.schema_arrow
        self.columns = _Columns(schema.names, schema.types, source)
        self.total = self.file.metadata.num_rows
        self.size = source.size or 0

    @property
    def bytes_read(self) -> int:
        return round(self.size * self.rows_read / self.total) if self.total else 0

    def entries(self) -> Iterator[Entry]:
        """The rows, a row group at a time: data damaged in one (a page
        that does not decode or fails its checksum) makes one entry of the
        rest of that group's rows, and the next group is read; a failing
        disk ends the reading."""
        pa = require("pyarrow", "reading Parquet", "parquet")
        first = 1
        for group in range(self.file.num_row_groups):
            last = first + self.file.metadata.row_group(group).num_rows - 1
            batches = self.file.iter_batches(batch_size=BATCH_ROWS, row_groups=[group], columns=self.columns.names,
                                             use_threads=False)
            row = first
            try:
                for entry in self.columns.entries(((batch, {}) for batch in batches), self.limit, first):
                    self.rows_read, row = entry.row, entry.row + 1
                    yield entry
            except (OSError, pa.ArrowException) as err:  # pyarrow's errors about the data are OSErrors too
                if _system_error(err):
                    raise cannot_read(self.source.name, err) from None
                self.rows_read = last
                yield Entry(row, row, reason=f"the Parquet data is damaged ({_one_line(err)}): rows {row}-{last} "
                             f"(row group {group + 1}) skipped")
            first = last + 1

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> ParquetRows:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _system_error(err: BaseException) -> bool:
    """Whether pyarrow's error is the system's (a disk error, a missing
    file: it has an errno) rather than its own about the data (an OSError
    without one, "Corrupt snappy compressed data" say)."""
    return isinstance(err, OSError) and err.errno is not None


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split())[:200]


def _batches(table: Any, library: str, columns: Sequence[str]) -> Iterator[tuple[Any, dict[int, str]]]:
    """``table``'s ``columns`` as Arrow record batches of :data:`BATCH_ROWS`
    rows, each with the reasons some of its rows are no record: a pandas
    frame a slice at a time (a slice holding text Arrow cannot take, a lone
    surrogate, has those cells emptied and their rows named); a polars
    frame whole (its columns are Arrow's already, so this copies little)."""
    pa = _arrow_for(library)
    if library == "pandas":
        frame = table[list(columns)]
        for start in range(0, len(frame), BATCH_ROWS):
            part = frame.iloc[start:start + BATCH_ROWS]
            try:
                yield pa.RecordBatch.from_pandas(part, preserve_index=False), {}
            except UnicodeEncodeError:
                part, problems = _without_surrogates(part)
                yield pa.RecordBatch.from_pandas(part, preserve_index=False), problems
        return
    if library == "polars":
        table = table.select(list(columns)).to_arrow()
    else:
        table = table.select(list(columns))
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    for batch in table.to_batches(max_chunksize=BATCH_ROWS):
        yield batch, {}


def _without_surrogates(frame: Any) -> tuple[Any, dict[int, str]]:
    """``frame`` (a pandas slice) with every text that is no UTF-8 (a lone
    surrogate, which Arrow refuses) emptied, and the reason for each row
    that held one, by position (its first such column's). Costs a pass over
    its object columns' values, made only when Arrow refused the slice."""
    frame = frame.copy()
    problems: dict[int, str] = {}
    for name in frame.columns:
        if frame[name].dtype != object:
            continue
        values = frame[name].tolist()
        bad = [at for at, value in enumerate(values) if isinstance(value, str) and not _encodes(value)]
        for at in bad:
            problems.setdefault(at, field_problem("column", name, values[at]))
            values[at] = None
        if bad:
            frame[name] = values
    return frame, problems


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _schema(table: Any, library: str) -> tuple[list[str], list[Any]]:
    """A table's column names and their Arrow types, without converting its
    rows (a pandas frame's, from its first batch)."""
    pa = _arrow_for(library)
    if library == "pyarrow":
        return list(table.schema.names), list(table.schema.types)
    if library == "polars":
        schema = table.head(0).to_arrow().schema
        return list(schema.names), list(schema.types)
    names = list(table.columns)
    if not all(isinstance(name, str) for name in names):
        raise InputError("the pandas table has column names that are not strings",
                         hint="name its columns with strings (df.columns = df.columns.astype(str))")
    if len(names) != len(set(names)):
        return names, [pa.string()] * len(names)  # table_layout names a doubled column if it is wanted
    head = table.head(BATCH_ROWS)
    try:
        schema = pa.Schema.from_pandas(head, preserve_index=False)
    except UnicodeEncodeError:  # a lone surrogate: its row is named when it is read
        schema = pa.Schema.from_pandas(_without_surrogates(head)[0], preserve_index=False)
    return list(schema.names), list(schema.types)


def _arrow_for(library: str) -> ModuleType:
    """pyarrow, which converts a table of ``library``; the extra named when
    it is missing is the one that installs both."""
    return require("pyarrow", f"reading a {library} table", {"pyarrow": "parquet"}.get(library, library))


def table_records(table: Any, id: str | None = None,
                  text: str | Sequence[str] | Mapping[str, str] | None = None) -> Iterator[Record]:
    """The records of a pandas or polars DataFrame or a pyarrow Table: the id
    in column ``id`` (default ``id``), the text the columns ``text`` (a name
    or a list of names; default every other column with a text form)
    joined as a CSV file's are; ``text`` as a dict, ``{column: field}``,
    names the field each column's values are (``Layout.renamed``). The
    columns are checked now; the rows are converted a batch at a time as
    the result is iterated.

    Raises:
        MissingExtra: pyarrow is not installed (now).
        MissingField: no column ``id``, or no column named in ``text`` (now).
        InputError: a column wanted has no text form (now); a row is no
            record (an empty or null id, no text, an id the id rule
            rejects), named by its number from 1, when it is reached.
    """
    library = library_of(table)
    if library is None:
        raise InputError(f"not a pandas or polars DataFrame or a pyarrow Table: {type(table).__name__}")
    pa = _arrow_for(library)
    texts = (text,) if isinstance(text, str) else tuple(text or ())
    renamed = tuple(text.items()) if isinstance(text, Mapping) else ()
    source = RecordFile(None, f"the {library} table", library, Layout(id or Layout.id_field, texts, renamed))
    try:
        names, kinds = _schema(table, library)
    except pa.ArrowException as err:  # a pandas column of mixed kinds, say
        raise _unconvertible(library, err) from None
    columns = _Columns(names, kinds, source)
    return _table_rows(table, library, columns, source.layout)


def _table_rows(table: Any, library: str, columns: _Columns, layout: Layout) -> Iterator[Record]:
    pa = _arrow_for(library)
    try:
        for entry in columns.entries(_batches(table, library, columns.names), MAX_LINE_BYTES):
            if reason := entry.reason or record_problem(entry.id, entry.text):
                raise InputError(f"row {entry.row} of the {library} table: {reason}",
                                 hint="fix the row, or leave it out of the table")
            yield Record(entry.id, entry.text, layout.named(entry.fields))
    except pa.ArrowException as err:
        raise _unconvertible(library, err) from None


def _unconvertible(library: str, err: Exception) -> InputError:
    return InputError(f"the {library} table cannot be converted to Arrow: {err}",
                      hint="give each column values of one kind")
