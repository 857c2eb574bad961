"""Records of two sources linked: keys, --link, --one-to-one, pair files with sources."""

from __future__ import annotations

import csv
import json
import re
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, run_cli, write_records
from neardup_solr import InputError, NearDuplicates, NeardupError
from neardup_solr.results.evaluate import Score, read_gold, score
from neardup_solr.results.labels import read_labels
from neardup_solr.results.pairs import Pair, _preference, one_to_one, read_pairs, write_pairs
from neardup_solr.records.record import id_key, id_order, key_problem, keyed, source_of, source_problem, split_key

OURS = [
    ("1", "Art's Deli 12224 Ventura Blvd. Studio City"),
    ("2", "Hotel Bel-Air 701 Stone Canyon Rd. Bel Air"),
    ("3", "Philippe the Original 1001 N. Alameda St. Los Angeles"),
    ("4", "Philippe The Original 1001 North Alameda Street Los Angeles"),
]
THEIRS = [
    ("1", "Arts Deli, 12224 Ventura Boulevard, Studio City"),
    ("7", "Bel-Air Hotel 701 Stone Canyon Road Bel Air"),
    ("8", "Spago 1114 Horn Ave. West Hollywood"),
]


def test_a_key_is_the_source_and_the_id_and_splits_back():
    assert keyed("", "17") == "17" and split_key("17") == ("", "17")
    assert keyed("a", "17") == "a/17" and split_key("a/17") == ("a", "17") and source_of("a/17") == "a"
    assert source_problem("") == "" and source_problem("fodors.v2:x_y-z") == ""
    for bad in ("a/b", "a b", "x" * 65, "é"):
        assert "breaks the source rule" in source_problem(bad)


def test_a_source_starts_with_a_letter_or_digit_so_no_key_is_a_path_step():
    # "../5" or "./5" would be rewritten by a URL's normalisation (GET /records/../5/duplicates), "-" reads as an
    # option and ":" alone names nothing; as ids, a source starts with a letter or digit.
    for bad in ("..", ".", "-", ":", "_", ".hidden", "-x", ":a", "_a"):
        assert "breaks the source rule" in source_problem(bad), bad
        assert "starting with a letter or digit" in source_problem(bad)
    for good in ("a", "9", "a.", "fodors.v2:x_y-z", "x" * 64):
        assert source_problem(good) == "", good
    assert key_problem("../5") and key_problem("-/5") and not key_problem("a./5")


def test_the_command_line_refuses_an_empty_source_and_a_path_step(core, tmp_path):
    records = write_records(tmp_path / "r.txt", [f"{i} {t}" for i, t in OURS])
    for source in ("", "..", "-", ":"):
        for args in (["index", str(records)], ["index", "--append", str(records)], ["query", "Arts Deli"]):
            done = run_cli(*args, "--source", source, "--solr-url", core.url)
            assert done.returncode == 2, (source, args, done.stderr)
            assert done.stderr.count("\n") == 1 and "--source" in done.stderr and "Traceback" not in done.stderr
            assert ("needs a name" if source == "" else "breaks the source rule") in done.stderr, done.stderr
    assert core.count() == 0


def test_keys_sort_by_source_then_by_the_ids_own_order():
    keys = ["b/10", "b/9", "a/10", "12", "a/2", "a/x", "3"]
    assert sorted(keys, key=id_key) == ["3", "12", "a/2", "a/10", "a/x", "b/9", "b/10"]
    assert [keys[n] for n in id_order(keys).tolist()] == sorted(keys, key=id_key)


# Small sets of pairs across sources: records 0-3 of sources a, b (and c), any probabilities, ties included.
_ends = st.tuples(st.sampled_from("abc"), st.integers(0, 3))
_pairs = st.lists(st.tuples(_ends, _ends, st.sampled_from([0.5, 0.6, 0.9, 1.0]), st.sampled_from([0.7, 0.8])),
                  max_size=11)


def _as_pairs(drawn) -> list[Pair]:
    made = {}
    for (sa, ia), (sb, ib), probability, similarity in drawn:
        if sa != sb:
            a, b = sorted((keyed(sa, str(ia)), keyed(sb, str(ib))), key=id_key)
            made.setdefault((a, b), Pair(a, b, 0, similarity, probability))
    return list(made.values())


def _stable_matchings(pairs: list[Pair]) -> list[set[Pair]]:
    """By brute force: every set of the pairs giving each record at most one
    partner in each other source, in which no pair left out has two records
    that would both rather have each other (by one_to_one's order)."""
    rank = {p: _preference(p) for p in pairs}
    found = []
    for size in range(len(pairs) + 1):
        for chosen in combinations(pairs, size):
            partner = {}
            for p in chosen:
                for end, other in ((p.a, p.b), (p.b, p.a)):
                    partner.setdefault((end, source_of(other)), []).append(p)
            if any(len(given) > 1 for given in partner.values()):
                continue

            def rather(end: str, other: str, p: Pair) -> bool:
                held = partner.get((end, source_of(other)))
                return held is None or rank[p] < rank[held[0]]

            if not any(rather(p.a, p.b, p) and rather(p.b, p.a, p) for p in pairs if p not in chosen):
                found.append(set(chosen))
    return found


@settings(max_examples=150, deadline=None)
@given(_pairs)
def test_one_to_one_is_the_one_stable_matching_found_by_brute_force(drawn):
    pairs = _as_pairs(drawn)
    kept = one_to_one(pairs)
    slots = [(end, source_of(other)) for p in kept for end, other in ((p.a, p.b), (p.b, p.a))]
    assert len(slots) == len(set(slots))  # at most one partner per record in each other source
    assert _stable_matchings(pairs) == [set(kept)]
    assert kept == [p for p in pairs if p in set(kept)]  # in the order given


def test_one_to_one_keeps_the_most_probable_partner_and_pairs_within_a_source():
    pairs = [Pair("a/1", "b/1", 0, 0.9, 0.9), Pair("a/1", "b/2", 0, 0.8, 0.95), Pair("a/2", "b/2", 0, 0.9, 0.7),
             Pair("a/2", "b/1", 0, 0.7, 0.6), Pair("a/1", "a/2", 0, 0.9, 0.9)]
    assert one_to_one(pairs) == [pairs[1], pairs[3], pairs[4]]


SOURCED = [Pair("ours/1", "theirs/1", 1, 0.93, 0.99), Pair("ours/2", "theirs/7", 3, 0.81, 0.7)]


@pytest.mark.parametrize("name", ["pairs.tsv", "pairs.csv", "pairs.jsonl", "pairs.tsv.gz"])
def test_pair_files_with_sources_name_both_and_read_back_as_keys(tmp_path, name):
    out = tmp_path / name
    write_pairs(out, SOURCED)
    assert read_pairs(out) == SOURCED
    if name.endswith(".gz"):
        return
    text = out.read_text()
    if name.endswith(".jsonl"):
        assert json.loads(text.splitlines()[0]) == {"source_a": "ours", "id_a": "1", "source_b": "theirs",
                                                    "id_b": "1", "distance": 1, "similarity": 0.93,
                                                    "probability": 0.99}
    else:
        rows = list(csv.reader(text.splitlines(), delimiter="\t" if name.endswith(".tsv") else ","))
        assert rows[0] == ["source_a", "id_a", "source_b", "id_b", "distance", "similarity", "probability"]
        assert rows[1] == ["ours", "1", "theirs", "1", "1", "0.9300", "0.9900"]


def test_pair_files_with_sources_and_texts(tmp_path):
    out = tmp_path / "pairs.csv"
    write_pairs(out, SOURCED, texts=lambda keys: {k: f"text of {k}" for k in keys})
    rows = list(csv.DictReader(out.open()))
    assert rows[0]["source_a"] == "ours" and rows[0]["text_a"] == "text of ours/1"
    assert rows[0]["text_b"] == "text of theirs/1"
    assert read_pairs(out) == SOURCED


def test_clusters_with_texts_name_each_members_source(tmp_path):
    from neardup_solr.results.clusters import cluster_pairs, write_clusters
    clusters = cluster_pairs(SOURCED)
    write_clusters(tmp_path / "c.csv", clusters, texts=lambda keys: {k: f"text of {k}" for k in keys})
    rows = list(csv.DictReader((tmp_path / "c.csv").open()))
    assert [(r["source"], r["id"], r["text"]) for r in rows] == [
        ("ours", "1", "text of ours/1"), ("theirs", "1", "text of theirs/1"),
        ("ours", "2", "text of ours/2"), ("theirs", "7", "text of theirs/7")]
    write_clusters(tmp_path / "c.tsv", clusters)  # members in one cell: their keys
    # A cluster is named by its smallest member's key.
    assert (tmp_path / "c.tsv").read_text().splitlines()[1] == "ours/1\t2\tours/1,theirs/1"


def test_gold_pairs_may_name_their_sources(tmp_path):
    gold = tmp_path / "gold.tsv"
    gold.write_text("ours\t1\ttheirs\t1\nours 2 theirs 7\n3\t4\n")
    assert read_gold(gold) == {frozenset({"ours/1", "theirs/1"}), frozenset({"ours/2", "theirs/7"}),
                               frozenset({"3", "4"})}
    assert score(SOURCED, read_gold(gold)).true == 2


def test_ids_repeated_across_sources_are_distinct_records_and_link(core):
    nd = NearDuplicates(core)
    assert nd.index(OURS, source="ours", bands=42, band_rows=3) == 4
    assert nd.add(THEIRS, source="theirs") == 3
    assert core.count() == 7  # "1" of ours and "1" of theirs are two records
    assert nd.texts(["ours/1", "theirs/1"]) == dict((f"{s}/1", t) for s, t in (("ours", OURS[0][1]),
                                                                                ("theirs", THEIRS[0][1])))
    every = {p.key for p in nd.pairs()}
    assert frozenset({"ours/1", "theirs/1"}) in every
    assert frozenset({"ours/3", "ours/4"}) in every  # within a source, without link
    linked = nd.pairs(link=True)
    assert {p.key for p in linked} == {frozenset({"ours/1", "theirs/1"}), frozenset({"ours/2", "theirs/7"})}
    assert all(source_of(p.a) != source_of(p.b) for p in linked)
    assert [p.key for p in nd.pairs(link=True, one_to_one=True)] == [p.key for p in linked]
    # Records added with their source find their pairs with it.
    assert {p.key for p in nd.pairs_of(THEIRS[:1], source="theirs")} == {frozenset({"ours/1", "theirs/1"})}


def test_a_query_may_ask_one_source_only(core):
    nd = NearDuplicates(core)
    nd.index(OURS, source="ours", bands=42, band_rows=3)
    nd.add(THEIRS, source="theirs")
    text = "Art's Deli 12224 Ventura Blvd Studio City"
    assert [m.id for m in nd.query(text)] == ["ours/1", "theirs/1"]
    assert [m.id for m in nd.query(text, source="theirs")] == ["theirs/1"]
    assert [m.id for m in nd.query(text, source="elsewhere")] == []
    done = run_cli("query", "--id", "ours/1", "--source", "theirs", "--format", "csv", "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    assert [row["id"] for row in csv.DictReader(done.stdout.splitlines())] == ["theirs/1"]
    done = run_cli("query", text, "--source", "the/irs", "--solr-url", core.url)
    assert done.returncode == 2 and "breaks the source rule" in done.stderr


def test_labels_may_name_records_of_sources(tmp_path):
    path = tmp_path / "labels.tsv"
    path.write_text("ours/1\ttheirs/1\tsame\nours/2\ttheirs/7\tdifferent\n/1\t2\tsame\nour s/1\t2\tsame\n")
    bad = []
    assert read_labels(path, on_bad=bad.append) == {frozenset({"ours/1", "theirs/1"}): True,
                                                    frozenset({"ours/2", "theirs/7"}): False}
    assert [b.line for b in bad] == [3, 4]


def test_link_with_one_source_says_so_and_one_to_one_needs_link(core):
    nd = NearDuplicates(core)
    nd.index(OURS, bands=42, band_rows=3)
    told = []
    assert len(nd.pairs(link=True, warn=told.append)) == 0
    assert told == ["every record is of one source, so no pair links two sources"]
    with pytest.raises(NeardupError, match="needs link=True"):
        nd.pairs(one_to_one=True)
    with pytest.raises(NeardupError, match="breaks the source rule"):
        nd.add(OURS, source="a/b")


def test_the_command_line_refuses_a_bad_source_and_a_lone_one_to_one(core, tmp_path):
    records = write_records(tmp_path / "r.txt", [f"{i} {t}" for i, t in OURS])
    done = run_cli("index", str(records), "--source", "a b", "--solr-url", core.url)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "breaks the source rule" in done.stderr
    assert run_cli("index", str(records), "--source", "ours", "--solr-url", core.url).returncode == 0
    for args, said in ((["--one-to-one"], "it needs --link"), (["--shingles", "--link"], "not --shingles")):
        done = run_cli("report", *args, str(tmp_path / "p.tsv"), "--solr-url", core.url)
        assert done.returncode == 2 and said in done.stderr and done.stderr.count("\n") == 1
        assert not (tmp_path / "p.tsv").exists()


def test_appending_a_source_without_its_pairs_adds_it_and_writes_nothing(core, tmp_path):
    ours = write_records(tmp_path / "ours.txt", [f"{i} {t}" for i, t in OURS])
    theirs = write_records(tmp_path / "theirs.txt", [f"{i} {t}" for i, t in THEIRS])
    assert run_cli("index", str(ours), "--source", "ours", "--solr-url", core.url).returncode == 0
    done = run_cli("index", "--append", str(theirs), "--source", "theirs", "--no-pairs", "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and core.count() == len(OURS) + len(THEIRS)
    # Without --append, or beside --pairs, it is a usage error before anything is indexed.
    for args in (["--no-pairs"], ["--append", "--no-pairs", "--pairs", str(tmp_path / "p.tsv")]):
        done = run_cli("index", *args, str(theirs), "--source", "other", "--solr-url", core.url)
        assert done.returncode == 2 and "--no-pairs" in done.stderr and done.stderr.count("\n") == 1
    assert core.count() == len(OURS) + len(THEIRS) and not (tmp_path / "p.tsv").exists()


def test_records_of_a_source_are_not_mixed_into_an_index_of_records_without_one(core, tmp_path, serve):
    # Mixed, a pair file's source_a is empty for the records without one and `evaluate --gold` finds no true pair.
    ours = write_records(tmp_path / "ours.txt", [f"{i} {t}" for i, t in OURS])
    theirs = write_records(tmp_path / "theirs.txt", [f"{i} {t}" for i, t in THEIRS])
    assert run_cli("index", str(ours), "--solr-url", core.url, "--quiet").returncode == 0
    done = run_cli("index", "--append", str(theirs), "--source", "theirs", "--solr-url", core.url, "--quiet")
    assert done.returncode == 4 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "holds records without a source" in done.stderr and "hint:" in done.stderr
    nd = NearDuplicates(core)
    with pytest.raises(InputError, match="holds records without a source"):
        nd.add(THEIRS, source="theirs")
    answer = serve("--solr-url", core.url).post("/records", params={"source": "theirs"},
                                                json={"id": "1", "text": THEIRS[0][1]})
    assert answer.status_code == 400 and "holds records without a source" in answer.json()["error"]
    assert sorted(core.texts([str(i) for i in range(10)] + [f"theirs/{i}" for i, _ in THEIRS])) == ["1", "2", "3", "4"]
    # The other way round too; records of another source, or of none onto none, are added.
    nd.index(OURS, source="ours", bands=42, band_rows=3)
    with pytest.raises(InputError, match="holds records of sources"):
        nd.add(THEIRS)
    assert nd.add(THEIRS, source="theirs") == 3 and core.count() == 7
    nd.index(OURS, bands=42, band_rows=3)
    assert nd.add(THEIRS[2:]) == 1 and core.count() == 5


def test_the_restaurants_as_two_sources_link_as_the_readme_says(core, restaurants_dir, tmp_path):
    """The README's linking commands on the fetched guides (each its own
    table and ids), and the figures it quotes for them."""
    fodors, zagats, gold = (restaurants_dir / name for name in ("fodors.csv", "zagats.csv", "gold_links.tsv"))
    done = run_cli("index", str(fodors), "--source", "fodors", "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^bands: \d+ x \d+,", done.stderr, re.M)
    done = run_cli("index", "--append", str(zagats), "--source", "zagats", "--id-column", "id", "--text-columns",
                   "name,addr,city", "--pairs", str(tmp_path / "new.csv"), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    assert core.count() == 864
    figures = {}
    for name, args in (("link", ["--link"]), ("one", ["--link", "--one-to-one"])):
        out = tmp_path / f"{name}.csv"
        done = run_cli("report", *args, str(out), "--solr-url", core.url)
        assert done.returncode == 0, done.stderr
        rows = list(csv.DictReader(out.open()))
        assert rows and all(r["source_a"] == "fodors" and r["source_b"] == "zagats" for r in rows)
        if name == "one":
            assert len({r["id_a"] for r in rows}) == len({r["id_b"] for r in rows}) == len(rows)
        done = run_cli("evaluate", str(out), "--gold", str(gold), "--no-plot")
        assert done.returncode == 0, done.stderr
        figures[name] = Score(*map(int, re.match(r"found=(\d+) true=(\d+)", done.stdout.splitlines()[-1]).groups()),
                              112)
        assert score(read_pairs(out), read_gold(gold)).f1 >= 0.97
    link, one = figures["link"], figures["one"]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    # The banding is planned from both guides' records whichever came first, not from Fodor's alone.
    assert (f"On the restaurants as above, each guide's columns compared one by one, `--link` finds {link.found} "
            f"pairs, {link.true} true "
            f"(F1 {link.f1:.3f}), and `--link --one-to-one` {one.found}, "
            + ("all true" if one.true == one.found else f"{one.true} true") + f" (F1 {one.f1:.3f})") in readme


def test_the_readme_linking_example_runs_as_written(core, capsys):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text[text.index("## Linking two sources"):], re.S)[1]
    url = "http://127.0.0.1:8983/solr/neardup"
    assert url in code
    exec(compile(code.replace(url, core.url), "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines] == [["ours/1", "theirs/1"], ["ours/2", "theirs/9"]]


def test_the_service_adds_records_of_a_source_and_checks_against_one(core, serve):
    NearDuplicates(core).index(OURS, source="ours", bands=42, band_rows=3)
    service = serve("--solr-url", core.url)
    answer = service.post("/records", params={"source": "theirs", "against": "ours"},
                          json=[{"id": "1", "text": THEIRS[0][1]}, {"id": "2", "text": "Arts Deli 12224 Ventura Blvd"}])
    assert answer.status_code == 200, answer.text
    assert [(r["id"], [d["id"] for d in r["duplicates"]]) for r in answer.json()["records"]] == [
        ("theirs/1", ["ours/1"]), ("theirs/2", ["ours/1"])]
    assert core.count() == 6
    # Against every source, the records just added find each other too.
    found = service.get("/records/theirs/1/duplicates").json()
    assert "query" in found, found
    assert found["query"]["id"] == "theirs/1" and {m["id"] for m in found["matches"]} >= {"ours/1", "theirs/2"}
    assert [m["id"] for m in service.get("/records/theirs/1/duplicates", params={"against": "ours"})
            .json()["matches"]] == ["ours/1"]
    text = {"text": "Art's Deli 12224 Ventura Blvd Studio City"}
    assert [m["id"] for m in service.get("/duplicates", params=text | {"against": "theirs"}).json()["matches"]][:1] \
        == ["theirs/1"]
    bad = service.get("/duplicates", params=text | {"against": "the irs"})
    assert bad.status_code == 400 and "breaks the source rule" in bad.json()["error"]
    bad = service.post("/records", params={"source": ".."}, json={"id": "5", "text": THEIRS[2][1]})
    assert bad.status_code == 400 and "breaks the source rule" in bad.json()["error"]
    assert service.delete("/records/theirs/2").json() == {"deleted": ["theirs/2"]}
    assert core.count() == 5


def test_two_tables_whose_columns_are_named_differently_link_as_tables_named_alike(core, restaurants_dir, tmp_path):
    # Zagat's columns named title,street,town beside Fodor's name,addr,city: before, 0 pairs, the model "could not
    # tell", and a pair file without source_a and source_b; named alike, 106 pairs.
    fodors, zagats = restaurants_dir / "fodors.csv", restaurants_dir / "zagats.csv"
    lines = zagats.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[0].strip() == "id,name,addr,city"
    renamed = tmp_path / "zagats-renamed.csv"
    renamed.write_text("id,title,street,town\n" + "".join(lines[1:]), encoding="utf-8")

    def linked(name: str, table, columns: str) -> tuple[bytes, str]:
        done = run_cli("index", str(fodors), "--source", "fodors", "--text-columns", "name,addr,city", "--quiet",
                       "--solr-url", core.url)
        assert done.returncode == 0, done.stderr
        appended = run_cli("index", "--append", str(table), "--source", "zagats", "--text-columns", columns,
                           "--no-pairs", "--quiet", "--solr-url", core.url)
        assert appended.returncode == 0, appended.stderr
        out = tmp_path / f"{name}.csv"
        done = run_cli("report", "--link", str(out), "--quiet", "--solr-url", core.url)
        assert done.returncode == 0, done.stderr
        return out.read_bytes(), appended.stderr

    alike, said = linked("alike", zagats, "name,addr,city")
    assert alike.startswith(b"source_a,id_a,source_b,id_b,") and alike.count(b"\n") > 100
    assert "paired" not in said
    # Named in the same order, they are paired by position, and the command says so.
    by_position, said = linked("position", renamed, "title,street,town")
    assert by_position == alike
    assert "title as name, street as addr, town as city" in said and said.count("\n") == 2, said
    # Or named: COLUMN=FIELD.
    named, said = linked("named", renamed, "title=name,street=addr,town=city")
    assert named == alike and "paired" not in said, said


def test_pair_files_of_records_of_sources_name_the_sources_without_a_pair(core, tmp_path):
    ours = write_records(tmp_path / "ours.txt", [f"{i} {t}" for i, t in OURS])
    theirs = write_records(tmp_path / "theirs.txt", ["9 Spago 1114 Horn Ave. West Hollywood"])
    assert run_cli("index", str(ours), "--source", "ours", "--solr-url", core.url, "-q").returncode == 0
    done = run_cli("index", "--append", str(theirs), "--source", "theirs", "--pairs", str(tmp_path / "new.csv"),
                   "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    [header] = (tmp_path / "new.csv").read_text().splitlines()
    assert header.startswith("source_a,id_a,source_b,id_b,distance"), header
    for name in ("links.csv", "links.tsv"):
        done = run_cli("report", "--link", "--cut", "1", str(tmp_path / name), "--solr-url", core.url, "-q")
        assert done.returncode == 0, done.stderr
        [header] = (tmp_path / name).read_text().splitlines()
        assert header.replace("\t", ",").startswith("source_a,id_a,source_b,id_b,distance"), header


def test_two_columns_named_as_one_field_are_refused_in_one_line(core, tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("id,title,street\n1,Arts Deli,12224 Ventura Blvd\n", encoding="utf-8")
    for columns, code in (("title=name,street=name", 4), ("title=,street", 2), ("=name", 2)):
        done = run_cli("index", str(table), "--text-columns", columns, "--solr-url", core.url)
        assert done.returncode == code, (columns, done.stderr)
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "the text columns 'title', 'street' would all be the field 'name'" in run_cli(
        "index", str(table), "--text-columns", "title=name,street=name", "--solr-url", core.url).stderr
    assert core.count() == 0
