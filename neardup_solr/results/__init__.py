"""Results: what a report gives people and their next tool.

- ``pairs``: pair files and lists; ``outputs``: TSV, CSV, JSON Lines;
  ``tables``: Arrow and Parquet (pyarrow, an extra);
- ``clusters`` (with ``clustering``): pairs grouped into clusters, split
  at weak links;
- ``labels``: a person's same/different verdicts; ``evaluate``: pairs
  scored against gold or labels;
- ``html``: the one-page report; ``plots``: PNG figures (matplotlib).
"""
