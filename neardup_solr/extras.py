"""Optional packages: which extra installs each, and their import.

The core (index, report, query, the Python API) needs none of them. The
service needs fastapi and uvicorn (``[service]``), plots matplotlib
(``[plots]``), SolrCloud by ZooKeeper kazoo (``[cloud]``), Parquet and
tables pyarrow, pandas or polars (``[parquet]``, ``[pandas]``,
``[polars]``); ``[all]`` installs every one. A feature imports its package
when it is used, by :func:`require`, so a missing one is a
:class:`~neardup_solr.errors.MissingExtra` naming the extra (one line and
exit code 7 on the command line), never an ImportError.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtra

# The extra that installs each optional package (by its import name).
EXTRAS = {"pyarrow": "parquet", "pyarrow.parquet": "parquet", "pandas": "pandas", "polars": "polars",
          "fastapi": "service", "uvicorn": "service", "matplotlib": "plots", "kazoo": "cloud"}


def require(package: str, feature: str, extra: str | None = None) -> ModuleType:
    """``package``, imported; :class:`MissingExtra` for ``feature`` when it
    is not installed (``extra``: the extra to name, by default the
    package's own)."""
    try:
        return importlib.import_module(package)
    except ImportError:
        raise MissingExtra(feature, package.split(".")[0], extra or EXTRAS[package]) from None
