"""An index of field records read back at once: every record's fields as columns.

A report of field records (``fields.matching``) reads every record's id,
fields and LSH band keys once, in id order, and compares them in memory;
this is that reading.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from ..fields.comparisons import Column
from ..fields.kinds import FieldProfile
from ..fields.matching import Records
from ..parallel import bounded_map, cores
from .schema import BAND_KEYS, ID, RANK, RECORD_FIELDS
from .solr import READ_BATCH, Solr


def read_records(solr: Solr, profiles: Sequence[FieldProfile], progress: Callable[[int], None] = lambda n: None
                 ) -> Records:
    """Every record's id, fields and band keys, in id order.

    Read as ``cores()`` streams at once, each a cursor over a slice of the
    records' ``rank`` (a hash of the key, so the slices hold alike many):
    Solr reads its stored fields on every core while the streams' pages
    are taken apart here. Costs one request per ``READ_BATCH`` records;
    memory holds each field's distinct raw values while reading and its
    distinct normal forms after, and 8 bytes a band key.
    """
    names = [p.name for p in profiles]
    streams = max(cores(), 1)
    told = threading.Lock()
    edges = [-(1 << 63) + (1 << 64) * n // streams for n in range(streams)] + [None]

    def stream(at: int) -> list[tuple[str, list, np.ndarray]]:
        low, high = edges[at], edges[at + 1]
        query = f"{RANK}:[{low} TO {'*' if high is None else high}" + ("]" if high is None else "}")
        read = []
        for page in _pages(solr.iter_docs([ID, RECORD_FIELDS, BAND_KEYS], q=query, batch=READ_BATCH)):
            keys = [doc.get(BAND_KEYS) or () for doc in page]
            flat = np.array([k for record in keys for k in record], np.int64).view(np.uint64)
            bounds = np.cumsum([0, *map(len, keys)])
            for doc, start, end in zip(page, bounds[:-1].tolist(), bounds[1:].tolist()):
                values = json.loads(doc.get(RECORD_FIELDS) or "{}")
                read.append((doc[ID], [values.get(name) or None for name in names],
                             flat[start:end]))
            with told:
                progress(len(page))
        return read

    found = [record for part in bounded_map(stream, range(streams), streams) for record in part]
    found.sort(key=lambda record: record[0])
    ids = [record[0] for record in found]
    columns = [Column.of(p.kind, [record[1][at] for record in found]) for at, p in enumerate(profiles)]
    return Records(ids, columns, [record[2] for record in found])


def _pages(docs: Iterable[dict]) -> Iterator[list[dict]]:
    """Documents in lists of ``READ_BATCH``, as a cursor's pages bring them."""
    page: list[dict] = []
    for doc in docs:
        page.append(doc)
        if len(page) == READ_BATCH:
            yield page
            page = []
    if page:
        yield page


__all__ = ["read_records"]
