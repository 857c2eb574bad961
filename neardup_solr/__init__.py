"""Near-duplicate detection for records and documents, backed by Apache Solr.

The pipeline, one module each::

    text -> shingles -> signatures -> solr -> candidates -> verify -> pairs
"""

__version__ = "0.1.0"
