"""Field matching, in one place, top to bottom: records of fields (a table's
columns) compared field by field with a Fellegi-Sunter model fitted
without labels.

- ``values``: a value made comparable: cleaned, parsed, in a kind's
  normal and key forms;
- ``levels``: levels of agreement as data, each its label and its test
  (a measure at a threshold, a shared phone tail, a date's parts);
- ``kinds``: each kind of field listed once (what its values look like,
  its forms, its levels), a field's profile read off a sample, and
  ``normal``, the one way a value is made comparable;
- ``comparisons``: whole columns of values compared, a level a pair, and
  dependent fields compared together as one unit;
- ``keys``: the keys that make candidates, chosen from the data, and
  their Solr terms;
- ``model``: the fitted model, its units' levels each holding m and u:
  weights, probabilities, explanations;
- ``training``: u on random pairs, the units, m and the prior by EM with
  a round per key;
- ``matching``: an index's records matched: candidates, levels, the fit,
  probabilities.
"""
