"""The one sampler and the one banding chooser: what index, the API and tune share."""

import random
import re

from conftest import run_cli, write_records

from neardup_solr import NearDuplicates
from neardup_solr.records.record import Record
from neardup_solr.records.readers import RecordReader
from neardup_solr.index.sampling import choose_banding, sample
from neardup_solr.index.state import IndexSettings


def test_a_list_gives_all_of_a_short_one_and_the_same_random_draw_of_a_long_one():
    records = [Record(str(i), f"record number {i}") for i in range(100)]
    short = sample(records[:10], size=20)
    assert short.records == records[:10] and short.total == 10
    drawn = sample(records, size=20)
    assert drawn.total == 100 and len({r.id for r in drawn.records}) == 20
    assert set(drawn.records) <= set(records)
    assert sample(records, size=20).records == drawn.records  # the same seed, the same draw
    assert sample(records, size=20, seed=1).records != drawn.records


def test_a_large_file_is_sampled_at_random_offsets_without_a_pass_and_its_size_estimated(tmp_path):
    rng = random.Random(3)
    lines, texts = [], {}
    for i in range(20_000):
        if i % 97 == 0:
            lines.append(f"{i} ...")  # no letter or digit: a bad line
        else:
            texts[str(i)] = f"{rng.choice(['Art', 'Bob', 'Cy'])} deli {rng.randrange(10**6)} road"
            lines.append(f"{i} {texts[str(i)]}")
    path = write_records(tmp_path / "big.txt", lines)
    drawn = sample(path, size=500)
    assert 400 < len(drawn.records) <= 500  # offsets in one line, bad lines: fewer, never more
    assert all(texts[r.id] == r.text for r in drawn.records)  # whole, valid lines only
    ids = sorted(int(r.id) for r in drawn.records)
    assert ids[0] < 2_000 and ids[-1] > 18_000  # from all of the file, not its head
    assert abs(drawn.total - 20_000) < 1_000
    # A reader's file is sampled the same way, and the reader is left unread.
    reader = RecordReader(path)
    assert sample(reader, size=500) == drawn
    assert reader.bytes_read == 0 and sum(1 for _ in reader) == len(texts)


def test_the_command_line_the_api_and_tune_choose_one_banding_for_the_same_records(core, restaurant_records,
                                                                                     tmp_path):
    done = run_cli("index", str(restaurant_records), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    said = re.search(r"bands: (\d+) x (\d+), chosen from (\d+) of ~(\d+) records", done.stderr)
    assert said, done.stderr
    from_cli = IndexSettings.load(core)
    assert (from_cli.bands, from_cli.band_rows) == (int(said[1]), int(said[2]))
    assert said[3] == said[4] == "864"

    records = [tuple(line.split(" ", 1)) for line in restaurant_records.read_text(encoding="utf-8").splitlines()]
    told = []
    nd = NearDuplicates(core)
    assert nd.index(records, on_banding=told.append) == 864
    assert IndexSettings.load(core) == from_cli
    assert [c.banding for c in told] == [from_cli.banding] == [nd.banding(records).banding]
    assert told[0].sampled == told[0].records == 864
    assert choose_banding(restaurant_records) == told[0]

    done = run_cli("tune", "--records", str(restaurant_records), "--plot", str(tmp_path / "curve.png"))
    assert done.returncode == 0, done.stderr
    assert f"from the data (864 of ~864 records): --bands {from_cli.bands} --band-rows {from_cli.band_rows}:" \
        in done.stdout
