"""Matching: from candidates to pairs with a probability.

- ``candidates``: one record's candidates from Solr; ``buckets``: all
  candidate pairs at once from shared keys (``numbering``: ids numbered in
  a compiled hash table);
- ``similarity``, ``verify``: the soft cosine and the numbers' agreement
  of a candidate; ``kernel``: the same for many at once, compiled;
  ``weighing``: records weighed and candidates scored in pieces of work
  on every core;
- ``model``: the text model (``MatchModel``), matches and non-matches of
  texts: fitted without labels (``mixture``: the similarities' two classes;
  ``levels``: the numbers' agreement; ``em``: what their fits share), and
  sharpened by labels (``calibration``); ``text_explanation``: a text
  pair's weight, piece by piece;
- ``stored``: a model (of texts or of fields) kept with the index and read
  back; ``summary``: what a report says of its model.
"""
