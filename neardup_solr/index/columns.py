"""An index of field records read back at once: every record's fields as columns.

A report of field records (``fields.matching``) reads every record's id,
fields and LSH band keys once, in id order, and compares them in memory;
this is that reading.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from operator import itemgetter

import numpy as np

from ..fields.comparisons import Column
from ..fields.kinds import FieldProfile
from ..fields.matching import BandKeys, Records
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

    def stream(at: int) -> tuple[list[str], list[list[str | None]], list[np.ndarray], list[np.ndarray]]:
        low, high = edges[at], edges[at + 1]
        query = f"{RANK}:[{low} TO {'*' if high is None else high}" + ("]" if high is None else "}")
        ids, rows, counts, keys = [], [], [], []
        for page in _pages(solr.iter_docs([ID, RECORD_FIELDS, BAND_KEYS], q=query, batch=READ_BATCH)):
            page_keys = [doc.get(BAND_KEYS) or () for doc in page]
            counts.append(np.fromiter(map(len, page_keys), np.int64, len(page_keys)))
            keys.append(np.fromiter(chain.from_iterable(page_keys), np.int64, int(counts[-1].sum())))
            for doc in page:
                values = json.loads(doc.get(RECORD_FIELDS) or "{}")
                ids.append(doc[ID])
                rows.append([values.get(name) or None for name in names])
            with told:
                progress(len(page))
        return ids, rows, counts, keys

    parts = list(bounded_map(stream, range(streams), streams))
    ids = [record_id for part in parts for record_id in part[0]]
    rows = [row for part in parts for row in part[1]]
    read = BandKeys(np.concatenate([np.zeros(0, np.int64), *(k for part in parts for k in part[3])]).view(np.uint64),
                    np.concatenate([np.zeros(0, np.int64), *(c for part in parts for c in part[2])]))
    order = sorted(range(len(ids)), key=ids.__getitem__)
    rows = list(map(rows.__getitem__, order))
    columns = [Column.of(p.kind, list(map(itemgetter(at), rows))) for at, p in enumerate(profiles)]
    return Records(list(map(ids.__getitem__, order)), columns, read.reordered(np.array(order, np.int64)))


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
