"""Near-duplicate detection for records and documents, backed by Apache Solr.

From Python::

    from neardup_solr import NearDuplicates
    nd = NearDuplicates("http://127.0.0.1:8983/solr/neardup")
    nd.index(records)                  # (id, text) pairs or {"id", "text"} dicts
    nd.index(df, id="sku", text=["title", "brand"])   # a pandas/polars DataFrame, an Arrow Table
    for pair in nd.pairs():            # a, b, distance, similarity, probability
        ...
    nd.pairs().to_pandas()             # or .to_arrow(): the columns of CSV output
    nd.query("some text")              # best matches, with their scores
    nd.add(more); nd.pairs_of(more)    # more records, and their pairs
    nd.delete(ids); nd.clusters()

Errors are exceptions (``NeardupError`` and its kinds, each with a hint);
progress is an optional callable ``progress(stage, done, total)``, or
``progress=True`` for a bar (``tqdm.auto``); nothing else is printed. The
library logs to the logger ``neardup_solr`` (quiet unless the application
configures logging) and warns of what it skipped with ``warnings``.
In a notebook, pairs, clusters and matches show as short lines and small
tables, and convert with ``to_pandas()``, ``to_polars()`` and ``to_arrow()``.

The pipeline, one module each, in order::

    records -> text -> repair -> shingles -> signatures -> bands -> solr
      -> candidates -> verify -> model -> pairs -> clusters

- ``record``: the record and its rules (the id rule, the source rule and
  keys, the order of ids, what a text must hold, ``BadLine``), apart from
  reading files;
- ``sources``, ``records``: files and standard input as (id, text) records;
  ``tables``: Parquet files and DataFrames in, pairs as tables out (with
  the extras pyarrow, pandas, polars, imported only when used);
- ``text``, ``repair``: the reference normalization, and the repairs of the
  default mode;
- ``shingles``, ``signatures`` (with ``murmur``): word 3-shingles and
  character 3-grams, their MinHash signatures;
- ``bands``: LSH band keys, and the math of choosing bands x rows;
  ``sampling``: the one sample of the data and the banding chosen from it;
- ``schema``, ``documents``, ``indexer``, ``state``, ``solr`` (with
  ``local_solr``, ``cloud``): the Solr fields, one Solr document per
  record, written in batches, what the index keeps about itself (its
  settings, its match model, whether it was built); the client, the local
  Solr, SolrCloud;
- ``candidates``: the records sharing a mode's values with a record;
  ``collisions``: all band-key candidates at once (``numbering``: the
  bucketed records numbered in a compiled hash table, their ids as bytes);
- ``verify`` (with ``similarity``): the two checks of a candidate, and the
  agreement of its numbers; ``kernel``: the same similarity and agreement
  for many candidates at once, compiled, over records held as arrays
  (``compiled``: numba's switch, or plain Python without it);
- ``search``: the online search of one text; ``bulk``: the default mode
  over the whole index (with ``parallel``); ``reference``: the reference
  modes over the whole index;
- ``model``: matches and non-matches fitted to the candidates'
  similarities and number agreements without labels: the cuts, each pair's
  probability, the estimated precision and recall; ``summary``: what a
  report says of its model, in the file beside its pairs;
- ``pairs``, ``outputs``, ``files``, ``clusters``: pair files, tables,
  atomic writes, connected components; ``html_report``, ``evaluate``, ``plots``, ``datasets``: what
  the command line shows and measures;
- ``api``: :class:`NearDuplicates`, the public API; ``progress``,
  ``errors``: what its calls report; ``extras``: the optional packages,
  each imported when used or named by the extra that installs it; on top
  of it ``service``: the API
  over HTTP (``neardup serve``, with ``review``, its review page, and
  ``labels``, the same / different labels a person gives pairs there),
  and ``cli``: the ``neardup`` command.
"""

from __future__ import annotations

import logging
from importlib import import_module
from typing import Any

# Where each public name lives. They are imported when first asked for, so
# that importing the package (as the command line does first) costs nothing:
# numba and numpy come with the first of them.
_PUBLIC = {
    "NearDuplicates": "api", "Verified": "bulk", "Cluster": "clusters", "Clusters": "clusters", "Pair": "pairs",
    "Record": "record", "Match": "search", "Matches": "outputs", "ClusterScore": "evaluate",
    "cluster_scores": "evaluate",
    **{name: "errors" for name in ("NeardupError", "InputError", "SolrUnavailable", "SolrFailure", "LeanIndex",
                                   "TooFewSignatures", "MissingExtra", "NeardupWarning")},
}

__all__ = [
    "NearDuplicates",
    "Pair",
    "Match",
    "Cluster",
    "Clusters",
    "Matches",
    "cluster_scores",
    "ClusterScore",
    "NeardupWarning",
    "Record",
    "Verified",
    "NeardupError",
    "InputError",
    "SolrUnavailable",
    "SolrFailure",
    "LeanIndex",
    "TooFewSignatures",
    "MissingExtra",
]

__version__ = "0.1.0"

# Quiet unless the application configures logging (without a handler,
# Python would print the library's warnings itself).
logging.getLogger(__name__).addHandler(logging.NullHandler())


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        value = getattr(import_module(f".{_PUBLIC[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
