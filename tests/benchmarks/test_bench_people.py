"""Synthetic person records: deterministic, duplicates that stay recognisable,
households that look alike but are not duplicates."""

import itertools

from rapidfuzz.distance import Levenshtein

from bench import words
from bench.people import FIELDS, People, generate
from test_bench_generate import check_seeded, components, read

SUFFIX_SPELLINGS = {frozenset(pair) for pair in words.SUFFIXES}
NAME_FORMS = {frozenset(pair) for pair in words.NICKNAMES}


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    check_seeded(tmp_path, lambda seed, folder: generate(2000, seed, folder))


def test_a_fifth_of_the_people_are_entered_two_or_three_times(tmp_path):
    records, pairs = read(generate(10000, 3, tmp_path)[0].parent)
    assert [r[0] for r in records] == [str(i) for i in range(1, 10001)]
    groups = components(pairs)
    assert 0.18 <= sum(map(len, groups)) / len(records) <= 0.22
    assert {len(g) for g in groups} == {2, 3}
    assert len(pairs) == len(set(pairs)) == sum(len(g) * (len(g) - 1) // 2 for g in groups)


def _recognisable(field, original, changed):
    """Whether a person reading both would take ``changed`` for ``original``'s value."""
    if changed is None or changed == original:
        return True
    if field == "given" and (changed == original[0] or frozenset((original, changed)) in NAME_FORMS):
        return True
    if field == "suffix" and frozenset((original, changed)) in SUFFIX_SPELLINGS:
        return True
    return Levenshtein.distance(original, changed) <= 2  # a typo, a misread letter, two digits swapped


def test_every_duplicate_changes_at_most_three_fields_and_each_stays_recognisable():
    people = People(6000, 11)
    kinds = set()
    for logical in range(people.bases, people.n):
        original, copy = people.person(people.original(logical)), people.fields(logical)
        changed = [f for f in FIELDS if getattr(original, f) != getattr(copy, f)]
        swapped = original.surname_first != copy.surname_first
        assert 1 <= len(changed) + swapped <= 3, (original, copy)
        for field in changed:
            assert _recognisable(field, getattr(original, field), getattr(copy, field)), (field, original, copy)
            kinds.add("left out" if getattr(copy, field) is None else field)
        if swapped:
            kinds.add("swapped")
            assert copy.text().split()[:2] == [copy.surname, copy.given]
    # Every kind of change occurs: names, address, numbers, left-out fields, the order of the names.
    assert kinds >= {"given", "surname", "street", "suffix", "locality", "postcode", "dob", "id", "left out", "swapped"}


def test_two_records_of_one_person_share_at_least_four_values(tmp_path):
    # Ten one-word fields, at most three changed in each record: four stay the same in both.
    records, pairs = read(generate(4000, 5, tmp_path)[0].parent)
    text = {i: t.split() for i, t in records}
    assert all(len(set(text[a]) & set(text[b])) >= 4 for a, b in pairs)
    assert all(len(text[i]) <= 10 for i in text)


def test_households_share_an_address_but_are_not_duplicates(tmp_path):
    records, pairs = read(generate(6000, 2, tmp_path)[0].parent)
    clustered = {i for pair in pairs for i in pair}
    by_address = {}
    for record_id, text in records:
        if record_id in clustered:
            continue  # originals and copies; the others are whole records, given name first
        given, surname, number, street, suffix, locality, postcode, state, dob, id_number = text.split()
        by_address.setdefault((surname, number, street, locality, postcode), []).append((record_id, given, dob, id_number))
    households = [pair for members in by_address.values() for pair in itertools.combinations(members, 2)]
    # One person in twenty joins another's household.
    assert len(households) >= 0.03 * len(records)
    assert all(a[1] != b[1] and a[2] != b[2] and a[3] != b[3] for a, b in households)
