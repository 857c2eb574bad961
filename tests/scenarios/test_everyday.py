"""Everyday commands on the restaurant data: query, append, delete, clusters,
html; word-shingle LSH for documents; progress bars on a terminal."""

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from conftest import ARTIFACTS, child_env, create_core, drop_core, run_cli, write_records

from neardup_solr import NearDuplicates, NeardupError
from neardup_solr.results.clusters import cluster_pairs
from neardup_solr.match.stored import load_model
from neardup_solr.modes.text_search import OnlineSearch
from neardup_solr.index.solr import Solr
from neardup_solr.match.summary import ReportSummary


@pytest.fixture(scope="module")
def restaurants(solr_node, restaurant_records, tmp_path_factory):
    work = tmp_path_factory.mktemp("everyday")
    core = create_core(solr_node)
    assert run_cli("index", str(restaurant_records), "--solr-url", core.url).returncode == 0
    assert run_cli("report", str(work / "pairs.tsv"), "--solr-url", core.url).returncode == 0
    yield core, work
    drop_core(core)


def test_query_a_new_text_finds_both_listings_first(restaurants):
    core, work = restaurants
    done = run_cli("query", "Art's Deli 12224 Ventura Blvd. Studio City", "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    # The guides' two listings (Zagat's "arts deli" word for word but for case and the apostrophe).
    assert [row[2] for row in rows[:2]] == ["220", "535"]
    assert rows[0][3] == "arts deli 12224 ventura blvd. studio city" and rows[0][1] == "1"
    assert rows[1][3] == "arts delicatessen 12224 ventura blvd. studio city"
    similarities = [float(r[0]) for r in rows]
    # The report fitted a model and kept it with the index: its cut keeps the
    # matches, each shown with its probability.
    cut = json.loads((work / "pairs.model.json").read_text())["cut"]
    assert similarities == sorted(similarities, reverse=True) and min(similarities) >= cut
    assert all(len(r) == 5 and float(r[4]) >= 0.5 for r in rows)


def test_the_reports_summary_is_the_file_it_has_always_been(restaurants):
    """``neardup report``'s summary on the restaurants, byte for byte as the
    report writes it (``tests/fixtures/restaurants.model.json``, written by
    ``neardup index`` and ``neardup report`` with the defaults on the
    fetched restaurants when the tests moved to that copy; the same bytes
    came from `neardup demo`'s report). A change that means to move the
    model writes the fixture again."""
    _, work = restaurants
    written = (work / "pairs.model.json").read_bytes()
    assert written == (Path(__file__).parent.parent / "fixtures" / "restaurants.model.json").read_bytes()
    about = ReportSummary.read(work / "pairs.model.json")
    assert about is not None and json.dumps(about.to_dict(), indent=1).encode() == written


def test_a_long_lived_search_asks_only_for_words_it_has_not_seen_and_answers_the_same(restaurants):
    core, _ = restaurants
    texts = ["Art's Deli 12224 Ventura Blvd. Studio City", "Campanile 624 S. La Brea Ave. Los Angeles",
             "Hotel Bel-Air 701 Stone Canyon Rd. Bel Air"]
    asked: list[list[str]] = []
    solr = Solr(core.url)
    counts = solr.term_counts
    solr.term_counts = lambda field, terms=None: asked.append(list(terms)) or counts(field, terms)
    search = OnlineSearch(solr)
    for text in texts:
        assert search.find(text) == OnlineSearch(Solr(core.url)).find(text)
    assert len(asked) == 3 and "ventura" in asked[0] and not set(asked[1]) & set(asked[0])
    search.find(texts[0])
    assert len(asked) == 3  # every word known
    search._since -= OnlineSearch.DF_MAX_AGE + 1
    search.find(texts[0])
    assert asked[-1] == asked[0]  # a minute on, frequencies are asked for again


def test_query_an_indexed_record_as_json(restaurants):
    core, _ = restaurants
    done = run_cli("query", "--id", "535", "--json", "--solr-url", core.url)
    answer = json.loads(done.stdout)
    assert answer["query"] == {"id": "535", "text": "arts delicatessen 12224 ventura blvd. studio city"}
    assert [m["id"] for m in answer["matches"]][:1] == ["220"]
    assert all(m["id"] != "535" for m in answer["matches"])
    assert set(answer["matches"][0]) == {"id", "similarity", "distance", "text", "probability"}


def test_query_needs_text_or_id_and_says_when_the_id_is_unknown(restaurants):
    core, _ = restaurants
    assert run_cli("query", "--solr-url", core.url).returncode == 2
    done = run_cli("query", "--id", "999999", "--solr-url", core.url)
    assert done.returncode == 1 and "no record with id '999999'" in done.stderr


def test_append_reports_new_duplicates_replace_and_delete(solr_node, restaurants_dir, tmp_path):
    core = create_core(solr_node)
    try:
        base = tmp_path / "base.txt"
        base.write_text("1 Art's Deli 12224 Ventura Blvd. Studio City\n2 Hotel Bel-Air 701 Stone Canyon Rd. Bel Air\n")
        assert run_cli("index", str(base), "--solr-url", core.url).returncode == 0
        new = tmp_path / "new.txt"
        new.write_text("10 Hotel Bel-Air 701 Stone Canyon Road Bel Air\n11 Something else entirely 5 Main St\n")
        done = run_cli("index", "--append", str(new), "--solr-url", core.url)
        assert done.returncode == 0, done.stderr
        pairs = [line.split("\t") for line in done.stdout.splitlines()]
        assert [p[:3] for p in pairs] == [["2", "10", "0"]]  # "Road" is repaired to "rd"
        assert core.count() == 4

        replaced = tmp_path / "replace.txt"
        replaced.write_text("11 Art's Deli 12224 Ventura Blvd Studio City\n")
        done = run_cli("index", "--append", str(replaced), "--solr-url", core.url)
        assert [p.split("\t")[:2] for p in done.stdout.splitlines()] == [["1", "11"]]
        assert core.count() == 4
        assert core.texts(["11"]) == {"11": "Art's Deli 12224 Ventura Blvd Studio City"}

        done = run_cli("delete", "10", "11", "77", "--solr-url", core.url)
        assert done.returncode == 0 and "deleted 2 records; not in the index: 77" in done.stderr
        assert sorted(d["id"] for d in core.iter_docs(["id"])) == ["1", "2"]
        done = run_cli("query", "Hotel Bel-Air 701 Stone Canyon Road Bel Air", "--solr-url", core.url)
        assert [line.split("\t")[2] for line in done.stdout.splitlines()] == ["2"]
    finally:
        drop_core(core)


def test_clusters_of_the_gold_pairs_are_the_112_matched_restaurants(restaurants_dir, tmp_path):
    gold = restaurants_dir / "gold_pairs.tsv"
    ids = gold.read_text().split()
    # Each true pair is one Fodor's and one Zagat's record, no record twice: 112 clusters of 2.
    assert len(ids) == 224 == len(set(ids))
    out = tmp_path / "clusters.json"
    assert run_cli("clusters", str(gold), "-o", str(out), "--json").returncode == 0
    found = json.loads(out.read_text())
    assert [c["size"] for c in found] == [2] * 112
    assert sorted(m for c in found for m in c["members"]) == sorted(ids)
    tsv = tmp_path / "clusters.tsv"
    assert run_cli("clusters", str(gold), "-o", str(tsv)).returncode == 0
    assert tsv.read_text().splitlines()[0] == "cluster_id\tsize\tmembers"


def test_clusters_of_reported_pairs_join_chains(restaurants, tmp_path):
    core, work = restaurants
    pairs = [line.split("\t")[:2] for line in (work / "pairs.tsv").read_text().splitlines()]
    out = tmp_path / "clusters.tsv"
    assert run_cli("clusters", str(work / "pairs.tsv"), "-o", str(out)).returncode == 0
    home = {}
    for line in out.read_text().splitlines()[1:]:
        number, size, members = line.split("\t")
        assert int(size) == len(members.split(","))
        home.update((m, number) for m in members.split(","))
    assert all(home[a] == home[b] for a, b in pairs)
    assert len(home) == len({i for p in pairs for i in p})


def test_html_report_of_the_restaurants_in_a_real_browser(restaurants, restaurants_dir, browser, tmp_path):
    core, work = restaurants
    done = run_cli("evaluate", str(work / "pairs.tsv"), "--gold", str(restaurants_dir / "gold_pairs.tsv"))
    assert done.returncode == 0 and (work / "pairs.png").is_file()  # the histogram the page shows
    page_file = tmp_path / "report.html"
    done = run_cli("html", str(work / "pairs.tsv"), "-o", str(page_file), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    pairs = [line.split("\t")[:2] for line in (work / "pairs.tsv").read_text().splitlines()]

    page = browser.new_page(viewport={"width": 1100, "height": 800})
    errors = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(page_file.as_uri(), wait_until="load")
    shown = set(page.locator("table.members td.id").all_inner_texts())
    assert shown == {i for p in pairs for i in p}
    headings = page.locator("section.cluster h2").all_inner_texts()
    assert len(headings) == len(set(headings)) and headings[0].startswith(f"Cluster {cluster_pairs(pairs)[0].id} ")
    assert "arts delicatessen 12224 ventura blvd. studio city" in page.inner_text("body")
    body = page.inner_text("body").lower()
    assert "estimated precision" in body and "estimated recall" in body
    # The evaluation's histogram and the match model's.
    assert page.locator("img").evaluate_all("imgs => imgs.map(i => i.complete && i.naturalWidth > 0)") == [True, True]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "restaurants-report.png"), full_page=True, clip={"x": 0, "y": 0, "width": 1100,
                                                                          "height": 1400})
    page.close()
    assert errors == []


WORDS = ("harbor lantern meadow copper violin thistle granite orchard falcon saddle pepper willow canyon marble "
         "beacon cedar quartz lumber meadowlark tundra velvet prairie cobalt juniper glacier anvil basil ember fjord "
         "gravel").split()
SHUFFLED = [WORDS[i] for i in (7, 22, 3, 15, 28, 0, 11, 19, 26, 5, 13, 24, 1, 9, 17, 29, 4, 21, 12, 27, 8, 2,
                               16, 25, 10, 20, 6, 14, 23, 18)]


def one_word_changed(words: list[str], at: int, new: str) -> str:
    return " ".join(words[:at] + [new] + words[at + 1:])


def test_lsh_over_word_shingles_end_to_end(core, new_core, tmp_path):
    """With --lsh-shingles words a document is a candidate of those sharing
    word 3-shingles: the same words in another order are not, one word
    changed is; the index keeps the setting for report, query and --append."""
    records = write_records(tmp_path / "documents.txt", [
        "1 " + " ".join(WORDS),
        "2 " + one_word_changed(WORDS, 15, "changed"),
        "3 " + " ".join(SHUFFLED),
        *(f"{n} unrelated notes number {n} about {WORDS[n]} and {WORDS[n + 1]} only" for n in range(4, 20)),
    ])
    by_chars = new_core()
    for solr, kind in ((core, "words"), (by_chars, "chars")):
        done = run_cli("index", str(records), "--lsh-shingles", kind, "--solr-url", solr.url)
        assert done.returncode == 0, done.stderr
        assert solr.user_properties()["neardup.lsh_shingles"] == kind
    pairs = {}
    for solr, kind in ((core, "words"), (by_chars, "chars")):
        assert run_cli("report", str(tmp_path / f"{kind}.tsv"), "--solr-url", solr.url).returncode == 0
        pairs[kind] = [line.split("\t")[:2] for line in (tmp_path / f"{kind}.tsv").read_text().splitlines()]
    assert pairs["words"] == [["1", "2"]]
    assert ["1", "3"] in pairs["chars"]  # similar enough once compared; word shingles never compare them

    done = run_cli("query", " ".join(SHUFFLED), "--solr-url", core.url)
    assert done.returncode == 0 and [line.split("\t")[2] for line in done.stdout.splitlines()] == ["3"]
    done = run_cli("query", one_word_changed(WORDS, 3, "other"), "--solr-url", core.url)
    assert sorted(line.split("\t")[2] for line in done.stdout.splitlines()) == ["1", "2"]
    new = write_records(tmp_path / "new.txt", ["30 " + one_word_changed(SHUFFLED, 20, "moved")])
    done = run_cli("index", "--append", str(new), "--solr-url", core.url)
    assert done.returncode == 0 and [line.split("\t")[:2] for line in done.stdout.splitlines()] == [["3", "30"]]


def on_a_terminal(*args: str) -> tuple[int, str]:
    """Run the command line with its stderr on a terminal (a pty), as people
    run it; its exit code and what it wrote there."""
    main, terminal = pty.openpty()
    # 40 rows of 120 columns, as a terminal window has (a new pty has none, and no room for a bar).
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    run = subprocess.Popen([sys.executable, "-m", "neardup_solr", *args], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=terminal, env=child_env())
    os.close(terminal)
    shown = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the command closed its end
            break
        if not chunk:
            break
        shown.append(chunk)
    os.close(main)
    return run.wait(timeout=300), b"".join(shown).decode(errors="replace")


@pytest.mark.parametrize(("command", "bars"), [
    (["index", "{records}"], ["indexing:"]),
    (["report", "{out}"], ["colliding bands:", "verifying candidates:"]),
    (["report", "--shingles", "{out}"], ["searching (shingles):"]),
], ids=["index", "report", "report --shingles"])
def test_progress_shows_on_a_terminal_only_and_quiet_hides_it(core, tmp_path, command, bars):
    records = write_records(tmp_path / "records.txt",
                            [f"{n} Shop number {n} on {n % 13} Main Street" for n in range(1, 301)])
    assert run_cli("index", str(records), "--reference", "--solr-url", core.url).returncode == 0
    args = [a.format(records=records, out=tmp_path / "pairs.tsv") for a in command] + ["--solr-url", core.url]
    code, shown = on_a_terminal(*args)
    assert code == 0, shown
    assert all(bar in shown for bar in bars), shown
    code, shown = on_a_terminal(*args, "--quiet")
    assert code == 0, shown
    assert not any(bar in shown for bar in bars) and shown.strip(), shown  # the summary line stays
    piped = run_cli(*args)
    assert piped.returncode == 0 and not any(bar in piped.stderr for bar in bars), piped.stderr


def test_labels_sharpen_the_next_report_and_labeled_pairs_follow_their_labels(solr_node, restaurant_records,
                                                                              restaurants_dir, tmp_path):
    """The report's pairs that the known matches call false, labeled
    different, are left out of the next report; the true pair it was least
    sure of, labeled same, is kept with probability 1; a true pair the LSH
    never proposed counts for nothing, and the report says so; the model
    says it was sharpened, and keeps the labels with the index."""
    gold = {frozenset(line.split("\t")[:2]) for line in (restaurants_dir / "gold_pairs.tsv").read_text().splitlines()}
    core = create_core(solr_node)
    try:
        assert run_cli("index", str(restaurant_records), "--solr-url", core.url).returncode == 0
        assert run_cli("report", str(tmp_path / "all.tsv"), "--cut", "0", "--solr-url", core.url).returncode == 0
        candidates = {frozenset(line.split("\t")[:2]) for line in (tmp_path / "all.tsv").read_text().splitlines()}
        # The cut's old name, kept for a release, gives the same pairs.
        assert run_cli("report", str(tmp_path / "old.tsv"), "--threshold", "0", "--solr-url", core.url).returncode == 0
        assert (tmp_path / "old.tsv").read_text() == (tmp_path / "all.tsv").read_text()
        assert run_cli("report", str(tmp_path / "before.tsv"), "--solr-url", core.url).returncode == 0
        before = [line.split("\t") for line in (tmp_path / "before.tsv").read_text().splitlines()]
        false = [row[:2] for row in before if frozenset(row[:2]) not in gold]
        least_sure = min((row for row in before if frozenset(row[:2]) in gold), key=lambda row: float(row[4]))
        never = sorted(next(iter(pair for pair in gold if pair not in candidates)))
        assert false and float(least_sure[4]) < 1.0
        labels = tmp_path / "labels.tsv"
        labels.write_text("".join(f"{a}\t{b}\tdifferent\n" for a, b in false)
                          + "{}\t{}\tsame\n".format(*least_sure[:2]) + "{}\t{}\tsame\n".format(*never))
        done = run_cli("report", str(tmp_path / "after.tsv"), "--labels", str(labels), "--solr-url", core.url)
        assert done.returncode == 0, done.stderr
        assert f"1 of {len(false) + 2} labeled pairs are not candidate pairs" in done.stderr
        assert f"sharpened by 1 pairs labeled the same, {len(false)} different" in done.stderr
        after = {frozenset(line.split("\t")[:2]): line.split("\t") for line in
                 (tmp_path / "after.tsv").read_text().splitlines()}
        assert not any(frozenset(pair) in after for pair in false)
        assert float(after[frozenset(least_sure[:2])][4]) == 1.0 and frozenset(never) not in after
        summary = json.loads((tmp_path / "after.model.json").read_text())
        assert summary["labeled"] == {"same": 1, "different": len(false)}
        kept = load_model(Solr(core.url))
        assert kept is not None and sum(map(sum, kept.different)) == len(false) and sum(map(sum, kept.same)) == 1
    finally:
        drop_core(core)


def test_query_by_an_id_holding_a_slash_of_an_index_without_sources(core, tmp_path):
    # Such an id's key is /ORD/17 (records.record.keyed); --id ORD/17 said there was no record ORD/17.
    records = write_records(tmp_path / "orders.txt", ["ORD/17 Art's Deli 12224 Ventura Blvd. Studio City",
                                                      "ORD/18 Arts Deli 12224 Ventura Boulevard Studio City",
                                                      "19 Hotel Bel-Air 701 Stone Canyon Rd. Bel Air"])
    assert run_cli("index", str(records), "--bands", "42", "--band-rows", "3", "--solr-url", core.url,
                   "-q").returncode == 0
    for asked in ("ORD/17", "/ORD/17"):
        done = run_cli("query", "--id", asked, "--json", "--cut", "0.5", "--solr-url", core.url)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert answer["query"]["text"] == "Art's Deli 12224 Ventura Blvd. Studio City"
        assert [m["id"] for m in answer["matches"]] == ["/ORD/18"]  # not itself
    nd = NearDuplicates(core)
    assert nd.record("ORD/18").id == "/ORD/18" and nd.text("ORD/18").startswith("Arts Deli")
    assert nd.explain("ORD/17", "ORD/18").a == "ORD/17"
    with pytest.raises(NeardupError, match="no record with id 'ORD/19'"):
        nd.record("ORD/19")
