"""Text: the forms of a record's text that the modes compare.

- ``normalize``: the reference workflow's normalization and words;
- ``repair``: the default mode's repairs (spelling variants, numbers, marks);
- ``shingles``: word shingles and character n-grams;
- ``analysis``: a repaired text's tokens and LSH shingles as the index
  holds them, and any value as an index term.
"""
