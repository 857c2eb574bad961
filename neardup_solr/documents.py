"""One record as one Solr document: the pipeline's values, ready to store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .records import Record
from .shingles import word_shingles
from .signatures import MinHasher, tagged_values
from .solr import index_term
from .text import first_word, md5_hex, normalize, words

# The reference workflow's signature length.
DEFAULT_SIGNATURES = 20


def documents(records: Sequence[Record], hasher: MinHasher) -> list[dict[str, Any]]:
    normalized = [normalize(r.text) for r in records]
    tokens = [words(n) for n in normalized]
    shingles = [[index_term(s) for s in word_shingles(t)] for t in tokens]
    signatures = hasher.signatures(shingles)
    return [
        {
            "id": record.id,
            "content": record.text,
            "md5_hash": md5_hex(norm),
            "first_word": index_term(first_word(norm)),
            "num_words": len(toks),
            "content_ng": ngrams,
            "content_sg": tagged_values(signature),
        }
        for record, norm, toks, ngrams, signature in zip(records, normalized, tokens, shingles, signatures)
    ]
