"""Reading records without losing a valid one.

Four formats (:mod:`sources` finds and opens the file, gzip or not, or
standard input):

- ``ID TEXT`` lines: an id, one space or tab, the text (only a space or
  tab ends the id: an ideographic or no-break space is white space in the
  text, and in the id it breaks the id rule);
- CSV or TSV with a header row naming the columns: the id column and the
  text columns, joined with a space (quoted fields may hold the delimiter,
  quotes and line breaks; a line break inside a field becomes a space).
  A row that spans lines must read as a whole row: if its quote closes
  nowhere (the end of the file, or past the row limit), or badly (a
  character other than the delimiter after it), or into more or fewer
  fields than the header's, only its first line is named and skipped, and
  reading resumes at its second line, so a stray quote never swallows the
  rows after it;
- JSON Lines, one object a line: the id field (a string or a whole number)
  and the text fields (strings and numbers, lists and objects of them; a
  missing or null one is empty);
- Parquet (:mod:`tables`, with pyarrow, an extra): rows found and joined
  by the CSV rules (:func:`table_layout`, :func:`table_entry`), numbered
  from 1, the first row of data.

A UTF-8 byte-order mark at the start and CRLF line ends are fine in each.
Entries that cannot be records are reported with the file and the line
(the row for CSV and TSV, counted as a spreadsheet counts them: the header
is row 1) and skipped; the records around them are kept. What counts as
bad, with the reason each gets:

- an empty line or row, a line starting with white space (no id), an empty
  id, no text, an id the id rule rejects;
- an id seen before in the same file (the first one is kept);
- bytes that are not UTF-8; NUL or other control characters (tab is fine);
- a line or row longer than ``max_line_bytes``;
- text without a letter or digit (punctuation, symbols and spaces only,
  ``-`` and ``_`` included);
- CSV and TSV: a row with more or fewer fields than the header, a quote
  that does not close (named by the line it opens on);
- JSON Lines: a line that does not parse, is not an object, lacks the id
  field, or holds true or false in a text field it names.

Nothing valid is dropped without a note (:attr:`RecordReader.notes`): a CSV
or TSV text column named like an earlier one is a field of its own
(``name_2``), and a JSON object in a field (or a list holding one) is the
text of its values (:func:`_nested_text`).

A header without the id column or a named text column makes no record
readable: :class:`~neardup_solr.errors.MissingField`, before any record.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ..errors import InputError
from .record import MAX_LINE_BYTES, BadLine, Record, field_problem, record_problem
from ..files import GZIP_ERRORS
from .seen import SeenIds
from .rows import LIST_SEPARATOR, Entry, distinct_columns, table_entry, table_layout, text_and_fields
from .sources import TABLE_FORMATS, Layout, Opened, RecordFile, cannot_read, open_bytes

if TYPE_CHECKING:
    from .tables import ParquetRows

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
# What ends the id of an ``ID TEXT`` line: one space or tab, nothing else
# (an ideographic or no-break space is white space inside the text, and in
# an id it breaks the id rule).
_ID_END = re.compile(r"[ \t]")
_BOM = "\ufeff"
# Bytes of ID TEXT or JSON Lines read at a time: a line up to the limit fits
# one block, and a block's lines cost a few MB at most.
READ_BLOCK = 1 << 20
TABLE_DELIMITERS = {"csv": ",", "tsv": "\t"}


@dataclass
class RecordReader:
    """Iterates the valid records of one file; ``bad`` collects the rest.

    ``source`` is a :class:`~neardup_solr.records.sources.RecordFile`, or a path (or
    ``-``, standard input) read as ``format`` and ``layout`` say (by default
    the format its name implies). With ``strict`` the first bad entry raises
    :class:`InputError` instead. :meth:`start` opens the file and reads its
    header at once; iterating does it otherwise.
    """

    source: RecordFile | Path | str
    strict: bool = False
    max_line_bytes: int = MAX_LINE_BYTES
    on_bad: Callable[[BadLine], None] | None = None
    bad: list[BadLine] = field(default_factory=list)
    # What the reading did to keep records whole (a repeated column's name
    # made distinct, an object's values read as a field's text), each kind
    # once, where first met, as ``file:line: what``; told to ``on_note`` too.
    on_note: Callable[[str], None] | None = None
    notes: list[str] = field(default_factory=list)
    lines: int = 0
    # Valid records given out so far.
    records: int = 0
    format: str | None = None
    layout: Layout | None = None
    _opened: Opened | ParquetRows | None = field(default=None, init=False, repr=False)
    _entries: Iterator[Entry] | None = field(default=None, init=False, repr=False)
    _closing: ExitStack = field(default_factory=ExitStack, init=False, repr=False)

    def __post_init__(self) -> None:
        self.source = RecordFile.of(self.source, self.format, self.layout)

    @property
    def unit(self) -> str:
        """What an entry of the file is called in messages: line or row."""
        return "row" if self.source.format in TABLE_FORMATS else "line"

    @property
    def size(self) -> int | None:
        """Bytes in the file (compressed bytes for gzip); ``None`` for a stream."""
        return self.source.size

    @property
    def bytes_read(self) -> int:
        """Bytes taken from the file so far (compressed bytes for gzip)."""
        return self._opened.bytes_read if self._opened is not None else 0

    def start(self) -> RecordReader:
        """Open the file and read its header: a file that cannot be read, or
        a header without the id column, fails here, before any record."""
        if self._entries is None:
            with self._readable():
                if self.source.format == "parquet":
                    from .tables import ParquetRows  # pyarrow, an extra: imported only when used

                    self._opened = self._closing.enter_context(ParquetRows(self.source, self.max_line_bytes))
                    self._entries = self._opened.entries()
                else:
                    self._opened = self._closing.enter_context(open_bytes(self.source))
                    self._entries = _entries(self.source, self._opened.stream, self.max_line_bytes, self._note)
        return self

    def close(self) -> None:
        self._closing.close()
        self._entries = None

    def __iter__(self) -> Iterator[Record]:
        seen = SeenIds()
        try:
            self.start()
            with self._readable():
                for entry in self._entries:
                    self.lines = entry.line
                    reason = entry.reason or record_problem(entry.id, entry.text)
                    if not reason and (first := seen.first(entry.id, entry.row or entry.line)) is not None:
                        reason = f"duplicate id {entry.id!r}, first seen on {self.unit} {first}"
                    if reason:
                        self._report(BadLine(self.source.name, entry.line, reason, entry.row))
                        continue
                    self.records += 1
                    yield Record(entry.id, entry.text, self.source.layout.named(entry.fields))
        finally:
            seen.close()
            self.close()

    def _readable(self) -> _ReadErrors:
        return _ReadErrors(self.source.name)

    def _note(self, line: int, row: int | None, what: str) -> None:
        if any(said.endswith(f": {what}") for said in self.notes):
            return
        self.notes.append(str(BadLine(self.source.name, line, what, row)))
        if self.on_note is not None:
            self.on_note(self.notes[-1])

    def _report(self, bad: BadLine) -> None:
        if self.strict:
            raise InputError(str(bad), hint=f"fix the {self.unit}, or read without the strict check to skip bad "
                             f"{self.unit}s", remedy="strict", unit=self.unit)
        self.bad.append(bad)
        if self.on_bad is not None:
            self.on_bad(bad)


class _ReadErrors:
    """Turns a failing read (a damaged gzip stream, a disk error) into one
    :class:`InputError` naming the file."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, error, _traceback) -> bool:
        if isinstance(error, GZIP_ERRORS):
            raise InputError(f"{self.name}: the gzip data is damaged or cut short ({error})",
                             hint="compress the file again") from None
        if isinstance(error, OSError):
            raise cannot_read(self.name, error) from None
        return False


def read_texts(source: RecordFile | Path | str, wanted: Iterable[str] | None = None) -> dict[str, str]:
    """The texts of a file's records (of the ``wanted`` ids only, if given)."""
    keep = None if wanted is None else set(wanted)
    return {r.id: r.text for r in RecordReader(source) if keep is None or r.id in keep}


# Told of what a reading did to keep an entry whole (a column renamed, an
# object's values read as text): its line, its row (for a table) and what.
Note = Callable[[int, "int | None", str], None]


def _entries(source: RecordFile, stream: BinaryIO, limit: int, note: Note) -> Iterator[Entry]:
    if source.format in TABLE_DELIMITERS:
        return _table_entries(stream, source, limit, note)
    if source.format == "jsonl":
        return (_json_entry(number, raw, source.layout, limit, note) for number, raw in _first_lines(stream, limit))
    return (_text_entry(number, raw, limit) for number, raw in _first_lines(stream, limit))


def _first_lines(stream: BinaryIO, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """Numbered lines, a byte-order mark taken off the first."""
    for number, raw in enumerate(_lines(stream, limit), start=1):
        yield number, (raw.removeprefix(_BOM.encode()) if number == 1 and raw is not None else raw)


def _lines(handle, limit: int, block: int | None = None) -> Iterator[bytes | None]:
    """Lines without their end; ``None`` for a line over ``limit`` bytes.

    Reads at most a block at a time (``READ_BLOCK`` unless given), so an
    endless line costs one block of memory, not the whole line; a pipe's
    lines are given as they arrive, not once a block has filled.
    """
    block = block or READ_BLOCK
    read = getattr(handle, "read1", handle.read)
    pending, skipping = b"", False
    while data := read(block):
        lines = (pending + data).split(b"\n")
        pending = lines.pop()
        for line in lines:
            if skipping:
                skipping = False
                yield None
            else:
                yield _fitting(line.removesuffix(b"\r"), limit)
        if len(pending) > limit + 1:
            pending, skipping = b"", True
    if skipping:
        yield None
    elif pending:
        yield _fitting(pending.removesuffix(b"\r"), limit)


def _fitting(line: bytes, limit: int) -> bytes | None:
    return line if len(line) <= limit else None


def _decoded(number: int, raw: bytes | None, limit: int) -> tuple[str, Entry | None]:
    """A line as text, or the entry saying why it is none."""
    if raw is None:
        return "", Entry(number, reason=f"line longer than {limit} bytes")
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return "", Entry(number, reason=f"not UTF-8 (byte {err.start + 1})")
    if not line.strip():
        return "", Entry(number, reason="empty line")
    return line, None


def _text_entry(number: int, raw: bytes | None, limit: int) -> Entry:
    line, bad = _decoded(number, raw, limit)
    if bad is not None:
        return bad
    control = _CONTROL.search(line)
    if control:
        return Entry(number, reason=f"control character U+{ord(control.group()):04X} at column {control.start() + 1}")
    if line[0].isspace():
        return Entry(number, reason="no id: the line starts with white space")
    end = _ID_END.search(line)
    if end is None:
        return Entry(number, id=line.rstrip(), text="")
    return Entry(number, id=line[:end.start()], text=line[end.end():].strip())


class _RowTooLong(Exception):
    """A line over the row limit (its rest was skipped)."""


class _QuoteTooLong(Exception):
    """A quoted field ran on past the row limit (its lines were given back)."""


class _RowLines:
    """Physical lines for the csv module, at most ``limit`` characters to a
    row, and lines given back to be read again.

    The current row's lines are kept (``taken``): a row whose quote does not
    close into a whole row gives back all but its first line
    (:meth:`give_back`), and those are read again as rows of their own. A
    line over the limit raises :class:`_RowTooLong`, its rest skipped a
    block at a time; a quoted field running past the limit raises
    :class:`_QuoteTooLong` having given its lines back. So neither an
    endless line nor a quote that never closes is held in memory, and a row
    costs at most one more reading of ``limit`` characters.
    """

    def __init__(self, text: io.TextIOBase, limit: int):
        self.text = text
        self.limit = limit
        self.number = 0  # physical lines taken from the file
        self.ended = False
        self.taken: list[tuple[int, str | None]] = []
        self._used = 0
        self._again: deque[tuple[int, str | None]] = deque()

    def __iter__(self) -> _RowLines:
        return self

    def start_row(self) -> int:
        """Start a row; returns the line it starts on."""
        self.taken, self._used, self.ended = [], 0, False
        return self._again[0][0] if self._again else self.number + 1

    def give_back(self, *also: tuple[int, str | None]) -> None:
        """The current row's lines but its first (and ``also``) are read again."""
        self._again.extendleft(reversed([*self.taken[1:], *also]))
        del self.taken[1:]

    def _physical(self) -> tuple[int, str | None] | None:
        """The next line and its number (``None`` for a line over the limit)."""
        if self._again:
            return self._again.popleft()
        line = self.text.readline(self.limit + 1)
        if not line:
            return None
        self.number += 1
        if len(line) <= self.limit:
            return self.number, line
        while line and not line.endswith(("\n", "\r")):
            line = self.text.readline(self.limit)
        return self.number, None

    def __next__(self) -> str:
        got = self._physical()
        if got is None:
            self.ended = True
            raise StopIteration
        line = got[1]
        if line is None or self._used + len(line) > self.limit:
            if not self.taken:
                self.taken.append(got)
                raise _RowTooLong
            self.give_back(got)
            raise _QuoteTooLong
        self.taken.append(got)
        self._used += len(line)
        return line


def _table_entries(stream: BinaryIO, source: RecordFile, limit: int, note: Note) -> Iterator[Entry]:
    """Reads the header now (a missing column fails at once); the rows as the
    result is iterated.

    A quoted field may hold line breaks, so a row may span lines. A row
    that spans lines but does not read as a whole row (its quote closes
    nowhere, or badly, or into more or fewer fields than the header's) is
    named by its first line and skipped, and reading resumes at its second
    line: a stray quote costs its own line, never the rows after it."""
    kind = source.format.upper()
    # The csv module's own limit on a field (128 KiB) would cut records the
    # row limit allows; it is a process-wide setting, only ever raised here.
    csv.field_size_limit(max(csv.field_size_limit(), limit))
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
    lines = _RowLines(text, limit)
    reader = csv.reader(lines, delimiter=TABLE_DELIMITERS[source.format], strict=True)
    width: int | None = None  # the header's fields, once read
    unclosed = f"not valid {kind}: a quote that does not close"

    def rows() -> Iterator[tuple[int, list[str] | None, str]]:
        while True:
            start = lines.start_row()
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as err:
                last = lines.taken[-1][0]
                if lines.ended:
                    problem = f"{unclosed} (end of file)"
                elif len(lines.taken) > 1:
                    problem = f"{unclosed} ({err} on line {last})"
                else:
                    problem = f"not valid {kind}: {err}"
                lines.give_back()
                yield start, None, problem
                continue
            except _RowTooLong:
                yield start, None, f"row longer than {limit} characters"
                continue
            except _QuoteTooLong:
                yield start, None, f"{unclosed} within {limit} characters"
                continue
            if width is not None and len(lines.taken) > 1 and len(cells) != width:
                last = lines.taken[-1][0]
                lines.give_back()
                yield start, None, (f"{unclosed} into a row ({len(cells)} fields where the header has {width}, "
                                    f"on line {last})")
                continue
            yield start, cells, ""

    numbered = rows()
    first = next(numbered, None)
    if first is None:
        raise InputError(f"{source.name} is empty: a {kind} file starts with a header row naming its columns",
                         hint="write the header row first (the id column and the text columns)")
    if first[2]:
        raise InputError(f"{source.name}:row 1: the header is {first[2]}", hint="fix the header row")
    columns = [name.strip() for name in first[1]]
    width = len(columns)
    id_at, text_at = table_layout(columns, source)
    columns, notes = distinct_columns(columns, text_at)
    for said in notes:
        note(first[0], 1, said)
    return (table_entry(line, row, cells, problem, columns, id_at, text_at)
            for row, (line, cells, problem) in enumerate(numbered, start=2))


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    return {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number",
            type(None): "null"}[type(value)]


def _is_text(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _json_entry(number: int, raw: bytes | None, layout: Layout, limit: int, note: Note) -> Entry:
    line, bad = _decoded(number, raw, limit)
    if bad is not None:
        return bad
    try:
        value = json.loads(line)
    except json.JSONDecodeError as err:
        return Entry(number, reason=f"not JSON: {err.msg} (column {err.colno})")
    except ValueError as err:  # a number too long to convert
        return Entry(number, reason=f"not JSON: {err}")
    if not isinstance(value, dict):
        return Entry(number, reason=f"not a JSON object but {_kind(value)}")
    record_id = value.get(layout.id_field)
    if record_id is None:
        return Entry(number, reason=f"no {layout.id_field!r} field")
    if not isinstance(record_id, (str, int)) or isinstance(record_id, bool):
        return Entry(number, reason=f"field {layout.id_field!r} holds {_kind(record_id)}, not a string or "
                                     "whole number")
    record_id = str(record_id).strip()
    if not record_id:
        return Entry(number, reason=f"no id: field {layout.id_field!r} is empty")
    names = layout.text_fields or [k for k, v in value.items() if k != layout.id_field and _is_field(v)]
    texts = []
    for name in names:
        found = value.get(name)
        if found is None:
            texts.append("")
            continue
        if isinstance(found, (dict, list)):
            if _holds_object(found):
                note(number, None, f"field {name!r} holds {'an object' if isinstance(found, dict) else 'objects'}: "
                     "the text of its values is the field's (keys left out)")
            found = _nested_text(found)
        elif not _is_text(found):
            return Entry(number, reason=f"field {name!r} holds {_kind(found)}, not text, a number, a list or an "
                         "object")
        texts.append(_as_text(found))
        if reason := field_problem("field", name, texts[-1]):
            return Entry(number, reason=reason)
    text, fields = text_and_fields(names, texts)
    return Entry(number, id=record_id, text=text, fields=fields)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _is_field(value: Any) -> bool:
    """Whether a JSON value can be a field: text, a number, a list or an
    object (read as :func:`_nested_text`)."""
    return _is_text(value) or isinstance(value, (list, dict))


def _holds_object(value: Any) -> bool:
    return isinstance(value, dict) or (isinstance(value, list) and any(map(_holds_object, value)))


def _nested_text(value: Any) -> str:
    """A list's or an object's text, as one field's: a list's items joined
    with LIST_SEPARATOR, an object's values (not its keys) with spaces, each
    item or value read so in turn; text and numbers as they are, null,
    true and false left out (as at the top)."""
    if isinstance(value, list):
        return LIST_SEPARATOR.join(text for text in map(_nested_text, value) if text)
    if isinstance(value, dict):
        return " ".join(text for text in map(_nested_text, value.values()) if text)
    return _as_text(value) if _is_text(value) else ""


def text_record(raw: bytes) -> Record | None:
    """One ``ID TEXT`` line (without its line end) as a record, or ``None``
    when it breaks a rule: what a sample drawn from the middle of a file
    keeps, leaving the reasons to the reading that indexes it."""
    entry = _text_entry(0, _fitting(raw, MAX_LINE_BYTES), MAX_LINE_BYTES)
    if entry.reason or record_problem(entry.id, entry.text):
        return None
    return Record(entry.id, entry.text, entry.fields)
