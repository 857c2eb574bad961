"""The public Python API: the README's example as written, errors as
exceptions, progress as a callable, nothing printed."""

from __future__ import annotations

import pydoc
import random
import re
import subprocess
import sys
import threading

import pytest

import neardup_solr
from conftest import ROOT, child_env
from neardup_solr import InputError, LeanIndex, NearDuplicates, NeardupError, Pair, TooFewSignatures
from neardup_solr.match.stored import load_model
from neardup_solr.records.readers import RecordReader
from neardup_solr.modes.text_search import OnlineSearch

from bench.generate import generate

README_URL = "http://127.0.0.1:8983/solr/neardup"

RECORDS = [
    ("1", "Art's Deli 12224 Ventura Blvd. Studio City"),
    ("2", "Arts Deli, 12224 Ventura Boulevard, Studio City"),
    ("3", "Hotel Bel-Air 701 Stone Canyon Rd. Bel Air"),
    ("4", "Bel-Air Hotel 701 Stone Canyon Road Bel Air"),
    ("5", "Philippe the Original 1001 N. Alameda St. Los Angeles"),
]


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## From Python"):]
    return re.search(r"```python\n(.*?)```", section, re.S)[1]


def test_the_readme_example_runs_as_written(core, capsys):
    code = readme_example()
    assert README_URL in code
    exec(compile(code.replace(README_URL, core.url), "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    # The pairs, the query's matches, the new record's pair, the clusters.
    assert [line.split()[:2] for line in lines[:2]] == [["1", "2"], ["3", "4"]]
    assert [line.split()[0] for line in lines[2:4]] == ["1", "2"]
    assert lines[4].startswith("[Pair(a='5', b='6', distance=0")
    assert lines[5] == "Clusters(3 clusters of 6 records, the largest of 2)"
    # The example ends by deleting the record it added.
    assert sorted(core.texts(["5", "6"])) == ["5"]


def test_help_shows_the_public_names():
    shown = pydoc.render_doc(neardup_solr, renderer=pydoc.plaintext)
    assert "NearDuplicates" in shown and "index(" in shown and "pairs_of(" in shown
    for name in neardup_solr.__all__:
        assert getattr(neardup_solr, name) is not None


def test_calls_report_progress_to_a_callable_and_print_nothing(core, capsys):
    nd = NearDuplicates(core)
    told = []
    records = RECORDS + [("6", "Philippe the Original 1001 N. Alameda St. Los Angeles CA")]
    assert nd.index(records, reference=True, progress=lambda *step: told.append(step)) == 6
    assert told and told[-1] == ("indexing", 6, 6)
    told.clear()
    verified = nd.pairs(progress=lambda *step: told.append(step))
    assert [(p.a, p.b) for p in verified] == [("1", "2"), ("3", "4"), ("5", "6")]
    stages = [stage for stage, _, _ in told]
    assert stages[0] == "colliding bands" and stages[-1] == "verifying candidates"
    assert told[-1][1] == told[-1][2] >= 2  # every candidate verified, counted once
    told.clear()
    assert [p.key for p in nd.shingle_pairs(progress=lambda *step: told.append(step))] == [frozenset("56")]
    assert told[-1] == ("searching", 6, 6)
    assert capsys.readouterr() == ("", "")


def test_records_as_tuples_dicts_or_records_are_the_same(core, new_core):
    as_tuples = NearDuplicates(core)
    as_tuples.index(RECORDS, bands=20, band_rows=3)
    as_dicts = NearDuplicates(new_core())
    as_dicts.index(({"id": i, "text": t} for i, t in RECORDS), bands=20, band_rows=3)
    assert as_tuples.pairs().pairs == as_dicts.pairs().pairs
    assert as_tuples.settings == as_dicts.settings


def test_the_pairs_say_their_cut_and_whether_it_was_fixed(core):
    nd = NearDuplicates(core)
    nd.index(RECORDS, bands=20, band_rows=3)
    fitted, fixed = nd.pairs(), nd.pairs(cut=0.99)
    assert (fitted.summary.forced, fitted.summary.cut) == (False, fitted.model.cut)
    assert (fixed.summary.forced, fixed.summary.cut, fixed.summary.model_cut) == (True, 0.99, fitted.model.cut)
    assert all(p.similarity >= 0.99 for p in fixed) and len(fixed) < len(fitted)


def test_a_record_that_breaks_the_rules_is_an_input_error(core):
    nd = NearDuplicates(core)
    for bad in (("has space", "text"), ("1", "!!!"), ("1",), {"id": "1"}, ("1", 7)):
        with pytest.raises(InputError):
            nd.index([bad], bands=4, band_rows=2)


def test_typed_errors_name_no_command_line_option(core):
    nd = NearDuplicates(core)
    nd.index(RECORDS, minhash_values=8, reference=True, bands=20, band_rows=3)
    with pytest.raises(TooFewSignatures) as few:
        list(nd.minhash_pairs(minhash_values=20))
    assert (few.value.found, few.value.asked) == (8, 20)
    assert "--" not in str(few.value)
    with pytest.warns(DeprecationWarning, match=r"signatures= is deprecated: call it minhash_values="):
        nd.index(RECORDS, signatures=8, reference=True, bands=20, band_rows=3)  # the old name, kept for a release
    assert nd.settings.minhash_values == 8
    nd.index(RECORDS, reference=False, bands=20, band_rows=3)
    with pytest.raises(LeanIndex) as lean:
        list(nd.shingle_pairs())
    assert lean.value.mode == "shingles"
    for error in (few.value, lean.value):
        assert "--" not in str(error) and error.hint and error.exit_code == 1
    with pytest.raises(NeardupError, match="no record with id 'nine'"):
        nd.text("nine")


def test_add_query_delete_and_the_new_records_pairs(core):
    nd = NearDuplicates(core)
    nd.index(RECORDS[:4], bands=20, band_rows=3)
    more = [("6", "Philippe's The Original 1001 North Alameda Street Los Angeles"), RECORDS[4]]
    assert nd.add(more) == 2
    assert nd.pairs_of(more) == [Pair("5", "6", 0, pytest.approx(1.0), None)]
    matches = nd.query(RECORDS[0][1], exclude="1")
    assert [m.id for m in matches] == ["2"]
    assert [m.id for m in nd.query(RECORDS[0][1], limit=None)] == ["1", "2"]
    assert nd.texts(["6", "absent", "1"]) == {"6": more[0][1], "1": RECORDS[0][1]}
    assert nd.delete(["6", "absent"]) == ["6"]
    assert nd.texts(["6"]) == {}
    assert nd.pairs_of([RECORDS[4]]) == []
    # Clusters of the pairs found anew read the index and write nothing: the model kept stays as it was.
    kept = load_model(core)
    assert [c.members for c in nd.clusters()] == [("1", "2"), ("3", "4")]
    assert load_model(core) == kept


def test_texts_looked_up_together_answer_as_each_alone(core, tmp_path, monkeypatch):
    """A write's records are looked up together: each gets the answer it
    gets alone, its own candidates chosen by the keys it shares, then id."""
    records_file, _ = generate(400, 5, tmp_path)
    records = [(r.id, r.text) for r in RecordReader(records_file)]
    nd = NearDuplicates(core)
    nd.index(records)
    rng = random.Random(3)
    first = OnlineSearch(core)
    copied = [(record_id, text) for record_id, text in records if first.find(text, exclude=record_id)]
    assert len(copied) >= 20
    requests = []
    search = core.search
    monkeypatch.setattr(core, "search", lambda *args, **kwargs: requests.append(args) or search(*args, **kwargs))
    for per_record in (100, 2):  # 2: fewer than most texts' candidates, so which are kept is chosen
        alone = OnlineSearch(core, per_record=per_record)
        for size in (1, 3, 8):
            for _ in range(8):
                queries = [(text if rng.random() < 0.8 else f"{text} and more", record_id if rng.random() < 0.7 else None)
                           for record_id, text in rng.sample(copied, size)]
                texts, excludes = [t for t, _ in queries], [e for _, e in queries]
                expected = [alone.find(text, exclude=exclude) for text, exclude in queries]
                assert sum(map(bool, expected)) >= size // 2
                together = OnlineSearch(core, per_record=per_record)
                requests.clear()
                assert together.find_all(texts, excludes) == expected
                assert len(requests) == 2  # the candidates of all, then their words' frequencies
                few = OnlineSearch(core, per_record=per_record)
                few.SHARED_ROWS = 2  # they share more: one request each
                assert few.find_all(texts, excludes) == expected
    assert nd.query_each(queries, limit=3) == [nd.query(text, exclude=exclude, limit=3) for text, exclude in queries]
    with pytest.raises(InputError):
        nd.query_each([("a text", None), ("--", None)])


def test_a_search_reads_the_frequencies_of_words_it_was_told_were_written_again(core):
    nd = NearDuplicates(core)
    nd.index([("1", "Copper Kettle Diner 12 Main St Springfield"), ("2", "Blue Heron Books 9 Elm Rd Shelbyville")])
    reader = NearDuplicates(core)
    reader.query("Copper Kettle Diner 12 Main St Springfield")  # its search now keeps these words' frequencies
    search = reader._search(None)
    assert search.weights({"kettle", "heron"}).doc_freq == {"kettle": 1, "heron": 1}
    written = [(f"k{n}", f"Copper Kettle Cafe {n} Oak Ave Springfield") for n in range(5)]
    NearDuplicates(core).add(written)  # another client's write
    assert search.weights({"kettle"}).doc_freq == {"kettle": 1}  # kept, up to a minute
    reader.refresh_words(text for _, text in written)
    assert search.weights({"kettle", "heron"}).doc_freq == {"kettle": 6, "heron": 1}
    assert search.weights({"kettle"}).doc_freq == {"kettle": 6}


def test_one_search_queried_from_many_threads_answers_as_one_at_a_time(core, tmp_path):
    """The service's reads share one search: its word frequencies, dropped
    when stale while other queries read them, give every query the answer
    it gets alone."""
    records_file, _ = generate(400, 5, tmp_path)
    records = [(r.id, r.text) for r in RecordReader(records_file)]
    NearDuplicates(core).index(records)
    alone = OnlineSearch(core)
    expected = {record_id: alone.find(text, exclude=record_id) for record_id, text in records}
    # Those with matches: an answer spoiled by another query's frequencies shows in their similarities.
    asked = [(record_id, text) for record_id, text in records if expected[record_id]]
    assert len(asked) >= 20
    shared = OnlineSearch(core)
    shared.DF_MAX_AGE = 0.0  # stale at every query: each drops the frequencies the others are reading
    wrong: list[str] = []

    def ask(seed: int) -> None:
        for record_id, text in random.Random(seed).sample(asked, len(asked)):
            if (found := shared.find(text, exclude=record_id)) != expected[record_id]:
                wrong.append(f"{record_id}: {found} instead of {expected[record_id]}")

    threads = [threading.Thread(target=ask, args=(seed,)) for seed in range(8)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can, so short windows are hit too
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong, wrong[:3]


def test_an_id_given_twice_keeps_its_last_text_and_counts_once(core):
    import pandas as pd

    nd = NearDuplicates(core)
    frame = pd.DataFrame({"id": ["1", "2", "2", "3"], "text": [RECORDS[0][1], "Spago 1114 Horn Ave.",
                                                                RECORDS[2][1], RECORDS[4][1]]})
    assert nd.index(frame, bands=42, band_rows=3) == 3 == core.count()
    assert nd.texts(["2"]) == {"2": RECORDS[2][1]}
    # Batches of one record, four in flight: the repeat's two batches may reach Solr in either order.
    again = [("7", "Spago 1114 Horn Ave."), ("8", RECORDS[1][1]), ("9", RECORDS[3][1]), ("10", RECORDS[4][1]),
             ("7", "Campanile 624 S. La Brea Ave."), ("8", "Chinois on Main 2709 Main St.")]
    assert nd.add(again, batch_size=1) == 4 and core.count() == 7
    assert nd.texts(["7", "8"]) == {"7": "Campanile 624 S. La Brea Ave.", "8": "Chinois on Main 2709 Main St."}
    assert nd.index(again * 3, bands=42, band_rows=3, batch_size=2) == 4 == core.count()


NOTEBOOK = """
import logging, warnings
from neardup_solr import NearDuplicates
nd = NearDuplicates(URL)
nd.index(RECORDS, bands=42, band_rows=3, progress=True)
pairs = nd.pairs()
print(repr(pairs), repr(nd) == f"NearDuplicates({URL!r})")
print(repr(nd.clusters()))
print(repr(nd.query("Arts Deli 12224 Ventura Blvd Studio City")))
print(pairs.to_pandas().shape, nd.clusters(singletons=True).membership().to_pandas().shape,
      nd.query("Arts Deli 12224 Ventura Blvd Studio City").to_pandas().columns.tolist())
print(len(repr(pairs)), pairs._repr_html_().count("<tr>"))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    nd.pairs(max_bucket=1)
print([type(w.message).__name__ for w in caught][:1], str(caught[0].message).split()[0])
logging.basicConfig(level=logging.INFO, format="log %(name)s %(message)s")
nd.pairs()
"""


def test_a_notebook_session_sees_short_reprs_tables_bars_warnings_and_logs(core):
    """As in a notebook (a plain Python here): each result a line, a small
    table, a DataFrame; progress=True draws a bar; what was skipped is a
    warning; the library logs only when logging is configured."""
    code = f"URL = {core.url!r}\nRECORDS = {RECORDS!r}\n" + NOTEBOOK
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=child_env())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # Five records are too few to fit a model: the fixed cut, and no estimates.
    assert lines[0] == "Pairs(2 pairs, cut 0.70) True"
    assert lines[1] == "Clusters(2 clusters of 4 records, the largest of 2)"
    assert re.fullmatch(r"Matches\(2 matches, the best [12] at similarity \d\.\d\d\)", lines[2]), lines[2]
    assert lines[3] == "(2, 4) (5, 2) ['similarity', 'distance', 'id', 'text']"
    assert int(lines[4].split()[0]) < 100 and lines[4].split()[1] == "3"  # a header row and the two pairs
    assert lines[5] == "['NeardupWarning'] skipped"
    # The bar went to standard error; the log records only after logging was configured.
    assert "indexing: 5it" in done.stderr  # a count: how many records a list holds is not asked
    logged = [line for line in done.stderr.splitlines() if line.startswith("log neardup_solr")]
    assert len(logged) == 1 and logged[0].startswith("log neardup_solr Pairs(2 pairs")
