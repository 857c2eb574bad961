"""The reference modes in bulk: every record's candidates, one Solr query
each, checked by word edit distance.

For each record, in id order as Solr pages them, the ``per_record`` records
sharing most word shingles (the shingles mode) or MinHash values (the
minhash mode) with it and its first word (``candidates.py``) are checked
by :class:`~neardup_solr.match.verify.EditDistanceCheck`; a pair is made by its
smaller id only, so each comes once. ``CONCURRENT_QUERIES`` records are
searched at a time, their pairs yielded in record order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..match.candidates import Mode, candidates, query_values
from ..index.state import IndexSettings
from ..errors import LeanIndex
from ..results.pairs import Pair
from ..parallel import bounded_map
from ..progress import Progress, Tally
from ..records.record import id_key
from ..index.schema import FIRST_WORD, ID, MD5, TEXT
from ..index.solr import Solr
from ..match.verify import EditDistanceCheck

CONCURRENT_QUERIES = 4


def reference_pairs(solr: Solr, mode: Mode, *, per_record: int | None = None, max_dist: int = 2,
                    minhash_values: int = 20, progress: Progress | None = None) -> Iterator[Pair]:
    """Every pair of ``mode`` (SHINGLES or MINHASH) within ``max_dist`` words
    of edit distance, each once, smaller id first.

    Args:
        solr: the index, built with the reference fields.
        mode: :data:`~neardup_solr.match.candidates.SHINGLES` or
            :data:`~neardup_solr.match.candidates.MINHASH`.
        per_record: candidates checked per record (by default the mode's,
            10).
        max_dist: the largest word edit distance kept.
        minhash_values: MinHash values compared (the minhash mode only).
        progress: told of the step "searching" (one unit a record).

    Returns:
        A generator of pairs: nothing is asked of Solr before the first is
        taken. Costs one query per record (four in flight) and a page of
        records per 1000; memory holds a page and its candidates.

    Raises:
        LeanIndex: the index has no reference fields.
        TooFewSignatures: ``minhash_values`` exceeds what a record was indexed with.
        SolrUnavailable, SolrFailure: Solr could not be reached or refused.
    """
    if not IndexSettings.load(solr).reference:
        raise LeanIndex(mode.name)
    verifier = EditDistanceCheck(max_dist)
    fields = [ID, TEXT, MD5, FIRST_WORD, mode.field]
    tick = Tally(progress, "searching", solr.count() if progress is not None else None)

    def pairs_of(doc: dict[str, Any]) -> list[Pair]:
        mine = verifier.prepare(doc)
        found = []
        for other in candidates(solr, doc, mode, query_values(doc, mode, minhash_values), per_record or mode.per_record):
            if id_key(other[ID]) > id_key(doc[ID]) and (distance := verifier.check(doc, mine, other)) is not None:
                found.append(Pair(doc[ID], other[ID], distance))
        return found

    for pairs in bounded_map(pairs_of, solr.iter_docs(fields), CONCURRENT_QUERIES):
        tick(1)
        yield from pairs
