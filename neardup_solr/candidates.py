"""Which records look like which: candidates from Solr, then verification.

Three modes, each a Solr field whose shared values make candidates:

- ``lsh`` (the default): records sharing at least one LSH band key, found
  for all records at once from the keys' buckets (``collisions.py``), kept
  when their similarity (``similarity.py``) reaches the
  threshold; :func:`candidates` asks the same for one record;
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

from tqdm import tqdm

from .bands import band_prefix
from .collisions import LSH_FIELD, MAX_BUCKET, Skipped, buckets, pair_up
from .documents import DocumentBuilder, IndexSettings, repaired_tokens
from .errors import NeardupError
from .pairs import Pair
from .parallel import bounded_map, cores, forked_map
from .records import id_key
from .repair import repair
from .signatures import untag
from .similarity import DEFAULT_THRESHOLD, CloseWords, Vector, Weights, similarity
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


LSH = Mode("lsh", "content_lsh", rows=100, same_first_word=False)
SHINGLES = Mode("shingles", "content_ng", rows=10, same_first_word=True)
MINHASH = Mode("minhash", "content_sg", rows=10, same_first_word=True)
MODES = {mode.name: mode for mode in (LSH, SHINGLES, MINHASH)}


def query_values(doc: dict[str, Any], mode: Mode, signatures: int) -> list[str]:
    values = doc.get(mode.field, [])
    if mode is MINHASH:
        values = [v for v in values if untag(v)[0] < signatures]
        if len(values) < signatures:
            raise NeardupError(
                f"record {doc['id']} has {len(values)} signature values, {signatures} were asked for",
                hint=f"index again with --signatures {signatures}",
            )
    return values


def candidates(solr: Solr, doc: dict[str, Any], mode: Mode, values: list[str], rows: int) -> list[dict[str, Any]]:
    """The ``rows`` other records sharing most ``values`` with ``doc``."""
    if not values:
        return []
    query = overlap_query(mode.field, values)
    if doc["id"]:
        # In the query, not a filter: a filter "all but this id" would be a
        # set of every record, built and cached anew for each record.
        query = f"({query}) -{term('id', doc['id'])}"
    filters = [term("first_word", doc["first_word"])] if mode.same_first_word else []
    found = solr.search(
        query,
        fq=filters,
        sort="score desc,id asc",
        rows=rows,
        fl="id,content,md5_hash",
    )
    return found.docs


class EditDistanceCheck:
    """The reference verification: word edit distance <= max_dist."""

    def __init__(self, max_dist: int):
        self.max_dist = max_dist

    def prepare(self, doc: dict[str, Any]) -> list[str]:
        return words(normalize(doc["content"]))

    def check(self, doc: dict[str, Any], mine: list[str], other: dict[str, Any]) -> Pair | None:
        if other["md5_hash"] == doc["md5_hash"]:
            distance = 0
        else:
            distance = word_distance(mine, words(normalize(other["content"])))
        return Pair(doc["id"], other["id"], distance) if distance <= self.max_dist else None


def text_vector(weights: Weights, text: str) -> Vector:
    return weights.vector(repaired_tokens(repair(text)))


class SimilarityCheck:
    """The default verification: soft weighted cosine >= threshold."""

    def __init__(self, close: CloseWords, threshold: float):
        self.close = close
        self.threshold = threshold

    def compare(self, a: str, text_a: str, vector_a: Vector, b: str, text_b: str, vector_b: Vector) -> Pair | None:
        score = similarity(vector_a, vector_b, self.close)
        if score < self.threshold:
            return None
        distance = word_distance(repaired_tokens(repair(text_a)), repaired_tokens(repair(text_b)))
        return Pair(a, b, distance, score)


@dataclass(frozen=True)
class Match:
    id: str
    similarity: float
    distance: int
    text: str


class OnlineSearch:
    """Near duplicates of one text, indexed or not, in at most two Solr
    requests: the records sharing its band keys (best ``rows`` by keys
    shared), then the document frequencies of the words involved that it
    has not seen in the last ``DF_MAX_AGE`` seconds. Looking a word up costs
    Solr a seek per segment, and a stream of queries mostly repeats the
    common words (streets, cities), so a long-lived search asks for few."""

    DF_MAX_AGE = 60.0

    def __init__(self, solr: Solr, threshold: float = DEFAULT_THRESHOLD, rows: int = LSH.rows):
        self.solr = solr
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
            self._doc_count, found = self.solr.term_counts("tokens", missing)
            self._doc_freq.update({word: found.get(word, 0) for word in missing})
        return Weights(self._doc_count, self._doc_freq)

    def find(self, text: str, exclude: str | None = None) -> list[Match]:
        """Matches at or above the threshold, most similar first."""
        repaired = repair(text)
        doc = {"id": exclude or "", "content": text}
        found = candidates(self.solr, doc, LSH, self.builder.band_keys([repaired])[0], self.rows)
        if not found:
            return []
        tokens = [repaired_tokens(repaired), *(repaired_tokens(repair(other["content"])) for other in found)]
        weights = self.weights({w for words in tokens for w in words})
        mine, *theirs = (weights.vector(words) for words in tokens)
        check = SimilarityCheck(CloseWords(w for vector in [mine, *theirs] for w in vector), self.threshold)
        matches = []
        for other, vector in zip(found, theirs):
            if pair := check.compare("", text, mine, other["id"], other["content"], vector):
                matches.append(Match(other["id"], pair.similarity, pair.distance, other["content"]))
        return sorted(matches, key=lambda m: (-m.similarity, id_key(m.id)))


def lsh_pairs(solr: Solr, *, threshold: float, max_bucket: int | None, progress: tqdm | None = None,
              warn: Callable[[str], None] = lambda _: None) -> Iterator[Pair]:
    """Every pair sharing a band key (or its MD5) whose similarity reaches ``threshold``."""
    settings = IndexSettings.load(solr)
    skipped = Skipped()
    texts: dict[str, str] = {}
    tick = progress.update if progress is not None else lambda n=1: None
    found = pair_up(chain(
        buckets(solr, LSH_FIELD, [band_prefix(b) for b in range(settings.bands)], max_bucket=max_bucket,
                skipped=skipped, texts=texts, progress=tick),
        buckets(solr, "md5_hash", [""], max_bucket=None, texts=texts),
    ))
    if skipped.keys:
        warn(f"skipped {skipped.keys} band keys held by more than {max_bucket} records each "
             f"(up to {skipped.largest}): near-identical groups that large are left out; "
             "raise --max-bucket to include them")
    if progress is not None:
        # The bar goes on with the candidate pairs: at a million records
        # their verification takes as long as finding them.
        progress.reset(total=len(found))
        progress.unit = "pair"
        progress.set_description("verifying candidates")
    weights = Weights(*solr.term_counts("tokens"))
    vectors = {record_id: text_vector(weights, texts[record_id]) for record_id in found.ids}
    check = SimilarityCheck(CloseWords(w for vector in vectors.values() for w in vector), threshold)

    def verified(span: tuple[int, int]) -> list[Pair]:
        return [pair for a, b in found.pairs(*span)
                if (pair := check.compare(a, texts[a], vectors[a], b, texts[b], vectors[b]))]

    # Solr is idle by now: many candidates are verified on every core.
    spans = [(start, min(start + VERIFY_SPAN, len(found))) for start in range(0, len(found), VERIFY_SPAN)]
    for (start, end), pairs in zip(spans, forked_map(verified, spans, cores() if len(found) >= FORK_FROM else 1)):
        tick(end - start)
        yield from pairs


def near_duplicates(
    solr: Solr,
    mode: Mode,
    *,
    rows: int | None = None,
    max_dist: int = 2,
    signatures: int = 20,
    threshold: float = DEFAULT_THRESHOLD,
    max_bucket: int | None = MAX_BUCKET,
    progress: tqdm | None = None,
    warn: Callable[[str], None] = lambda _: None,
) -> Iterator[Pair]:
    """Every verified pair, each once (smaller id first)."""
    if mode is LSH:
        yield from lsh_pairs(solr, threshold=threshold, max_bucket=max_bucket, progress=progress, warn=warn)
        return
    if not IndexSettings.load(solr).reference:
        raise NeardupError(f"the index has no fields for --{mode.name} (it was built with --lean)",
                           hint="index again without --lean")
    verifier = EditDistanceCheck(max_dist)
    fields = ["id", "content", "md5_hash", "first_word", mode.field]

    def pairs_of(doc: dict[str, Any]) -> list[Pair]:
        mine = verifier.prepare(doc)
        found = []
        for other in candidates(solr, doc, mode, query_values(doc, mode, signatures), rows or mode.rows):
            if id_key(other["id"]) > id_key(doc["id"]) and (pair := verifier.check(doc, mine, other)):
                found.append(pair)
        return found

    for pairs in bounded_map(pairs_of, solr.iter_docs(fields), CONCURRENT_QUERIES):
        if progress is not None:
            progress.update(1)
        yield from pairs
