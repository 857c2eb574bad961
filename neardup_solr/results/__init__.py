"""Results: what a report gives people and their next tool.

- ``pairs``: the pair, pair files and lists; ``outputs``: TSV, CSV, JSON
  Lines; ``arrow``: Arrow and Parquet (pyarrow, an extra);
- ``clusters`` (with ``clustering``: the one union-find, and splits at
  weak links): pairs grouped into clusters;
- ``labels``: a person's same/different verdicts; ``evaluate``: pairs
  scored against gold or labels;
- ``html``: the one-page report; ``plots``: PNG figures (matplotlib).
"""
