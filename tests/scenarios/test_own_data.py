"""Users' own data in and out, through the command line, on the real Solr.

The restaurant records written as a spreadsheet's CSV (byte-order mark,
CRLF, quoted fields), as JSON Lines, as TSV, gzipped and piped through
standard input must give the very pair file the `ID TEXT` file gives; bad
rows are reported with their place; results come out as TSV, CSV or JSON
Lines that Python's csv and json modules read back.
"""

import csv
import fcntl
import gzip
import io
import json
import os
import pty
import struct
import subprocess
import sys
import termios

import pytest
from tqdm import tqdm

from conftest import child_env, create_core, drop_core, run_cli

from neardup_solr.results.pairs import read_pairs


@pytest.fixture(scope="module")
def restaurants(solr_node, restaurant_records, tmp_path_factory):
    """The prepared records, their core and the pair file they give."""
    work = tmp_path_factory.mktemp("own-data")
    addresses = restaurant_records
    core = create_core(solr_node)
    assert run_cli("index", str(addresses), "--solr-url", core.url).returncode == 0
    done = run_cli("report", str(work / "pairs.tsv"), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    records = [line.split(" ", 1) for line in addresses.read_text(encoding="utf-8").splitlines()]
    yield core, work, records
    drop_core(core)


def spreadsheet_csv(records) -> bytes:
    """As a spreadsheet on Windows saves it: a byte-order mark, CRLF, and
    quoted fields. The text is split in two columns (joined again with a
    space); every 7th record has a line break for a space inside its quoted
    street; a column that is not text holds commas, quotes and line breaks."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["id", "name", "guide", "street"])
    for number, (record_id, text) in enumerate(records):
        name, _, street = text.partition(" ")
        if number % 7 == 0:
            street = street.replace(" ", "\r\n", 1)
        writer.writerow([record_id, name, f'Guide, "{number}"\r\nedition', street])
    return b"\xef\xbb\xbf" + out.getvalue().encode("utf-8")


def json_lines(records) -> bytes:
    rows = [{"id": int(i), "number": n, "name": t.partition(" ")[0], "street": t.partition(" ")[2]}
            for n, (i, t) in enumerate(records)]
    return "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")


def tab_separated(records) -> bytes:
    return ("id\ttext\n" + "".join(f"{i}\t{t}\n" for i, t in records)).encode("utf-8")


def id_text(records) -> bytes:
    return "".join(f"{i} {t}\n" for i, t in records).encode("utf-8")


CSV_COLUMNS = ("--text-columns", "name,street")
JSON_FIELDS = ("--text-fields", "name,street")
# name, its content, how it reaches the command: a path or standard input, options
VARIANTS = {
    "csv with a byte-order mark and CRLF": ("people.csv", spreadsheet_csv, False, CSV_COLUMNS),
    "gzipped csv": ("people.csv.gz", spreadsheet_csv, False, CSV_COLUMNS),
    "json lines": ("people.jsonl", json_lines, False, JSON_FIELDS),
    "tsv": ("people.tsv", tab_separated, False, ()),
    "gzipped csv on stdin": ("people.csv.gz", spreadsheet_csv, True, ("--input-format", "csv", *CSV_COLUMNS)),
    "ID TEXT on stdin, strict": ("people.txt", id_text, True, ("--strict",)),
    "json lines on stdin, appended": ("people.jsonl", json_lines, True, ("--input-format", "jsonl", *JSON_FIELDS)),
}


def cli_bytes(*args: str, stdin: bytes) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "neardup_solr", *args], input=stdin, capture_output=True,
                          timeout=600, env=child_env())


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_format_gives_the_pairs_of_the_id_text_file(restaurants, restaurant_records, new_core, tmp_path,
                                                          variant):
    _, work, records = restaurants
    name, make, piped, options = VARIANTS[variant]
    data = make(records)
    if name.endswith(".gz"):
        data = gzip.compress(data)
    core = new_core()
    if variant.endswith("appended"):
        # --append reads standard input twice: to index, then to find the pairs.
        assert run_cli("index", str(restaurant_records), "--solr-url", core.url).returncode == 0
        # The report fits the match model that --append then keeps pairs by, as the baseline's did.
        assert run_cli("report", str(tmp_path / "fitted.tsv"), "--solr-url", core.url).returncode == 0
        options = (*options, "--append", "--pairs", str(tmp_path / "appended.tsv"))
    if piped:
        done = cli_bytes("index", "-", *options, "--solr-url", core.url, stdin=data)
    else:
        (tmp_path / name).write_bytes(data)
        done = cli_bytes("index", str(tmp_path / name), *options, "--solr-url", core.url, stdin=b"")
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr
    assert f"indexed {len(records)} records from {'<stdin>' if piped else tmp_path / name}" in stderr
    assert "skipped" not in stderr
    assert core.count() == len(records)
    # Records of two columns have fields, compared one by one by default; as one text each they are the file's.
    done = run_cli("report", "--as-text", str(tmp_path / "pairs.tsv"), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "pairs.tsv").read_bytes() == (work / "pairs.tsv").read_bytes()
    if variant.endswith("appended"):
        # Read a second time from the copy of standard input: each new record's near
        # duplicates among everything indexed, the pairs of the report.
        appended = (tmp_path / "appended.tsv").read_text().splitlines()
        assert [line.split("\t")[:2] for line in appended] == [
            line.split("\t")[:2] for line in (work / "pairs.tsv").read_text().splitlines()]


BAD_CSV = (
    b"id,name,city\r\n"                          # row 1
    b'1,"Art\'s Deli, Inc.","Studio\r\nCity"\r\n'  # row 2, lines 2-3: quoted comma and line break
    b"2,Spago,Los Angeles,extra\r\n"             # row 3, line 4: ragged
    b"3,Hotel Bel-Air\r\n"                       # row 4, line 5: ragged
    b',Nobody,Nowhere\r\n'                       # row 5, line 6: no id
    b'4,"unfinished" quote,LA\r\n'               # row 6, line 7
    b"1,Art's Deli,Studio City\r\n"              # row 7, line 8: repeated id
    b"5,Chinois on Main,Santa Monica\r\n"        # row 8, line 9
)


def test_bad_rows_are_reported_with_their_row_and_the_rest_indexed(core, tmp_path):
    path = tmp_path / "people.csv"
    path.write_bytes(BAD_CSV)
    done = run_cli("index", str(path), "--solr-url", core.url)
    assert done.returncode == 6, done.stderr
    skipped = [line for line in done.stderr.splitlines() if line.startswith("skipped ")]
    assert skipped == [
        f"skipped {path}:row 3 (line 4): 4 fields where the header has 3",
        f"skipped {path}:row 4 (line 5): 2 fields where the header has 3",
        f"skipped {path}:row 5 (line 6): no id: column 'id' is empty",
        f"skipped {path}:row 6 (line 7): not valid CSV: ',' expected after '\"'",
        f"skipped {path}:row 7 (line 8): duplicate id '1', first seen on row 2",
    ]
    assert f"indexed 2 records from {path}" in done.stderr and "skipped 5 bad rows" in done.stderr
    assert core.texts(["1", "5"]) == {"1": "Art's Deli, Inc. Studio City", "5": "Chinois on Main Santa Monica"}

    done = run_cli("index", str(path), "--strict", "--solr-url", core.url)
    assert done.returncode == 4
    assert done.stderr.strip() == (f"neardup: error: {path}:row 3 (line 4): 4 fields where the header has 3 "
                                   "(hint: fix the row, or drop --strict to skip bad rows)")


def test_a_repeated_column_and_objects_in_json_lose_no_value_and_are_said(core, tmp_path):
    # Before, the first "name" and the JSON objects were dropped, exit 0 and no word.
    from neardup_solr import NearDuplicates

    table = tmp_path / "people.csv"
    table.write_text("id,name,name,city\n1,Ann,Lee,Paris\n2,Bob,Ray,Lyon\n", encoding="utf-8")
    done = run_cli("index", str(table), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    assert (f"{table}:row 1: column 3 repeats the name 'name' of column 2: its values are the field 'name_2'"
            in done.stderr.splitlines()), done.stderr
    assert NearDuplicates(core).record("1").fields == (("name", "Ann"), ("name_2", "Lee"), ("city", "Paris"))
    lines = tmp_path / "people.jsonl"
    lines.write_text(json.dumps({"id": 1, "name": "Ann Lee", "address": {"street": "12 Main St", "city": "Paris"}})
                     + "\n" + json.dumps({"id": 2, "name": "Bob Ray", "address": {"city": "Lyon"}}) + "\n")
    done = run_cli("index", str(lines), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "address" in line]
    assert said == [f"{lines}:1: field 'address' holds an object: the text of its values is the field's (keys left "
                    "out)"], done.stderr
    assert NearDuplicates(core).record("1").fields == (("name", "Ann Lee"), ("address", "12 Main St Paris"))


def test_an_unclosed_quote_costs_only_its_own_row(core, tmp_path):
    path = tmp_path / "people.csv"
    path.write_bytes(b'id,name,city\r\n1,"Spago,LA\r\n2,Chinois on Main,Santa Monica\r\n3,"Art\'s Deli,Studio City\r\n'
                     b'4,"Hotel Bel-Air",Bel Air\r\n5,"Patina\r\nat Disney Hall",LA\r\n6,Philippe,LA\r\n')
    done = run_cli("index", str(path), "--solr-url", core.url)
    assert done.returncode == 6, done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("skipped ")] == [
        f"skipped {path}:row 2: not valid CSV: a quote that does not close (',' expected after '\"' on line 4)",
        f"skipped {path}:row 4: not valid CSV: a quote that does not close (',' expected after '\"' on line 5)",
    ]
    assert core.texts(["2", "4", "5", "6"]) == {"2": "Chinois on Main Santa Monica", "4": "Hotel Bel-Air Bel Air",
                                                "5": "Patina at Disney Hall LA", "6": "Philippe LA"}
    assert core.count() == 4


def test_bad_json_lines_are_reported_with_their_line(core, tmp_path):
    path = tmp_path / "people.jsonl"
    path.write_bytes(b'{"id": 1, "name": "Spago"}\n{"id": 2, "name": \n{"name": "no id"}\n'
                     b'{"key": 3, "name": "no id either"}\n{"id": 4, "name": "Hotel Bel-Air"}\n')
    done = run_cli("index", str(path), "--solr-url", core.url)
    assert done.returncode == 6, done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("skipped ")] == [
        f"skipped {path}:2: not JSON: Expecting value (column 19)",
        f"skipped {path}:3: no 'id' field",
        f"skipped {path}:4: no 'id' field",
    ]
    assert sorted(d["id"] for d in core.iter_docs(["id"])) == ["1", "4"]
    done = run_cli("index", str(path), "--id-field", "key", "--solr-url", core.url)
    assert done.returncode == 6 and sorted(d["id"] for d in core.iter_docs(["id"])) == ["3"]


def test_a_missing_id_column_is_one_error_and_leaves_the_index_alone(core, tmp_path):
    kept = tmp_path / "kept.txt"
    kept.write_text("100 a record already indexed\n")
    assert run_cli("index", str(kept), "--solr-url", core.url).returncode == 0
    path = tmp_path / "people.csv"
    path.write_text("key,name\n1,Spago\n", encoding="utf-8")
    done = run_cli("index", str(path), "--solr-url", core.url)
    assert done.returncode == 4
    assert done.stderr.strip() == (f"neardup: error: {path}: no column 'id' in the header (it has 'key', 'name') "
                                   "(hint: name the id column with --id-column)")
    done = run_cli("index", str(path), "--id-column", "key", "--text-columns", "name,city", "--solr-url", core.url)
    assert done.returncode == 4
    assert done.stderr.strip().endswith("no column 'city' in the header (it has 'key', 'name') "
                                        "(hint: name columns that are there with --text-columns)")
    assert [d["id"] for d in core.iter_docs(["id"])] == ["100"]
    done = run_cli("index", str(path), "--id-field", "key", "--solr-url", core.url)
    assert done.returncode == 2 and "--id-field/--text-fields are for JSON Lines input" in done.stderr
    assert "Traceback" not in done.stderr
    done = run_cli("index", str(tmp_path / "absent.csv"), "--solr-url", core.url)
    assert done.returncode == 4 and "cannot read" in done.stderr
    assert [d["id"] for d in core.iter_docs(["id"])] == ["100"]


def baseline(work):
    return [(a, b, int(d), float(s), float(p)) for a, b, d, s, p in
            (line.split("\t") for line in (work / "pairs.tsv").read_text().splitlines())]


def test_report_in_each_format_reads_back_with_the_same_pairs(restaurants, tmp_path):
    core, work, records = restaurants
    texts = dict(records)
    expected = baseline(work)
    for name, options in [("pairs.csv", ()), ("pairs.out", ("--format", "csv", "--with-text")),
                          ("pairs.jsonl", ("--with-text",)), ("pairs.jsonl.gz", ()), ("pairs.tsv", ("--with-text",))]:
        path = tmp_path / name
        done = run_cli("report", str(path), *options, "--solr-url", core.url)
        assert done.returncode == 0, done.stderr
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", newline="") as handle:
            if "jsonl" in name:
                rows = [json.loads(line) for line in handle]
            else:
                rows = list(csv.DictReader(handle, delimiter="\t" if name.endswith(".tsv") else ","))
        assert [(r["id_a"], r["id_b"], int(r["distance"]), float(r["similarity"]), float(r["probability"]))
                for r in rows] == expected, name
        if "--with-text" in options:
            assert all((r["text_a"], r["text_b"]) == (texts[r["id_a"]], texts[r["id_b"]]) for r in rows), name
        # What evaluate, clusters and html read: every format, the same pairs.
        assert read_pairs(path) == read_pairs(work / "pairs.tsv"), name


def test_clusters_and_query_in_the_users_format(restaurants, tmp_path):
    core, work, records = restaurants
    texts = dict(records)
    plain = tmp_path / "clusters.tsv"
    assert run_cli("clusters", str(work / "pairs.tsv"), "-o", str(plain)).returncode == 0
    groups = [line.split("\t")[2].split(",") for line in plain.read_text().splitlines()[1:]]
    out = tmp_path / "clusters.csv"
    done = run_cli("clusters", str(work / "pairs.tsv"), "-o", str(out), "--with-text", "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["id"] for r in rows] == [m for group in groups for m in group]
    sizes = {group[0]: len(group) for group in groups}  # a cluster's id is its smallest member
    assert all(r["text"] == texts[r["id"]] and int(r["size"]) == sizes[r["cluster_id"]] for r in rows)
    out = tmp_path / "clusters.jsonl"
    assert run_cli("clusters", str(work / "pairs.tsv"), "-o", str(out)).returncode == 0
    assert [json.loads(line)["members"] for line in out.read_text().splitlines()] == groups

    done = run_cli("query", "Art's Deli 12224 Ventura Blvd. Studio City", "--format", "jsonl", "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    matches = [json.loads(line) for line in done.stdout.splitlines()]
    assert [m["id"] for m in matches[:2]] == ["220", "535"] and matches[1]["text"] == texts["535"]
    tsv = run_cli("query", "Art's Deli 12224 Ventura Blvd. Studio City", "--solr-url", core.url).stdout
    assert [line.split("\t")[2] for line in tsv.splitlines()] == [m["id"] for m in matches]


def on_a_terminal(*args: str) -> str:
    """What the command shows on a terminal of 120 columns (stderr)."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    process = subprocess.Popen([sys.executable, "-m", "neardup_solr", *args], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=side, env=child_env())
    os.close(side)
    shown = b""
    while True:
        try:
            data = os.read(main, 4096)
        except OSError:  # the other end closed
            break
        if not data:
            break
        shown += data
    os.close(main)
    assert process.wait(timeout=600) == 0, shown.decode(errors="replace")
    return shown.decode(errors="replace")


def test_a_terminal_shows_how_far_indexing_and_the_report_are(restaurants, new_core, tmp_path):
    _, _, records = restaurants
    path = tmp_path / "people.csv.gz"
    path.write_bytes(gzip.compress(spreadsheet_csv(records)))
    core = new_core()
    shown = on_a_terminal("index", str(path), *CSV_COLUMNS, "--solr-url", core.url)
    # Percent and time left from the compressed bytes read, with the file's size as the total.
    size = tqdm.format_sizeof(path.stat().st_size, divisor=1024)
    final = [state for state in shown.split("\r") if state.startswith("indexing: 100%")]
    assert final and f"{size}/{size} [" in final[-1] and f"{len(records):,} records" in final[-1]
    assert "<" in final[-1].split("[", 1)[1]  # elapsed<left
    shown = on_a_terminal("report", str(tmp_path / "pairs.csv"), "--with-text", "--solr-url", core.url)
    phases = [state.split(":")[0] for state in shown.split("\r") if "%|" in state]
    # Records of two columns: their fields compared one by one.
    assert list(dict.fromkeys(phases)) == ["reading records", "verifying candidates", "reading texts"]
    shown = on_a_terminal("report", "--as-text", str(tmp_path / "pairs.csv"), "--with-text", "--solr-url", core.url)
    phases = [state.split(":")[0] for state in shown.split("\r") if "%|" in state]
    assert list(dict.fromkeys(phases)) == ["colliding bands", "verifying candidates", "reading texts"]
