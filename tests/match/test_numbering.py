"""Ids numbered in order of arrival, against a plain dict."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.match.numbering import Ids, Numbering

IDS = st.text("abc019._:-", min_size=1, max_size=4)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(IDS, max_size=40), max_size=8), st.sampled_from([1, 2, 8]), st.booleans())
def test_numbering_equals_a_dict_in_order_of_arrival(batches, slots, compiled):
    # A table of 1 or 2 slots grows many times within a few batches.
    numbering, reference = Numbering(slots, compiled=compiled), {}
    for batch in batches:
        numbers, new = numbering.add(batch)
        expected_new = []
        for record_id in batch:
            if record_id not in reference:
                reference[record_id] = len(reference)
                expected_new.append(record_id)
        assert numbers.tolist() == [reference[record_id] for record_id in batch]
        assert new == expected_new
    assert len(numbering) == len(reference)


def test_a_hundred_thousand_ids_keep_distinct_numbers():
    ids = [str(n) for n in range(100_000)]
    numbering = Numbering()
    first, new = numbering.add(ids[:60_000])
    again, newer = numbering.add(ids[30_000:])
    assert first.tolist() == list(range(60_000)) and new == ids[:60_000]
    assert again.tolist() == list(range(30_000, 100_000)) and newer == ids[60_000:]


@given(st.lists(st.text(min_size=0, max_size=5), max_size=50), st.sampled_from([1, 3, 1 << 16]))
def test_ids_read_back_as_the_list_they_were_made_of(ids, chunk):
    from neardup_solr.match import numbering

    saved, numbering.IDS_CHUNK = numbering.IDS_CHUNK, chunk
    try:
        held = Ids(iter(ids))
        assert len(held) == len(ids)
        assert list(held) == ids and held == ids and held[:] == ids
        assert [held[i] for i in range(len(ids))] == ids
        if ids:
            assert held[-1] == ids[-1] and held[1::2] == ids[1::2]
        assert held != ids + ["x"]
    finally:
        numbering.IDS_CHUNK = saved


@given(st.lists(st.text(min_size=0, max_size=5), max_size=50).flatmap(
    lambda ids: st.tuples(st.just(ids), st.lists(st.integers(0, len(ids) - 1), max_size=60) if ids else st.just([]))),
    st.sampled_from([1, 3, 1 << 16]))
def test_ids_taken_in_an_order_are_those_ids_in_that_order(ids_and_order, chunk):
    # Repeats and any order: the bytes moved a block at a time read back as the plain list's items.
    from neardup_solr.match import numbering

    ids, order = ids_and_order
    saved, numbering.IDS_CHUNK = numbering.IDS_CHUNK, chunk
    try:
        taken = Ids(ids).taken(np.array(order, np.int64))
        assert list(taken) == [ids[i] for i in order] and len(taken) == len(order)
    finally:
        numbering.IDS_CHUNK = saved
