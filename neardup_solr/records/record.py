"""A record and its rules, apart from reading files.

A :class:`Record` is an id and a text; a :class:`BadLine`, an entry that
is none. The id rule, the source rule and a record's key (a source and
an id, :func:`keyed`), the order of ids (:func:`id_key`), and what a text
must hold to be a record's (:func:`record_problem`, :func:`field_problem`,
:func:`size_problem`) are decided here, once, for every format
(:mod:`records`, :mod:`tables`), the API and the service.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import NeardupError

ID_RULE = "1-128 characters, none of them white space, a control character or a comma, no part between slashes . or .."
# Ids as people write them (ann@x.com, ORD/17, SKU#4): anything but what
# separates ids in our files and queries (white space, commas) and what a
# line cannot hold (control characters, lone surrogates).
_ID = re.compile(r"[^\s,\x00-\x1f\x7f-\x9f\ud800-\udfff]{1,128}")
# A key is a URL path's tail in the service: no segment of it may be one
# that URL normalisation removes.
_DOT_SEGMENT = re.compile(r"(?:^|/)\.{1,2}(?:/|$)")
# A source (the file or table a record came from, when two are linked): a
# name like an id, shorter. The empty source is no source at all. It starts
# with a letter or digit, as an id does: a key "../5" or "./5" would be
# rewritten by a URL's normalisation, and "-" read as an option.
SOURCE_RULE = "1-64 characters of A-Z a-z 0-9 . _ : -, starting with a letter or digit"
_SOURCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
# Between a record's source and its id in the key Solr holds: the source
# rule leaves it out, so a key splits at its first one. An id may hold it
# (ORD/17): the key of such an id without a source starts with it
# (/ORD/17), so it never reads as a source.
KEY_SEPARATOR = "/"
# A letter or digit of any script ("_" is punctuation, as in text.py).
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")
# Inside a CSV or JSON field, line breaks are white space like tab.
_FIELD_CONTROLS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_FIELD_CONTROL = re.compile(f"[{_FIELD_CONTROLS}]")
# Bytes that were not UTF-8 (decoded with surrogateescape), or a lone
# surrogate written as a JSON escape: neither can be sent on as text.
_SURROGATES = r"\ud800-\udfff"
_SURROGATE = re.compile(f"[{_SURROGATES}]")
# Either of them: a row's values searched at once.
_ANY_PROBLEM = re.compile(f"[{_SURROGATES}{_FIELD_CONTROLS}]")
MAX_LINE_BYTES = 1 << 20


@dataclass(frozen=True)
class Record:
    """A record: its id, its text, and, when it was read from a table's
    columns (CSV, TSV, Parquet, JSON Lines, a DataFrame), its ``fields``:
    (name, value) in the order named, a missing value "". The text is the
    fields' values joined. A record of two or more fields is compared field
    by field (``fields.matching``); one of one field or none, as its text."""

    id: str
    text: str
    fields: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class BadLine:
    """An entry that is no record: ``line`` is the line it starts on; for
    CSV and TSV ``row`` is its row (the header is row 1)."""

    path: str
    line: int
    reason: str
    row: int | None = None

    def __str__(self) -> str:
        if self.row is None:
            return f"{self.path}:{self.line}: {self.reason}"
        where = f"row {self.row}" + (f" (line {self.line})" if self.line != self.row else "")
        return f"{self.path}:{where}: {self.reason}"


def keyed(source: str, record_id: str) -> str:
    """The key of the record ``record_id`` of ``source``, what Solr holds as
    its unique id and every later step carries: ``source/id``; for the
    empty source (no source) the id itself, or ``/id`` when the id holds a
    ``/``. Only this and :func:`split_key` know how the two are joined.

    >>> keyed("shop", "ORD/17"), keyed("", "17"), keyed("", "ORD/17")
    ('shop/ORD/17', '17', '/ORD/17')
    """
    if source or KEY_SEPARATOR in record_id:
        return f"{source}{KEY_SEPARATOR}{record_id}"
    return record_id


def split_key(key: str) -> tuple[str, str]:
    """(source, id) of a key :func:`keyed` made; ("", id) for a key without a source."""
    source, separator, record_id = key.partition(KEY_SEPARATOR)
    return (source, record_id) if separator else ("", key)


def shown_id(key: str) -> str:
    """The id of a key as a person wrote it (without its source)."""
    return split_key(key)[1]


def source_of(key: str) -> str:
    """The source of a key (see :func:`keyed`); "" for none."""
    return split_key(key)[0]


def key_prefix(source: str) -> str:
    """What every key of ``source`` (not the empty one) starts with."""
    return keyed(source, "")


def key_problem(key: str) -> str:
    """Why ``key`` is no record's key (:func:`keyed`: its source breaks the
    source rule or its id the id rule), or "" when it is one."""
    source, record_id = split_key(key)
    if keyed(source, record_id) != key:  # "/17": the key of 17 is 17
        return f"key {key[:40]!r} names no record (an id without a source is its own key, written with a leading / " \
               "only when it holds a /)"
    return source_problem(source) or id_problem(record_id)


def source_problem(source: str) -> str:
    """Why ``source`` breaks the source rule, or "" when it keeps it (the
    empty source, no source, keeps it)."""
    if source and not _SOURCE.fullmatch(source):
        return f"source {source[:70]!r} breaks the source rule ({SOURCE_RULE})"
    return ""


def checked_source(source: str) -> str:
    """``source``, if it keeps the source rule.

    Raises:
        NeardupError: it breaks the rule.
    """
    if problem := source_problem(source):
        raise NeardupError(problem, hint="name the source with letters, digits and . _ : - only")
    return source


def in_source(records: Iterable[Record], source: str) -> Iterator[Record]:
    """``records`` with their ids made keys of ``source`` (:func:`keyed`),
    one at a time; the source is checked at once.

    Raises:
        NeardupError: ``source`` breaks the source rule.
    """
    checked_source(source)
    return (r if r.id == (key := keyed(source, r.id)) else Record(key, r.text, r.fields) for r in records)


def id_key(record_id: str) -> tuple[str, int, int, str]:
    """Sort key that puts keys in source order, and within a source numeric
    ids in numeric order ("9" < "10"); keys without a source come first."""
    source, record_id = split_key(record_id)
    return (source, 0, int(record_id), record_id) if record_id.isdecimal() else (source, 1, 0, record_id)


def id_order(ids: Sequence[str]) -> np.ndarray:
    """The positions of ``ids`` in :func:`id_key` order (int64).

    Ids of ASCII digits without a leading zero, up to 18 of them, are
    ordered as int64 numbers (8 bytes an id; ten million shuffled ones in
    7 s, on a machine busy with other work); any other id makes it sort by :func:`id_key`'s tuples (about
    100 bytes an id while it sorts)."""
    plain = all(i.isdecimal() and i.isascii() and len(i) <= 18 and (i[0] != "0" or len(i) == 1) for i in ids)
    if plain:
        return np.argsort(np.fromiter(map(int, ids), np.int64, len(ids)), kind="stable")
    return np.array(sorted(range(len(ids)), key=lambda n: id_key(ids[n])), np.int64)


def id_problem(record_id: str) -> str:
    """Why ``record_id`` breaks the id rule, or "" when it keeps it."""
    if not _ID.fullmatch(record_id) or _DOT_SEGMENT.search(record_id):
        return f"id {record_id[:40]!r} breaks the id rule ({ID_RULE})"
    return ""


def has_letters_or_digits(text: str) -> bool:
    """Whether ``text`` holds a letter or digit of any script: text of
    punctuation, symbols and spaces alone (``--- --``, ``_``) is nothing to
    compare."""
    return _LETTER_OR_DIGIT.search(text) is not None


def record_problem(record_id: str, text: str) -> str:
    """The rules every format shares: the id rule, some text, some letters or digits."""
    if problem := id_problem(record_id):
        return problem
    if not text:
        return f"id {record_id!r} has no text"
    if not has_letters_or_digits(text):
        return f"text of id {record_id!r} has no letters or digits"
    return ""


def field_problem(kind: str, name: str, value: str) -> str:
    """Why a field's value cannot be sent on as text (a lone surrogate, a
    control character but tab and line breaks), named as ``kind name``; ""
    when it can. The readers of every format and the service ask it."""
    if _SURROGATE.search(value):
        return f"not UTF-8 (in {kind} {name!r})"
    if control := _FIELD_CONTROL.search(value):
        return f"control character U+{ord(control.group()):04X} in {kind} {name!r}"
    return ""


def has_problem(*values: str) -> bool:
    """Whether :func:`field_problem` finds something in any of ``values``:
    one search of them all (a line break between them is no problem)."""
    return _ANY_PROBLEM.search("\n".join(values)) is not None


def size_problem(text: str) -> str:
    """Why a text is too long for a record (more than ``MAX_LINE_BYTES`` of
    UTF-8, what a line of a records file may hold), or "" when it is not."""
    if len(text) > MAX_LINE_BYTES // 4 and len(text.encode("utf-8", "surrogatepass")) > MAX_LINE_BYTES:
        return f"text longer than {MAX_LINE_BYTES} bytes"
    return ""
