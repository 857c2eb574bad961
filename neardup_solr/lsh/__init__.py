"""LSH: MinHash signatures and the bands cut from them.

- ``murmur``: MurmurHash3 of many byte strings at once;
- ``signatures``: MinHash signatures by XOR masks, of shingles or of a
  repaired text (``TextSignatures``);
- ``minima``: a large batch's 16-bit minima in one compiled loop (numba,
  imported only for it);
- ``bands``: band keys, and the math of choosing bands x rows.
"""
