"""Where records come from: a file or standard input, plain or gzip.

A :class:`RecordFile` names the bytes (a path, or ``-`` for standard input),
their format and where the id and text sit in them; :mod:`records` turns
them into records. Reading is streaming throughout: data is read in blocks
and never held whole, so a file of any size costs the same memory.

- **Format** comes from the name unless given: ``.csv``; ``.tsv`` or
  ``.tab``; ``.jsonl`` or ``.ndjson``; ``.parquet``; anything else (and
  standard input) is ``ID TEXT`` lines. A trailing ``.gz`` is looked
  through (``x.csv.gz`` is CSV). Parquet is read by :mod:`tables` (with
  pyarrow, an extra), a batch of rows at a time; it is read from a file
  only, since its layout is at its end.
- **gzip** is recognised by its first two bytes, whatever the name, so a
  gzip stream piped into standard input is read as well.
- **Progress**: :attr:`Opened.bytes_read` counts the bytes taken from the
  file itself, compressed bytes for gzip, so against :attr:`RecordFile.size`
  it says how far along a reading is.
- **Standard input** can be read once. :meth:`RecordFile.replayable` copies
  it to a temporary file first (in blocks) when a job must read its records
  twice. Standard input that is not gzip must end with a line break: a
  stream that ends inside a line is one a producer cut short (``head -c``,
  a killed export), and reading it fails (:func:`cut_short`) rather than
  taking what arrived for the whole. (gzip says so of a cut stream itself.)
"""

from __future__ import annotations

import gzip
import io
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import BinaryIO

from ..errors import InputError
from ..files import READ_HINT

INPUT_FORMATS = ("text", "csv", "tsv", "jsonl", "parquet")
# Formats whose records are rows of named columns (an id column, text columns).
TABLE_FORMATS = ("csv", "tsv", "parquet")
_BY_SUFFIX = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
              ".parquet": "parquet"}
STDIN = "-"
STDIN_NAME = "<stdin>"
GZIP_MAGIC = b"\x1f\x8b"
# Bytes asked of the file at a time: large enough that system calls cost
# nothing next to parsing, small enough to hold many readers at once.
_BUFFER = 1 << 16
# Errors of a damaged or cut-short gzip stream.
_stdin_taken = False


def format_from_name(name: str | PurePath, formats: dict[str, str] = _BY_SUFFIX, default: str = "text") -> str:
    """The format a file's name implies, looking through a trailing ``.gz``."""
    path = PurePath(name)
    suffix = path.suffix.lower()
    if suffix == ".gz":
        suffix = path.with_suffix("").suffix.lower()
    return formats.get(suffix, default)


@dataclass(frozen=True)
class Layout:
    """Where a record's id and text are in a table row or a JSON object.

    ``text_fields`` are joined with a space in the order given; empty means
    every field but the id, in the file's order. ``renamed`` holds (column,
    field) for the text columns whose values are the field of another name:
    a second table's columns named otherwise than the first's, so that the
    two are compared field by field.

    Raises:
        InputError: two text columns would be one field.
    """

    id_field: str = "id"
    text_fields: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        names = [self.field_name(column) for column in self.text_fields]
        if twice := next((name for name in names if names.count(name) > 1), None):
            columns = [column for column in self.text_fields if self.field_name(column) == twice]
            raise InputError(f"the text columns {', '.join(map(repr, columns))} would all be the field {twice!r}",
                             hint="name each column's field once")

    def field_name(self, column: str) -> str:
        """The name of the field a text column's values are."""
        return dict(self.renamed).get(column, column)

    def named(self, fields: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        """A record's ``fields`` (read by their columns' names) named as their fields."""
        if not self.renamed:
            return fields
        return tuple((self.field_name(name), value) for name, value in fields)


@dataclass(frozen=True)
class RecordFile:
    """A records file: ``path`` (``None`` for standard input), its ``format``
    (one of :data:`INPUT_FORMATS`) and ``layout`` (for CSV, TSV, Parquet,
    JSON Lines).
    ``name`` is what messages call it."""

    path: Path | None
    name: str
    format: str
    layout: Layout = field(default_factory=Layout)

    @classmethod
    def of(cls, where: RecordFile | Path | str, format: str | None = None,
           layout: Layout | None = None) -> RecordFile:
        """``where`` is a path or ``-`` (standard input); the format comes
        from the name unless given."""
        if isinstance(where, RecordFile):
            return where
        if format is not None and format not in INPUT_FORMATS:
            raise ValueError(f"format must be one of {INPUT_FORMATS}")
        if str(where) == STDIN:
            if format == "parquet":
                raise InputError("Parquet cannot be read from standard input (its layout is at the end of the "
                                 "file, read before its rows)", hint="give the Parquet file's path")
            return cls(None, STDIN_NAME, format or "text", layout or Layout())
        return cls(Path(where), str(where), format or format_from_name(where), layout or Layout())

    def __str__(self) -> str:
        return self.name

    @property
    def size(self) -> int | None:
        """Bytes in the file (compressed bytes for gzip); ``None`` for a stream."""
        if self.path is None:
            return None
        try:
            return self.path.stat().st_size if self.path.is_file() else None
        except OSError:
            return None

    @contextmanager
    def replayable(self) -> Iterator[RecordFile]:
        """This file, readable more than once: standard input is copied to a
        temporary file (deleted afterwards) that messages still call
        ``<stdin>``."""
        if self.path is not None:
            yield self
            return
        _take_stdin()
        with tempfile.NamedTemporaryFile(prefix="neardup-stdin-") as copy:
            shutil.copyfileobj(sys.stdin.buffer, copy, _BUFFER)
            copy.flush()
            size = copy.tell()
            if size:
                copy.seek(0)
                first = copy.read(len(GZIP_MAGIC))
                copy.seek(size - 1)
                if first != GZIP_MAGIC and copy.read(1) != b"\n":
                    raise cut_short(self.name)
            yield replace(self, path=Path(copy.name))


def _take_stdin() -> None:
    """Standard input is read once: a second reading would silently find
    nothing, so it is an error."""
    global _stdin_taken
    if _stdin_taken:
        raise InputError("standard input was read already", hint="copy it first, with RecordFile.replayable()")
    _stdin_taken = True


class _Counted(io.RawIOBase):
    """A binary stream that counts the bytes read through it; with
    ``whole_lines``, ending anywhere but after a line break fails
    (:func:`cut_short`, naming the stream ``name``)."""

    def __init__(self, inner: BinaryIO, name: str = "", whole_lines: bool = False):
        self.inner = inner
        self.count = 0
        self.name = name
        self.whole_lines = whole_lines
        self.last = b"\n"

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        # One read of what is there (a pipe's lines as they come), not a wait until the buffer fills.
        n = getattr(self.inner, "readinto1", self.inner.readinto)(buffer) or 0
        self.count += n
        if n:
            self.last = bytes(memoryview(buffer)[n - 1:n])
        elif self.whole_lines and self.last != b"\n":
            raise cut_short(self.name)
        return n


def cut_short(name: str) -> InputError:
    """The error for standard input that ended inside a line."""
    return InputError(f"{name} ended in the middle of a line, as a stream cut short does: nothing of it was used",
                      hint="check what produces it; if it is whole, end it with a line break")


@dataclass
class Opened:
    """An open records file: ``stream`` gives its bytes, gunzipped."""

    stream: BinaryIO
    counter: _Counted

    @property
    def bytes_read(self) -> int:
        """Bytes taken from the file so far (compressed bytes for gzip)."""
        return self.counter.count


def cannot_read(name: str, err: OSError) -> InputError:
    """The error for a file that could not be read (missing, a directory,
    no permission, a disk error)."""
    return InputError(f"cannot read {name}: {err.strerror or err}", hint=READ_HINT)


@contextmanager
def open_bytes(source: RecordFile) -> Iterator[Opened]:
    """The bytes of ``source``, gunzipped when they start as gzip does."""
    with ExitStack() as stack:
        if source.path is None:
            _take_stdin()
            inner = sys.stdin.buffer
        else:
            try:
                inner = stack.enter_context(open(source.path, "rb", buffering=0))
            except OSError as err:
                raise cannot_read(source.name, err) from None
        counter = _Counted(inner, source.name)
        buffered = io.BufferedReader(counter, _BUFFER)
        try:
            compressed = buffered.peek(len(GZIP_MAGIC))[: len(GZIP_MAGIC)] == GZIP_MAGIC
        except OSError as err:
            raise cannot_read(source.name, err) from None
        counter.whole_lines = source.path is None and not compressed
        stream = gzip.GzipFile(fileobj=buffered, mode="rb") if compressed else buffered
        yield Opened(stream, counter)
