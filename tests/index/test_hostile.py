"""Property tests on the real Solr: any text is data, never query syntax."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import create_core, drop_core

from neardup_solr.match.candidates import MODES, candidates, query_values
from neardup_solr.index.documents import DocumentBuilder
from neardup_solr.index.state import IndexSettings
from neardup_solr.records.record import Record
from neardup_solr.index.solr import overlap_query, term
from neardup_solr.text.normalize import is_blank

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
ID_CHARS = st.sampled_from("abcXYZ019._:-")


@pytest.fixture(scope="module")
def scratch(solr_node):
    core = create_core(solr_node)
    yield core
    drop_core(core)


def reset(core):
    core.delete_all()
    core.commit()


@SETTINGS
@given(values=st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=6, unique=True))
def test_any_value_matches_only_itself(scratch, values):
    reset(scratch)
    scratch.add([{"id": f"v{i}", "content": "x", "word_shingles": [v], "first_word": v} for i, v in enumerate(values)])
    scratch.commit()
    for i, value in enumerate(values):
        for query in (overlap_query("word_shingles", [value]), term("first_word", value)):
            assert [d["id"] for d in scratch.search(query, fl="id", rows=50).docs] == [f"v{i}"], repr(value)


@SETTINGS
@given(
    texts=st.lists(st.text(min_size=1, max_size=60).filter(lambda t: not is_blank(t)), min_size=1, max_size=5),
    ids=st.lists(st.text(ID_CHARS, min_size=1, max_size=8).filter(lambda i: i[0].isalnum()), min_size=5,
                 max_size=5, unique=True),
)
def test_any_text_indexes_and_every_mode_queries_it(scratch, texts, ids):
    reset(scratch)
    records = [Record(i, t) for i, t in zip(ids, texts)] + [Record(ids[-1], texts[0])]
    builder = DocumentBuilder(IndexSettings())
    docs = builder.documents(records)
    scratch.add(docs)
    scratch.commit()
    stored = {d["id"]: d for d in scratch.iter_docs(["id", "content", "md5_hash", "first_word", "word_shingles",
                                                     "minhash_values", "content_lsh"])}
    assert set(stored) == {r.id for r in records}
    own = {d["id"]: d for d in docs}
    for doc in stored.values():
        assert doc["content"] == own[doc["id"]]["content"]
        for mode in MODES.values():
            values = query_values(doc, mode, 20)
            for hit in candidates(scratch, doc, mode, values, per_record=50):
                # Solr matched it for a value it really holds: text changed no query's meaning.
                assert set(own[hit["id"]][mode.field]) & set(values), (mode.name, doc["id"], hit["id"])
                assert hit["id"] != doc["id"]
                if mode.same_first_word:
                    assert own[hit["id"]]["first_word"] == doc["first_word"]
