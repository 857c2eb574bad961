"""Pairs, clusters and matches out as the tables people hold: an Arrow
table or a Parquet file (pyarrow is an extra,
imported only when used; a missing one is
:class:`~neardup_solr.errors.MissingExtra` naming the extra that installs it).

:func:`arrow_table` makes the columns of an output table
(:mod:`neardup_solr.results.outputs`) an Arrow table; :func:`write_parquet`
writes it atomically, and :func:`pair_rows` reads a Parquet pair file back
(a result converts itself: :class:`~neardup_solr.results.outputs.TableForms`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, NeardupError
from ..extras import require
from ..files import atomic_output
from ..records.tables import BATCH_ROWS

# Types of the output columns whose type is known, so an empty table has them too.
_COLUMN_TYPES = {"source_a": "string", "source_b": "string", "id_a": "string", "id_b": "string",
                 "text_a": "string", "text_b": "string", "distance": "int64",
                 "similarity": "float64", "probability": "float64", "cluster_id": "string", "size": "int64",
                 "id": "string", "text": "string", "source": "string", "explanation": "string"}


def arrow_table(columns: Sequence[str], values: Sequence[list[Any]]) -> Any:
    """Output columns (their names, and each one's values as the outputs
    hold them: :meth:`~neardup_solr.results.outputs.Table.column_values`)
    as a pyarrow Table, each typed as CSV output's column is."""
    pa = require("pyarrow", "Arrow output", "parquet")
    arrays = []
    for name, column in zip(columns, values):
        kind = _COLUMN_TYPES.get(name)
        if kind is None and column and all(isinstance(v, list) or v is None for v in column):
            kind = pa.list_(pa.string())
        arrays.append(pa.array(column, type=kind if kind is not None else None))
    return pa.table(arrays, names=list(columns))


def check_writable() -> None:
    """Fail now, before a command's work, if Parquet cannot be written.

    Raises:
        MissingExtra: pyarrow is not installed.
    """
    require("pyarrow.parquet", "writing Parquet")


def write_parquet(path: Path | str, columns: Sequence[str], values: Sequence[list[Any]]) -> int:
    """Write output columns (as :func:`arrow_table` takes them) to ``path`` as Parquet, atomically (the file appears
    only when complete); returns the rows written. Memory holds the table
    twice (its rows and their Arrow columns).

    Raises:
        MissingExtra: pyarrow is not installed.
        NeardupError: the path ends in ``.gz`` (Parquet compresses its
            own columns), or the file could not be written.
    """
    pq = require("pyarrow.parquet", "writing Parquet")
    if str(path).endswith(".gz"):
        raise NeardupError(f"cannot write {path}: Parquet compresses its own columns",
                           hint="name the file .parquet, without .gz")
    arrow = arrow_table(columns, values)
    with atomic_output(path, binary=True) as out:
        pq.write_table(arrow, out)
    return arrow.num_rows


def pair_rows(path: Path | str) -> Iterator[tuple[int, dict[str, str]]]:
    """The rows of a Parquet pair file (as :func:`write_parquet` writes
    them), numbered from 1, as column name -> value text."""
    pq = require("pyarrow.parquet", "reading Parquet")
    pa = require("pyarrow", "reading Parquet")
    try:
        file = pq.ParquetFile(path)
    except pa.ArrowException as err:
        raise InputError(f"{path}: not a Parquet file ({err})", hint="give a pair file neardup wrote") from None
    try:
        row = 0
        for batch in file.iter_batches(batch_size=BATCH_ROWS):
            for values in batch.to_pylist():
                row += 1
                yield row, {k: "" if v is None else str(v) for k, v in values.items()}
    finally:
        file.close()
