"""Buckets read back from a real Solr, against the records' own keys."""

from collections import defaultdict
from itertools import chain, combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.lsh.bands import band_range
from neardup_solr.match import buckets
from neardup_solr.errors import SolrFailure
from neardup_solr.match.buckets import Batch, Pairing, Skipped, _members, bucket_reader
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


def read_all(core, settings, **batches):
    """Every bucket of the band keys (a limit of 10) and the MD5s, as ids,
    the texts that came with them, the keys skipped and the bands done."""
    skipped, bands_done, ids, texts, found = Skipped(), [], [], [], []
    with bucket_reader(core) as reader:
        for batch in chain(
            reader.batches(BAND_KEYS, [band_range(b) for b in range(settings.bands)], max_bucket=10, skipped=skipped,
                           progress=lambda: bands_done.append(1)),
            reader.batches(MD5, [""], max_bucket=None),
        ):
            # The records first met here are numbered on from those before.
            assert len(batch.ids) == len(batch.texts) and batch.members.max(initial=-1) < len(ids) + len(batch.ids)
            ids += batch.ids
            texts += batch.texts
            starts = [0, *batch.sizes.cumsum().tolist()]
            found += [[ids[n] for n in batch.members[a:b].tolist()] for a, b in zip(starts, starts[1:])]
    assert len(set(ids)) == len(ids)  # each record numbered once
    return found, dict(zip(ids, texts)), skipped, len(bands_done)


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
    pinned = core.pin()
    assert pinned is not None  # the suite's Solr runs the launcher, which has the handler
    core.unpin(pinned)
    if not postings:
        monkeypatch.setattr(Solr, "pin", lambda self: None)
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

    found, texts, skipped, bands_done = read_all(core, settings)

    # Every bucket once, each member once in it.
    assert sorted(map(sorted, found)) == expected
    assert (skipped.keys, skipped.largest) == (len(too_large), max(map(len, too_large)))
    assert texts == {r.id: r.text for r in given if any(r.id in ids for ids in expected)}
    assert bands_done == 8


def test_a_report_reads_the_index_as_it_was_when_its_reading_began(core):
    """Records written or deleted while the buckets are read (a service's
    writes beside a report) change none of the buckets and records read:
    they come from a snapshot; let go, it can no longer be read."""
    given, settings = records(), IndexSettings(bands=8, band_rows=2)
    index_records(core, given, settings=settings)
    core.commit()
    snapshot = core.pin()

    def md5_buckets() -> list[list[tuple[str, str]]]:
        sizes, docs, *_ = core.buckets(snapshot, MD5, "")
        ids, texts = core.records(snapshot, docs)
        starts = [0, *sizes.cumsum().tolist()]
        return sorted(sorted(zip(ids[a:b], texts[a:b])) for a, b in zip(starts, starts[1:]))

    before = md5_buckets()
    assert any(("1", given[0].text) in group for group in before)  # records 1 and 2 are the same text
    core.delete_ids([r.id for r in given[:8]])
    index_records(core, [Record("new", given[8].text)], settings=settings)
    core.commit()
    assert md5_buckets() == before
    core.unpin(snapshot)
    with pytest.raises(SolrFailure, match="no snapshot"):
        core.buckets(snapshot, MD5, "")
    # A new reading sees the writes.
    now = read_all(core, settings)[0]
    assert any("new" in group for group in now) and not any("1" in group for group in now)


def test_members_are_found_whatever_the_order_of_a_records_keys():
    keys = [f"k{n}" for n in range(4)]
    batch = {keys[1]: 2, keys[2]: 2}
    docs = [{"id": "a", "k": keys}, {"id": "b", "k": keys[::-1]}, {"id": "c", "k": keys[3]}]
    assert sorted(_members(docs, batch, "k")) == [["a", "b"], ["a", "b"]]


def batches_of(requests: list[list[list[str]]]) -> list[Batch]:
    """Requests of groups of ids as batches of numbers, in order of first arrival (a plain dict)."""
    number: dict[str, int] = {}
    made = []
    for groups in requests:
        new = [m for g in groups for m in g if m not in number and number.setdefault(m, len(number)) >= 0]
        made.append(Batch(np.array([len(g) for g in groups], np.int64),
                          np.array([number[m] for g in groups for m in g], np.int32), new, [f"text {m}" for m in new]))
    return made


def test_pairing_keeps_each_pair_once_in_id_order_and_says_who_came_first():
    pairing = Pairing()
    for batch in batches_of([[["10", "2", "3"], ["2", "3"]], [["4", "2"], ["5"]]]):
        pairing.add(batch)
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
    for batch in batches_of(requests):
        pairing.add(batch)
    found, _ = pairing.candidates()
    pairs = list(found.pairs())
    assert len(pairs) == len(expected) and set(pairs) == expected
    keys = [(id_key(a), id_key(b)) for a, b in pairs]
    assert keys == sorted(keys)  # in id order
