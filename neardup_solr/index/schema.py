"""The Solr document's fields, by name: the one place the code spells them.

``solr_config/conf/schema.xml`` (in the package) declares the same fields; the two change
together. Every value is computed here and stored as exact terms (Solr does
no analysis), so a field's name says what its terms are.
"""

from __future__ import annotations

# The record's id (the unique key) and its text as read (stored, not searched).
ID = "id"
TEXT = "content"
# MD5 of the normalized text: equal hashes are exact duplicates.
MD5 = "md5_hash"
# Blocking keys of the reference workflow.
FIRST_WORD = "first_word"
WORD_COUNT = "num_words"
# Word 3-shingles of the normalized text (``--shingles``).
WORD_SHINGLES = "word_shingles"
# MinHash values of those shingles, each tagged with its position as
# ``i_value`` (``--minhash``).
MINHASH_VALUES = "minhash_values"
# Distinct words of the repaired text; their document frequencies weight
# the verification.
TOKENS = "tokens"
# LSH band keys: 64-bit numbers (points), the top byte the band number (the default mode).
BAND_KEYS = "content_lsh"
# A record's fields (a table's columns) as read: a JSON object, name -> value.
RECORD_FIELDS = "fields"
# Each field's normal form and its key form (``keys.py``) as terms
# ``<field number>:<form>`` and ``<field number>k:<form>``: their document
# frequencies weigh an agreement, and online queries find candidates by them.
FIELD_VALUES = "field_values"
# A number from the record's key, the same wherever and whenever it is
# indexed: the records with the smallest are a sample that does not depend
# on the order records came in.
RANK = "rank"

# Every field a document carries, in the order the schema declares them.
FIELDS = (ID, TEXT, MD5, FIRST_WORD, WORD_COUNT, WORD_SHINGLES, MINHASH_VALUES, TOKENS, BAND_KEYS, RECORD_FIELDS,
          FIELD_VALUES, RANK)
