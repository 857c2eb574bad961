"""Reading users' own files: CSV and TSV with a header, JSON Lines, gzip,
a byte-order mark and CRLF; each bad entry reported with its place, no
valid neighbour lost; memory that does not grow with the file."""

import gzip
import io
import json
import os
import queue
import sys
import tempfile
import threading
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.records import readers
from neardup_solr.records.record import ID_RULE
from neardup_solr.errors import InputError, MissingField
from neardup_solr.records.record import Record
from neardup_solr.records.readers import RecordReader
from neardup_solr.records.seen import SeenIds
from neardup_solr.records.sources import Layout, RecordFile, format_from_name


def read(source, **kw):
    reader = RecordReader(source, **kw)
    return list(reader), reader


def reported(reader):
    return [str(bad) for bad in reader.bad]


@pytest.mark.parametrize("name, expected", [
    ("a.csv", "csv"), ("a.CSV", "csv"), ("a.csv.gz", "csv"), ("a.tsv", "tsv"), ("a.tab.gz", "tsv"),
    ("a.jsonl", "jsonl"), ("a.ndjson.gz", "jsonl"), ("a.txt", "text"), ("a.txt.gz", "text"), ("data", "text"),
    ("a.json", "text"),
])
def test_the_format_comes_from_the_name_through_gz(name, expected):
    assert format_from_name(name) == expected


def test_a_byte_order_mark_and_crlf_lose_no_record_in_id_text_lines(tmp_path):
    # A file saved by a Windows editor: the mark used to break the first id.
    path = tmp_path / "r.txt"
    path.write_bytes("\ufeff1 Art's Deli\r\n2 Hotel Bel-Air\r\n".encode())
    records, reader = read(path)
    assert records == [Record("1", "Art's Deli"), Record("2", "Hotel Bel-Air")]
    assert reader.bad == []


def test_csv_fields_quoted_with_commas_quotes_and_line_breaks(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(
        "\ufeffid,name,street,city\r\n"
        '1,"Art\'s Deli, Inc.","12224 Ventura Blvd.",Studio City\r\n'
        '2,"The ""Ivy""","113 N. Robertson\r\nBlvd.",Los Angeles\r\n'
        "3,Spago,1114 Horn Ave.,\r\n".encode()
    )
    records, reader = read(path)
    assert [(r.id, r.text) for r in records] == [
        ("1", "Art's Deli, Inc. 12224 Ventura Blvd. Studio City"),
        ("2", 'The "Ivy" 113 N. Robertson Blvd. Los Angeles'),  # the line break is a space
        ("3", "Spago 1114 Horn Ave."),  # an empty field adds nothing
    ]
    # Each column is a field; a missing value is "".
    assert records[1].fields == (("name", 'The "Ivy"'), ("street", "113 N. Robertson Blvd."), ("city", "Los Angeles"))
    assert records[2].fields[-1] == ("city", "")
    assert reader.bad == [] and reader.unit == "row"


def test_text_columns_are_joined_in_the_order_named(tmp_path):
    path = tmp_path / "r.tsv"
    path.write_text("city\tid\tname\tnote\nLA\t7\tSpago\tskip me\n", encoding="utf-8")
    records, _ = read(path, layout=Layout("id", ("name", "city")))
    assert records == [Record("7", "Spago LA", (("name", "Spago"), ("city", "LA")))]
    records, _ = read(path)  # every other column, in the file's order
    assert records == [Record("7", "LA Spago skip me", (("city", "LA"), ("name", "Spago"), ("note", "skip me")))]
    records, _ = read(path, layout=Layout("id", ("name",)))  # one column is one text, no fields
    assert records == [Record("7", "Spago")]


def test_bad_csv_rows_are_reported_with_their_row_and_their_neighbours_kept(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(
        b"id,name,city\n"                       # row 1
        b"1,Spago,LA\n"                         # row 2
        b"2,too,many,fields\n"                  # row 3
        b"3,too few\n"                          # row 4
        b'4,"two\nlines",LA\n'                  # row 5, lines 5-6
        b",no id,LA\n"                          # row 6, line 7
        b"\n"                                   # row 7
        b'5,"closed"then more,LA\n'             # row 8
        b"6,caf\xe9,LA\n"                       # row 9
        b"7,bell\x07,LA\n"                      # row 10
        b"1,again,LA\n"                         # row 11
        b'"x,y",bad id,LA\n'                    # row 12
        b"8,!!!,...\n"                          # row 13
        b"9,Hotel Bel-Air,Bel Air"              # row 14, no line end
    )
    records, reader = read(path)
    assert [r.id for r in records] == ["1", "4", "9"]
    assert reported(reader) == [
        f"{path}:row 3: 4 fields where the header has 3",
        f"{path}:row 4: 2 fields where the header has 3",
        f"{path}:row 6 (line 7): no id: column 'id' is empty",
        f"{path}:row 7 (line 8): empty row",
        f"{path}:row 8 (line 9): not valid CSV: ',' expected after '\"'",
        f"{path}:row 9 (line 10): not UTF-8 (in column 'name')",
        f"{path}:row 10 (line 11): control character U+0007 in column 'name'",
        f"{path}:row 11 (line 12): duplicate id '1', first seen on row 2",
        f"{path}:row 12 (line 13): id 'x,y' breaks the id rule ({ID_RULE})",
        f"{path}:row 13 (line 14): text of id '8' has no letters or digits",
    ]


def test_a_quote_that_never_closes_is_reported(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text('id,name\n1,Spago\n2,"Hotel Bel-Air\n', encoding="utf-8")
    records, reader = read(path)
    assert records == [Record("1", "Spago")]
    assert reported(reader) == [f"{path}:row 3: not valid CSV: a quote that does not close (end of file)"]


def test_an_unclosed_quote_loses_no_row_after_it_and_every_bad_row_is_named(tmp_path):
    # A quoted field may hold line breaks; one whose quote does not close
    # into a whole row is named by its first line, and reading resumes at
    # the next line, so the rows it would have swallowed are read as rows.
    path = tmp_path / "r.csv"
    path.write_text(
        "id,name,city\n"                        # line 1
        '1,"Spago,LA\n'                         # line 2: the quote closes nowhere
        "2,Chinois on Main,Santa Monica\n"      # line 3
        '3,"Art\'s Deli\n'                      # line 4: closed by the next quoted field, badly
        '4,"Hotel Bel-Air",Bel Air\n'           # line 5 (the quote of line 4 closes here: a stray letter)
        '5,"The ""Ivy""","113 N. Robertson\n'   # lines 6-7: a quoted line break, a whole row
        'Blvd."\n'
        '6,"Campanile\n'                        # lines 8-9: closes, but into 2 fields
        'on La Brea"\n'
        '7,"Patina",LA\n'                        # line 10
        '8,"never closed,LA\n'                  # line 11: runs to the end of the file
        "9,Philippe,LA\n",                      # line 12
        encoding="utf-8")
    records, reader = read(path)
    assert [r.id for r in records] == ["2", "4", "5", "7", "9"]
    assert (records[2].id, records[2].text) == ("5", 'The "Ivy" 113 N. Robertson Blvd.')
    assert reported(reader) == [
        f"{path}:row 2: not valid CSV: a quote that does not close (',' expected after '\"' on line 4)",
        f"{path}:row 4: not valid CSV: a quote that does not close (',' expected after '\"' on line 5)",
        f"{path}:row 7 (line 8): not valid CSV: a quote that does not close into a row "
        "(2 fields where the header has 3, on line 9)",
        f"{path}:row 8 (line 9): 1 fields where the header has 3",
        f"{path}:row 10 (line 11): not valid CSV: a quote that does not close (end of file)",
    ]
    # The same rows named whatever the row limit, as long as the rows fit it.
    records, reader = read(path, max_line_bytes=60)
    assert [r.id for r in records] == ["2", "4", "5", "7", "9"] and len(reader.bad) == 5


def test_a_quote_open_past_the_row_limit_resumes_at_its_next_line(tmp_path):
    path = tmp_path / "r.tsv"
    path.write_text('id\tname\n1\t"open\n' + "".join(f"{i}\tSpago {i}\n" for i in range(2, 40)),
                    encoding="utf-8")
    records, reader = read(path, max_line_bytes=100)
    assert [r.id for r in records] == [str(i) for i in range(2, 40)]
    assert reported(reader) == [f"{path}:row 2: not valid TSV: a quote that does not close within 100 characters"]


def test_a_row_over_the_limit_is_skipped_without_holding_it(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("id,name\n1,before\n2," + "w" * 5000 + "\n3,after\n" + '4,"open quote' + "x" * 5000
                    + "\n5,last\n", encoding="utf-8")
    records, reader = read(path, max_line_bytes=1000)
    assert [r.id for r in records] == ["1", "3", "5"]
    assert reported(reader) == [f"{path}:row 3: row longer than 1000 characters",
                                f"{path}:row 5: row longer than 1000 characters"]


@pytest.mark.parametrize("header, layout, field", [
    ("name,city", Layout(), "id"),
    ("ID,name", Layout(), "id"),
    ("id,name", Layout("id", ("name", "street")), "street"),
])
def test_a_missing_column_is_one_error_before_any_record(tmp_path, header, layout, field):
    path = tmp_path / "r.csv"
    path.write_text(header + "\n1,Spago\n", encoding="utf-8")
    reader = RecordReader(path, layout=layout)
    with pytest.raises(MissingField) as caught:
        reader.start()
    assert caught.value.field == field and caught.value.exit_code == 4
    assert str(caught.value).startswith(f"{path}: no column {field!r} in the header (it has ")


def test_an_empty_csv_and_a_doubled_column_are_input_errors(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="is empty"):
        read(empty)
    doubled = tmp_path / "doubled.csv"
    doubled.write_text("id,name,id\n1,Spago,2\n", encoding="utf-8")
    with pytest.raises(InputError, match="column 'id' appears 2 times"):
        read(doubled)


def test_json_lines_with_a_mark_crlf_numbers_and_text_fields(tmp_path):
    path = tmp_path / "r.jsonl"
    lines = [{"id": 1, "name": "Spago", "zip": 90069, "tags": ["x"], "open": True, "note": None},
             {"id": "a-2", "name": "Hotel\nBel-Air", "zip": 90077}]
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(json.dumps(line).encode() for line in lines) + b"\r\n")
    records, reader = read(path)
    # By default every other field of text, a number or a list of them, in the object's order.
    assert records == [Record("1", "Spago 90069 x", (("name", "Spago"), ("zip", "90069"), ("tags", "x"))),
                       Record("a-2", "Hotel Bel-Air 90077", (("name", "Hotel Bel-Air"), ("zip", "90077")))]
    records, _ = read(path, layout=Layout("id", ("zip", "name", "missing")))
    assert records == [Record("1", "90069 Spago", (("zip", "90069"), ("name", "Spago"), ("missing", ""))),
                       Record("a-2", "90077 Hotel Bel-Air", (("zip", "90077"), ("name", "Hotel Bel-Air"),
                                                             ("missing", "")))]
    assert reader.bad == [] and reader.unit == "line"


def test_bad_json_lines_are_reported_with_their_line_and_their_neighbours_kept(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(
        b'{"id": 1, "name": "Spago"}\n'
        b'{"id": 2, "name": "Spago"\n'
        b'["a list"]\n'
        b'{"name": "no id"}\n'
        b'{"id": null, "name": "null id"}\n'
        b'{"id": 2.5, "name": "float id"}\n'
        b'\n'
        b'{"id": 3, "name": "caf\xe9"}\n'
        b'{"id": 4, "name": {"nested": 1}}\n'
        b'{"id": 1, "name": "again"}\n'
        b'{"id": 5, "name": "bell\\u0007"}\n'
        b'{"id": 6, "name": "Hotel Bel-Air"}'
    )
    records, reader = read(path, layout=Layout("id", ("name",)))
    assert [r.id for r in records] == ["1", "4", "6"]  # an object's values are its field's text
    assert reported(reader) == [
        f"{path}:2: not JSON: Expecting ',' delimiter (column 26)",  # the line ends after 25 characters
        f"{path}:3: not a JSON object but a list",
        f"{path}:4: no 'id' field",
        f"{path}:5: no 'id' field",
        f"{path}:6: field 'id' holds a number, not a string or whole number",
        f"{path}:7: empty line",
        f"{path}:8: not UTF-8 (byte 23)",
        f"{path}:10: duplicate id '1', first seen on line 1",
        f"{path}:11: control character U+0007 in field 'name'",
    ]


def test_a_repeated_column_name_keeps_both_columns_and_says_so(tmp_path):
    # Both were fields named "name": a record's fields, a dict, kept the second value only.
    path = tmp_path / "r.csv"
    path.write_text("id,name,name,city,name\n1,Ann,Lee,Paris,Jo\n2,Bob,Ray,Lyon,\n", encoding="utf-8")
    records, reader = read(path)
    assert records[0] == Record("1", "Ann Lee Paris Jo", (("name", "Ann"), ("name_2", "Lee"), ("city", "Paris"),
                                                           ("name_3", "Jo")))
    assert len(dict(records[1].fields)) == 4
    assert reader.notes == [f"{path}:row 1: column 3 repeats the name 'name' of column 2: its values are the field "
                            "'name_2'",
                            f"{path}:row 1: column 5 repeats the name 'name' of column 2: its values are the field "
                            "'name_3'"]
    assert reader.bad == []
    # Named as the text, a repeated column is ambiguous: one error naming it.
    with pytest.raises(InputError, match="column 'name' appears 3 times"):
        read(path, layout=Layout("id", ("name", "city")))


def test_json_objects_in_fields_are_read_as_their_values_text_and_said_once_a_field(tmp_path):
    # An object, or a list of objects, in a field was left out of the text and the fields without a word.
    path = tmp_path / "r.jsonl"
    lines = [{"id": 1, "name": "Ann Lee", "address": {"street": "12 Main St", "city": "Paris", "geo": {"zip": 75001}},
              "phones": [{"kind": "home", "number": "555 0101"}, {"kind": "work", "number": None}], "tags": ["a", 7]},
             {"id": 2, "name": "Bob Ray", "address": {"street": "3 Oak Ave", "city": "Lyon", "open": True}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    records, reader = read(path)
    assert records == [
        Record("1", "Ann Lee 12 Main St Paris 75001 home 555 0101; work a; 7",
               (("name", "Ann Lee"), ("address", "12 Main St Paris 75001"), ("phones", "home 555 0101; work"),
                ("tags", "a; 7"))),
        Record("2", "Bob Ray 3 Oak Ave Lyon", (("name", "Bob Ray"), ("address", "3 Oak Ave Lyon")))]
    assert reader.notes == [
        f"{path}:1: field 'address' holds an object: the text of its values is the field's (keys left out)",
        f"{path}:1: field 'phones' holds objects: the text of its values is the field's (keys left out)"]
    records, reader = read(path, layout=Layout("id", ("address",)))
    assert [r.text for r in records] == ["12 Main St Paris 75001", "3 Oak Ave Lyon"] and len(reader.notes) == 1


def test_strict_stops_at_the_first_bad_row(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("id,name\n1,Spago\n2\n3,Spiago\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read(path, strict=True)
    # The library's hint names no command-line option; the command line
    # words the same remedy as its --strict (test_own_data checks that).
    assert str(caught.value) == (f"{path}:row 3: 1 fields where the header has 2 "
                                 "(hint: fix the row, or read without the strict check to skip bad rows)")
    assert caught.value.remedy == "strict" and caught.value.context == {"unit": "row"}


@pytest.mark.parametrize("name", ["r.csv.gz", "r.csv"])
def test_gzip_is_read_by_its_first_bytes_and_progress_counts_compressed_bytes(tmp_path, name):
    path = tmp_path / name
    rows = "".join(f"{i},Restaurant number {i} on Main Street\n" for i in range(20_000))
    path.write_bytes(gzip.compress(("id,name\n" + rows).encode(), mtime=0))
    reader = RecordReader(path, format="csv")  # a gzip stream under a plain name too
    seen = []
    for number, _ in enumerate(reader, start=1):
        if number % 5000 == 0:
            seen.append(reader.bytes_read)
    assert number == 20_000
    size = path.stat().st_size
    assert reader.size == size
    assert seen == sorted(seen) and 0 < seen[0] < size  # bytes of the file, not of the text
    assert reader.bytes_read == size


def test_damaged_gzip_is_one_input_error(tmp_path):
    path = tmp_path / "r.csv.gz"
    data = gzip.compress(b"id,name\n" + b"".join(b"%d,name %d\n" % (i, i) for i in range(5000)))
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"r.csv.gz: the gzip data is damaged or cut short"):
        read(path)


def test_ids_seen_before_are_found_the_same_after_moving_to_disk(monkeypatch):
    def answers():
        seen = SeenIds()
        out = [seen.first(record_id, where) for where, record_id in
               enumerate(["a", "b", "a", "c", "d", "e", "b", "f", "e", "a"], start=1)]
        seen.close()
        return out

    in_memory = answers()
    monkeypatch.setattr(SeenIds, "IN_MEMORY", 3)
    assert answers() == in_memory == [None, None, 1, None, None, None, 2, None, 6, 1]


def _peak_while_reading(path, layout) -> int:
    tracemalloc.start()
    try:
        count = sum(1 for _ in RecordReader(path, layout=layout))
        return tracemalloc.get_traced_memory()[1], count
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", ["csv", "jsonl", "txt"])
def test_memory_does_not_grow_with_the_file(tmp_path, monkeypatch, kind):
    """Four times the records, the same peak: nothing holds the file or a
    record of each line (ids move to disk past SeenIds.IN_MEMORY; lines are
    read a block at a time, made small here so both files span many)."""
    monkeypatch.setattr(SeenIds, "IN_MEMORY", 1000)
    monkeypatch.setattr(readers, "READ_BLOCK", 1 << 16)

    def line(i):
        text = f"Restaurant number {i} at {i % 977} Main Street Springfield"
        return {"csv": f"{i},{text}\n", "jsonl": json.dumps({"id": i, "name": text}) + "\n",
                "txt": f"{i} {text}\n"}[kind]

    peaks = []
    for n in (10_000, 40_000):
        path = tmp_path / f"r{n}.{kind}.gz"
        with gzip.open(path, "wt", encoding="utf-8") as out:
            out.write("id,name\n" if kind == "csv" else "")
            out.writelines(line(i) for i in range(n))
        peak, count = _peak_while_reading(path, Layout())
        assert count == n
        peaks.append(peak)
    # 30,000 more ids held in memory would take well over 2 MB.
    assert peaks[1] < peaks[0] + 256 * 1024, peaks


@pytest.mark.parametrize("kind", ["text", "jsonl", "csv"])
def test_standard_input_held_open_gives_the_records_written_so_far(monkeypatch, kind):
    # A producer that writes a few records and goes on working: they are read as they come, not once a
    # megabyte has arrived or the pipe is closed (before, `index -` waited, with its first records unsent).
    from neardup_solr.records import sources

    read_end, write_end = os.pipe()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(os.fdopen(read_end, "rb")))
    monkeypatch.setattr(sources, "_stdin_taken", False)
    lines = {"text": ["1 Art's Deli", "2 Hotel Bel-Air", "3 Cafe Bizou"],
             "jsonl": ['{"id": "1", "text": "Art\'s Deli"}', '{"id": "2", "text": "Hotel Bel-Air"}',
                       '{"id": "3", "text": "Cafe Bizou"}'],
             "csv": ["id,text", "1,Art's Deli", "2,Hotel Bel-Air", "3,Cafe Bizou"]}[kind]
    got: queue.Queue = queue.Queue()
    reader = RecordReader("-", format=kind)
    threading.Thread(target=lambda: [got.put(record) for record in reader], daemon=True).start()
    with os.fdopen(write_end, "wb") as producer:
        producer.write("".join(f"{line}\n" for line in lines[:-1]).encode())
        producer.flush()
        # The pipe stays open while both records arrive.
        assert [got.get(timeout=30), got.get(timeout=30)] == [Record("1", "Art's Deli"), Record("2", "Hotel Bel-Air")]
        producer.write(f"{lines[-1]}\n".encode())
    assert got.get(timeout=30) == Record("3", "Cafe Bizou")


def test_record_file_of_standard_input_is_named_for_messages():
    source = RecordFile.of("-")
    assert (source.path, source.name, source.format, source.size) == (None, "<stdin>", "text", None)
    assert RecordFile.of("-", "jsonl").format == "jsonl"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["row", "quoted", "two lines", "stray quote"]), max_size=25),
       st.sampled_from(["csv", "tsv"]))
def test_stray_quotes_cost_their_own_lines_only(kinds, kind):
    """Whatever the mix of rows, rows quoted over two lines and lines whose
    quote never closes, every row is read and every stray quote named."""
    sep = "," if kind == "csv" else "\t"
    lines, kept, named = [f"id{sep}name"], [], []
    for number, what in enumerate(kinds, start=1):
        start = len(lines) + 1
        if what == "row":
            lines.append(f"{number}{sep}Spago {number}")
        elif what == "quoted":
            lines.append(f'{number}{sep}"Spago{sep} ""{number}"""')
        elif what == "two lines":
            lines += [f'{number}{sep}"Spago', f'{number}"']
        else:
            lines.append(f'{number}{sep}"Spago {number}')
            named.append(start)
            continue
        kept.append(str(number))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"mixed.{kind}"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        found, reader = read(path)
    assert [r.id for r in found] == kept
    assert [bad.line for bad in reader.bad] == named
    assert all("a quote that does not close" in bad.reason for bad in reader.bad)
