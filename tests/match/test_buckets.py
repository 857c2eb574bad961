"""Buckets read back from a real Solr, against the records' own keys."""

from collections import defaultdict
from itertools import chain, combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.lsh.bands import band_range
from neardup_solr.match import buckets
from neardup_solr.match.buckets import Pairing, Skipped, _members, bucket_batches
from neardup_solr.index.documents import DocumentBuilder
from neardup_solr.index.state import IndexSettings
from neardup_solr.index.writer import index_records
from neardup_solr.records.record import Record, id_key
from neardup_solr.text.repair import repair
from neardup_solr.index.schema import BAND_KEYS, MD5
from neardup_solr.index.solr import Solr
from neardup_solr.text.normalize import md5_hex, normalize

NAMES = ["Art's Deli", "Bistro Roma", "Cafe Luna", "Golden Dragon", "Hotel Bel-Air", "Spago", "The Grill"]


def records() -> list[Record]:
    texts = []
    for n, name in enumerate(NAMES):
        street = f"{100 + n} Main Street Springfield"
        texts += [f"{name} {street}", f"{name} {street}", f"{name} {street.replace('Street', 'St')}",
                  f"{name}s {street}"]
    # Twelve copies of one record: buckets larger than the limit below.
    texts += ["Joe's Pizza 1 Broadway New York"] * 12
    texts += [f"Unrelated record number {n} on its own" for n in range(20)]
    return [Record(str(n + 1), text) for n, text in enumerate(texts)]


@pytest.mark.parametrize(("postings", "page"), [(True, None), (True, 3), (False, None)],
                         ids=["from the handler", "from the handler in pages of 3 and pieces of 5", "read whole and by queries"])
def test_buckets_are_those_the_records_own_keys_make(core, monkeypatch, postings, page):
    """Read through the local Solr's /buckets handler (the band keys' points
    in pieces of a range of any size, the MD5s' terms in pages of any size)
    or, where it is missing (SolrCloud, a Solr without the launcher), the
    band keys read whole in pages of 7 and the MD5s by queries: the same
    buckets and texts, a deleted record in none, the records written in
    two commits (two segments) alike."""
    given, settings = records(), IndexSettings(bands=8, band_rows=2)
    half = len(given) // 2
    index_records(core, [*given[:half], Record("gone", given[0].text)], settings=settings)
    index_records(core, given[half:], settings=settings)
    core.delete_ids(["gone"])
    core.commit()
    assert core.reads_buckets()  # the suite's Solr runs the launcher, which has the handler
    if not postings:
        monkeypatch.setattr(Solr, "reads_buckets", lambda self: False)
        monkeypatch.setattr(buckets, "READ_PAGE", 7)
    if page is not None:
        monkeypatch.setattr(buckets, "WALK_MEMBERS", page)
        monkeypatch.setattr(buckets, "WALK_POINTS", 5)
    # The buckets as the records' own keys make them: band keys shared by
    # 2 to 10 records, MD5s shared by any number.
    holders: dict[tuple[str, str], set[str]] = defaultdict(set)
    keys = DocumentBuilder(settings).band_keys([repair(r.text) for r in given])
    for record, own in zip(given, keys):
        for key in own:
            holders[BAND_KEYS, key].add(record.id)
        holders[MD5, md5_hex(normalize(record.text))].add(record.id)
    expected = sorted(sorted(ids) for (field, _), ids in holders.items()
                      if len(ids) >= 2 and (field == MD5 or len(ids) <= 10))
    too_large = [ids for (field, _), ids in holders.items() if field == BAND_KEYS and len(ids) > 10]

    skipped, texts, bands_done, found = Skipped(), {}, [], []
    for groups, members in chain(
        bucket_batches(core, BAND_KEYS, [band_range(b) for b in range(8)], max_bucket=10, skipped=skipped,
                       with_texts=True, progress=lambda: bands_done.append(1)),
        bucket_batches(core, MD5, [""], max_bucket=None, with_texts=True),
    ):
        found += groups
        texts.update(members)

    # Every bucket once, each member once in it.
    assert sorted(map(sorted, found)) == expected
    assert (skipped.keys, skipped.largest) == (len(too_large), max(map(len, too_large)))
    assert texts == {r.id: r.text for r in given if any(r.id in ids for ids in expected)}
    assert len(bands_done) == 8


def test_members_are_found_whatever_the_order_of_a_records_keys():
    keys = [f"k{n}" for n in range(4)]
    batch = {keys[1]: 2, keys[2]: 2}
    docs = [{"id": "a", "k": keys}, {"id": "b", "k": keys[::-1]}, {"id": "c", "k": keys[3]}]
    assert sorted(_members(docs, batch, "k")) == [["a", "b"], ["a", "b"]]


def test_pairing_keeps_each_pair_once_in_id_order_and_says_who_came_first():
    pairing = Pairing()
    assert pairing.add([["10", "2", "3"], ["2", "3"]]) == ["10", "2", "3"]
    assert pairing.add([["4", "2"], ["5"]]) == ["4", "5"]
    found, arrival = pairing.candidates()
    assert found.ids == ["2", "3", "4", "5", "10"]
    assert list(found.pairs()) == [("2", "3"), ("2", "4"), ("2", "10"), ("3", "10")]
    # Each record's number of arrival, by its place in id order.
    assert arrival.tolist() == [1, 2, 3, 4, 0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.lists(st.integers(0, 40).map(str), min_size=1, max_size=6, unique=True),
                         max_size=5), max_size=12),
       st.integers(1, 9))
def test_pairing_folds_pairs_met_into_the_same_distinct_pairs_whatever_the_block(requests, block):
    # Plain reference: every pair of two members of a group, once, smaller id first by id_key.
    expected = {tuple(sorted((a, b), key=id_key)) for groups in requests for group in groups
                for a, b in combinations(group, 2)}
    pairing = Pairing(block=block)
    for groups in requests:
        pairing.add(groups)
    found, _ = pairing.candidates()
    pairs = list(found.pairs())
    assert len(pairs) == len(expected) and set(pairs) == expected
    keys = [(id_key(a), id_key(b)) for a, b in pairs]
    assert keys == sorted(keys)  # in id order
