"""Records weighed and candidates scored, in pieces of work on every core.

Each candidate is scored by the soft weighted cosine and given the level
of its numbers' agreement, by the compiled kernel over the records as
arrays (:mod:`neardup_solr.match.kernel`).

Weighing the records (repair, words, weights) and making the kept pairs
(repair, word edit distance) are CPU-bound Python, and each costs about as
much as its records have words. The work is cut into pieces of
``VERIFY_SPAN`` units (the unit: 20 us of Python, what scoring a pair of
short records cost before the kernel; weighing a record or making a kept
pair costs ``TWICE`` that), and from ``FORK_FROM`` units of work on, every
core takes pieces in a forked worker (:func:`pieces`, :func:`workers_for`);
the results and their order do not depend on how many workers ran. The
kernel runs on every core's thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from itertools import chain

import numpy as np

from ..lsh.bands import band_range
from .buckets import Candidates, Pairing, Skipped, bucket_reader
from ..arrays import drained
from ..parallel import bounded_map, cores, forked_map
from ..progress import Progress, Tally
from ..index.schema import BAND_KEYS, MD5, TOKENS
from .similarity import Weights
from ..index.solr import Solr
from ..index.state import IndexSettings
from .verify import text_vector

if TYPE_CHECKING:
    from .kernel import CloseTable, Rows, Vocabulary


# Units of work (see above) in one piece of work, and how many it takes
# before forking workers pays for itself.
VERIFY_SPAN = 1 << 16
FORK_FROM = 4 * VERIFY_SPAN
# Distinct words of a short record (a business name and address; docs/scale.md),
# the records the unit is measured on: a document of 350 words costs about 40
# times the work.
RECORD_WORDS = 9
# The smallest piece of work, however long the records: a piece's start-up
# (a forked worker's task, its results sent back) must stay small beside it.
MIN_SPAN = 1 << 10
# Weighing a record (repair, tokens, weights, numbers) and making a kept pair
# (two repairs, a word edit distance and a Jaccard) each cost about two
# units (docs/scale.md).
TWICE = 2


def weighed_candidates(solr: Solr, settings: IndexSettings, max_bucket: int | None, progress: Progress | None,
                        warn: Callable[[str], None]) -> tuple[Candidates, Weighed]:
    """Every pair sharing a band key (in a bucket of at most ``max_bucket``)
    or an MD5, and their records weighed (each record's text weighed when
    it first arrives, then dropped)."""
    weights = Weights(*solr.term_counts(TOKENS))
    skipped = Skipped()
    tick = Tally(progress, "colliding bands", settings.bands)
    pairing = Pairing()

    def batches() -> Iterator[list[str]]:
        # A record's text comes with the first bucket it is in, and is weighed then.
        batch, size = [], 0
        with bucket_reader(solr) as reader:
            for found in chain(
                reader.batches(BAND_KEYS, [band_range(b) for b in range(settings.bands)], max_bucket=max_bucket,
                               skipped=skipped, progress=tick),
                reader.batches(MD5, [""], max_bucket=None),
            ):
                pairing.add(found)
                batch += found.texts
                size += sum(map(len, found.texts))
                if size >= WEIGH_CHARACTERS:
                    yield batch
                    batch, size = [], 0
        if batch:
            yield batch

    from .kernel import CloseTable, Vocabulary  # numba comes with it: imported when a report scores

    # Forking pays for itself on a large index: decided from its size, as the records arrive unknown.
    words = sum(weights.doc_freq.values()) / weights.doc_count if weights.doc_count else RECORD_WORDS
    vocabulary = Vocabulary()
    # Each piece's words are numbered as it arrives: held as strings to the end, they cost memory (docs/scale.md).
    rows = _rows(forked_map(partial(_vectors, weights), batches(), workers_for(weights.doc_count, words, TWICE)),
                 vocabulary)
    if skipped.keys:
        warn(f"skipped {skipped.keys} band keys held by more than {max_bucket} records each "
             f"(up to {skipped.largest}): near-identical groups that large are left out; "
             "a larger bucket limit includes them")
    found, arrival = pairing.candidates()
    return found, Weighed(rows, CloseTable.needed(vocabulary.words, rows, found.left, found.right, arrival), arrival,
                          vocabulary.words)


@dataclass
class Weighed:
    """What :func:`scored` needs of the records (:func:`weigh`): their
    weighted words as rows (by the candidates' record numbers) and the
    close words of their vocabulary."""

    rows: Rows
    close: CloseTable
    row_of: np.ndarray | None = None  # each record's row, by its number in the candidates (default: the same)
    spellings: list[str] | None = None  # the words the rows number

    @property
    def words(self) -> float:
        """The records' distinct words on average."""
        return len(self.rows.words) / len(self.rows) if len(self.rows) else RECORD_WORDS


def weigh(solr: Solr, texts: Mapping[str, str], found: Candidates) -> Weighed:
    """The weighted words of the candidates' records, by the index's
    document frequencies, as rows in ``found.ids``' order, and the close
    words the candidates need (:meth:`CloseTable.needed`): what
    :func:`lsh_pairs` makes as the buckets arrive, for candidates found
    another way.

    Raises:
        SolrUnavailable, SolrFailure: Solr could not be reached or refused.
    """
    weights = Weights(*solr.term_counts(TOKENS))
    from .kernel import CloseTable, Vocabulary  # numba comes with it: imported when a report scores

    ids = found.ids
    # Every word counted, not only distinct ones: repair reads them all.
    words = sum(texts[record_id].count(" ") + 1 for record_id in ids) / len(ids) if ids else RECORD_WORDS
    parts = forked_map(lambda span: _vectors(weights, [texts[record_id] for record_id in ids[span[0]:span[1]]]),
                       pieces(len(ids), words, TWICE), workers_for(len(ids), words, TWICE))
    vocabulary = Vocabulary()
    rows = _rows(parts, vocabulary)
    return Weighed(rows, CloseTable.needed(vocabulary.words, rows, found.left, found.right), None, vocabulary.words)


# Characters of text weighed in one piece of work while the buckets are read:
# about 3,000 short records or 70 documents of 350 words.
WEIGH_CHARACTERS = 200_000


def _vectors(weights: Weights, texts: list[str]) -> tuple[np.ndarray, list[str], np.ndarray]:
    """The texts' weighted words: how many each has, the words, their weights."""
    lengths, words, values = [], [], []
    for text in texts:
        vector = text_vector(weights, text)
        lengths.append(len(vector))
        words.extend(vector)
        values.extend(vector.values())
    return np.array(lengths, np.int64), words, np.array(values, np.float64)


def _rows(parts: Iterable[tuple[np.ndarray, list[str], np.ndarray]], vocabulary: Vocabulary) -> Rows:
    """Rows of the records :func:`_vectors` weighed, in order, their words numbered by ``vocabulary``."""
    from .kernel import Rows

    lengths, numbered, values = [np.zeros(0, np.int64)], [np.zeros(0, np.int32)], [np.zeros(0)]
    for count, words, weights in parts:
        lengths.append(count)
        numbered.append(vocabulary.numbers(words))
        values.append(weights)
    counts = np.concatenate(lengths)
    start = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=start[1:])
    words = _joined(numbered)
    return Rows(start, words, _joined(values), vocabulary.digits())


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The parts (the first of them giving the type: :func:`_rows`
    starts each list with an empty one) concatenated, ``parts`` emptied: each part let go once
    copied, into an array whose pages are taken only as they are written,
    so the parts and the whole are not held at once (at 10M records the
    weights alone were 0.5 GB twice over)."""
    joined = np.empty(sum(map(len, parts)), parts[0].dtype)
    at = 0
    for part in drained(parts):
        joined[at:at + len(part)] = part
        at += len(part)
    return joined


# Candidate pairs scored by one call of the kernel: its tables are the
# vocabulary's size, made once a call.
SCORE_SPAN = 1 << 18


def scored(found: Candidates, weighed: Weighed,
           tick: Callable[[int], None] = lambda done: None) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate's similarity, and its level of number agreement, by the
    compiled kernel (``kernel.py``) on every core's thread.

    Args:
        found: the candidate pairs.
        weighed: their records' weighted words (:func:`weigh`), in ``found.ids``' order.
        tick: told how many more pairs are done, a piece of work at a time.

    Returns:
        The similarities (float64) and levels (int8), in ``found``'s order.
    """
    from .kernel import score_pairs  # numba comes with it: imported when a report scores

    spans = [(start, min(start + SCORE_SPAN, len(found))) for start in range(0, len(found), SCORE_SPAN)]

    def part(span: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        return score_pairs(weighed.rows, weighed.close, found.left[span[0]:span[1]], found.right[span[0]:span[1]],
                           weighed.row_of)

    parts = []
    for (start, end), done in zip(spans, bounded_map(part, spans, cores())):
        tick(end - start)
        parts.append(done)
    if not parts:
        return np.zeros(0), np.zeros(0, np.int8)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def pieces(count: int, words: float = RECORD_WORDS, cost: float = 1) -> list[tuple[int, int]]:
    """``count`` pieces of work on records of ``words`` words on average,
    each costing ``cost`` pairs' scoring, cut into pieces of ``VERIFY_SPAN``
    short records' pairs' worth of work: (start, end) each."""
    span = max(MIN_SPAN, int(VERIFY_SPAN * RECORD_WORDS / (max(words, RECORD_WORDS) * cost)))
    return [(start, min(start + span, count)) for start in range(0, count, span)]


def workers_for(count: int, words: float = RECORD_WORDS, cost: float = 1) -> int:
    """Forked workers for ``count`` pieces of work on records of ``words``
    words on average, each costing ``cost`` pairs' scoring: every core once
    the work is worth forking for."""
    return cores() if count * cost * max(words, RECORD_WORDS) >= FORK_FROM * RECORD_WORDS else 1
