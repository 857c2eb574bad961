"""Records as the sequences and dicts people hold."""

from __future__ import annotations

import json

import pytest

from neardup_solr import InputError
from neardup_solr.api import as_record
from neardup_solr.records import Record


def test_a_record_is_any_two_item_sequence_or_a_dict_and_the_checks_stay():
    assert as_record(["1", "Art's Deli"]) == Record("1", "Art's Deli")  # a list, as JSON reads a pair
    assert as_record(json.loads('[7, "Spago"]')) == Record("7", "Spago")
    assert as_record({"id": "2", "text": "Hotel Bel-Air"}) == Record("2", "Hotel Bel-Air")
    for bad, said in ((["1"], r"is an \(id, text\) pair"), ("ab", r"is an \(id, text\) pair"),
                      (["1", "a", "b"], r"is an \(id, text\) pair"), (["1", 2], "is int, not str"),
                      (["b d", "x"], "breaks the id rule"), (["1", "--"], "no letters or digits")):
        with pytest.raises(InputError, match=said) as raised:
            as_record(bad)
        assert "\n" not in str(raised.value)
