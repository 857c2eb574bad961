import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup_solr.errors import InputError
from neardup_solr.records.record import Record, id_key, id_order
from neardup_solr.records.readers import RecordReader


def read(path, **kw):
    reader = RecordReader(path, **kw)
    return list(reader), reader


def test_id_then_text_split_at_the_first_space_or_tab(tmp_path):
    path = tmp_path / "r.txt"
    path.write_bytes(b"1 Art's Deli  12224 Ventura\n2\tHotel Bel-Air\r\nx-9.a:b   tail  \n")
    records, reader = read(path)
    assert records == [
        Record("1", "Art's Deli  12224 Ventura"),
        Record("2", "Hotel Bel-Air"),
        Record("x-9.a:b", "tail"),
    ]
    assert reader.bad == []


def test_only_a_space_or_tab_ends_the_id(tmp_path):
    # U+3000 (ideographic space) and U+00A0 are white space in the text, not
    # separators: an id holding one breaks the id rule and is named.
    path = tmp_path / "r.txt"
    path.write_text("1\u3000\u6771\u4eac\u30bf\u30ef\u30fc\n2 \u6771\u4eac\u3000\u30bf\u30ef\u30fc\n"
                    "3\u00a0Spago\n4\tSpago\u3000\n", encoding="utf-8")
    records, reader = read(path)
    assert records == [Record("2", "\u6771\u4eac\u3000\u30bf\u30ef\u30fc"), Record("4", "Spago")]
    assert [(bad.line, bad.reason.split(" breaks")[0]) for bad in reader.bad] == [
        (1, "id " + repr("1\u3000\u6771\u4eac\u30bf\u30ef\u30fc")), (3, "id " + repr("3\u00a0Spago"))]


@pytest.mark.parametrize("text", ["--- --", "-", "_", "- _ -", "\u3000", "\u2014 \u00b7"])
def test_punctuation_only_text_is_skipped(tmp_path, text):
    path = tmp_path / "r.txt"
    path.write_text(f"1 {text}\n2 a-b\n3 _x_\n", encoding="utf-8")
    records, reader = read(path)
    assert records == [Record("2", "a-b"), Record("3", "_x_")]
    assert [str(bad) for bad in reader.bad] == [
        f"{path}:1: " + ("id '1' has no text" if not text.strip() else "text of id '1' has no letters or digits")]


def test_bad_lines_are_reported_with_line_numbers_and_skipped(tmp_path):
    path = tmp_path / "r.txt"
    path.write_bytes(
        b"1 good one\n"
        b"\n"
        b"2\n"
        b"a,b bad id\n"
        b"1 repeated id\n"
        b"3 caf\xe9\n"
        b"4 nul\x00here\n"
        b"5 !!! ...\n"
        b"6 good two"
    )
    records, reader = read(path)
    assert [r.id for r in records] == ["1", "6"]
    reasons = {bad.line: bad.reason for bad in reader.bad}
    assert sorted(reasons) == [2, 3, 4, 5, 6, 7, 8]
    assert reasons[2] == "empty line"
    assert "no text" in reasons[3]
    assert "id rule" in reasons[4]
    assert "duplicate id '1', first seen on line 1" == reasons[5]
    assert "not UTF-8" in reasons[6]
    assert "U+0000" in reasons[7]
    assert "no letters or digits" in reasons[8]
    assert str(reader.bad[0]) == f"{path}:2: empty line"


def test_a_line_over_the_limit_is_skipped_without_losing_its_neighbours(tmp_path):
    path = tmp_path / "r.txt"
    path.write_bytes(b"1 before\n2 " + b"w " * 600 + b"\n3 after\n")
    records, reader = read(path, max_line_bytes=1000)
    assert [r.id for r in records] == ["1", "3"]
    assert reader.bad[0].line == 2 and "longer than 1000 bytes" in reader.bad[0].reason


def test_strict_stops_at_the_first_bad_line(tmp_path):
    path = tmp_path / "r.txt"
    path.write_bytes(b"1 fine\n\n2 fine\n")
    with pytest.raises(InputError, match=r"r.txt:2: empty line"):
        read(path, strict=True)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        read(tmp_path / "absent.txt")


def test_numeric_ids_sort_as_numbers():
    assert sorted(["10", "9", "b", "100", "a"], key=id_key) == ["9", "10", "100", "a", "b"]


@given(st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=20),
       st.booleans(), st.integers(1, 12), st.integers(0, 25))
def test_lines_split_the_same_whatever_the_block_size(lines, final_newline, block, limit):
    """Reading in blocks of any size gives each line, or None when it is over the limit."""
    import io

    from neardup_solr.records.readers import _lines

    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    expected = [line.removesuffix(b"\r") for line in data.split(b"\n")]
    if data.endswith(b"\n") or not data:
        expected.pop()
    expected = [line if len(line) <= limit else None for line in expected]
    assert list(_lines(io.BytesIO(data), limit, block)) == expected


@given(st.lists(st.one_of(st.integers(0, 10**20).map(str), st.text("0123456789", min_size=1, max_size=4),
                          st.text("09a²٣-", min_size=1, max_size=3)), max_size=30, unique=True),
       st.booleans())
def test_id_order_is_the_order_of_id_key(ids, numbers_only):
    # The int64 way (plain numbers) and the tuples' way against sorting by id_key itself;
    # "²" is a digit that is not decimal, "٣" a decimal digit that is not ASCII.
    if numbers_only:
        ids = [i for i in ids if i.isascii() and i.isdecimal() and len(i) <= 18 and not (i[0] == "0" and len(i) > 1)]
    expected = sorted(range(len(ids)), key=lambda n: id_key(ids[n]))
    assert id_order(ids).tolist() == expected
