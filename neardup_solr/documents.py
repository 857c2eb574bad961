"""One record as one Solr document: the pipeline's values, ready to store.

Fields (:mod:`neardup_solr.schema`) for the reference workflow (the MD5, first
word, word count, word shingles and their MinHash values) come from the
reference normalization; fields for the default mode (tokens, band keys) from
the repaired one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .bands import SIGNATURE_VALUES, Choice, agreements, band_keys, choose
from .model import MatchModel
from .record import Record
from .repair import repair
from .schema import BAND_KEYS, FIRST_WORD, ID, MD5, MINHASH_VALUES, TEXT, TOKENS, WORD_COUNT, WORD_SHINGLES
from .shingles import CHAR_SHINGLE_SIZE, char_shingles, word_shingles
from .signatures import MinHasher, tagged_values
from .solr import Solr, index_term, index_terms
from .text import first_word, md5_hex, normalize, words

LSH_SHINGLES = ("chars", "words")


def lsh_shingles(repaired: str, kind: str = "chars") -> list[str]:
    """The shingles of a repaired text that its LSH signature is made of:
    character 3-grams (``"chars"``) or word 3-shingles (``"words"``)."""
    if kind == "chars":
        return char_shingles(repaired, CHAR_SHINGLE_SIZE)
    return index_terms(word_shingles(repaired.split()))


def repaired_tokens(repaired: str) -> list[str]:
    """Words of repaired text as the ``tokens`` field holds them."""
    return index_terms(repaired.split())


def _parse(stored: str, default: Any) -> Any:
    if isinstance(default, bool):
        return stored == "True"
    return type(default)(stored)


@dataclass(frozen=True)
class IndexSettings:
    """How records were indexed; kept in the index so later runs agree.

    ``signatures``: MinHash values of word shingles for ``--minhash`` (the
    reference's 20). ``bands`` x ``band_rows``: LSH banding of a second MinHash,
    over character 3-grams of the repaired text (``lsh_shingles="chars"``,
    for short records) or its word 3-shingles (``"words"``, for documents).
    42 x 3 makes pairs of Jaccard 0.5 candidates with probability 0.996 and
    pairs of 0.05 with 0.005 (see ``neardup tune``). ``reference=False``
    leaves out the reference workflow's fields (first word, word count, word
    shingles and their MinHash), for large collections that need only the
    default mode.
    """

    signatures: int = 20
    bands: int = 42
    band_rows: int = 3
    lsh_shingles: str = "chars"
    reference: bool = True

    def __post_init__(self) -> None:
        if self.lsh_shingles not in LSH_SHINGLES:
            raise ValueError(f"lsh_shingles must be one of {LSH_SHINGLES}")

    def save(self, solr: Solr) -> None:
        solr.set_user_properties({f"neardup.{k}": str(v) for k, v in asdict(self).items()})

    @classmethod
    def load(cls, solr: Solr) -> IndexSettings:
        stored = solr.user_properties()
        if "neardup.rows" in stored:
            # What indexes kept before the field was named band_rows.
            stored.setdefault("neardup.band_rows", stored["neardup.rows"])
        defaults = asdict(cls())
        return cls(**{k: _parse(stored[f"neardup.{k}"], v) for k, v in defaults.items() if f"neardup.{k}" in stored})


MODEL_PROPERTY = "neardup.model"


def save_model(solr: Solr, model: MatchModel | None) -> None:
    """Keep the match model with the index, for online queries (``None``
    forgets it: the records it was fitted to are gone)."""
    stored = "" if model is None else json.dumps(model.to_dict(), separators=(",", ":"))
    solr.set_user_properties({MODEL_PROPERTY: stored})


def load_model(solr: Solr) -> MatchModel | None:
    """The match model the last report kept with the index, if any (a model
    of another version's shape counts as none)."""
    stored = solr.user_properties().get(MODEL_PROPERTY)
    if not stored:
        return None
    try:
        return MatchModel.from_dict(json.loads(stored))
    except (ValueError, KeyError, TypeError):
        return None


def sample_agreements(texts: Sequence[str], lsh_shingles: str = "chars") -> np.ndarray:
    """Pairs of ``texts`` by how many of ``SIGNATURE_VALUES`` LSH MinHash
    values they share (see :func:`neardup_solr.bands.agreements`). Costs a
    signature per text and a comparison of every pair (2000 texts: about a
    second)."""
    sampler = DocumentBuilder(IndexSettings(bands=1, band_rows=SIGNATURE_VALUES, lsh_shingles=lsh_shingles))
    return agreements(sampler.lsh_signatures([repair(t) for t in texts]))


def banding_for(texts: Sequence[str], records: int, lsh_shingles: str = "chars") -> Choice:
    """The LSH banding for ``records`` records like ``texts`` (a sample):
    see :func:`neardup_solr.bands.choose`."""
    return choose(sample_agreements(texts, lsh_shingles), records)


class DocumentBuilder:
    """Builds documents (and query keys) with one fixed set of settings."""

    def __init__(self, settings: IndexSettings):
        self.settings = settings
        self._reference = MinHasher(settings.signatures)
        self._lsh = MinHasher(settings.bands * settings.band_rows, bits=16)

    def lsh_signatures(self, repaired: Sequence[str]) -> np.ndarray:
        """The LSH MinHash signatures of repaired texts, ``bands * band_rows`` values each."""
        if self.settings.lsh_shingles == "chars":
            return self._lsh.text_signatures(repaired, CHAR_SHINGLE_SIZE)
        return self._lsh.signatures([lsh_shingles(r, "words") for r in repaired])

    def band_keys(self, repaired: Sequence[str]) -> list[list[str]]:
        """LSH keys of repaired texts."""
        return band_keys(self.lsh_signatures(repaired), self.settings.bands, self.settings.band_rows)

    def documents(self, records: Sequence[Record]) -> list[dict[str, Any]]:
        normalized = [normalize(r.text) for r in records]
        repaired = [repair(r.text) for r in records]
        docs = [
            {
                ID: record.id,
                TEXT: record.text,
                MD5: md5_hex(norm),
                TOKENS: list(dict.fromkeys(repaired_tokens(fixed))),
                BAND_KEYS: keys,
            }
            for record, norm, fixed, keys in zip(records, normalized, repaired, self.band_keys(repaired))
        ]
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
