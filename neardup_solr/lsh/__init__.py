"""LSH: MinHash signatures and the bands cut from them.

- ``murmur``: MurmurHash3 of many byte strings at once;
- ``signatures``: MinHash signatures by XOR masks, of shingles or of a
  repaired text (``TextSignatures``);
- ``bands``: band keys, and the math of choosing bands x rows.
"""
