"""Asking Solr, record by record, which records look like this one.

The reference workflow: candidates share word shingles (``shingles``) or
MinHash signature values (``minhash``) with the record and have the same
first word; the best ``rows`` by the number of shared values are verified by
word-level edit distance. Each pair is reported once, from its smaller id.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from .errors import NeardupError
from .pairs import Pair
from .parallel import bounded_map
from .records import id_key
from .signatures import untag
from .solr import Solr, overlap_query, term
from .text import normalize, words
from .verify import word_distance

TOP_CANDIDATES = 10
CONCURRENT_QUERIES = 4


@dataclass(frozen=True)
class Mode:
    name: str
    field: str


SHINGLES = Mode("shingles", "content_ng")
MINHASH = Mode("minhash", "content_sg")


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


def candidates(solr: Solr, doc: dict[str, Any], mode: Mode, signatures: int, rows: int) -> list[dict[str, Any]]:
    """The ``rows`` records of the same first word sharing most values with ``doc``."""
    values = query_values(doc, mode, signatures)
    if not values:
        return []
    found = solr.search(
        overlap_query(mode.field, values),
        fq=[term("first_word", doc["first_word"]), "-" + term("id", doc["id"])],
        sort="score desc,id asc",
        rows=rows,
        fl="id,content,md5_hash",
    )
    return found.docs


def near_duplicates(
    solr: Solr,
    mode: Mode,
    *,
    max_dist: int,
    signatures: int,
    rows: int = TOP_CANDIDATES,
    progress: tqdm | None = None,
) -> Iterator[Pair]:
    """Every pair within ``max_dist`` words, each once (smaller id first)."""
    fields = ["id", "content", "md5_hash", "first_word", mode.field]

    def pairs_of(doc: dict[str, Any]) -> list[Pair]:
        mine = words(normalize(doc["content"]))
        found = []
        for other in candidates(solr, doc, mode, signatures, rows):
            if id_key(other["id"]) <= id_key(doc["id"]):
                continue
            if other["md5_hash"] == doc["md5_hash"]:
                distance = 0
            else:
                distance = word_distance(mine, words(normalize(other["content"])))
            if distance <= max_dist:
                found.append(Pair(doc["id"], other["id"], distance))
        return found

    for pairs in bounded_map(pairs_of, solr.iter_docs(fields), CONCURRENT_QUERIES):
        if progress is not None:
            progress.update(1)
        yield from pairs
