"""Record text is data, never query syntax; long records do not hit clause limits."""

import pytest

from neardup_solr.candidates import LSH, MINHASH, SHINGLES, near_duplicates
from neardup_solr.indexer import index_records
from neardup_solr.pairs import Pair
from neardup_solr.records import Record
from neardup_solr.solr import overlap_query, term

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
    docs = [{"id": f"h{i}", "content": v, "content_ng": [v], "first_word": v} for i, v in enumerate(HOSTILE)]
    docs.append({"id": "plain", "content": "plain", "content_ng": ["plain words here"], "first_word": "plain"})
    core.add(docs)
    core.commit()
    return core


def test_every_special_character_is_matched_literally(hostile_core):
    for i, value in enumerate(HOSTILE):
        hits = hostile_core.search(overlap_query("content_ng", [value]), fl="id", rows=100).docs
        assert [h["id"] for h in hits] == [f"h{i}"], value
        hits = hostile_core.search(term("first_word", value), fl="id", rows=100).docs
        assert [h["id"] for h in hits] == [f"h{i}"], value


def test_overlap_score_counts_shared_values(hostile_core):
    found = hostile_core.search(
        overlap_query("content_ng", ["*", "*:*", "plain words here", "absent"]),
        fl="id,score",
        sort="score desc,id asc",
        rows=10,
    ).docs
    assert {d["id"]: d["score"] for d in found} == {"h6": 1.0, "h7": 1.0, "plain": 1.0}


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
        pairs = sorted(near_duplicates(core, mode, max_dist=2, signatures=20))
        assert pairs == [Pair(f"{i}a", f"{i}b", 0) for i in range(len(texts))], mode.name
    pairs = sorted(near_duplicates(core, LSH))
    assert [(p.a, p.b, p.distance) for p in pairs] == [(f"{i}a", f"{i}b", 0) for i in range(len(texts))]
    assert all(p.similarity == pytest.approx(1.0) for p in pairs)


def test_a_5000_word_record_finds_its_one_word_variant(core):
    words = [f"w{i % 997}x{i}" for i in range(5000)]
    changed = words[:2500] + ["changed"] + words[2501:]
    unrelated = [f"u{i}" for i in range(5000)]
    index_records(core, [Record("1", " ".join(words)), Record("2", " ".join(changed)), Record("3", " ".join(unrelated))])
    assert len(core.search('id:"1"', fl="content_ng").docs[0]["content_ng"]) == 4998  # > 1024 clauses
    for mode in (SHINGLES, MINHASH):
        assert list(near_duplicates(core, mode, max_dist=2, signatures=20)) == [Pair("1", "2", 1)], mode.name
    (pair,) = near_duplicates(core, LSH)
    assert (pair.a, pair.b, pair.distance) == ("1", "2", 1) and pair.similarity > 0.99
