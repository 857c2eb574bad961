"""Which records look like which: the candidates Solr finds for a record.

Three modes, each a Solr field whose shared values make candidates:

- ``lsh`` (the default): records sharing at least one LSH band key. In bulk
  they are found for all records at once from the keys' buckets
  (``buckets.py``, driven by ``modes.text_report``); :func:`candidates` asks
  the same for one record (``modes.text_search``);
- ``shingles`` and ``minhash`` (the reference workflow, driven by
  ``modes.reference``): for each record, the records sharing word shingles or
  MinHash values and the same first word.

A record's candidates are the ``per_record`` records sharing most values
with it, ties broken by id: every value is a constant-score clause of one
query (:func:`neardup_solr.index.solr.overlap_query`), so the score counts shared
values, the same on every shard. Checking them is ``verify.py``'s business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import TooFewSignatures
from ..records.record import key_prefix
from ..index.schema import BAND_KEYS, FIRST_WORD, ID, MD5, MINHASH_VALUES, TEXT, WORD_SHINGLES
from ..lsh.signatures import untag
from ..index.solr import Solr, overlap_query, term


@dataclass(frozen=True)
class Mode:
    """A mode's Solr ``field``, how many candidates a record gets by default
    (``per_record``) and whether they must share its first word."""

    name: str
    field: str
    per_record: int
    same_first_word: bool


# An online query reads the best 100 records by band keys shared: a true
# near copy shares several keys and ranks first, and a record expects at
# most 50 chance candidates (``bands.CANDIDATE_BUDGET``), so 100 rarely cuts
# one off. The reference workflow reads the best 10, as it always has.
LSH = Mode("lsh", BAND_KEYS, per_record=100, same_first_word=False)
SHINGLES = Mode("shingles", WORD_SHINGLES, per_record=10, same_first_word=True)
MINHASH = Mode("minhash", MINHASH_VALUES, per_record=10, same_first_word=True)
MODES = {mode.name: mode for mode in (LSH, SHINGLES, MINHASH)}


def source_filters(within: str) -> list[str]:
    """The filters that keep only records of the source ``within`` (none
    for ""): one Solr caches, reused by every query of that source."""
    return [f"{{!prefix f={ID}}}{key_prefix(within)}"] if within else []


def query_values(doc: dict[str, Any], mode: Mode, minhash_values: int) -> list[str]:
    """The values of ``doc`` that ``mode`` looks up: its first ``minhash_values``
    MinHash values in the minhash mode, else all of the mode's field.

    Raises:
        TooFewSignatures: the minhash mode asks for more values than the
            record was indexed with.
    """
    values = doc.get(mode.field, [])
    if mode is MINHASH:
        values = [v for v in values if untag(v)[0] < minhash_values]
        if len(values) < minhash_values:
            raise TooFewSignatures(doc[ID], len(values), minhash_values)
    return values


def candidates(solr: Solr, doc: dict[str, Any], mode: Mode, values: list[str] | list[int],
               per_record: int, within: str = "") -> list[dict[str, Any]]:
    """The ``per_record`` other records sharing most ``values`` with ``doc``
    (one Solr request; ``doc`` needs ``id``, and ``first_word`` for a mode
    that blocks on it); with ``within``, only records of that source."""
    if not values:
        return []
    query = overlap_query(mode.field, values)
    if doc[ID]:
        # In the query, not a filter: a filter "all but this id" would be a
        # set of every record, built and cached anew for each record.
        query = f"({query}) -{term(ID, doc[ID])}"
    filters = [term(FIRST_WORD, doc[FIRST_WORD])] if mode.same_first_word else []
    filters += source_filters(within)
    found = solr.search(
        query,
        fq=filters,
        sort="score desc,id asc",
        rows=per_record,
        fl=f"{ID},{TEXT},{MD5}",
    )
    return found.docs


def shared_candidates(solr: Solr, values: list[int], rows: int, within: str = "") -> list[dict[str, Any]] | None:
    """Every record holding any of the band keys ``values`` (several
    texts' at once), with its id, text and band keys, when there are at
    most ``rows`` of them; else ``None``. One Solr request; each text's own
    candidates are then chosen among them by the keys it shares
    (:meth:`~neardup_solr.modes.text_search.OnlineSearch.find_all`)."""
    found = solr.search(overlap_query(BAND_KEYS, values), fq=source_filters(within), sort="score desc,id asc",
                        rows=rows, fl=f"{ID},{TEXT},{MD5},{BAND_KEYS}")
    return found.docs if found.hits <= rows else None
