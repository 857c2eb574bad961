"""Record text is data, never query syntax; long records do not hit clause limits."""

import pytest

from conftest import run_cli, write_records

from neardup_solr.modes.text_report import lsh_pairs
from neardup_solr.match.candidates import MINHASH, SHINGLES, candidates
from neardup_solr.index.writer import index_records
from neardup_solr.results.pairs import Pair
from neardup_solr.records.record import Record
from neardup_solr.modes.reference import reference_pairs
from neardup_solr.index.solr import overlap_query, term

HOSTILE = [
    'say "hi"',
    "field:value",
    "(group) [a TO z] {x TO y}",
    "back\\slash\\",
    'tail\\"',
    "x AND y OR z NOT w",
    "*",
    "*:*",
    "wild? fu~zzy bo^ost",
    "{!lucene}*:*",
    "{!join from=id to=id}x",
    "-minus +plus && || !",
    "/regex.*/",
    " ",
    "\u00e9t\u00e9 \u4e2d\u6587 \U0001f600",
]


@pytest.fixture
def hostile_core(core):
    docs = [{"id": f"h{i}", "content": v, "word_shingles": [v], "first_word": v} for i, v in enumerate(HOSTILE)]
    docs.append({"id": "plain", "content": "plain", "word_shingles": ["plain words here"], "first_word": "plain"})
    core.add(docs)
    core.commit()
    return core


def test_every_special_character_is_matched_literally(hostile_core):
    for i, value in enumerate(HOSTILE):
        hits = hostile_core.search(overlap_query("word_shingles", [value]), fl="id", rows=100).docs
        assert [h["id"] for h in hits] == [f"h{i}"], value
        hits = hostile_core.search(term("first_word", value), fl="id", rows=100).docs
        assert [h["id"] for h in hits] == [f"h{i}"], value


def test_overlap_score_counts_shared_values(hostile_core):
    found = hostile_core.search(
        overlap_query("word_shingles", ["*", "*:*", "plain words here", "absent"]),
        fl="id,score",
        sort="score desc,id asc",
        rows=10,
    ).docs
    assert {d["id"]: d["score"] for d in found} == {"h6": 1.0, "h7": 1.0, "plain": 1.0}


def test_candidates_rank_by_how_many_values_they_share_then_by_id(core):
    """Scores count shared values whatever their rarity; equal counts go in id
    order, not in the order Solr happened to store the documents."""
    query = {"id": "q", "first_word": "alpha"}
    shared = {  # id: the query's values it holds; stored in this order
        "d9": ["v1"],
        "t3": ["v1", "v2"],
        "d8": ["v1", "v2"],
        "t1": ["v1", "v2"],
        "d7": ["v1", "v2", "v3"],
        "t2": ["v1", "v2"],
        "d6": ["v1", "v2", "v3", "v4"],
    }
    docs = [{"id": i, "content": i, "first_word": "alpha", "word_shingles": v} for i, v in shared.items()]
    # v1 and v2 are common and v4 rare: a relevance score would weigh them apart.
    docs += [{"id": f"f{n}", "content": "filler", "first_word": "other", "word_shingles": ["v1", "v2"]}
             for n in range(20)]
    core.add(docs)
    core.commit()
    found = candidates(core, query, SHINGLES, ["v1", "v2", "v3", "v4"], per_record=7)
    assert [d["id"] for d in found] == ["d6", "d7", "d8", "t1", "t2", "t3", "d9"]
    scored = core.search(overlap_query("word_shingles", ["v1", "v2", "v3", "v4"]), fq="first_word:alpha",
                         fl="id,score", rows=10).docs
    assert {d["id"]: d["score"] for d in scored} == {i: float(len(v)) for i, v in shared.items()}
    # The cut keeps the best: a tie at the edge is settled by id.
    assert [d["id"] for d in candidates(core, query, SHINGLES, ["v1", "v2", "v3", "v4"], per_record=4)] == [
        "d6", "d7", "d8", "t1"]


def twelve_words(stem: str) -> list[str]:
    return [f"{stem}{n}" for n in range(12)]


def with_two_words_changed(words: list[str]) -> list[str]:
    """Word edit distance 2; of the 10 word 3-shingles, 4 survive (those at 0, 4, 5, 9)."""
    changed = list(words)
    changed[3], changed[8] = "changed", "replaced"
    return changed


def test_the_best_10_cut_and_its_id_tie_break_decide_which_pairs_are_found(core, tmp_path):
    """Each record is compared with its best --candidates candidates only.

    Record 100's twin (distance 2) shares 4 shingles with it, ten decoys
    (distance 3) all 10: the twin is 11th, found with --candidates 11, not
    10. The option's old name, --rows, still gives the same.
    Record 200's twin and ten decoys all share 4 shingles with it: the twin
    has the smallest id, so it is within the best 10, though stored last.
    """
    a, b = twelve_words("able"), twelve_words("baker")
    lines = [" ".join(["100", *a])]
    lines += [" ".join([str(101 + n), *a, f"extra{n}x", f"extra{n}y", f"extra{n}z"]) for n in range(1, 11)]
    lines += [" ".join(["200", *b])]
    lines += [" ".join([str(201 + n), *with_two_words_changed(b), f"more{n}x", f"more{n}y", f"more{n}z"])
              for n in range(1, 11)]
    lines += [" ".join(["101", *with_two_words_changed(a)]), " ".join(["201", *with_two_words_changed(b)])]
    records = write_records(tmp_path / "records.txt", lines)
    assert run_cli("index", str(records), "--reference", "--solr-url", core.url).returncode == 0
    found = {}
    for option in ("--candidates", "--rows"):
        for rows in ("10", "11"):
            out = tmp_path / f"pairs{rows}.tsv"
            done = run_cli("report", "--shingles", "--max-dist", "2", option, rows, str(out), "--solr-url", core.url)
            assert done.returncode == 0, done.stderr
            found[option, rows] = out.read_text()
        assert found[option, "10"] == "200\t201\t2\n"
        assert found[option, "11"] == "100\t101\t2\n200\t201\t2\n"


def test_hostile_records_find_their_twins_and_nothing_else(core):
    texts = [
        'A "quoted" text: with colons',
        "(brackets) [a TO z] {curly} and more",
        "back\\slash \\\" escaped end",
        "x AND y OR z NOT w",
        "* wildcard ? and ~ fuzzy ^ boost",
        "{!lucene}*:* injection attempt here",
        "-minus +plus && || ! end",
    ]
    records = []
    for i, text in enumerate(texts):
        records += [Record(f"{i}a", text), Record(f"{i}b", text)]
    index_records(core, records)
    for mode in (SHINGLES, MINHASH):
        pairs = sorted(reference_pairs(core, mode, max_dist=2, minhash_values=20))
        assert pairs == [Pair(f"{i}a", f"{i}b", 0) for i in range(len(texts))], mode.name
    pairs = sorted(lsh_pairs(core))
    assert [(p.a, p.b, p.distance) for p in pairs] == [(f"{i}a", f"{i}b", 0) for i in range(len(texts))]
    assert all(p.similarity == pytest.approx(1.0) for p in pairs)


def test_a_5000_word_record_finds_its_one_word_variant(core):
    words = [f"w{i % 997}x{i}" for i in range(5000)]
    changed = words[:2500] + ["changed"] + words[2501:]
    unrelated = [f"u{i}" for i in range(5000)]
    index_records(core, [Record("1", " ".join(words)), Record("2", " ".join(changed)), Record("3", " ".join(unrelated))])
    assert len(core.search('id:"1"', fl="word_shingles").docs[0]["word_shingles"]) == 4998  # > 1024 clauses
    for mode in (SHINGLES, MINHASH):
        assert list(reference_pairs(core, mode, max_dist=2, minhash_values=20)) == [Pair("1", "2", 1)], mode.name
    (pair,) = lsh_pairs(core)
    assert (pair.a, pair.b, pair.distance) == ("1", "2", 1) and pair.similarity > 0.99
