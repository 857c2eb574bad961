"""Asking Solr, record by record, which records look like this one.

Three modes, each a Solr field the record's own values are looked up in:

- ``lsh`` (the default): records sharing at least one LSH band key, the best
  ``rows`` by keys shared, kept when their weighted cosine similarity
  (``similarity.py``) reaches the threshold;
- ``shingles`` and ``minhash`` (the reference workflow): records sharing word
  shingles or MinHash values and the same first word, the best ``rows`` by
  values shared, kept within ``max_dist`` words of edit distance.

Each pair is reported once, from its smaller id.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from .documents import repaired_tokens
from .errors import NeardupError
from .pairs import Pair
from .parallel import bounded_map
from .records import id_key
from .repair import repair
from .signatures import untag
from .similarity import DEFAULT_THRESHOLD, Weights, cosine
from .solr import Solr, overlap_query, term
from .text import normalize, words
from .verify import word_distance

CONCURRENT_QUERIES = 4


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
    filters = ["-" + term("id", doc["id"])]
    if mode.same_first_word:
        filters.append(term("first_word", doc["first_word"]))
    found = solr.search(
        overlap_query(mode.field, values),
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


class SimilarityCheck:
    """The default verification: weighted cosine >= threshold."""

    def __init__(self, weights: Weights, threshold: float):
        self.weights = weights
        self.threshold = threshold

    def prepare(self, doc: dict[str, Any]) -> tuple[list[str], dict[str, float]]:
        tokens = repaired_tokens(repair(doc["content"]))
        return tokens, self.weights.vector(tokens)

    def check(self, doc: dict[str, Any], mine: tuple[list[str], dict[str, float]], other: dict[str, Any]) -> Pair | None:
        tokens, vector = self.prepare(other)
        similarity = cosine(mine[1], vector)
        if similarity < self.threshold:
            return None
        return Pair(doc["id"], other["id"], word_distance(mine[0], tokens), similarity)


def near_duplicates(
    solr: Solr,
    mode: Mode,
    *,
    rows: int | None = None,
    max_dist: int = 2,
    signatures: int = 20,
    threshold: float = DEFAULT_THRESHOLD,
    progress: tqdm | None = None,
) -> Iterator[Pair]:
    """Every verified pair, each once (smaller id first)."""
    if mode is LSH:
        verifier: EditDistanceCheck | SimilarityCheck = SimilarityCheck(
            Weights(solr.count(), solr.term_counts("tokens")), threshold
        )
    else:
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
