"""The index: Solr, and what each record and the index keep there.

- ``solr``: the thin client (pysolr on a retrying session) and query
  syntax, escaped in one place; ``schema``: the field names;
- ``documents``: one Solr document per record; ``writer``: records written
  in batches; ``replacement``: an index replaced without losing it, and
  what a write checks so as not to be lost with one being replaced;
- ``state``: the index's settings, generation and kept model (as a dict);
- ``sampling``: the sample of the data and the banding chosen from it;
- ``launcher``: the local Solr's launcher built (Solr's jars fetched and
  checked, the launcher compiled with javac);
- ``local_solr``, ``cloud``: the local Solr and SolrCloud.
"""
