"""Modes: the whole index worked through, or one record looked up.

- ``bulk``: the default mode for texts: every candidate pair verified and
  the model fitted;
- ``linkage``: the default mode for field records, field by field;
- ``search``, ``fieldsearch``: the near duplicates of one text or record;
- ``reference``: the reference workflow's modes.
"""
