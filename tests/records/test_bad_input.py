"""A file of every kind of bad line: each is reported and skipped, no valid
record is lost, and --strict stops before the index is touched."""

from pathlib import Path

from conftest import run_cli

from neardup_solr.records.record import MAX_LINE_BYTES

# (raw line, reason it is bad or None when valid); ids of valid lines say so.
LINES: list[tuple[bytes, str | None]] = [
    (b"1 Art's Deli 12224 Ventura Blvd. Studio City", None),
    (b"", "empty line"),
    (b"   \t ", "empty line"),
    (b" Hotel Bel-Air 701 Stone Canyon Rd.", "no id: the line starts with white space"),
    (b"2 Caf\xc3\xa9 Zo\xc3\xab 5 Rue de la Paix", None),
    (b"5", "id '5' has no text"),
    (b"a,b Bad id", None),  # reason filled in below: the id rule (a comma)
    (b"ab/../cd Dot segment in id", None),
    (b"x" * 129 + b" Id too long", None),
    (b"3\tTab separated record", None),
    (b"1 Second record with id 1", "duplicate id '1', first seen on line 1"),
    (b"6 caf\xe9 latin-1 bytes", "not UTF-8 (byte 6)"),
    (b"7 nul\x00inside", "control character U+0000 at column 6"),
    (b"8 bell\x07inside", "control character U+0007 at column 7"),
    (b"9 next-line\xc2\x85inside", "control character U+0085 at column 12"),
    (b"10 " + b"long " * (MAX_LINE_BYTES // 5 + 1), f"line longer than {MAX_LINE_BYTES} bytes"),
    (b"11 !!! ... ???", "text of id '11' has no letters or digits"),
    (b"12 --- -- _", "text of id '12' has no letters or digits"),  # "-" and "_" are punctuation too
    ("13\u3000Tokyo Tower".encode(), None),  # an ideographic space is no separator: the id rule
    ("5\u3000\u6771\u4eac Tower".encode(), None),  # the same, though "5" alone would be a duplicate
    ("14 \u6771\u4eac\u3000\u30bf\u30ef\u30fc".encode(), None),  # inside the text it is white space
    (b"4 The last valid record, no newline at the end", None),
]
ID_RULE_BREAKERS = {6: "'a,b'", 7: "'ab/../cd'", 8: repr("x" * 40), 18: repr("13\u3000Tokyo"),
                    19: repr("5\u3000\u6771\u4eac")}
VALID_IDS = ["1", "14", "2", "3", "4"]


def expected_bad() -> list[tuple[int, str]]:
    bad = []
    for number, (_, reason) in enumerate(LINES, start=1):
        if number - 1 in ID_RULE_BREAKERS:
            reason = f"id {ID_RULE_BREAKERS[number - 1]} breaks the id rule"
        if reason:
            bad.append((number, reason))
    return bad


def make_corpus(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(raw for raw, _ in LINES))
    return path


def skipped_lines(stderr: str, corpus: Path) -> list[tuple[int, str]]:
    found = []
    for line in stderr.splitlines():
        if line.startswith(f"skipped {corpus}:"):
            number, reason = line[len(f"skipped {corpus}:"):].split(": ", 1)
            found.append((int(number), reason))
    return found


def test_every_bad_line_is_reported_and_every_valid_record_indexed(core, tmp_path):
    corpus = make_corpus(tmp_path / "bad_input.txt")
    done = run_cli("index", str(corpus), "--solr-url", core.url)
    assert done.returncode == 6, done.stderr
    reported = skipped_lines(done.stderr, corpus)
    assert [n for n, _ in reported] == [n for n, _ in expected_bad()]
    for (_, got), (_, want) in zip(reported, expected_bad()):
        assert got.startswith(want), (got, want)
    assert f"indexed {len(VALID_IDS)} records from {corpus}" in done.stderr
    assert f"skipped {len(expected_bad())} bad lines" in done.stderr
    assert sorted(d["id"] for d in core.iter_docs(["id"])) == VALID_IDS
    assert core.search('id:"1"').docs[0]["content"] == "Art's Deli 12224 Ventura Blvd. Studio City"


def test_strict_fails_at_the_first_bad_line_before_touching_the_index(core, tmp_path):
    corpus = make_corpus(tmp_path / "bad_input.txt")
    good = tmp_path / "good.txt"
    good.write_text("100 kept record\n")
    assert run_cli("index", str(good), "--solr-url", core.url).returncode == 0
    done = run_cli("index", str(corpus), "--strict", "--solr-url", core.url)
    assert done.returncode == 4
    assert done.stderr.strip() == (
        f"neardup: error: {corpus}:2: empty line (hint: fix the line, or drop --strict to skip bad lines)"
    )
    assert [d["id"] for d in core.iter_docs(["id"])] == ["100"]
