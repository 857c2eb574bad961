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
    nd.entities()                      # each record's entity: id, cluster_id, every record once

Errors are exceptions (``NeardupError`` and its kinds, each with a hint);
progress is an optional callable ``progress(stage, done, total)``, or
``progress=True`` for a bar (``tqdm.auto``); nothing else is printed. The
library logs to the logger ``neardup_solr`` (quiet unless the application
configures logging) and warns of what it skipped with ``warnings``.
In a notebook, pairs, clusters and matches show as short lines and small
tables, and convert with ``to_pandas()``, ``to_polars()`` and ``to_arrow()``.

The public API is what this package exports (``__all__``, each name
imported when first asked for); the folders below are its inside, and
their module names may change from one release to the next.

The pipeline, one folder each, in order (each folder's docstring is its map)::

    records -> text -> lsh -> fields -> index -> match -> results -> modes

- ``records``: files, standard input and tables in, as records (id, text, fields);
- ``text``: the reference normalization, repairs, shingles, and the words
  and shingles a text is searched and verified by;
- ``lsh``: MinHash signatures and LSH bands;
- ``fields``: field matching in one place: what a field holds, its normal
  form, how two of its values agree, the keys that make candidates of
  field records, and the Fellegi-Sunter model fitted to them;
- ``index``: Solr: the client, the schema, one document per record, the
  writer, an index's replacement, what the index keeps about itself, the
  banding chosen from a sample, the local Solr and SolrCloud;
- ``match``: candidates of texts, their verification (compiled kernel),
  the text model, the models kept with the index and what a report says
  of them;
- ``results``: pairs, clusters, labels, evaluation, files and tables out,
  the HTML page and plots;
- ``modes``: the default mode's report and online search, for records of
  one text and of fields, and the reference workflow;
- ``api``: :class:`NearDuplicates`, the public API; ``service``: the API over
  HTTP with its review page; ``cli``: the ``neardup`` command.

Beside them: ``errors`` (what the calls report), ``evidence`` (why a pair
has its probability, step by step), ``extras`` (optional packages),
``progress``, ``parallel``, ``compiled`` (numba's switch) and ``files``
(atomic writes, whole reads).
"""

from __future__ import annotations

import logging
from importlib import import_module
from typing import Any

# Where each public name lives. They are imported when first asked for, so
# that importing the package (as the command line does first) costs nothing:
# numba and numpy come with the first of them.
_PUBLIC = {
    "NearDuplicates": "api", "Verified": "modes.text_report", "Cluster": "results.clusters", "Clusters": "results.clusters",
    "Entities": "results.clusters",
    "Pair": "results.pairs", "Record": "records.record", "Match": "modes.text_search", "Matches": "results.outputs",
    "ClusterScore": "results.evaluate", "cluster_scores": "results.evaluate",
    **{name: "errors" for name in ("NeardupError", "InputError", "SolrUnavailable", "SolrFailure", "LeanIndex", "OldIndex",
                                   "TooFewSignatures", "MissingExtra", "NeardupWarning")},
}

__all__ = [
    "NearDuplicates",
    "Pair",
    "Match",
    "Cluster",
    "Clusters",
    "Entities",
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
    "OldIndex",
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
