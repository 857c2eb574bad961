"""Writing records into Solr in batches, committing once at the end."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sized
from itertools import islice

from .documents import DocumentBuilder, IndexSettings
from .parallel import bounded_map
from .progress import Progress, Tally
from .records import Record
from .solr import Solr

# Records per update request: large enough that a request's overhead is
# small against its documents, small enough that four in flight hold little
# memory (a long document's shingles are the largest part of it).
BATCH_SIZE = 1000
# Update requests in flight: while Solr flushes a segment inside one, the
# others keep both cores busy. On 1M records and 2 cores four took 82-99 s,
# two 87-97 s: no slower, and the flush pauses are filled.
CONCURRENT_UPDATES = 4


def batches(records: Iterable[Record], size: int) -> Iterator[list[Record]]:
    it = iter(records)
    while batch := list(islice(it, size)):
        yield batch


def index_records(
    solr: Solr,
    records: Iterable[Record],
    settings: IndexSettings = IndexSettings(),
    *,
    batch_size: int = BATCH_SIZE,
    progress: Progress | None = None,
) -> int:
    """Index ``records`` and commit; returns how many were sent.

    One update request per ``batch_size`` records, ``CONCURRENT_UPDATES``
    in flight, and one commit; memory holds that many batches. ``progress``
    is told of the step "indexing" (one unit a record; the total when
    ``records`` has a length). The settings are not saved here.
    """
    builder = DocumentBuilder(settings)
    tick = Tally(progress, "indexing", len(records) if isinstance(records, Sized) else None)

    def send(batch: list[Record]) -> int:
        solr.add(builder.documents(batch))
        return len(batch)

    sent = 0
    for count in bounded_map(send, batches(records, batch_size), CONCURRENT_UPDATES):
        sent += count
        tick(count)
    solr.commit()
    return sent
