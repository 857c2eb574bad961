"""One record as one Solr document: the pipeline's values, ready to store.

Fields (:mod:`neardup_solr.index.schema`) for the reference workflow (the MD5, first
word, word count, word shingles and their MinHash values) come from the
reference normalization; fields for the default mode (tokens, band keys) from
the repaired one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import mmh3

from ..lsh.bands import band_keys
from ..fields.keys import field_terms
from ..records.record import Record
from ..text.repair import repair
from .schema import (BAND_KEYS, FIELD_VALUES, FIRST_WORD, ID, MD5, MINHASH_VALUES, RANK, RECORD_FIELDS, TEXT, TOKENS,
                     WORD_COUNT, WORD_SHINGLES)
from ..text.analysis import index_term, index_terms, repaired_tokens
from ..text.shingles import word_shingles
from ..lsh.signatures import MinHasher, TextSignatures, tagged_values
from .state import IndexSettings
from ..text.normalize import first_word, md5_hex, normalize, words


def record_of(doc: dict[str, Any]) -> Record:
    """A Solr document (its id, text and fields) as the record it was indexed from."""
    fields = tuple(json.loads(doc[RECORD_FIELDS]).items()) if doc.get(RECORD_FIELDS) else ()
    return Record(doc[ID], doc[TEXT], fields)


def rank(key: str) -> int:
    """The ``rank`` of the record ``key`` (``schema.RANK``): a 64-bit
    MurmurHash3 of it, the same wherever and whenever it is indexed."""
    return mmh3.hash64(key.encode("utf-8"), seed=RANK_SEED)[0]


RANK_SEED = 7


class DocumentBuilder:
    """Builds documents (and query keys) with one fixed set of settings."""

    def __init__(self, settings: IndexSettings):
        self.settings = settings
        self._reference = MinHasher(settings.minhash_values)
        self._lsh = TextSignatures(settings.bands * settings.band_rows, settings.lsh_shingles)

    def band_keys(self, repaired: Sequence[str]) -> list[list[int]]:
        """LSH keys of repaired texts."""
        return band_keys(self._lsh(repaired), self.settings.bands, self.settings.band_rows)

    def documents(self, records: Sequence[Record]) -> list[dict[str, Any]]:
        normalized = [normalize(r.text) for r in records]
        repaired = [repair(r.text, norm) for r, norm in zip(records, normalized)]
        docs = [
            {
                ID: record.id,
                TEXT: record.text,
                MD5: md5_hex(norm),
                TOKENS: list(dict.fromkeys(repaired_tokens(fixed))),
                BAND_KEYS: keys,
                RANK: rank(record.id),
            }
            for record, norm, fixed, keys in zip(records, normalized, repaired, self.band_keys(repaired))
        ]
        for doc, record in zip(docs, records):
            if record.fields:
                doc[RECORD_FIELDS] = json.dumps(dict(record.fields), ensure_ascii=False, separators=(",", ":"))
            if self.settings.fielded:
                doc[FIELD_VALUES] = field_terms(self.settings.fields, dict(record.fields))
        if self.settings.reference:
            self._add_reference_fields(docs, normalized)
        return docs

    def _add_reference_fields(self, docs: list[dict[str, Any]], normalized: list[str]) -> None:
        tokens = [words(n) for n in normalized]
        shingles = [index_terms(word_shingles(t)) for t in tokens]
        signatures = self._reference.signatures(shingles)
        for doc, norm, toks, ngrams, signature in zip(docs, normalized, tokens, shingles, signatures):
            doc.update({
                FIRST_WORD: index_term(first_word(norm)),
                WORD_COUNT: len(toks),
                WORD_SHINGLES: ngrams,
                MINHASH_VALUES: tagged_values(signature),
            })
