"""Online search: the near duplicates of one text, indexed or not.

The text is repaired and banded as at indexing time (with the settings kept
with the index); the records sharing a band key with it are its candidates
(``candidates.py``), each scored by the soft weighted cosine
(``verify.py``) and kept by the match model the last report kept with the
index (by the similarity and the agreement of the numbers), or a fixed
cut. A stream of queries reuses the document
frequencies it has read for a while, so a query costs one or two Solr
requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..match.candidates import LSH, candidates
from ..index.documents import DocumentBuilder
from ..text.analysis import text_tokens
from ..match.text_model import keeps_by_similarity
from ..results.pairs import Pair, ordered
from ..progress import Progress, Tally
from ..records.record import Record, id_key
from ..text.repair import repair
from ..index.schema import ID, TEXT, TOKENS
from ..match.similarity import CloseWords, Weights, number_agreement, numbers
from ..index.solr import Solr
from ..index.state import IndexSettings
from ..match.stored import load_model
from ..match.verify import SimilarityCheck


@dataclass(frozen=True)
class Match:
    """A record found like the one asked: its id and text, its similarity
    (records of one text; ``None`` for records of fields, whose fields'
    levels are the evidence), its distance (words, or fields, that differ)
    and its match probability (``None`` before any report's model)."""

    id: str
    similarity: float | None
    distance: int
    text: str
    probability: float | None = None


class OnlineSearch:
    """Near duplicates of one text, indexed or not, in at most two Solr
    requests: the records sharing its band keys (best ``per_record`` by keys
    shared), then the document frequencies of the words involved that it
    has not seen in the last ``DF_MAX_AGE`` seconds. Looking a word up costs
    Solr a seek per segment, and a stream of queries mostly repeats the
    common words (streets, cities), so a long-lived search asks for few.

    Matches are kept, and given a probability, by the match model the last
    report fitted and kept with the index (``match.text_model``): those whose
    similarity and number agreement give them a probability of at least 1/2.
    Before any report there is none, and the fixed cut of a model too small
    to fit keeps them (``model.keeps_by_similarity``). A given ``cut``
    overrides the model's choice. Creating one costs two Solr requests (the
    index settings and the model)."""

    DF_MAX_AGE = 60.0

    def __init__(self, solr: Solr, cut: float | None = None, per_record: int = LSH.per_record):
        self.solr = solr
        self.model = load_model(solr)
        self.cut = cut
        self.per_record = per_record
        self.builder = DocumentBuilder(IndexSettings.load(solr))
        self._doc_freq: dict[str, int] = {}
        self._doc_count = 0
        self._since = 0.0

    def weights(self, words: set[str]) -> Weights:
        """Weights for ``words``, from frequencies at most DF_MAX_AGE seconds old.

        Queries in several threads may share the search: stale frequencies
        are dropped by starting a new table, never by emptying the one
        another query is reading, and each query's weights hold its own
        words' frequencies."""
        if time.monotonic() - self._since > self.DF_MAX_AGE:
            self._doc_freq, self._since = {}, time.monotonic()
        known = self._doc_freq
        if missing := sorted(words.difference(known)):
            self._doc_count, found = self.solr.term_counts(TOKENS, missing)
            known.update({word: found.get(word, 0) for word in missing})
        return Weights(self._doc_count, {word: known[word] for word in words})

    def find(self, text: str, exclude: str | None = None, within: str = "") -> list[Match]:
        """The matches of ``text``, most similar first
        (ties by id); ``exclude`` is an id left out (the text's own record);
        ``within`` a source the matches must be of (all by default).
        Costs one or two Solr requests."""
        repaired = repair(text)
        doc = {ID: exclude or "", TEXT: text}
        found = candidates(self.solr, doc, LSH, self.builder.band_keys([repaired])[0], self.per_record, within)
        if not found:
            return []
        scores, levels = self.similarities(text, [other[TEXT] for other in found])
        if self.model is None:
            probabilities = [None] * len(found)
            kept = keeps_by_similarity(scores, self.cut)
        else:
            probabilities = self.model.probabilities(scores, levels)
            kept = self.model.keeps(scores, levels, self.cut)
        matches = [self.match(text, other, score, probability)
                   for other, score, probability, keep in zip(found, scores.tolist(), probabilities, kept.tolist())
                   if keep]
        return sorted(matches, key=lambda m: (-m.similarity, id_key(m.id)))

    def similarities(self, text: str, others: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The soft weighted cosine of ``text`` with each of ``others``, and
        the level of their numbers' agreement (``similarity.py``). Costs the
        request for the frequencies of words not seen in the last minute."""
        tokens = [text_tokens(text), *map(text_tokens, others)]
        weights = self.weights({w for words in tokens for w in words})
        mine, *theirs = (weights.vector(words) for words in tokens)
        # Only the query's words are compared with the others' (the similarity's first record is the query).
        check = SimilarityCheck(CloseWords(mine, (w for vector in theirs for w in vector)))
        scores = np.array([check.score(mine, vector) for vector in theirs])
        mine_numbers = numbers(mine)
        return scores, np.array([number_agreement(mine_numbers, numbers(vector)) for vector in theirs], np.int64)

    @staticmethod
    def match(text: str, other: Mapping[str, Any], similarity: float, probability: float | None) -> Match:
        """``other`` (a Solr document) as a match of ``text``, with their word edit distance."""
        return Match(other[ID], similarity, SimilarityCheck.distance(text, other[TEXT]), other[TEXT], probability)

    def pairs_with(self, records: Iterable[Record], progress: Progress | None = None) -> list[Pair]:
        """The pairs each of ``records`` (indexed already) makes with
        anything indexed, each pair once, smaller id first, in the order
        found. Costs one :meth:`find` per record; memory holds the pairs.
        ``progress`` is told of the step "finding their duplicates" (one
        unit a record)."""
        return pairs_with(lambda record: self.find(record.text, exclude=record.id), records, progress)


def pairs_with(find: Callable[[Record], list[Match]], records: Iterable[Record],
               progress: Progress | None = None) -> list[Pair]:
    """The pairs each of ``records`` makes with its matches (``find``, a
    record's matches, itself left out), each pair once, smaller id first,
    in the order found; ``progress`` is told of the step "finding their
    duplicates" (one unit a record)."""
    found: dict[frozenset[str], Pair] = {}
    tick = Tally(progress, "finding their duplicates", len(records) if isinstance(records, Sized) else None)
    for record in records:
        for match in find(record):
            pair = ordered(record.id, match.id, match.distance, match.similarity, match.probability)
            found.setdefault(pair.key, pair)
        tick(1)
    return list(found.values())
