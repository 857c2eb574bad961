"""The tables people hold: Parquet files and pandas, polars and Arrow tables
in, pairs as Parquet, Arrow and pandas out; the same records and pairs as
the CSV of the same rows; a missing extra as one line naming it."""

from __future__ import annotations

import csv
import datetime
import json

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from conftest import run_cli, without
from neardup_solr import InputError, NearDuplicates, Pair
from neardup_solr.records.objects import as_record
from neardup_solr.results.clusters import Cluster, write_clusters
from neardup_solr.errors import MissingField, NeardupError
from neardup_solr.results.pairs import Pairs, read_pairs, write_pairs
from neardup_solr.records.record import ID_RULE, Record
from neardup_solr.records.readers import RecordReader
from neardup_solr.records.sources import Layout, RecordFile


def read(source, **kw):
    reader = RecordReader(source, **kw)
    return list(reader), reader


# --- records ------------------------------------------------------------------


def test_a_record_is_any_two_item_sequence_or_a_dict_and_the_checks_stay():
    assert as_record(["1", "Art's Deli"]) == Record("1", "Art's Deli")  # a list, as JSON reads a pair
    assert as_record(json.loads('[7, "Spago"]')) == Record("7", "Spago")
    assert as_record({"id": "2", "text": "Hotel Bel-Air"}) == Record("2", "Hotel Bel-Air")
    for bad, said in ((["1"], r"is an \(id, text\) pair"), ("ab", r"is an \(id, text\) pair"),
                      (["1", "a", "b"], r"is an \(id, text\) pair"), (["1", 2], "is int, not str"),
                      (["b d", "x"], "breaks the id rule"), (["1", "--"], "no letters or digits")):
        with pytest.raises(InputError, match=said) as raised:
            as_record(bad)
        assert "\n" not in str(raised.value)


def test_parquet_values_read_as_the_csv_pyarrow_writes_of_the_same_table(tmp_path):
    table = pa.table({
        "id": [1, 2, 3],
        "name": ["Art's Deli, Inc.", "The \"Ivy\"\nLA", None],
        "price": [3.0, 2.5, 1e20],
        "opened": [datetime.date(2024, 1, 31)] * 3,
        "seen": [datetime.datetime(2024, 1, 31, 12, 0, 5)] * 3,
        "open": [True, False, None],
        "stars": pa.array([4, None, 5], pa.int32()).dictionary_encode(),
    })
    pq.write_table(table, tmp_path / "r.parquet")
    pa_csv.write_csv(table, tmp_path / "r.csv")
    from_parquet, reader = read(tmp_path / "r.parquet")
    assert from_parquet == read(tmp_path / "r.csv")[0]
    assert reader.bad == []
    assert (from_parquet[0].id, from_parquet[0].text) == ("1", "Art's Deli, Inc. 3 2024-01-31 2024-01-31 12:00:05.000000 true 4")
    assert from_parquet[1].text == 'The "Ivy" LA 2.5 2024-01-31 2024-01-31 12:00:05.000000 false'
    # Each column named is a field, in the order named, a missing value "".
    assert from_parquet[2].fields == (("name", ""), ("price", "1e+20"), ("opened", "2024-01-31"),
                                      ("seen", "2024-01-31 12:00:05.000000"), ("open", ""), ("stars", "5"))
    # A list column's items are joined into its field, by default and when named.
    table = table.append_column("tags", pa.array([["a", "b"], ["c"], []]))
    pq.write_table(table, tmp_path / "t.parquet")
    layout = Layout("id", ("price", "name"))
    assert read(RecordFile.of(tmp_path / "t.parquet", layout=layout))[0][0] == \
        Record("1", "3 Art's Deli, Inc.", (("price", "3"), ("name", "Art's Deli, Inc.")))
    assert [r.fields[-1] for r in read(tmp_path / "t.parquet")[0]] == [("tags", "a; b"), ("tags", "c"), ("tags", "")]
    assert read(RecordFile.of(tmp_path / "t.parquet", layout=Layout("id", ("tags", "name"))))[0][0].text == \
        "a; b Art's Deli, Inc."
    with pytest.raises(InputError, match="column 'nested' holds struct<.*>, which has no text form"):
        table = table.append_column("nested", pa.array([{"x": 1}] * 3))
        pq.write_table(table, tmp_path / "n.parquet")
        read(RecordFile.of(tmp_path / "n.parquet", layout=Layout("id", ("nested",))))


def test_a_missing_parquet_column_is_the_error_a_csv_file_gets(tmp_path):
    rows = pa.table({"id": ["1"], "title": ["Art's Deli"]})
    pq.write_table(rows, tmp_path / "r.parquet")
    pa_csv.write_csv(rows, tmp_path / "r.csv", pa_csv.WriteOptions(quoting_style="none"))
    for layout, field in ((Layout("sku"), "sku"), (Layout("id", ("brand",)), "brand")):
        errors = []
        for name in ("r.csv", "r.parquet"):
            with pytest.raises(MissingField) as raised:
                read(RecordFile.of(tmp_path / name, layout=layout))
            assert raised.value.field == field
            errors.append(str(raised.value).replace(name, "FILE"))
        assert errors[0] == errors[1]


def test_no_parquet_file_from_standard_input_or_a_file_that_is_none(tmp_path):
    with pytest.raises(InputError, match="Parquet cannot be read from standard input") as raised:
        RecordFile.of("-", "parquet")
    assert "give the Parquet file's path" in str(raised.value)
    (tmp_path / "r.parquet").write_text("1 Art's Deli\n")
    with pytest.raises(InputError, match=r"r.parquet: not a Parquet file"):
        read(tmp_path / "r.parquet")
    with pytest.raises(InputError, match=r"cannot read .*gone.parquet: No such file or directory"):
        read(tmp_path / "gone.parquet")


def test_parquet_rows_are_read_a_batch_at_a_time(tmp_path, monkeypatch):
    """Memory holds a batch of rows, not the file: the Arrow memory at its
    peak stays far below the file's columns."""
    from neardup_solr.records import tables

    monkeypatch.setattr(tables, "BATCH_ROWS", 1000)
    rows = 200_000
    table = pa.table({"id": pa.array(range(rows)).cast(pa.string()),
                      "text": pa.array([f"record number {n} " + "x" * 200 for n in range(rows)])})
    pq.write_table(table, tmp_path / "r.parquet", row_group_size=10_000)
    whole = table.nbytes
    del table
    pool = pa.default_memory_pool()
    before = pool.bytes_allocated()
    peak = before
    count = 0
    for _ in RecordReader(tmp_path / "r.parquet"):
        count += 1
        if count % 1000 == 0:
            peak = max(peak, pool.bytes_allocated())
    assert count == rows
    assert peak - before < whole / 4, (peak - before, whole)


# --- the command line on a real Solr --------------------------------------------


def _rows(n: int) -> list[dict]:
    streets = ["Ventura Blvd.", "Stone Canyon Rd.", "N. Alameda St.", "Horn Ave.", "Robertson Blvd."]
    return [{"id": str(i), "name": f"Place {i // 2} of {streets[i % 5]}", "street": f"{100 + i // 2} {streets[i % 5]}"}
            for i in range(n)]


def test_parquet_row_groups_with_bad_rows_in_the_middle(core, tmp_path):
    rows = _rows(40)
    rows[17]["name"], rows[17]["street"] = "", None                  # no text
    rows[18]["id"] = "b d"                                            # breaks the id rule
    rows[19]["id"] = None                                             # a null id
    path = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=7)
    assert pq.ParquetFile(path).metadata.num_row_groups == 6
    done = run_cli("index", str(path), "--text-columns", "name,street", "--solr-url", core.url, "-q")
    assert done.returncode == 6, done.stderr
    skipped = [line for line in done.stderr.splitlines() if line.startswith("skipped")]
    assert skipped == [f"skipped {path}:row 18: id '17' has no text",
                       f"skipped {path}:row 19: id 'b d' breaks the id rule ({ID_RULE})",
                       f"skipped {path}:row 20: no id: column 'id' is empty"]
    assert "indexed 37 records" in done.stderr and "skipped 3 bad rows" in done.stderr
    assert core.count() == 37
    assert core.texts(["16", "20", "39"]) == {"16": "Place 8 of Stone Canyon Rd. 108 Stone Canyon Rd.",
                                               "20": "Place 10 of Ventura Blvd. 110 Ventura Blvd.",
                                               "39": "Place 19 of Robertson Blvd. 119 Robertson Blvd."}


def test_cli_parquet_errors_are_one_line(core, tmp_path):
    pq.write_table(pa.table({"id": ["1"], "title": ["Art's Deli"]}), tmp_path / "r.parquet")
    done = run_cli("index", str(tmp_path / "r.parquet"), "--id-column", "sku", "--solr-url", core.url)
    assert done.returncode == 4
    assert done.stderr == (f"neardup: error: {tmp_path / 'r.parquet'}: no column 'sku' in the header (it has 'id', "
                           "'title') (hint: name the id column with --id-column)\n")
    done = run_cli("index", "-", "--format", "parquet", "--solr-url", core.url, input="")  # --input-format's old name
    assert done.returncode == 4
    warning, error = done.stderr.splitlines()
    assert warning == "neardup: warning: --format is deprecated: use --input-format"
    assert error.startswith("neardup: error: Parquet cannot be read from standard input")


def _with_bad_utf8(values: list[bytes]) -> pa.Array:
    """A string array of ``values`` as they are, whether UTF-8 or not (as a
    careless writer leaves them: Arrow does not check what it is given)."""
    offsets = [0]
    for value in values:
        offsets.append(offsets[-1] + len(value))
    return pa.Array.from_buffers(pa.string(), len(values), [None, pa.array(offsets, pa.int32()).buffers()[1],
                                                            pa.py_buffer(b"".join(values))])


UNCHECKED_ROWS = [b"Art's Deli 12224 Ventura Blvd.", b"Hotel Bel-Air \xff\xfe 701 Stone Canyon Rd.",
                  b"Philippe the Original 1001 N. Alameda St.", b"Spago 1114 Horn Ave.", b"Campanile 624 S. La Brea"]


def test_bytes_that_are_not_utf8_in_a_parquet_column_skip_their_row_and_keep_the_rest(core, tmp_path):
    ids = [b"1", b"2", b"3", b"\xc3(", b"5"]  # row 4's id is no UTF-8 either
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"id": _with_bad_utf8(ids), "text": _with_bad_utf8(UNCHECKED_ROWS)}), path)
    for append in ([], ["--append", "--no-pairs"]):
        done = run_cli("index", *append, str(path), "--solr-url", core.url, "-q")
        assert done.returncode == 6, done.stderr
        assert "Traceback" not in done.stderr and "UnicodeDecodeError" not in done.stderr
        assert [line for line in done.stderr.splitlines() if line.startswith("skipped")] == [
            f"skipped {path}:row 2: not UTF-8 (in column 'text')", f"skipped {path}:row 4: not UTF-8 (in column 'id')"]
        assert sorted(core.texts(["1", "2", "3", "5"])) == ["1", "3", "5"] and core.count() == 3
    # A pyarrow table of the same columns is refused at its bad row, in one line, as any bad row of a table is.
    with pytest.raises(InputError, match=r"^row 2 of the pyarrow table: not UTF-8 \(in column 'text'\)"):
        NearDuplicates(core).index(pa.table({"id": ["1", "2", "3"], "text": _with_bad_utf8(UNCHECKED_ROWS[:3])}))
    assert core.count() == 3


def test_a_lone_surrogate_in_a_pandas_object_column_is_an_input_error_naming_its_row(core):
    NearDuplicates(core).index([("9", "Grill on the Alley 9560 Dayton Way")], bands=42, band_rows=3)
    texts = [row.decode() for row in UNCHECKED_ROWS[:1]] + ["Hotel Bel-Air \ud800 701 Stone Canyon Rd."]
    for column, frame in (("text", pd.DataFrame({"id": pd.Series(["1", "2"], dtype=object),
                                                 "text": pd.Series(texts, dtype=object)})),
                          ("sku", pd.DataFrame({"sku": pd.Series(["1", "2\udcff"], dtype=object),
                                                "text": pd.Series(texts[:1] * 2, dtype=object)}))):
        for call in (NearDuplicates(core).index, NearDuplicates(core).add):
            with pytest.raises(InputError, match=rf"^row 2 of the pandas table: not UTF-8 \(in column '{column}'\)"):
                call(frame, id="id" if column == "text" else "sku")
    assert core.count() == 1 and core.texts(["1", "2"]) == {}


def test_a_float_id_that_is_no_whole_number_is_a_bad_row(core, tmp_path):
    path = tmp_path / "r.parquet"
    ids = [1.0, 2.5, float("nan"), 4.0, float("inf"), None]
    pq.write_table(pa.table({"id": pa.array(ids, pa.float64()),
                             "text": [f"Cafe {n} on {n} Oak Avenue" for n in range(len(ids))]}), path)
    done = run_cli("index", str(path), "--solr-url", core.url, "-q")
    assert done.returncode == 6, done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("skipped")] == [
        f"skipped {path}:row 2: id 2.5 in column 'id' is no whole number",
        f"skipped {path}:row 3: id nan in column 'id' is no whole number",
        f"skipped {path}:row 5: id inf in column 'id' is no whole number",
        f"skipped {path}:row 6: no id: column 'id' is empty"]
    assert sorted(core.texts(["1", "4", "2.5", "nan", "inf"])) == ["1", "4"] and core.count() == 2
    # A pandas float column of whole numbers and a gap (NaN, as pandas marks a missing value) still reads as ids.
    frame = pd.DataFrame({"id": [1.0, None, 3.0], "text": ["Cafe 1 on Oak Avenue", "x", "Cafe 3 on Oak Avenue"]})
    with pytest.raises(InputError, match=r"^row 2 of the pandas table: no id: column 'id' is empty"):
        NearDuplicates(core).index(frame)
    assert NearDuplicates(core).index(frame.iloc[[0, 2]]) == 2 and sorted(core.texts(["1", "3"])) == ["1", "3"]
    with pytest.raises(InputError, match=r"^row 2 of the pandas table: id 2.5 in column 'id' is no whole number"):
        NearDuplicates(core).add(pd.DataFrame({"id": [1.0, 2.5], "text": ["Cafe 1", "Cafe 2"]}))


def test_a_damaged_parquet_page_skips_its_row_group_and_keeps_the_others(core, tmp_path):
    rows = 3000
    table = pa.table({"id": [str(n) for n in range(1, rows + 1)],
                      "text": [f"Shop {n} on Main Street number {n * 7}" for n in range(1, rows + 1)]})
    path = tmp_path / "r.parquet"
    pq.write_table(table, path, row_group_size=1000)
    damaged = bytearray(path.read_bytes())
    column = pq.ParquetFile(path).metadata.row_group(1).column(1)  # the second row group's text
    start = column.dictionary_page_offset + 97  # inside its first page's compressed data
    damaged[start:start + 8] = bytes(b ^ 0x5A for b in damaged[start:start + 8])
    path.write_bytes(damaged)
    done = run_cli("index", str(path), "--solr-url", core.url, "-q")
    assert done.returncode == 6, done.stderr
    skipped = [line for line in done.stderr.splitlines() if line.startswith("skipped")]
    assert len(skipped) == 1 and skipped[0].startswith(f"skipped {path}:row 1001: the Parquet data is damaged")
    assert "rows 1001-2000 (row group 2) skipped" in skipped[0], skipped[0]
    assert "check the path" not in done.stderr and "Traceback" not in done.stderr
    assert core.count() == 2000 and sorted(core.texts(["1000", "1001", "2000", "2001"])) == ["1000", "2001"]


@pytest.fixture(scope="module")
def restaurant_rows(restaurant_records) -> list[dict]:
    """The restaurants as a table: the id, the name's first word, the rest."""
    rows = []
    for line in restaurant_records.read_text(encoding="utf-8").splitlines():
        record_id, text = line.split(" ", 1)
        first, _, rest = text.partition(" ")
        rows.append({"id": record_id, "first": first, "rest": rest})
    return rows


def _csv_of(rows: list[dict], path):
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, ["id", "first", "rest"])
        writer.writeheader()
        writer.writerows(rows)
    return path


def _report(core, out) -> bytes:
    done = run_cli("report", str(out), "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    return out.read_bytes() if out.suffix != ".parquet" else b""


def test_dataframes_arrow_and_parquet_give_the_pairs_of_the_same_csv(core, tmp_path, restaurant_rows,
                                                                     restaurants_dir):
    _csv_of(restaurant_rows, tmp_path / "r.csv")
    done = run_cli("index", str(tmp_path / "r.csv"), "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    expected = _report(core, tmp_path / "csv-pairs.csv")
    # Two columns, so two fields compared one by one: most of the 112 true pairs are found.
    assert expected.count(b"\n") > 80

    pq.write_table(pa.Table.from_pylist(restaurant_rows), tmp_path / "r.parquet", row_group_size=100)
    done = run_cli("index", str(tmp_path / "r.parquet"), "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    assert _report(core, tmp_path / "parquet-pairs.csv") == expected

    nd = NearDuplicates(core)
    frame = pd.DataFrame(restaurant_rows)
    for name, table in (("pandas", frame), ("polars", pl.from_pandas(frame)),
                        ("arrow", pa.Table.from_pandas(frame, preserve_index=False))):
        # With the reference modes' fields, which records of fields leave out by default: they are asked below.
        assert nd.index(table, id="id", text=["first", "rest"], reference=True) == len(restaurant_rows), name
        verified = nd.pairs()
        write_pairs(tmp_path / f"{name}.csv", verified)
        assert (tmp_path / f"{name}.csv").read_bytes() == expected, name

    # The pairs as tables: the columns and values of the CSV output.
    with open(tmp_path / "csv-pairs.csv", newline="", encoding="utf-8") as handle:
        csv_rows = list(csv.DictReader(handle))
    # Field records: no text similarity, their distance the fields that differ.
    assert list(csv_rows[0]) == ["id_a", "id_b", "distance", "probability"]

    def as_csv(rows: list[dict]) -> list[dict]:
        return [{k: (f"{v:.4f}" if isinstance(v, float) else str(v)) for k, v in row.items()} for row in rows]

    arrow = verified.to_arrow()
    assert arrow.column_names == list(csv_rows[0])
    assert as_csv(arrow.to_pylist()) == csv_rows
    frame = verified.to_pandas()
    assert list(frame.columns) == list(csv_rows[0])
    assert as_csv(frame.to_dict("records")) == csv_rows

    # Parquet out: the same columns and values, read back as the same pairs.
    _report(core, tmp_path / "pairs.parquet")
    assert pq.read_table(tmp_path / "pairs.parquet").equals(arrow)
    assert read_pairs(tmp_path / "pairs.parquet") == read_pairs(tmp_path / "csv-pairs.csv")
    done = run_cli("report", str(tmp_path / "pairs.out"), "--format", "parquet", "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    assert pq.read_table(tmp_path / "pairs.out").equals(arrow)
    scores = [run_cli("evaluate", str(tmp_path / name), "--gold", str(restaurants_dir / "gold_pairs.tsv"),
                      "--no-plot") for name in ("pairs.parquet", "csv-pairs.csv")]
    assert all(done.returncode == 0 for done in scores), scores
    assert scores[0].stdout.splitlines()[-1] == scores[1].stdout.splitlines()[-1]
    assert "f1=0.9" in scores[0].stdout

    # The reference modes' pairs and a list of pairs convert too.
    stream = nd.shingle_pairs()
    write_pairs(tmp_path / "shingles.csv", nd.shingle_pairs())
    with open(tmp_path / "shingles.csv", newline="", encoding="utf-8") as handle:
        shingle_rows = list(csv.DictReader(handle))
    assert shingle_rows and list(shingle_rows[0]) == ["id_a", "id_b", "distance"]
    assert as_csv(stream.to_arrow().to_pylist()) == shingle_rows
    some = Pairs(list(verified)[:5])
    assert some.to_pandas().to_dict("records") == as_dicts(some)


def as_dicts(pairs) -> list[dict]:
    """Pairs as the rows of a table: a column no pair has a value for (the
    similarity of field records) left out."""
    return [{"id_a": p.a, "id_b": p.b, "distance": p.distance,
             **({} if p.similarity is None else {"similarity": round(p.similarity, 4)}),
             "probability": round(p.probability, 4)} for p in sorted(pairs, key=lambda p: (int(p.a), int(p.b)))]


def test_add_takes_a_table_and_its_pairs_convert(core):
    nd = NearDuplicates(core)
    nd.index([["1", "Art's Deli 12224 Ventura Blvd. Studio City"], ["2", "Hotel Bel-Air 701 Stone Canyon Rd."]])
    more = pl.DataFrame({"sku": [3, 4], "title": ["Arts Deli", "Philippe the Original"],
                         "street": ["12224 Ventura Boulevard Studio City", "1001 N. Alameda St."]})
    assert nd.add(more, id="sku") == 2
    assert nd.text("3") == "Arts Deli 12224 Ventura Boulevard Studio City"
    found = nd.pairs_of([("3", nd.text("3"))], cut=0.5)
    assert [(p.a, p.b) for p in found] == [("1", "3")]
    assert nd.pairs_of([("3", nd.text("3"))], cut=0.99) == []  # similarity 0.97
    with pytest.warns(DeprecationWarning, match=r"threshold= is deprecated: call it cut="):
        assert nd.pairs_of([("3", nd.text("3"))], threshold=0.5) == found  # the cut's old name, kept for a release
    assert found.to_arrow().column_names == ["id_a", "id_b", "distance", "similarity"]
    with pytest.raises(InputError, match=r"row 2 of the polars table: id '5' has no text") as raised:
        nd.add(pl.DataFrame({"sku": [6, 5], "title": ["Spago", None]}), id="sku", text="title")
    assert "\n" not in str(raised.value)
    with pytest.raises(MissingField, match="no column 'name'"):
        nd.add(more, id="sku", text=["name"])
    with pytest.raises(InputError, match="id= and text= name a table's columns"):
        nd.add([("9", "x")], id="sku")


def test_parquet_pairs_and_clusters_hold_the_csv_columns_and_read_back(tmp_path):
    pairs = [Pair("9", "10", 1, 0.81234, None), Pair("1", "2", 0, 1.0, 0.99996)]
    write_pairs(tmp_path / "p.csv", pairs)
    write_pairs(tmp_path / "p.parquet", pairs)
    table = pq.read_table(tmp_path / "p.parquet")
    with open(tmp_path / "p.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert table.column_names == list(rows[0]) == ["id_a", "id_b", "distance", "similarity", "probability"]
    assert [str(t) for t in table.schema.types] == ["string", "string", "int64", "double", "double"]
    assert [{k: "" if v is None else f"{v:.4f}" if isinstance(v, float) else str(v) for k, v in row.items()}
            for row in table.to_pylist()] == rows
    assert read_pairs(tmp_path / "p.parquet") == read_pairs(tmp_path / "p.csv")
    write_pairs(tmp_path / "none.parquet", [])
    assert pq.read_table(tmp_path / "none.parquet").column_names == ["id_a", "id_b", "distance"]
    write_clusters(tmp_path / "c.parquet", [Cluster("1", ("1", "2", "3"))])
    assert pq.read_table(tmp_path / "c.parquet").to_pylist() == [{"cluster_id": "1", "size": 3, "members": ["1", "2", "3"]}]
    with pytest.raises(NeardupError, match="Parquet compresses its own columns"):
        write_pairs(tmp_path / "p.parquet.gz", pairs)


def test_a_crash_while_writing_parquet_leaves_no_file(tmp_path, monkeypatch):
    def write_then_die(table, where, **kwargs):
        real(table, where, **kwargs)
        raise KeyboardInterrupt

    real = pq.write_table
    monkeypatch.setattr(pq, "write_table", write_then_die)
    with pytest.raises(KeyboardInterrupt):
        write_pairs(tmp_path / "p.parquet", [Pair("1", "2", 0, 0.9, 0.99)])
    assert list(tmp_path.iterdir()) == []


# --- without the extras ------------------------------------------------------------


PYARROW = ("pyarrow", "pyarrow.parquet")


def test_without_pyarrow_the_cli_says_which_extra_to_install(core, tmp_path):
    _csv_of([{"id": "1", "first": "Art's", "rest": "Deli"}], tmp_path / "r.csv")
    pq.write_table(pa.table({"id": ["1"], "text": ["Art's Deli"]}), tmp_path / "r.parquet")
    run = "from neardup_solr.cli import main\nsys.argv = ['neardup', *sys.argv[1:]]\nmain()\n"
    for args, feature in ((["index", str(tmp_path / "r.parquet")], "reading Parquet"),
                          (["report", str(tmp_path / "p.parquet")], "writing Parquet")):
        done = without(PYARROW, f"sys.argv = ['x', *{args + ['--solr-url', core.url]!r}]\n" + run)
        assert done.returncode == 7, done.stderr
        assert done.stderr == (f"neardup: error: {feature} needs pyarrow, which is not installed "
                               "(hint: pip install 'neardup-solr[parquet]')\n")
    assert not (tmp_path / "p.parquet").exists()
    # Everything else works without it: the CSV is indexed.
    done = without(PYARROW, f"sys.argv = ['x', 'index', {str(tmp_path / 'r.csv')!r}, '--solr-url', {core.url!r}, "
                             "'-q']\n" + run)
    assert done.returncode == 0, done.stderr
    assert core.count() == 1


def test_without_the_extras_the_api_raises_missing_extra(core):
    code = f"""
        import pandas as pd
        from neardup_solr import MissingExtra, NearDuplicates, Pair
        from neardup_solr.results.pairs import Pairs
        nd = NearDuplicates({core.url!r})
        for call in (lambda: nd.index(pd.DataFrame({{"id": ["1"], "text": ["Art's Deli"]}}), bands=4, band_rows=2),
                     lambda: Pairs([Pair("1", "2", 0)]).to_arrow()):
            try:
                call()
            except MissingExtra as err:
                print(err.exit_code, err.extra, err)
        nd.index([["1", "Art's Deli"]], bands=4, band_rows=2)
        print(nd.solr.count())
        """
    done = without(PYARROW, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "7 pandas reading a pandas table needs pyarrow, which is not installed (hint: pip install "
        "'neardup-solr[pandas]')",
        "7 parquet Arrow output needs pyarrow, which is not installed (hint: pip install 'neardup-solr[parquet]')",
        "1",
    ]
    done = without(("pandas",), """
        from neardup_solr import MissingExtra, Pair
        from neardup_solr.results.pairs import Pairs
        try:
            Pairs([Pair("1", "2", 0)]).to_pandas()
        except MissingExtra as err:
            print(err)
        """)
    assert done.stdout == "to_pandas() needs pandas, which is not installed (hint: pip install 'neardup-solr[pandas]')\n"


def test_pairs_with_sources_keep_their_source_columns_in_parquet_and_frames(tmp_path):
    # Keys "source/id" are written as source and id columns, as CSV writes them, and read back whole.
    pairs = [Pair("fodors/1", "zagats/1", 0, 0.9, 0.99), Pair("fodors/2", "zagats/10", 1, 0.8, 0.7)]
    write_pairs(tmp_path / "links.parquet", pairs)
    write_pairs(tmp_path / "links.csv", pairs)
    assert read_pairs(tmp_path / "links.parquet") == pairs
    table = pq.read_table(tmp_path / "links.parquet")
    assert table.column_names[:4] == ["source_a", "id_a", "source_b", "id_b"]
    assert table.column("id_b").to_pylist() == ["1", "10"] and table.schema.field("id_b").type == pa.string()
    frame = Pairs(pairs).to_pandas()
    with open(tmp_path / "links.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(frame.columns) == list(rows[0])
    assert frame["source_b"].tolist() == [row["source_b"] for row in rows] == ["zagats", "zagats"]


def test_a_table_with_a_column_named_twice_is_refused_naming_it():
    # Read by name, the two columns of one name could not be told apart.
    from neardup_solr.records.tables import table_records

    frame = pd.DataFrame([["1", "Ann", "Lee", "Paris"]], columns=["id", "name", "name", "city"])
    with pytest.raises(InputError, match="the pandas table: column 'name' appears 2 times in the header"):
        list(table_records(frame))
    renamed = frame.set_axis(["id", "name", "name_2", "city"], axis=1)
    assert list(table_records(renamed))[0].fields == (("name", "Ann"), ("name_2", "Lee"), ("city", "Paris"))
