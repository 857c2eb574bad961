"""Fields: what each field of a record holds, compared field by field.

- ``values``: a field's kind (name, date, code, ...), its profile from a
  sample, and its values in normal form;
- ``comparisons``: the levels of agreement of two values, by kind, for
  whole columns at once;
- ``keys``: the keys that make candidates of field records, chosen from
  the profiles.
"""
