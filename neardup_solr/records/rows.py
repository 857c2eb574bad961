"""A row of a table as a record: where its id and text columns are, and
the rules each row is checked and joined by, the same for CSV and TSV
files, JSON Lines, Parquet files and DataFrames."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import InputError, MissingField
from .record import field_problem, has_problem
from .sources import RecordFile

_LINE_BREAK = re.compile(r"\r\n|[\r\n]")
# Between the items of a list (a JSON array, a Parquet list) made one field's value.
LIST_SEPARATOR = "; "
# What a table's cells may be separated by, and its name in a message.
SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "bars (|)", ",": "commas"}


@dataclass(frozen=True)
class Entry:
    """What a format made of one line or row: an id and text, or the reason
    it is no record."""

    line: int
    row: int | None = None
    id: str = ""
    text: str = ""
    reason: str = ""
    fields: tuple[tuple[str, str], ...] = ()


def _one_line(value: str) -> str:
    """A field's value on one line: line breaks to spaces, trimmed."""
    if "\n" in value or "\r" in value:
        value = _LINE_BREAK.sub(" ", value)
    return value.strip()


def text_and_fields(names: Sequence[str], values: Sequence[str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A record's text, its field values on one line (line breaks to
    spaces, trimmed), the empty ones left out, joined by spaces; and its
    fields, (name, value on one line), when it has two or more."""
    lines = [_one_line(value) for value in values]
    return " ".join(value for value in lines if value), tuple(zip(names, lines)) if len(names) >= 2 else ()


def table_layout(columns: Sequence[str], source: RecordFile,
                 usable: Callable[[int], bool] = lambda _: True) -> tuple[int, list[int]]:
    """Where the id and the text columns of ``source``'s layout are among a
    table's ``columns``: the id's position and the text columns', in the
    order named (by default every other column that is ``usable``).

    Raises:
        MissingField: the id column or a named text column is not there, or
            no column is left for the text.
        InputError: a column wanted is named twice.
    """
    layout = source.layout
    id_at = _column(columns, layout.id_field, source.name, "id")
    text_at = [_column(columns, name, source.name, "text") for name in layout.text_fields]
    text_at = text_at or [i for i in range(len(columns)) if i != id_at and usable(i)]
    if not text_at:
        raise MissingField(f"{source.name}: the header has no column but the id column {layout.id_field!r}",
                           "", "text")
    return id_at, text_at


def distinct_columns(columns: Sequence[str], text_at: Sequence[int]) -> tuple[list[str], list[str]]:
    """A header's ``columns`` with each text column (at ``text_at``) whose
    name an earlier column has renamed to that name and its number among
    them (``name_2``; one not taken), so that each is a field of its own;
    and a sentence for each one renamed."""
    names = list(columns)
    notes = []
    for at in text_at:
        earlier = [i for i in range(at) if columns[i] == columns[at]]
        if not earlier:
            continue
        number = len(earlier) + 1
        while f"{columns[at]}_{number}" in names:
            number += 1
        names[at] = f"{columns[at]}_{number}"
        notes.append(f"column {at + 1} repeats the name {columns[at]!r} of column {earlier[0] + 1}: its values are "
                     f"the field {names[at]!r}")
    return names, notes


def _column(columns: Sequence[str], wanted: str, name: str, role: str) -> int:
    found = [i for i, column in enumerate(columns) if column == wanted]
    if len(found) > 1:
        raise InputError(f"{name}: column {wanted!r} appears {len(found)} times in the header",
                         hint="give each column its own name")
    if not found:
        shown = ", ".join(repr(c) for c in columns[:12]) + (f" and {len(columns) - 12} more" if len(columns) > 12 else "")
        # A header read as one column that holds another separator: the file is separated by that.
        separator = next((c for c in SEPARATORS if len(columns) == 1 and c in columns[0]), None)
        said = f"; read as one column, it looks separated by {SEPARATORS[separator]}" if separator else ""
        raise MissingField(f"{name}: no column {wanted!r} in the header (it has {shown}){said}", wanted, role,
                           separator)
    return found[0]


def table_entry(line: int, row: int, cells: Sequence[str] | None, problem: str, columns: Sequence[str], id_at: int,
                text_at: list[int]) -> Entry:
    """A table row's entry: its id and joined text, or why it is none
    (``problem``, when the row could not be read as cells)."""
    if cells is None:
        return Entry(line, row, reason=problem)
    if not any(cell.strip() for cell in cells):
        return Entry(line, row, reason="empty row")
    if len(cells) != len(columns):
        return Entry(line, row, reason=f"{len(cells)} fields where the header has {len(columns)}")
    record_id = cells[id_at].strip()
    if not record_id:
        return Entry(line, row, reason=f"no id: column {columns[id_at]!r} is empty")
    values = [cells[at] for at in text_at]
    if has_problem(cells[id_at], *values):  # one search of the row; the column named only where there is one
        for at in (id_at, *text_at):
            if reason := field_problem("column", columns[at], cells[at]):
                return Entry(line, row, reason=reason)
    text, fields = text_and_fields([columns[at] for at in text_at], values)
    return Entry(line, row, record_id, text, fields=fields)
