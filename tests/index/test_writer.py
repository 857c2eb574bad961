"""Indexing in batches: who builds the documents, and that Solr gets each one as built."""

import json
import os
import random
import time

import requests

from neardup_solr.index import writer
from neardup_solr.index.documents import DocumentBuilder
from neardup_solr.index.state import IndexSettings
from neardup_solr.index.solr import update_body
from neardup_solr.index.writer import FORK_WORDS, batches, built, index_records
from neardup_solr.records.record import Record
from neardup_solr.index.schema import BAND_KEYS, ID, TEXT

SETTINGS = IndexSettings(bands=8, band_rows=2, lsh_shingles="words", reference=False)
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november".split()


class PidBuilder(DocumentBuilder):
    """Marks each document with the process that built it."""

    def documents(self, records):
        return [{**doc, "pid": os.getpid()} for doc in super().documents(records)]


def texts(count, words, seed=7):
    rng = random.Random(seed)
    return [Record(str(i), " ".join(rng.choice(WORDS) for _ in range(words))) for i in range(count)]


def run(records, size, monkeypatch):
    # Two cores whatever the machine has, so the choice below is the rule's, not the machine's.
    monkeypatch.setattr(writer, "cores", lambda: 2)
    docs = []
    for count, body in built(PidBuilder(SETTINGS), batches(records, size)):
        batch = json.loads(body)
        assert count == len(batch)
        docs += batch
    return docs


def test_long_records_are_built_by_forked_workers_in_order_and_as_here(monkeypatch):
    records = texts(17, FORK_WORDS)
    docs = run(records, 3, monkeypatch)
    assert [doc[ID] for doc in docs] == [r.id for r in records]
    assert all(doc["pid"] != os.getpid() for doc in docs)
    assert [{k: v for k, v in doc.items() if k != "pid"} for doc in docs] == DocumentBuilder(SETTINGS).documents(records)


def test_short_records_and_a_single_batch_are_built_here(monkeypatch):
    short = run(texts(17, FORK_WORDS // 2), 3, monkeypatch)
    assert len(short) == 17 and {doc["pid"] for doc in short} == {os.getpid()}
    single = run(texts(3, FORK_WORDS), 3, monkeypatch)
    assert len(single) == 3 and {doc["pid"] for doc in single} == {os.getpid()}
    assert run([], 3, monkeypatch) == []


def test_long_records_built_by_workers_reach_solr_as_built(core, monkeypatch):
    monkeypatch.setattr(writer, "cores", lambda: 2)
    records = texts(23, FORK_WORDS + 20, seed=11)
    assert index_records(core, records, SETTINGS, batch_size=4) == 23
    assert core.count() == 23
    stored = {doc[ID]: doc for doc in core.search("*:*", rows=100, fl=f"{ID},{TEXT},{BAND_KEYS}").docs}
    for doc in DocumentBuilder(SETTINGS).documents(records):
        assert stored[doc[ID]][TEXT] == doc[TEXT] and stored[doc[ID]][BAND_KEYS] == doc[BAND_KEYS]


def test_an_update_body_leaves_out_empty_fields_only_and_escapes_control_characters():
    docs = [{"id": "a", "count": 0, "flag": False, "empty": "", "none": None, "list": ["x", ""],
             "text": "tab\there\x01 é \u2028 end"}]
    body = update_body(docs)
    assert json.loads(body) == [{"id": "a", "count": 0, "flag": False, "list": ["x", ""],
                                 "text": "tab\there\x01 é \u2028 end"}]
    assert not any(byte < 0x20 for byte in body)


def segments(solr) -> int:
    return requests.get(f"{solr.url}/admin/luke", params={"show": "index", "numTerms": 0, "wt": "json"},
                        timeout=60).json()["index"]["segmentCount"]


def test_soft_commits_of_a_few_records_each_leave_few_segments(core):
    # Each soft commit flushes a segment of what was sent since the last; the local Solr merges the
    # small ones as it opens the next searcher, where Lucene's default policy keeps about ten.
    builder = DocumentBuilder(SETTINGS)
    for n in range(40):
        core.add(builder.documents([Record(f"r{n}", f"{WORDS[n % len(WORDS)]} record {n}")]))
        core.commit(soft=True)
    # A merge that outlasts the commit's wait (a loaded machine) ends at a later one.
    deadline = time.monotonic() + 60
    while segments(core) > 2 and time.monotonic() < deadline:
        core.commit(soft=True)
        time.sleep(0.5)
    assert segments(core) <= 2
    assert core.count() == 40
