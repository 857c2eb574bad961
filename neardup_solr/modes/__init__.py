"""Modes: the whole index worked through, or one record looked up, for
records of one text or of fields.

- ``text_report``: the default mode for texts: every candidate pair
  verified and the model fitted;
- ``field_report``: the default mode for field records, field by field;
- ``text_search``, ``field_search``: the near duplicates of one text or
  record of fields;
- ``reference``: the reference workflow's modes.
"""
