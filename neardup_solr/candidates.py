"""Which records look like which: candidates from Solr, then verification.

Three modes, each a Solr field whose shared values make candidates:

- ``lsh`` (the default): records sharing at least one LSH band key, found
  for all records at once from the keys' buckets (``collisions.py``), kept
  when the match model fitted to all their similarities (``similarity.py``,
  ``model.py``) gives them a probability of at least 1/2, or when their
  similarity reaches a given threshold; :func:`candidates` asks the same for
  one record;
- ``shingles`` and ``minhash`` (the reference workflow): for each record,
  the records sharing word shingles or MinHash values and the same first
  word, the best ``rows`` by values shared, kept within ``max_dist`` words
  of edit distance.

Each pair is reported once, smaller id first.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from itertools import chain
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from .bands import band_prefix
from .collisions import MAX_BUCKET, Skipped, buckets, pair_up
from .documents import DocumentBuilder, IndexSettings, load_model, repaired_tokens
from .errors import NeardupError
from .model import MatchModel, fit, histogram
from .pairs import Pair
from .parallel import bounded_map, cores, forked_map
from .records import id_key
from .repair import repair
from .schema import BAND_KEYS, FIRST_WORD, ID, MD5, MINHASH_VALUES, TEXT, TOKENS, WORD_SHINGLES
from .signatures import untag
from .similarity import DEFAULT_THRESHOLD, CloseWords, Vector, Weights, number_agreement, numbers, similarity
from .solr import Solr, overlap_query, term
from .text import normalize, words
from .verify import word_distance

CONCURRENT_QUERIES = 4
# Candidate pairs verified in one piece of work, and how many it takes
# before forking workers pays for itself.
VERIFY_SPAN = 1 << 16
FORK_FROM = 4 * VERIFY_SPAN


@dataclass(frozen=True)
class Mode:
    name: str
    field: str
    rows: int
    same_first_word: bool


LSH = Mode("lsh", BAND_KEYS, rows=100, same_first_word=False)
SHINGLES = Mode("shingles", WORD_SHINGLES, rows=10, same_first_word=True)
MINHASH = Mode("minhash", MINHASH_VALUES, rows=10, same_first_word=True)
MODES = {mode.name: mode for mode in (LSH, SHINGLES, MINHASH)}


def query_values(doc: dict[str, Any], mode: Mode, signatures: int) -> list[str]:
    values = doc.get(mode.field, [])
    if mode is MINHASH:
        values = [v for v in values if untag(v)[0] < signatures]
        if len(values) < signatures:
            raise NeardupError(
                f"record {doc[ID]} has {len(values)} signature values, {signatures} were asked for",
                hint=f"index again with --signatures {signatures}",
            )
    return values


def candidates(solr: Solr, doc: dict[str, Any], mode: Mode, values: list[str], rows: int) -> list[dict[str, Any]]:
    """The ``rows`` other records sharing most ``values`` with ``doc``."""
    if not values:
        return []
    query = overlap_query(mode.field, values)
    if doc[ID]:
        # In the query, not a filter: a filter "all but this id" would be a
        # set of every record, built and cached anew for each record.
        query = f"({query}) -{term(ID, doc[ID])}"
    filters = [term(FIRST_WORD, doc[FIRST_WORD])] if mode.same_first_word else []
    found = solr.search(
        query,
        fq=filters,
        sort="score desc,id asc",
        rows=rows,
        fl=f"{ID},{TEXT},{MD5}",
    )
    return found.docs


class EditDistanceCheck:
    """The reference verification: word edit distance <= max_dist."""

    def __init__(self, max_dist: int):
        self.max_dist = max_dist

    def prepare(self, doc: dict[str, Any]) -> list[str]:
        return words(normalize(doc[TEXT]))

    def check(self, doc: dict[str, Any], mine: list[str], other: dict[str, Any]) -> Pair | None:
        if other[MD5] == doc[MD5]:
            distance = 0
        else:
            distance = word_distance(mine, words(normalize(other[TEXT])))
        return Pair(doc[ID], other[ID], distance) if distance <= self.max_dist else None


def text_vector(weights: Weights, text: str) -> Vector:
    return weights.vector(repaired_tokens(repair(text)))


class SimilarityCheck:
    """The default verification: the soft weighted cosine of two records,
    and the pair it makes with their word edit distance."""

    def __init__(self, close: CloseWords):
        self.close = close

    def score(self, vector_a: Vector, vector_b: Vector) -> float:
        return similarity(vector_a, vector_b, self.close)

    @staticmethod
    def pair(a: str, text_a: str, b: str, text_b: str, score: float, probability: float | None) -> Pair:
        distance = word_distance(repaired_tokens(repair(text_a)), repaired_tokens(repair(text_b)))
        return Pair(a, b, distance, score, probability)


@dataclass(frozen=True)
class Match:
    id: str
    similarity: float
    distance: int
    text: str
    probability: float | None = None


class OnlineSearch:
    """Near duplicates of one text, indexed or not, in at most two Solr
    requests: the records sharing its band keys (best ``rows`` by keys
    shared), then the document frequencies of the words involved that it
    has not seen in the last ``DF_MAX_AGE`` seconds. Looking a word up costs
    Solr a seek per segment, and a stream of queries mostly repeats the
    common words (streets, cities), so a long-lived search asks for few.

    Matches are kept, and given a probability, by the match model the last
    report fitted and kept with the index (``model.py``): those whose
    similarity and number agreement give them a probability of at least 1/2.
    Before any report there is none, and the fixed ``DEFAULT_THRESHOLD``
    keeps them. A given ``threshold`` overrides the model's choice."""

    DF_MAX_AGE = 60.0

    def __init__(self, solr: Solr, threshold: float | None = None, rows: int = LSH.rows):
        self.solr = solr
        self.model = load_model(solr)
        self.threshold = threshold
        self.rows = rows
        self.builder = DocumentBuilder(IndexSettings.load(solr))
        self._doc_freq: dict[str, int] = {}
        self._doc_count = 0
        self._since = 0.0

    def weights(self, words: set[str]) -> Weights:
        """Weights for ``words``, from frequencies at most DF_MAX_AGE seconds old."""
        if time.monotonic() - self._since > self.DF_MAX_AGE:
            self._doc_freq.clear()
            self._since = time.monotonic()
        if missing := sorted(words.difference(self._doc_freq)):
            self._doc_count, found = self.solr.term_counts(TOKENS, missing)
            self._doc_freq.update({word: found.get(word, 0) for word in missing})
        return Weights(self._doc_count, self._doc_freq)

    def find(self, text: str, exclude: str | None = None) -> list[Match]:
        """The matches, most similar first."""
        repaired = repair(text)
        doc = {ID: exclude or "", TEXT: text}
        found = candidates(self.solr, doc, LSH, self.builder.band_keys([repaired])[0], self.rows)
        if not found:
            return []
        tokens = [repaired_tokens(repaired), *(repaired_tokens(repair(other[TEXT])) for other in found)]
        weights = self.weights({w for words in tokens for w in words})
        mine, *theirs = (weights.vector(words) for words in tokens)
        check = SimilarityCheck(CloseWords(w for vector in [mine, *theirs] for w in vector))
        matches = []
        for other, vector in zip(found, theirs):
            score = check.score(mine, vector)
            level = number_agreement(numbers(mine), numbers(vector))
            probability = self.model.probability(score, level) if self.model is not None else None
            if self._keeps(score, probability):
                pair = check.pair("", text, other[ID], other[TEXT], score, None)
                matches.append(Match(other[ID], score, pair.distance, other[TEXT], probability))
        return sorted(matches, key=lambda m: (-m.similarity, id_key(m.id)))

    def _keeps(self, score: float, probability: float | None) -> bool:
        if self.threshold is not None:
            return score >= self.threshold
        if probability is None:
            return score >= DEFAULT_THRESHOLD
        return probability >= 0.5


@dataclass
class Verified:
    """The default mode's result: the pairs kept, and the match model fitted
    to all candidates (whose cut kept them, unless a threshold was given)."""

    pairs: list[Pair]
    model: MatchModel
    cut: float


def lsh_pairs(solr: Solr, *, threshold: float | None = None, max_bucket: int | None = MAX_BUCKET,
              progress: tqdm | None = None, warn: Callable[[str], None] = lambda _: None) -> Verified:
    """Every pair sharing a band key (or its MD5), scored; a match model fitted
    to all their similarities; the pairs at or above its cut (or ``threshold``).

    Two passes over the candidates: the first scores each one (on every core
    when they are many) and keeps only a float per pair; the model is fitted
    to their histogram; the second makes the kept pairs, with their word
    edit distance and probability.
    """
    settings = IndexSettings.load(solr)
    skipped = Skipped()
    texts: dict[str, str] = {}
    tick = progress.update if progress is not None else lambda n=1: None
    found = pair_up(chain(
        buckets(solr, BAND_KEYS, [band_prefix(b) for b in range(settings.bands)], max_bucket=max_bucket,
                skipped=skipped, texts=texts, progress=tick),
        buckets(solr, MD5, [""], max_bucket=None, texts=texts),
    ))
    if skipped.keys:
        warn(f"skipped {skipped.keys} band keys held by more than {max_bucket} records each "
             f"(up to {skipped.largest}): near-identical groups that large are left out; "
             "a larger bucket limit includes them")
    if progress is not None:
        # The bar goes on with the candidate pairs: at a million records
        # their verification takes as long as finding them.
        progress.reset(total=len(found))
        progress.unit = "pair"
        progress.set_description("verifying candidates")
    weights = Weights(*solr.term_counts(TOKENS))
    vectors = {record_id: text_vector(weights, texts[record_id]) for record_id in found.ids}
    check = SimilarityCheck(CloseWords(w for vector in vectors.values() for w in vector))
    digits = {record_id: numbers(vector) for record_id, vector in vectors.items()}

    def scored(span: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """The span's scores, and their levels of number agreement."""
        count = span[1] - span[0]
        return (np.fromiter((check.score(vectors[a], vectors[b]) for a, b in found.pairs(*span)),
                            dtype=np.float64, count=count),
                np.fromiter((number_agreement(digits[a], digits[b]) for a, b in found.pairs(*span)),
                            dtype=np.int8, count=count))

    # Solr is idle by now: many candidates are verified on every core.
    spans = _spans(len(found))
    parts = []
    for (start, end), part in zip(spans, forked_map(scored, spans, _workers(len(found)))):
        tick(end - start)
        parts.append(part)
    scores = np.concatenate([part[0] for part in parts]) if parts else np.zeros(0)
    levels = np.concatenate([part[1] for part in parts]) if parts else np.zeros(0, np.int8)
    model = fit(histogram(scores, levels))
    cut = model.cut if threshold is None else threshold
    kept = np.flatnonzero(model.keeps(scores, levels) if threshold is None else scores >= threshold)
    probabilities = model.probabilities(scores[kept], levels[kept])

    def made(span: tuple[int, int]) -> list[Pair]:
        pairs = []
        for i, p in zip(kept[span[0]:span[1]].tolist(), probabilities[span[0]:span[1]]):
            a, b = found.ids[found.left[i]], found.ids[found.right[i]]
            pairs.append(check.pair(a, texts[a], b, texts[b], float(scores[i]), p))
        return pairs

    pairs = [pair for part in forked_map(made, _spans(len(kept)), _workers(len(kept))) for pair in part]
    return Verified(pairs, model, cut)


def _spans(count: int) -> list[tuple[int, int]]:
    """``count`` items in pieces of work of ``VERIFY_SPAN``: (start, end) each."""
    return [(start, min(start + VERIFY_SPAN, count)) for start in range(0, count, VERIFY_SPAN)]


def _workers(count: int) -> int:
    """Forked workers for ``count`` items: every core once forking pays for itself."""
    return cores() if count >= FORK_FROM else 1


def near_duplicates(
    solr: Solr,
    mode: Mode,
    *,
    rows: int | None = None,
    max_dist: int = 2,
    signatures: int = 20,
    threshold: float | None = None,
    max_bucket: int | None = MAX_BUCKET,
    progress: tqdm | None = None,
    warn: Callable[[str], None] = lambda _: None,
) -> Iterator[Pair]:
    """Every verified pair, each once (smaller id first). The default mode
    keeps the pairs its match model calls matches, unless ``threshold`` is
    given (see :func:`lsh_pairs` for the model)."""
    if mode is LSH:
        yield from lsh_pairs(solr, threshold=threshold, max_bucket=max_bucket, progress=progress, warn=warn).pairs
        return
    if not IndexSettings.load(solr).reference:
        raise NeardupError(f"the index has no fields for --{mode.name} (it was built with --lean)",
                           hint="index again without --lean")
    verifier = EditDistanceCheck(max_dist)
    fields = [ID, TEXT, MD5, FIRST_WORD, mode.field]

    def pairs_of(doc: dict[str, Any]) -> list[Pair]:
        mine = verifier.prepare(doc)
        found = []
        for other in candidates(solr, doc, mode, query_values(doc, mode, signatures), rows or mode.rows):
            if id_key(other[ID]) > id_key(doc[ID]) and (pair := verifier.check(doc, mine, other)):
                found.append(pair)
        return found

    for pairs in bounded_map(pairs_of, solr.iter_docs(fields), CONCURRENT_QUERIES):
        if progress is not None:
            progress.update(1)
        yield from pairs
