"""Benchmarks and the quality suite (``python -m bench.<name>``).

They drive the product as users do, through the command line or the
public API (:class:`neardup_solr.NearDuplicates`), and import a stage's
module by name on purpose only where the stage itself is measured: the
kernel against the plain similarity (``kernel_check``: ``match.weighing``,
``match.kernel``, ``match.similarity``), the peers fed the same shingles
(``peer``: ``text.analysis``, ``text.repair``), where the recall goes
(``recall``: ``lsh.bands``, ``match.buckets``), and the readers and
scorers every run shares (``records.readers``, ``results.evaluate``,
``results.pairs``, ``match.summary``, ``index.solr``). No private name is
imported.
"""
