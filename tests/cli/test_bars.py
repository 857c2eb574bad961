"""The command line's progress bars: whole counts, and indexing's time left
from the records indexed, not the bytes read ahead of them."""

import io
import re
import sys

from neardup_solr.cli.common import _ReadingBar, bar_progress, progress


class Reader:
    """What the bar reads of a RecordReader: the file's size, the bytes and records read so far."""

    def __init__(self, size: int):
        self.size, self.bytes_read, self.records = size, 0, 0


def shown(bar) -> str:
    return bar.format_meter(**bar.format_dict)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_small_counts_show_as_whole_numbers_and_large_ones_with_a_prefix(monkeypatch):
    monkeypatch.setattr(sys, "stderr", Terminal())  # bars are drawn on a terminal only
    bar = progress(21, "band", False, "colliding bands")
    bar.update(1)
    assert "1/21 " in shown(bar) and "1.00/21.0" not in shown(bar)
    update = bar_progress(bar)
    update("colliding bands", 21, 21)
    update("verifying candidates", 5000, 21091)
    assert re.search(r"5\.00k/21\.1k", shown(bar)), shown(bar)
    bar.close()


def test_indexing_counts_the_bytes_of_the_records_indexed_not_of_those_read_ahead():
    reader = Reader(size=10_000)
    bar = _ReadingBar(reader, desc="indexing", file=io.StringIO())
    # The whole file is read (its last batches still on their way to Solr): 188 of 200 records are in.
    reader.bytes_read, reader.records = 10_000, 200
    bar.update(188)
    assert bar.n == 9_400 and bar.n < bar.total
    bar.update(12)
    assert bar.n == bar.total == 10_000
    assert "200 records" in shown(bar)
    bar.close()
