"""Pairs, and pair files: ``id<TAB>neighbour_id<TAB>edit_distance[<TAB>similarity[<TAB>probability]]``.

A :class:`Pair` is two records found to be near duplicates, as every stage
after the candidates passes it on: the two ids, their word edit distance,
and in the default mode their similarity, match probability and, when
asked for, why.

One pair per line; the default mode adds the similarity it verified with
and, where a match model was fitted, the pair's probability of being a
true match.
Each pair is written once, smaller id first, lines in id order, so two runs
that find the same pairs write the same bytes. Files are written to a
temporary name and renamed when complete: a crash never leaves a file that
looks finished. CSV, JSON Lines and Parquet, and texts beside the ids,
are written and read as well (:mod:`neardup_solr.results.outputs` describes them).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..errors import InputError
from ..files import reading
from .outputs import Table, TableForms, TextLookup, counted, pair_table, save_table
from ..records.record import id_key, keyed, source_of
from ..records.sources import STDIN, RecordFile, open_bytes

if TYPE_CHECKING:
    from ..match.summary import ReportSummary

PAIR_COLUMNS = ("id_a", "id_b", "distance", "similarity", "probability")
# A Parquet file's first (and last) bytes.
PARQUET_MAGIC = b"PAR1"
# The ids' columns of a pair file whose records have sources (outputs.pair_table).
SOURCED_COLUMNS = ("source_a", "id_a", "source_b", "id_b")


class Pair(NamedTuple):
    """Two records found alike: their ids, distance (:func:`distance_name`) and, in the default mode, more."""

    a: str
    b: str
    distance: int
    similarity: float | None = None
    probability: float | None = None
    # Why the pair has its probability, in brief (``evidence.Explanation.brief``), when asked for.
    explanation: str | None = None

    @property
    def key(self) -> frozenset[str]:
        return frozenset((self.a, self.b))


class PairTables(TableForms):
    """Pairs as the tables people hold: :meth:`to_arrow`, :meth:`to_pandas`
    and :meth:`to_polars` give the columns of CSV output
    (:func:`neardup_solr.results.outputs.pair_table`), and a notebook shows the
    first of them. A mixin for anything that iterates pairs; a pair list is
    :class:`Pairs`."""

    # Whether the pairs' records are records of sources, whether or not a pair
    # is there to show it: their table then names the sources.
    sourced: bool = False

    def table(self) -> Table:
        return pair_table(self)


class HeldPairs(PairTables):
    """A report's result that holds its pairs (``pairs``) and what the report
    says of them (``summary``): iterating it iterates the pairs, and it
    converts to a table (:class:`PairTables`)."""

    pairs: list[Pair]
    summary: ReportSummary

    def __iter__(self) -> Iterator[Pair]:
        return iter(self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)

    def _line(self, *about: str) -> str:
        """What a notebook shows of it, one line: how many pairs, ``about``
        them, and the summary's estimates (``Pairs(230 pairs, estimated
        precision 0.99 recall 0.97)``)."""
        estimated = self.summary.estimated
        told = () if estimated is None else \
            (f"estimated precision {estimated.precision:.2f} recall {estimated.recall:.2f}",)
        return f"Pairs({', '.join((counted(len(self.pairs), 'pair'), *about, *told))})"


class Pairs(list, PairTables):
    """A list of pairs that converts to a table (:class:`PairTables`)."""

    def __repr__(self) -> str:
        return f"Pairs({counted(len(self), 'pair')})"


class PairStream(PairTables):
    """Pairs as they are found (a generator's), that convert to a table once
    (:class:`PairTables`): iterating it, or converting it, takes them."""

    def __init__(self, pairs: Iterable[Pair]):
        self._pairs = iter(pairs)

    def __iter__(self) -> Iterator[Pair]:
        return self._pairs

    def __next__(self) -> Pair:
        return next(self._pairs)

    def __repr__(self) -> str:
        return "PairStream(pairs as they are found: iterate it, or convert it once)"

    def _repr_html_(self) -> None:
        return None  # showing them would take them: the notebook shows the repr


def ordered(a: str, b: str, distance: int, similarity: float | None = None,
            probability: float | None = None, explanation: str | None = None) -> Pair:
    return Pair(*((a, b) if id_key(a) <= id_key(b) else (b, a)), distance, similarity, probability, explanation)


def distance_name(pairs: Sequence[Pair]) -> str:
    """What the pairs' distance counts: the fields that differ, for pairs of
    field records (each with a match probability and no similarity), else
    the word edit distance of their texts."""
    fields = bool(pairs) and all(getattr(p, "probability", None) is not None and getattr(p, "similarity", None) is None
                                 for p in pairs)
    return "fields that differ" if fields else "word edit distance"


def one_to_one(pairs: Iterable[Pair]) -> list[Pair]:
    """At most one partner for each record in each other source: ``pairs``
    taken greedily, most probable first (ties: the higher similarity, then
    id order), each kept unless one of its records already has a partner
    in the other's source. Pairs within one source are left as they are.

    This is the stable matching of the pairs: no pair left out has two
    records that would both rather have each other than the partners they
    were given (or none), each record preferring the pair that comes first
    in that order. As the order is total, that matching is the only stable
    one (with distinct probabilities, the order of the ties never counts).
    Pairs without a probability (no model fitted) go by similarity.

    Returns:
        The kept pairs, in the order given. Costs a sort of the pairs.
    """
    pairs = list(pairs)
    taken: set[tuple[str, str]] = set()
    kept: set[int] = set()
    for at in sorted(range(len(pairs)), key=lambda n: _preference(pairs[n])):
        a, b = pairs[at].a, pairs[at].b
        source_a, source_b = source_of(a), source_of(b)
        if source_a != source_b:
            ends = ((a, source_b), (b, source_a))
            if ends[0] in taken or ends[1] in taken:
                continue
            taken.update(ends)
        kept.add(at)
    return [pair for at, pair in enumerate(pairs) if at in kept]


def _preference(pair: Pair) -> tuple:
    """Where ``pair`` stands in :func:`one_to_one`'s order: the most probable first."""
    probability = -1.0 if pair.probability is None else pair.probability
    similarity = -1.0 if pair.similarity is None else pair.similarity
    return -probability, -similarity, id_key(pair.a), id_key(pair.b)


def write_pairs(path: Path | str, pairs: Iterable[Pair], format: str | None = None,
                texts: TextLookup | None = None) -> int:
    """Write ``pairs`` to ``path`` as ``format`` (by default as its name
    implies, TSV for other names), with both texts when ``texts`` looks them
    up; returns how many."""
    return save_table(path, pair_table(pairs, texts), format)


def read_pairs(path: Path | str) -> list[Pair]:
    """The pairs of a file :func:`write_pairs` wrote, in any of its formats,
    told apart by the first line (a JSON object, the CSV header, or TSV);
    gzip is read through; Parquet is told by its first bytes."""
    if _is_parquet(path):
        from .arrow import pair_rows  # pyarrow, an extra: imported only when used

        with reading(path, "pairs"):
            return [_pair(path, number, fields) for number, fields in pair_rows(path)]
    with reading(path, "pairs"), open_bytes(RecordFile.of(path)) as opened:
        text = io.TextIOWrapper(opened.stream, encoding="utf-8-sig", newline="")
        first = text.readline()
        lines = chain([first], text)
        return [_pair(path, number, fields) for number, fields in _rows(lines, first, path)]


def _is_parquet(path: Path | str) -> bool:
    """Whether the file ``path`` starts as Parquet does (standard input never does)."""
    if str(path) == STDIN:
        return False
    with reading(path, "pairs"), open(path, "rb") as start:
        return start.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC


def _rows(lines: Iterator[str], first: str, path: Path | str) -> Iterator[tuple[int, dict[str, str]]]:
    """Numbered rows of a pair file, as column name -> value text."""
    if first.startswith((",".join(PAIR_COLUMNS[:2]) + ",", ",".join(SOURCED_COLUMNS) + ",")):
        reader = csv.DictReader(lines)
        for fields in reader:
            yield reader.line_num, fields
        return
    if first.lstrip().startswith("{"):
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    fields = json.loads(line)
                except ValueError as err:
                    raise InputError(f"{path}:{number}: not JSON: {err}") from None
                if not isinstance(fields, dict):
                    raise InputError(f"{path}:{number}: not a JSON object")
                yield number, {k: "" if v is None else str(v) for k, v in fields.items()}
        return
    columns = PAIR_COLUMNS
    for number, line in enumerate(lines, start=1):
        cells = line.rstrip("\r\n").split("\t")
        if number == 1 and (cells[:2] == list(PAIR_COLUMNS[:2]) or cells[:4] == list(SOURCED_COLUMNS)):
            columns = tuple(cells)  # a pair file with texts names its columns
            continue
        if line.strip():
            if len(cells) < 2:
                raise InputError(f"{path}:{number}: expected id<TAB>neighbour_id<TAB>distance")
            yield number, dict(zip(columns, cells))


def _pair(path: Path | str, number: int, fields: dict[str, str]) -> Pair:
    a, b = (fields.get(name) or "" for name in PAIR_COLUMNS[:2])
    if not a.strip() or not b.strip():
        raise InputError(f"{path}:{number}: expected the ids of a pair ({', '.join(PAIR_COLUMNS[:2])})")
    a, b = (keyed((fields.get(name) or "").strip(), record_id.strip())
            for name, record_id in zip(SOURCED_COLUMNS[::2], (a, b)))
    distance = fields.get("distance") or "0"
    if not distance.strip().isdigit():
        raise InputError(f"{path}:{number}: distance {distance!r} is not a whole number")
    numbers = [fields.get(name) or "" for name in PAIR_COLUMNS[3:]]
    try:
        similarity, probability = (float(f) if f.strip() else None for f in numbers)
    except ValueError:
        raise InputError(f"{path}:{number}: similarity or probability {numbers!r} is not a number") from None
    return ordered(a.strip(), b.strip(), int(distance), similarity, probability, fields.get("explanation") or None)
