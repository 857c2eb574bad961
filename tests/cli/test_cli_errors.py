"""The command line holds on bad arguments: a text with nothing to compare,
an output path it cannot write (checked before the work), `-` as standard
output, a token file others can read or a token too short to guard."""

import json

import pytest

from conftest import free_port, run_cli, write_records

from neardup_solr import NearDuplicates
from neardup_solr.errors import NeardupError

RECORDS = [
    "1 Art's Deli 12224 Ventura Blvd. Studio City",
    "2 Arts Deli 12224 Ventura Boulevard Studio City",
    "3 Hotel Bel-Air 701 Stone Canyon Rd. Bel Air",
    "4 Bel-Air Hotel 701 Stone Canyon Road Bel Air",
    "5 Philippe the Original 1001 N. Alameda St. Los Angeles",
]


def one_error_line(done, code: int) -> str:
    """The single stderr line of a failed command, checked to be one line with a hint."""
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("neardup: error: ") and "(hint: " in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def indexed(core, tmp_path):
    path = write_records(tmp_path / "records.txt", RECORDS)
    done = run_cli("index", str(path), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    return core


@pytest.mark.parametrize("text", ['"', "--- --", "\u3000", "_ . _"])
def test_a_query_without_letters_or_digits_is_one_line(indexed, text):
    line = one_error_line(run_cli("query", "--solr-url", indexed.url, "--", text), 1)
    assert "no letters or digits" in line
    with pytest.raises(NeardupError, match="no letters or digits"):
        NearDuplicates(indexed).query(text)


def nowhere() -> str:
    """A Solr URL nothing answers at: a command reaching Solr fails with exit 3."""
    return f"http://127.0.0.1:{free_port()}/solr/neardup"


def output_cases(tmp_path):
    """(argument list, the output named) of each command writing a file, given ``out``."""
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("1\t2\t1\t0.9000\n3\t4\t2\t0.8000\n")
    records = write_records(tmp_path / "records.txt", RECORDS)
    return {
        "report": lambda out: ["report", str(out), "--solr-url", nowhere(), "--retries", "0"],
        "clusters": lambda out: ["clusters", str(pairs), "-o", str(out), "--solr-url", nowhere()],
        "html": lambda out: ["html", str(pairs), "-o", str(out), "--records", str(records)],
        "index --append --pairs": lambda out: ["index", "--append", str(records), "--pairs", str(out),
                                               "--solr-url", nowhere(), "--retries", "0"],
    }


@pytest.mark.parametrize("command", ["report", "clusters", "html", "index --append --pairs"])
def test_an_output_under_a_file_is_refused_before_any_work(tmp_path, command):
    # The report reaches Solr first (exit 3 if it did); clusters and html
    # used to end in a traceback after their work.
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file\n")
    args = output_cases(tmp_path)[command](blocker / "out.tsv")
    line = one_error_line(run_cli(*args), 1)
    assert f"cannot write {blocker / 'out.tsv'}" in line and "not a directory" in line
    assert blocker.read_text() == "a file\n"


@pytest.mark.parametrize("command", ["report", "clusters", "html", "index --append --pairs"])
def test_an_output_that_is_a_directory_is_one_line(tmp_path, command):
    folder = tmp_path / "folder"
    folder.mkdir()
    args = output_cases(tmp_path)[command](folder)
    line = one_error_line(run_cli(*args), 1)
    assert f"cannot write {folder}: it is a directory" in line
    assert list(folder.iterdir()) == []


def test_dash_writes_pairs_clusters_and_html_to_standard_output(indexed, tmp_path):
    pairs = tmp_path / "pairs.tsv"
    done = run_cli("report", str(pairs), "--solr-url", indexed.url)
    assert done.returncode == 0, done.stderr
    done = run_cli("report", "-", "--solr-url", indexed.url, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == pairs.read_text() and done.stdout.count("\n") == 2
    # No file named "-", nor a model file beside standard output: the model is kept with the index.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.model.json", "pairs.tsv", "records.txt"]
    assert "to standard output" in done.stderr
    done = run_cli("report", "-", "--format", "jsonl", "--with-text", "--solr-url", indexed.url, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [(r["id_a"], r["id_b"]) for r in map(json.loads, done.stdout.splitlines())] == [("1", "2"), ("3", "4")]

    done = run_cli("clusters", str(pairs), "-o", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["cluster_id\tsize\tmembers", "1\t2\t1,2", "3\t2\t3,4"]
    done = run_cli("clusters", str(pairs), "-o", "-", "--json", cwd=tmp_path)
    assert [c["members"] for c in json.loads(done.stdout)] == [["1", "2"], ["3", "4"]]
    done = run_cli("html", str(pairs), "-o", "-", "--records", str(tmp_path / "records.txt"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("<!DOCTYPE html>") and "Stone Canyon" in done.stdout
    more = write_records(tmp_path / "more.txt", ["6 Arts Deli 12224 Ventura Blvd Studio City"])
    done = run_cli("index", "--append", str(more), "--pairs", "-", "--solr-url", indexed.url, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert {tuple(line.split("\t")[:2]) for line in done.stdout.splitlines()} >= {("1", "6"), ("2", "6")}
    assert not (tmp_path / "-").exists()


def token_file(tmp_path, token: str, mode: int):
    path = tmp_path / "token.txt"
    path.write_text(token + "\n")
    path.chmod(mode)
    return path


@pytest.mark.parametrize("token, mode, warned", [
    ("k" * 32, 0o644, "is readable by group or others (mode 0644)"),
    ("k", 0o600, "holds a token of 1 character"),
    ("k" * 15, 0o640, "is readable by group or others (mode 0640)"),
])
def test_a_token_file_others_can_read_or_a_short_token_is_warned_of(serve, tmp_path, token, mode, warned):
    path = token_file(tmp_path, token, mode)
    service = serve("--solr-url", nowhere(), "--token-file", str(path))
    assert service.get("/health").status_code == 503  # it runs
    stderr = service.stop()
    warnings = [line for line in stderr.splitlines() if line.startswith("neardup: warning: ")]
    assert any(warned in line and "(hint: " in line for line in warnings), stderr
    if len(token) < 16 and mode & 0o077:
        assert len(warnings) == 2


def test_a_private_long_token_is_not_warned_of(serve, tmp_path):
    path = token_file(tmp_path, "k" * 16, 0o600)
    service = serve("--solr-url", nowhere(), "--token-file", str(path))
    assert service.get("/health").status_code == 503
    assert "warning" not in service.stop()


@pytest.mark.parametrize("args, said", [
    (["report"], "Missing argument 'OUT'. (hint: see `neardup report --help`)"),
    (["index", "."], "Invalid value for 'RECORDS': File '.' is a directory."),
    (["query", "--limit", "0", "x"], "Invalid value for '--limit'"),
    (["clusters", "absent.tsv", "-o", "c.tsv"], "File 'absent.tsv' does not exist."),
])
def test_wrong_usage_is_one_line_too(tmp_path, args, said):
    assert said in one_error_line(run_cli(*args, cwd=tmp_path), 2)


def test_an_unreadable_records_file_is_one_line_with_a_hint(tmp_path, core):
    line = one_error_line(run_cli("index", str(tmp_path / "absent.txt"), "--solr-url", core.url), 4)
    assert f"cannot read {tmp_path / 'absent.txt'}: No such file or directory" in line
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert "is empty" in one_error_line(run_cli("index", str(empty), "--solr-url", core.url), 4)


def test_a_report_of_an_index_without_records_says_so_and_writes_nothing(core, tmp_path):
    done = run_cli("report", str(tmp_path / "pairs.tsv"), "--solr-url", core.url)
    assert one_error_line(done, 1) == (f"neardup: error: the index at {core.url} holds no records, so it has no "
                                       "pairs (hint: index records first: `neardup index FILE`)")
    assert not (tmp_path / "pairs.tsv").exists()


def test_skipped_band_keys_name_the_option_that_keeps_them(indexed, tmp_path):
    done = run_cli("report", str(tmp_path / "pairs.tsv"), "--max-bucket", "2", "--solr-url", indexed.url)
    assert done.returncode == 0, done.stderr
    [told] = [line for line in done.stderr.splitlines() if line.startswith("skipped")]
    assert told.endswith("a larger bucket limit includes them (--max-bucket)"), told


@pytest.mark.parametrize(("separator", "words", "hint"), [
    (";", "semicolons", "CSV is read separated by commas and TSV by tabs: save the file so"),
    ("\t", "tabs", "read it as TSV with --input-format tsv"),
])
def test_a_csv_separated_otherwise_says_what_it_looks_separated_by(core, tmp_path, separator, words, hint):
    path = tmp_path / "customers.csv"
    path.write_text(separator.join(["customer_id", "name", "city"]) + "\n"
                    + separator.join(["1", "Art's Deli", "Studio City"]) + "\n")
    done = run_cli("index", str(path), "--id-column", "customer_id", "--solr-url", core.url)
    shown = repr(separator.join(["customer_id", "name", "city"]))
    assert one_error_line(done, 4) == (f"neardup: error: {path}: no column 'customer_id' in the header (it has "
                                       f"{shown}); read as one column, it looks separated by {words} (hint: {hint})")


@pytest.mark.parametrize("command", [["report", "{out}"], ["query", "Arts Deli"], ["library"]])
def test_a_core_that_is_not_there_is_named_with_those_that_are(solr_node, core, tmp_path, command):
    url = f"{solr_node.base_url}/nosuch"
    if command == ["library"]:
        # The library, which reads the index's settings before anything (config/overlay) and asks no ping.
        with pytest.raises(NeardupError) as raised:
            NearDuplicates(url).query("Arts Deli")
        line = str(raised.value)
        assert raised.value.exit_code == 5
    else:
        args = [a.format(out=tmp_path / "pairs.tsv") for a in command]
        line = one_error_line(run_cli(*args, "--solr-url", url), 5).removeprefix("neardup: error: ")
        assert "--solr-url" in line  # the command line says which option names it
    assert line.startswith(f"Solr at {solr_node.base_url} has no core or collection 'nosuch' (hint: it holds ")
    named = line.split("(hint: it holds ", 1)[1].split(";")[0]
    assert "neardup" in named and (core.name in named or "more" in named)  # the cores that are there
    assert "404" not in line and "<html" not in line
