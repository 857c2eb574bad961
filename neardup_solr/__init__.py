"""Near-duplicate detection for records and documents, backed by Apache Solr.

The pipeline, one module each::

    records -> text -> shingles -> signatures -> bands -> solr -> candidates -> verify -> model -> pairs

``model`` fits matches and non-matches to the candidates' similarities
without labels: the cut, each pair's probability, the estimated precision
and recall.
"""

__version__ = "0.1.0"
