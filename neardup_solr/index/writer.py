"""Writing records into Solr in batches, committing once at the end.

Building a batch's documents (repair, tokens, band keys) is CPU-bound
Python, and sending it is waiting on Solr. For short records Solr's JVM is
the slower side, so the indexing process builds each batch itself while
update requests are in flight. For long ones our Python is: from
``FORK_WORDS`` words a record on, forked workers on every core build the
batches and encode their update requests, and the indexing process only
sends them: bytes cross from a worker, not documents to be pickled and
unpickled (docs/scale.md has the figures).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sized
from functools import partial
from itertools import chain, islice

from .documents import DocumentBuilder
from ..parallel import cores, forked_map, unordered_map
from ..progress import Progress, Tally
from ..records.record import Record
from ..records.seen import SeenIds
from .solr import Solr, update_body
from .state import IndexSettings

# Records per update request: large enough that a request's overhead is
# small against its documents, small enough that four in flight hold little
# memory (a long document's shingles are the largest part of it).
BATCH_SIZE = 1000
# Update requests in flight: while Solr flushes a segment inside one, the others keep it busy (docs/scale.md);
# so they are taken as each is done, not in order, or the others would wait for the one flushing.
CONCURRENT_UPDATES = 4
# Mean words a record from which forked workers build documents: below, Solr is the slower side (docs/scale.md).
FORK_WORDS = 100


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
    distinct: bool = False,
    soft_commit: bool = False,
) -> int:
    """Index ``records`` and commit; returns how many records (distinct
    ids) were sent.

    One update request per ``batch_size`` records, ``CONCURRENT_UPDATES``
    in flight, and one commit; memory holds that many batches. An id given
    twice keeps its last text: requests in flight reach Solr in any order,
    so each id seen again is sent once more, with its last text, after all
    the others (memory holds those records; ``distinct``, records known to
    repeat no id, as a file's reader gives them, skips keeping track of
    the ids). ``progress`` is told of the step "indexing" (one unit a
    record; the total when ``records`` has a length). ``soft_commit``: the
    commit only makes them visible, Solr's update log keeping them
    (:meth:`~neardup_solr.index.solr.Solr.commit`). The settings are not
    saved here.
    """
    builder = DocumentBuilder(settings)
    tick = Tally(progress, "indexing", len(records) if isinstance(records, Sized) else None)
    seen = None if distinct else SeenIds()
    again: dict[str, Record] = {}
    repeats = 0

    def tracked(records: Iterable[Record]) -> Iterator[Record]:
        nonlocal repeats
        for number, record in enumerate(records):
            if seen is not None and seen.first(record.id, number) is not None:
                again[record.id] = record
                repeats += 1
            yield record

    def send(batch: tuple[int, bytes]) -> int:
        solr.add(batch[1])
        return batch[0]

    sent = 0
    try:
        for count in unordered_map(send, built(builder, batches(tracked(records), batch_size)), CONCURRENT_UPDATES):
            sent += count
            tick(count)
        if again:
            solr.add(builder.documents(list(again.values())))
    finally:
        if seen is not None:
            seen.close()
    solr.commit(soft=soft_commit)
    return sent - repeats


def built(builder: DocumentBuilder, records: Iterator[list[Record]]) -> Iterator[tuple[int, bytes]]:
    """Each batch's record count and update body, in order: built by forked
    workers on every core when the records average ``FORK_WORDS`` words or
    more and there is more than one batch, else here."""
    first = list(islice(records, 2))
    words = sum(record.text.count(" ") + 1 for record in first[0]) / len(first[0]) if first else 0
    workers = cores() if len(first) > 1 and words >= FORK_WORDS else 1
    if workers > 1:
        from ..lsh.minima import compile_kernel  # numba comes with it: long records' batches pay for it

        compile_kernel()  # once here, not in every worker
    return forked_map(partial(_encoded, builder), chain(first, records), workers)


def _encoded(builder: DocumentBuilder, records: list[Record]) -> tuple[int, bytes]:
    """A batch's record count and update body: a worker sends back bytes, not documents to pickle."""
    return len(records), update_body(builder.documents(records))
