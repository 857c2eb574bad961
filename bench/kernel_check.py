"""The verification kernel against the plain-Python similarity, on an index's candidates.

``check(solr)`` takes every candidate pair a report of that index verifies,
scores it both ways (the compiled kernel over the arrays the report makes as
the buckets stream in, as ``neardup report`` does, and
``similarity.similarity`` with ``number_agreement`` over dicts, as the online
query does), says how many agree to the last bit (any pair that differs is
an error) and times both in CPU seconds (every thread's): each side's close
words and its scoring, as a report before the kernel and one with it do
them. ``bench.quality`` runs it on every labeled set.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from neardup_solr.match.weighing import weighed_candidates
from neardup_solr.lsh.bands import MAX_BUCKET
from neardup_solr.index.state import IndexSettings
from neardup_solr.match.kernel import CloseTable, score_pairs
from neardup_solr.index.schema import TOKENS
from neardup_solr.match.similarity import CloseWords, Weights, number_agreement, numbers, similarity
from neardup_solr.index.solr import Solr
from neardup_solr.match.verify import text_vector


class KernelMismatch(AssertionError):
    pass


@dataclass
class Checked:
    pairs: int
    plain_seconds: float  # CPU seconds: close words of the vocabulary (rapidfuzz) and dicts scored in Python
    kernel_seconds: float  # CPU seconds: the close words the candidates need and the compiled scoring

    @property
    def speedup(self) -> float:
        return self.plain_seconds / self.kernel_seconds if self.kernel_seconds else float("inf")


def check(solr: Solr) -> Checked:
    """Every candidate scored both ways, alike (or :class:`KernelMismatch`
    names the first that differs), and how long each way took."""
    found, weighed = weighed_candidates(solr, IndexSettings.load(solr), MAX_BUCKET, None, lambda _: None)
    score_pairs(weighed.rows, weighed.close, found.left[:1], found.right[:1], weighed.row_of)  # compiled or loaded
    started = time.process_time()
    close = CloseTable.needed(weighed.spellings, weighed.rows, found.left, found.right, weighed.row_of)
    scores, levels = score_pairs(weighed.rows, close, found.left, found.right, weighed.row_of)
    kernel_seconds = time.process_time() - started
    texts = solr.texts(found.ids)
    weights = Weights(*solr.term_counts(TOKENS))
    vectors = {record_id: text_vector(weights, texts[record_id]) for record_id in found.ids}
    digits = {record_id: numbers(vector) for record_id, vector in vectors.items()}
    started = time.process_time()
    close = CloseWords(w for vector in vectors.values() for w in vector)
    plain = [(similarity(vectors[a], vectors[b], close), number_agreement(digits[a], digits[b]))
             for a, b in found.pairs()]
    plain_seconds = time.process_time() - started
    for k, ((a, b), (score, level)) in enumerate(zip(found.pairs(), plain)):
        if score != scores[k] or level != levels[k]:
            raise KernelMismatch(f"{a} / {b}: kernel {scores[k]!r} level {levels[k]}, plain {score!r} level {level}")
    return Checked(len(found), plain_seconds, kernel_seconds)
