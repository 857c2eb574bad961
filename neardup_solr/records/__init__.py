"""Records in: a record (id, text, fields) and its rules, and the readers
that make records of files, standard input and tables without losing a
valid one.

- ``record``: the record, the id and source rules, what a text must hold;
- ``sources``: where records come from (a file or standard input, plain or
  gzip) and the format a name implies;
- ``readers``: ``ID TEXT`` lines, CSV/TSV and JSON Lines as records, a bad
  line named and skipped; ``rows``: a table row's id, text and fields by
  the CSV rules, for every table format; ``seen``: the ids seen, in
  bounded memory;
- ``objects``: records given from Python (pairs, dicts, records, and
  DataFrames through ``tables``: Parquet files and DataFrames in, pyarrow
  an extra);
- ``datasets``: the restaurant benchmark, fetched and checked.
"""
