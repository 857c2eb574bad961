"""Reading ``ID TEXT`` record files without losing a valid record.

A line is one record: an id, one space or tab, the text. Lines that cannot be
records are reported with file and line number and skipped; the records
around them are kept. What counts as bad, with the reason each gets:

- an empty line, a line starting with white space (no id), a line without
  text, an id the id rule rejects;
- an id seen before in the same file (the first one is kept);
- bytes that are not UTF-8; NUL or other control characters (tab is fine);
- a line longer than ``max_line_bytes``;
- text with nothing left after normalization (only punctuation).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError
from .text import is_blank

ID_RULE = "1-128 characters of A-Z a-z 0-9 . _ : -, starting with a letter or digit"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
MAX_LINE_BYTES = 1 << 20


@dataclass(frozen=True)
class Record:
    id: str
    text: str


@dataclass(frozen=True)
class BadLine:
    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


def id_key(record_id: str) -> tuple[int, int, str]:
    """Sort key that puts numeric ids in numeric order ("9" < "10")."""
    return (0, int(record_id), record_id) if record_id.isdigit() else (1, 0, record_id)


@dataclass
class RecordReader:
    """Iterates the valid records of one file; ``bad`` collects the rest.

    With ``strict`` the first bad line raises :class:`InputError` instead.
    """

    path: Path
    strict: bool = False
    max_line_bytes: int = MAX_LINE_BYTES
    on_bad: Callable[[BadLine], None] | None = None
    bad: list[BadLine] = field(default_factory=list)
    lines: int = 0

    def __iter__(self) -> Iterator[Record]:
        seen: dict[str, int] = {}
        try:
            handle = open(self.path, "rb")
        except OSError as err:
            raise InputError(f"cannot read {self.path}: {err.strerror}") from None
        with handle:
            for number, raw in enumerate(_lines(handle, self.max_line_bytes), start=1):
                self.lines = number
                record, reason = _parse(raw, self.max_line_bytes)
                if record is not None and record.id in seen:
                    record, reason = None, f"duplicate id {record.id!r}, first seen on line {seen[record.id]}"
                if record is None:
                    self._report(BadLine(str(self.path), number, reason))
                    continue
                seen[record.id] = number
                yield record

    def _report(self, bad: BadLine) -> None:
        if self.strict:
            raise InputError(str(bad), hint="fix the line, or drop --strict to skip bad lines")
        self.bad.append(bad)
        if self.on_bad is not None:
            self.on_bad(bad)


def _lines(handle, limit: int, block: int = 1 << 20) -> Iterator[bytes | None]:
    """Lines without their end; ``None`` for a line over ``limit`` bytes.

    Reads fixed blocks, so an endless line costs one block of memory, not
    the whole line.
    """
    pending, skipping = b"", False
    while data := handle.read(block):
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


def _parse(raw: bytes | None, limit: int) -> tuple[Record | None, str]:
    if raw is None:
        return None, f"line longer than {limit} bytes"
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return None, f"not UTF-8 (byte {err.start + 1})"
    if not line.strip():
        return None, "empty line"
    control = _CONTROL.search(line)
    if control:
        return None, f"control character U+{ord(control.group()):04X} at column {control.start() + 1}"
    if line[0].isspace():
        return None, "no id: the line starts with white space"
    parts = line.strip().split(None, 1)
    if not _ID.fullmatch(parts[0]):
        return None, f"id {parts[0][:40]!r} breaks the id rule ({ID_RULE})"
    if len(parts) == 1:
        return None, f"id {parts[0]!r} has no text"
    if is_blank(parts[1]):
        return None, f"text of id {parts[0]!r} has no letters or digits"
    return Record(parts[0], parts[1].strip()), ""


@dataclass(frozen=True)
class Sample:
    """Records drawn from a file, and the number of records it holds
    (counted, or estimated from its size)."""

    records: list[Record]
    total: int


def sample_records(path: Path, size: int, seed: int = 0) -> Sample:
    """About ``size`` valid records drawn at random from an ``ID TEXT`` file.

    A file of at most ``size`` lines of average length is read whole; a
    larger one is sampled at random byte offsets (each offset's next whole
    line), so a sample of a ten-million-line file costs ``size`` seeks, not
    a pass. Its record count is then its size over the sampled lines'
    average length. Bad lines are left out of the sample silently: reading
    the file for indexing reports them.
    """
    try:
        file_size = Path(path).stat().st_size
        handle = open(path, "rb")
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror}") from None
    with handle:
        head = handle.read(1 << 16)
        lines_in_head = max(head.count(b"\n"), 1)
        if file_size <= len(head) or file_size / (len(head) / lines_in_head) <= 2 * size:
            records = list(RecordReader(Path(path)))
            return Sample(_spread(records, size, seed), len(records))
        rng = random.Random(seed)
        records, lengths = [], []
        for offset in sorted(rng.randrange(file_size) for _ in range(size)):
            handle.seek(offset)
            handle.readline()  # the rest of the line the offset fell in
            raw = handle.readline(MAX_LINE_BYTES + 2)
            if not raw.endswith(b"\n") and handle.tell() < file_size:
                continue
            lengths.append(len(raw))
            record, _ = _parse(_fitting(raw.rstrip(b"\n").removesuffix(b"\r"), MAX_LINE_BYTES), MAX_LINE_BYTES)
            if record is not None:
                records.append(record)
        total = round(file_size / (sum(lengths) / len(lengths))) if lengths else 0
        return Sample(list({r.id: r for r in records}.values()), total)


def _spread(records: list[Record], size: int, seed: int) -> list[Record]:
    return records if len(records) <= size else random.Random(seed).sample(records, size)
