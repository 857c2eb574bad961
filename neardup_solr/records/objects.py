"""Records given as Python objects: ``(id, text)`` pairs, ``{"id", "text"}``
dicts, dicts of fields, :class:`~neardup_solr.records.record.Record` s, and
the tables people hold (pandas and polars DataFrames, pyarrow Tables), each
checked by the rules a file's lines are."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Union

from ..errors import InputError
from .record import Record, record_problem

RecordLike = Union[Record, Sequence[str], Mapping[str, str]]
# The libraries whose tables index() and add() take, told by their types' module.
TABLE_LIBRARIES = ("pandas", "polars", "pyarrow")


def as_record(item: RecordLike) -> Record:
    """``item`` as a Record: a Record as it is, anything else checked by
    the rules a file's lines are (the id rule, some letters or digits).

    An (id, text) pair is any two-item sequence (a tuple, or a list as
    JSON reads one), not a string. A dict of an id and other keys but no
    ``text`` is a record of fields (``{"id": 7, "name": ..., "city": ...}``),
    compared field by field.

    Raises:
        InputError: not an (id, text) pair, or an id or text that breaks them.
    """
    if isinstance(item, Record):
        return item
    if isinstance(item, Mapping) and "id" in item and "text" in item:
        record = Record(str(item["id"]), item["text"])
    elif isinstance(item, Mapping) and "id" in item and len(item) > 2:
        record = fielded_record(item)
    elif isinstance(item, Sequence) and not isinstance(item, (str, bytes, bytearray)) and len(item) == 2:
        record = Record(str(item[0]), item[1])
    else:
        raise InputError(f"a record is an (id, text) pair or a dict with id and text, not {item!r:.60}")
    if not isinstance(record.text, str):
        raise InputError(f"the text of id {record.id!r} is {type(record.text).__name__}, not str")
    if problem := record_problem(record.id, record.text):
        raise InputError(problem)
    return record


def fielded_record(item: Mapping) -> Record:
    """A dict of an id and two or more fields as a record of fields (the
    text their values joined), its values given as text or numbers."""
    fields = []
    for name, value in item.items():
        if name == "id":
            continue
        if value is None:
            value = ""
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            value = repr(value) if isinstance(value, float) else str(value)
        elif not isinstance(value, str):
            raise InputError(f"field {name!r} of id {item['id']!r} holds {type(value).__name__}, not text or a number")
        fields.append((str(name), " ".join(value.split())))
    return Record(str(item["id"]), " ".join(v for _, v in fields if v), tuple(fields))


def as_records(items: Iterable[RecordLike] | object, id: str | None = None,
               text: str | Sequence[str] | Mapping[str, str] | None = None) -> Iterator[Record]:
    """``items`` as Records, one at a time (see :func:`as_record`); a pandas
    or polars DataFrame or a pyarrow Table as its rows, the id in column
    ``id`` and the text the columns ``text`` (see
    :func:`neardup_solr.records.tables.table_records`).

    Raises:
        InputError: as :func:`as_record`; ``id`` or ``text`` given with
            records that are no table.
        MissingExtra: a table, and pyarrow is not installed.
    """
    if type(items).__module__.split(".")[0] in TABLE_LIBRARIES:
        from .tables import library_of, table_records  # pyarrow, an extra: imported only when used

        if library_of(items) is not None:
            return table_records(items, id, text)
    if id is not None or text is not None:
        raise InputError(f"id= and text= name a table's columns, and {type(items).__name__} is no table",
                         hint="give a pandas or polars DataFrame or a pyarrow Table, or records without them")
    return (as_record(item) for item in items)


def query_record(item: RecordLike) -> Record:
    """What :meth:`~neardup_solr.api.NearDuplicates.query` looks up for a record-like: a dict
    of fields needs no id (it is no indexed record)."""
    if isinstance(item, Record):
        return item
    if isinstance(item, Mapping) and "id" not in item:
        return fielded_record({"id": "query", **item})
    return as_record(item)


__all__ = ["RecordLike", "as_record", "as_records", "fielded_record", "query_record"]
