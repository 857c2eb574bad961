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

from ..match.candidates import LSH, candidates, shared_candidates
from ..index.documents import DocumentBuilder
from ..text.analysis import text_tokens
from ..match.text_model import keeps_by_similarity
from ..results.pairs import Pair, ordered
from ..progress import Progress, Tally
from ..records.record import Record, id_key
from ..text.repair import repair
from ..index.schema import BAND_KEYS, ID, TEXT, TOKENS
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
    # Candidates read in one answer for several texts (find_all): ten
    # single queries' worth, so a write of a few records takes one request.
    SHARED_ROWS = 1000

    def __init__(self, solr: Solr, cut: float | None = None, per_record: int = LSH.per_record):
        self.solr = solr
        self.model = load_model(solr)
        self.cut = cut
        self.per_record = per_record
        self.builder = DocumentBuilder(IndexSettings.load(solr))
        self._doc_freq: dict[str, int] = {}
        self._doc_count = 0
        self._since = 0.0
        self._forgotten: frozenset[str] = frozenset()

    def weights(self, words: set[str]) -> Weights:
        """Weights for ``words``, from frequencies at most DF_MAX_AGE seconds
        old, and read since :meth:`forget` for the words it was told of.

        Queries in several threads may share the search: stale frequencies
        are dropped by starting a new table, never by emptying the one
        another query is reading, and each query's weights hold its own
        words' frequencies."""
        if time.monotonic() - self._since > self.DF_MAX_AGE:
            self._doc_freq, self._since, self._forgotten = {}, time.monotonic(), frozenset()
        known, forgotten = self._doc_freq, self._forgotten
        if missing := sorted(words.difference(known) | words.intersection(forgotten)):
            self._doc_count, found = self.solr.term_counts(TOKENS, missing)
            known.update({word: found.get(word, 0) for word in missing})
            if not forgotten.isdisjoint(missing):
                self._forgotten = self._forgotten.difference(missing)
        return Weights(self._doc_count, {word: known[word] for word in words})

    def forget(self, words: Iterable[str]) -> None:
        """Read the frequencies of ``words`` again at their next use: records
        holding them were written. No request."""
        self._forgotten = self._forgotten.union(words)

    def find(self, text: str, exclude: str | None = None, within: str = "") -> list[Match]:
        """The matches of ``text``, most similar first
        (ties by id); ``exclude`` is an id left out (the text's own record);
        ``within`` a source the matches must be of (all by default).
        Costs one or two Solr requests."""
        repaired = repair(text)
        doc = {ID: exclude or "", TEXT: text}
        return self._matches(text, candidates(self.solr, doc, LSH, self.builder.band_keys([repaired])[0],
                                              self.per_record, within))

    def find_all(self, texts: Sequence[str], excludes: Sequence[str | None], within: str = "") -> list[list[Match]]:
        """:meth:`find` of each of ``texts``, ``excludes`` holding each
        one's id left out (or ``None``): the same answers, in two Solr
        requests for them all while they share at most ``SHARED_ROWS``
        candidates (the records holding any of their band keys; each text's
        best ``per_record`` are chosen here by keys shared, then id, as
        Solr ranks them for one), and the frequencies of the words not seen
        in the last minute. Past that, :meth:`find` for each."""
        keys = self.builder.band_keys([repair(text) for text in texts])
        union = sorted({key for own in keys for key in own})
        found = shared_candidates(self.solr, union, self.SHARED_ROWS, within) if union else []
        if found is None:
            return [self.find(text, exclude, within) for text, exclude in zip(texts, excludes)]
        chosen = []
        for own, exclude in zip(keys, excludes):
            own = set(own)
            shared = [(-len(own.intersection(other[BAND_KEYS])), other[ID], other) for other in found
                      if other[ID] != exclude and not own.isdisjoint(other[BAND_KEYS])]
            chosen.append([other for _, _, other in sorted(shared, key=lambda s: s[:2])[:self.per_record]])
        # Their words' frequencies in one request, which each text's weighing then finds known.
        self.weights({word for text in texts for word in text_tokens(text)}
                     | {word for others in chosen for other in others for word in text_tokens(other[TEXT])})
        return [self._matches(text, others) for text, others in zip(texts, chosen)]

    def _matches(self, text: str, found: list[dict[str, Any]]) -> list[Match]:
        """Those of the candidates ``found`` that are matches of ``text``, most similar first (ties by id)."""
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
