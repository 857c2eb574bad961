"""Ids numbered in order of arrival, against a plain dict."""

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.numbering import Numbering

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
    assert numbering.ids() == list(reference)


def test_a_hundred_thousand_ids_keep_distinct_numbers():
    ids = [str(n) for n in range(100_000)]
    numbering = Numbering()
    first, new = numbering.add(ids[:60_000])
    again, newer = numbering.add(ids[30_000:])
    assert first.tolist() == list(range(60_000)) and new == ids[:60_000]
    assert again.tolist() == list(range(30_000, 100_000)) and newer == ids[60_000:]
    assert numbering.ids() == ids
