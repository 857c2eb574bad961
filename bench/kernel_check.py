"""The verification kernel against the plain-Python similarity, on an index's candidates.

``check(solr)`` takes every candidate pair a report of that index verifies,
scores it both ways (the compiled kernel over the arrays the report makes as
the buckets stream in, as ``neardup report`` does, and ``similarity.similarity`` with ``number_agreement`` over dicts, as
the online query does) and says how many agree to the last bit; any pair
that differs is an error. ``bench.quality`` runs it on every labeled set.
"""

from __future__ import annotations

from neardup_solr.bulk import _weighed_candidates, scored
from neardup_solr.collisions import MAX_BUCKET
from neardup_solr.schema import TOKENS
from neardup_solr.similarity import CloseWords, Weights, number_agreement, numbers, similarity
from neardup_solr.solr import Solr
from neardup_solr.verify import text_vector


class KernelMismatch(AssertionError):
    pass


def check(solr: Solr) -> int:
    """How many candidates the kernel and the plain similarity score alike
    (all of them, or :class:`KernelMismatch` names the first that differs)."""
    found, weighed = _weighed_candidates(solr, MAX_BUCKET, None, lambda _: None)
    scores, levels = scored(found, weighed)
    texts = solr.texts(found.ids)
    weights = Weights(*solr.term_counts(TOKENS))
    vectors = {record_id: text_vector(weights, texts[record_id]) for record_id in found.ids}
    close = CloseWords(w for vector in vectors.values() for w in vector)
    for k, (a, b) in enumerate(found.pairs()):
        plain = similarity(vectors[a], vectors[b], close)
        level = number_agreement(numbers(vectors[a]), numbers(vectors[b]))
        if plain != scores[k] or level != levels[k]:
            raise KernelMismatch(f"{a} / {b}: kernel {scores[k]!r} level {levels[k]}, plain {plain!r} level {level}")
    return len(found)
