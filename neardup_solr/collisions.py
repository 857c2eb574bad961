"""All candidate pairs at once, from the band keys that several records share.

One query per record costs a million round trips for a million records.
Instead Solr is asked, band by band, which keys at least two records hold:
a JSON terms facet on the band field's docValues with ``mincount`` 2 (counts
of live documents, so replaced or deleted records do not linger). The
members of those keys are then fetched in batches with a ``{!terms}`` query,
which needs no escaping and has no clause limit. Every pair inside a key's
bucket is a candidate.

A key held by very many records says little (a phrase every record has)
and would make its bucket's pairs quadratic; keys held by more than
``max_bucket`` records are skipped and counted. Exact duplicates are found
apart from the bands, by their MD5, so skipping never loses them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from .records import id_key
from .solr import Solr

LSH_FIELD = "content_lsh"
MAX_BUCKET = 100
KEYS_PER_QUERY = 2000


@dataclass
class Buckets:
    """What a collision pass found: candidate pairs and each member's fields."""

    pairs: set[tuple[str, str]] = field(default_factory=set)
    docs: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped_keys: int = 0
    largest_skipped: int = 0


def shared_keys(solr: Solr, field_name: str, prefix: str) -> Iterator[tuple[str, int]]:
    """(key, count) of every key starting with ``prefix`` held by 2 or more records."""
    facet = {"keys": {"type": "terms", "field": field_name, "prefix": prefix, "mincount": 2, "limit": -1,
                      "sort": "index"}}
    found = solr.search("*:*", rows=0, **{"json.facet": json.dumps(facet)})
    for bucket in found.raw_response.get("facets", {}).get("keys", {}).get("buckets", []):
        yield bucket["val"], bucket["count"]


def collide(solr: Solr, prefixes: list[str], fields: list[str], *, field_name: str = LSH_FIELD,
            max_bucket: int | None = MAX_BUCKET, progress=None) -> Buckets:
    """Candidate pairs (smaller id first) of the records sharing a key of
    ``field_name``, with ``fields`` of each; one facet request per prefix.
    ``max_bucket=None`` keeps every key."""
    result = Buckets()
    for prefix in prefixes:
        batch: dict[str, int] = {}
        for key, count in shared_keys(solr, field_name, prefix):
            if max_bucket is not None and count > max_bucket:
                result.skipped_keys += 1
                result.largest_skipped = max(result.largest_skipped, count)
                continue
            batch[key] = count
            if len(batch) >= KEYS_PER_QUERY:
                _add_buckets(solr, field_name, batch, fields, result)
                batch = {}
        if batch:
            _add_buckets(solr, field_name, batch, fields, result)
        if progress is not None:
            progress.update(1)
    return result


def _add_buckets(solr: Solr, field_name: str, batch: dict[str, int], fields: list[str], result: Buckets) -> None:
    """Fetch the members of a batch of keys (keys hold no commas) and pair them up."""
    found = solr.search(f"{{!terms f={field_name}}}" + ",".join(batch), fl=",".join({*fields, field_name}),
                        rows=sum(batch.values()), sort="id asc")
    buckets: dict[str, list[str]] = {}
    for doc in found.docs:
        result.docs.setdefault(doc["id"], {k: doc[k] for k in fields if k in doc})
        values = doc.get(field_name, ())
        for key in [values] if isinstance(values, str) else values:
            if key in batch:
                buckets.setdefault(key, []).append(doc["id"])
    for ids in buckets.values():
        result.pairs.update(combinations(sorted(ids, key=id_key), 2))
