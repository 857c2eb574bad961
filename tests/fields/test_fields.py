"""Fields: what a field holds, its values made comparable, comparisons by
kind against plain reference code, keys against a brute force."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nicknames import NickNamer
from rapidfuzz import fuzz
from rapidfuzz.distance import JaroWinkler, Levenshtein

from neardup_solr.fields.comparisons import (EXACT, MISSING, Column, compare, compare_values, first_and_inverse,
                                             level_names)
from neardup_solr.fields.keys import (WINDOW, Buckets, Key, choose, choose_keys, combined, key_codes, key_pairs, missed_share,
                                      pairs_cost, record_order, union_pairs)
from neardup_solr.fields.kinds import KINDS, key_form, kind_of, normal, profile
from neardup_solr.fields.matching import BandKeys, Records, fit_records
from neardup_solr.fields.values import Day, clean, parse_date, parse_number


def test_clean_folds_what_a_person_would_not_see():
    # Zero-width characters, accents, look-alike Cyrillic letters, case and spacing.
    assert clean("  Ren\u200bée  D\u0455ouza ") == "renee dsouza"
    assert clean("\ufeffHe\u200dllo\u200c") == "hello"
    assert clean("ЅС") == "sc"  # Cyrillic DZE and ES, drawn as S and C
    assert clean("Ｓｐａｇｏ") == "spago"  # full-width forms


@pytest.mark.parametrize(("written", "expected"), [
    ("2024-03-12", Day(2024, 3, 12)),
    ("2024/03/12 02:00", Day(2024, 3, 12, "02:00:00")),
    ("20240312", Day(2024, 3, 12)),
    ("12-15-2024", Day(2024, 12, 15)),  # month first: 15 is no month
    ("24/05/2023 16:00:00", Day(2023, 5, 24, "16:00:00")),  # day first: 24 is no month
    ("03/04/2024", Day(2024, 4, 3, "", True)),  # either way round
    ("2024-14-02 23:00:00", Day(2024, 2, 14, "23:00:00")),  # month and day swapped in ISO order
    ("5 January 2020", Day(2020, 1, 5)),
    ("Jan 5, 2020", Day(2020, 1, 5)),
])
def test_dates_in_the_formats_people_write(written, expected):
    assert parse_date(written) == expected


@pytest.mark.parametrize("written", ["2024-13-13", "32/01/2020", "soon", "12345", "2024-02", ""])
def test_what_is_no_date(written):
    assert parse_date(written) is None


def test_normal_forms():
    assert normal("phone", "+1 (524) 555-0129") == normal("phone", "15 24 55 50 12 9") == "15245550129"
    assert normal("code", "ACCO-0000000050") == "acco0000000050"
    assert normal("date", "24/05/2023 16:00") == "2023-05-24 16:00:00"
    assert normal("date", "03/04/2024") == normal("date", "04/03/2024") == "2024-03-04?"
    assert normal("number", "1,234.50") == normal("number", "$1234.5") == "1234.5"
    assert normal("email", "Ann.Lee @Example.com") == "ann.lee@example.com"
    # Names and text as records are repaired: street suffixes, ordinals, "&".
    assert normal("text", "8638 W. Third Street") == normal("text", "8638 w 3rd st") == "8638 w 3rd st"
    assert normal("name", "Smith & Wollensky") == "smith and wollensky"
    assert normal("name", " \u200b ") == ""  # nothing left: missing


def test_parse_number():
    assert parse_number("12.5%") == 12.5
    assert parse_number("1e3") == 1000.0
    assert parse_number("12 apples") is None
    assert parse_number("nan") is None


@pytest.mark.parametrize(("values", "kind"), [
    (["ann@x.com", "bo@y.org", "cy@z.net", "d@e.fr", "not one"], "email"),
    (["2024-01-02", "03/04/2020", "1999-12-31", "20200101", "12-15-2024"], "date"),
    (["+1 524 555 0129", "(310) 246-1501", "0049 30 1234567", "555-0188 x12", "+44 20 7946 0958"], "phone"),
    ([str(x * 1.37) for x in range(200)], "number"),
    (["SKU-001", "SKU-002", "A17", "ORD/17", "X-9"], "code"),
    (["Gold", "Silver", "Bronze"] * 40, "category"),
    (["Ann Lee", "Bob Stone", "Cy Young", "Di Low", "Ed Park"], "name"),
    (["12224 Ventura Blvd. Studio City CA 91604 near the corner of the park"] * 2 +
     ["701 Stone Canyon Rd. Bel Air, a hotel with gardens and a lake"] * 2, "text"),
])
def test_kind_from_the_values(values, kind):
    assert kind_of(values) == kind


def test_a_few_values_are_no_category():
    # Two values, each seen once, are not a category: a category's values repeat.
    assert kind_of(["Ann Lee", "Bob Stone"]) == "name"


def test_profile_counts_filled_and_distinct_normal_forms():
    rows = [{"name": "Ann", "city": "Paris"}, {"name": "ann", "city": ""}, {"name": "Bo"}, {"name": "Cy", "city": "Rome"}]
    name, city = profile(["name", "city"], rows)
    assert (name.filled, name.distinct) == (1.0, 0.75)  # Ann and ann are one value
    assert (city.filled, city.distinct) == (0.5, 1.0)


def _level_of(kind: str, x: str | None, y: str | None) -> int:
    """The level by the table in kinds.py, written out plainly for one pair."""
    a, b = (normal(kind, v) if v else "" for v in (x, y))
    if not a or not b:
        return MISSING
    if a == b:
        return EXACT
    if kind == "name":
        jw = JaroWinkler.similarity(a, b)
        if jw >= 0.92 - 1e-6:
            return 3
        if jw >= 0.8 - 1e-6:
            return 4
        if " " not in a + b and _one_given_name(a, b):
            return 5
        short, long = sorted((a, b), key=len)
        words = long.split()
        part = long.startswith(short) if len(short) == 1 else all(
            any(o == w or (len(w) == 1 and o.startswith(w)) for o in words) for w in short.split())
        return 6 if part else 7
    if kind == "code":
        d = Levenshtein.distance(a, b)
        return 2 if d == 1 else 3 if d == 2 else 4
    if kind == "category":
        return 2
    if kind == "text":
        ratio = fuzz.token_set_ratio(a, b)
        return 2 if ratio >= 90 - 1e-6 else 3 if ratio >= 60 - 1e-6 else 4
    if kind == "email":
        if a.split("@")[0] == b.split("@")[0]:
            return 2
        return 3 if JaroWinkler.similarity(a, b) >= 0.9 - 1e-6 else 4
    if kind == "phone":
        return 2 if a[-7:] == b[-7:] else 3 if Levenshtein.distance(a, b) <= 2 else 4
    if kind == "number":
        x, y = float(a), float(b)
        relative = abs(x - y) / max(abs(x), abs(y)) if max(abs(x), abs(y)) else math.inf
        return 2 if relative <= 0.005 else 3 if relative <= 0.1 else 4
    if kind == "date":
        return _date_level(a, b)
    raise AssertionError(kind)


def _date_level(a: str, b: str) -> int:
    """A date's level by its rules, one after the other: what a later rule says overrides an earlier one."""
    x, y = Day.of_normal(a), Day.of_normal(b)
    if x is None or y is None:
        return 3 if Levenshtein.distance(a, b) <= 1 else 5
    year = x.year == y.year
    straight = x.month == y.month and x.day == y.day
    crossed = x.month == y.day and x.day == y.month
    either = x.either_way or y.either_way
    times_differ = bool(x.time and y.time and x.time != y.time)
    agree = year + max((x.month == y.month) + (x.day == y.day), (x.month == y.day) + (x.day == y.month))
    level = 5
    if agree == 2:
        level = 3
    if year and agree < 2:
        level = 4
    if year and crossed and not either:
        level = 2
    if year and not times_differ and (straight or (crossed and either)):
        level = 1
    if times_differ and level < 4:
        level = 4
    if times_differ and not year:
        level = 5
    return level


NAMES = st.sampled_from(["ann", "anne", "a", "ann lee", "lee", "a lee", "bob", "rob", "robert", "bo", "bill", "william",
                         "peggy", "margaret", "", None])
NAMER = NickNamer()


def _one_given_name(x: str, y: str) -> bool:
    """Two words that the nicknames package's table makes one given name: one a nickname of the other, or both of one."""
    of_x = NAMER.canonicals_of(x) | ({x} if NAMER.nicknames_of(x) else set())
    of_y = NAMER.canonicals_of(y) | ({y} if NAMER.nicknames_of(y) else set())
    return bool(of_x & of_y)
VALUES = {
    "name": NAMES, "category": NAMES,
    "code": st.sampled_from(["a1", "a2", "a12", "b1", "ab12", "ba12", "a-1", "", None]),
    "text": st.sampled_from(["3130 piedmont rd ne", "3130 piedmont road", "piedmont rd", "12 main st apt 4",
                             "12 main street", "main st 12", "", None]),
    "email": st.sampled_from(["ann@x.com", "ann@y.org", "anne@x.com", "bo@x.com", "ann.lee@x.com", "", None]),
    "phone": st.sampled_from(["+1 524 555 0129", "524-555-0129", "555 0129", "+1 524 555 0192", "0015245550128",
                              "(310) 246-1501", "", None]),
    "number": st.sampled_from(["100", "100.2", "100.6", "108", "112", "0", "-100", "1e3", "", None]),
    "date": st.sampled_from(["2024-01-05", "2024-05-01", "05/01/2024", "2024-01-05 10:00", "2024-01-05 11:00",
                             "2024-01-01 10:00", "2024-01-01 11:00", "2024-01-06", "2025-01-05", "2024-03-09",
                             "1998-01-04", "1998-04-01", "03/04/2024", "2024-04-03", "soon", "sooner", "", None]),
}


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(VALUES)), st.data())
def test_compare_on_arrays_is_the_plain_comparison_of_each_pair(kind, data):
    values = data.draw(st.lists(VALUES[kind], min_size=2, max_size=12))
    column = Column.of(kind, values)
    pairs = list(combinations(range(len(values)), 2))
    left = np.array([a for a, _ in pairs])
    right = np.array([b for _, b in pairs])
    found = compare(column, left, right).tolist()
    assert found == [_level_of(kind, values[a], values[b]) for a, b in pairs]
    assert found == [compare_values(kind, values[a] or "", values[b] or "") for a, b in pairs]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 40), max_size=60))
def test_first_and_inverse_is_numpy_s_unique_index_and_inverse(keys):
    """One of each distinct key, and every key's number among them in
    ascending order, as ``np.unique`` gives them (any one of equal keys
    standing for them)."""
    keys = np.array(keys, np.int64)
    first, inverse = first_and_inverse(keys)
    unique, expected_inverse = np.unique(keys, return_inverse=True)
    assert keys[first].tolist() == unique.tolist()
    assert inverse.tolist() == expected_inverse.ravel().tolist()


@pytest.mark.parametrize(("kind", "x", "y", "level"), [
    ("date", "2024-03-12 02:00:00", "2025/03/12 02:00:00", "one of year, month, day differs"),
    ("date", "2024-02-14", "2024-14-02", "exact"),
    ("date", "1998-01-04", "1998-04-01", "day and month swapped"),
    ("date", "03/04/2024", "2024-04-03", "exact"),  # either way round, and one way is this one
    ("date", "2024-01-01", "2024-05-05", "same year"),
    ("date", "2024-01-01 10:00", "2024-01-01 11:00", "same year"),  # one day, two times: two events
    ("date", "2024-01-01", "1990-07-09", "different"),
    ("phone", "+1-524-555-0129", "0015245550129", "exact"),
    ("phone", "+1-524-555-0129", "(524) 555-0129", "same last 7 digits"),
    ("email", "melba@example.com", "melba@mail.com", "same mailbox, other domain"),
    ("number", "100", "100.2", "within 0.5%"),
    ("number", "100", "108", "within 10%"),
    ("number", "100", "200", "different"),
    ("text", "3130 Piedmont Rd. NE", "3130 Piedmont Road", "token set ratio >= 90"),
    ("name", "J Smith", "John Smith", "an initial or a part of the other"),
    ("name", "Jordan", "", "missing"),
])
def test_levels_by_kind(kind, x, y, level):
    assert level_names(kind)[compare_values(kind, x, y)] == level
    assert level_names(kind)[compare_values(kind, y, x)] == level  # either way round


def test_every_kind_has_exact_first_and_different_last():
    for kind in KINDS:
        assert level_names(kind)[1] == "exact" and level_names(kind)[-1] == "different", kind


def test_key_forms_survive_the_usual_damage():
    assert key_form("date", "2024-03-12 02:00:00") == key_form("date", "2024-12-03") == "2024-03-12"
    assert key_form("phone", "15245550129") == key_form("phone", "5245550129") == "5550129"
    assert key_form("email", "melba@example.com") == key_form("email", "melba@mail.com")
    assert key_form("name", "hearth k") == key_form("name", "hearthstone") == "hear"  # a middle initial
    assert key_form("name", "hearthstone holdings group", 2) == "hear hold"  # a company's two first words


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", ""]), st.sampled_from(["x", "y", ""])),
                min_size=2, max_size=40), st.integers(2, 6))
def test_key_pairs_are_the_pairs_sharing_a_key(rows, bucket):
    """Every pair of a bucket within the limit; past it, the bucket refined
    where the key refines (those lacking the refining field together), and
    what is still past it paired by a window over the records in order of
    their fields."""
    columns = [Column.of("code", [r[0] or None for r in rows]), Column.of("code", [r[1] or None for r in rows])]
    codes = key_codes(columns, profile(["a", "b"], []))
    keys = [Key((0,)), Key((0, 1)), Key((0,), refine=(1,))]
    left, right, bits = key_pairs(codes, keys, max_bucket=bucket)
    place = {at: n for n, at in enumerate(sorted(range(len(rows)), key=lambda at: (codes[0][at], codes[1][at], at)))}

    def paired(members: list[int]) -> set[tuple[int, int, bool]]:
        """The pairs of a bucket, each marked whether a window made it."""
        if len(members) <= bucket:
            return {(min(a, b), max(a, b), False) for a, b in combinations(members, 2)}
        ranked = sorted(members, key=place.get)
        return {(min(a, b), max(a, b), True) for i, a in enumerate(ranked) for b in ranked[i + 1:i + 1 + WINDOW]}

    expected: dict[tuple[int, int], int] = {}
    for number, key in enumerate(keys):
        shared: dict[tuple, list[int]] = {}
        for at, row in enumerate(rows):
            value = tuple(row[i] for i in key.fields)
            if all(value):
                shared.setdefault(value, []).append(at)
        found = set()
        for members in shared.values():
            if len(members) > bucket and key.refine:
                refined: dict[tuple, list[int]] = {}
                for at in members:
                    refined.setdefault(tuple(rows[at][i] for i in key.refine), []).append(at)
                for inside in refined.values():
                    found |= paired(inside)
            else:
                found |= paired(members)
        for a, b, windowed in found:
            # A window's pairs of any key are one bit, after the keys'.
            expected[(a, b)] = expected.get((a, b), 0) | 1 << (len(keys) if windowed else number)
        made = Buckets.of(codes, key, bucket, record_order(codes))
        assert made.cost == len(found)
        # Whether the key makes a pair, asked of every pair of records: exactly those found.
        everyone = np.array(list(combinations(range(len(rows)), 2)), np.int64).reshape(-1, 2)
        held = made.holds(everyone[:, 0], everyone[:, 1], len(rows))
        assert {tuple(pair) for pair in everyone[held].tolist()} == {(a, b) for a, b, _ in found}
    assert dict(zip(zip(left.tolist(), right.tolist()), bits.tolist())) == expected
    for key in keys:  # a key's pairs without a limit: every pair sharing it, missing values apart
        held = [tuple(r[i] for i in key.fields) for r in rows if all(r[i] for i in key.fields)]
        assert pairs_cost(combined(codes, key.fields)) == sum(held.count(v) * (held.count(v) - 1) / 2 for v in set(held))


def test_keys_are_chosen_within_the_budget_single_fields_first():
    rng = np.random.default_rng(1)
    n = 2000
    unique = [f"u{i}" for i in range(n)]
    common = [str(rng.integers(0, 5)) for _ in range(n)]
    other = [f"o{rng.integers(0, 40)}" for _ in range(n)]
    columns = [Column.of("code", unique), Column.of("code", common), Column.of("code", other)]
    profiles = profile(["unique", "common", "other"], [{"unique": a, "common": b, "other": c}
                                                      for a, b, c in zip(unique, common, other)])
    keys = choose_keys(key_codes(columns, profiles), profiles)
    # The unique field alone; the common one (5 values, a category) and the other (40 values: 50,000 pairs,
    # past the budget of 20,000) only together (200 values: 10,000 pairs).
    assert keys == [Key((0,)), Key((1, 2))]


def test_keys_with_windows_share_one_budget_until_a_model_says_what_they_add():
    """A window costs about WINDOW pairs a record over any common value: before
    a model, the keys that have one are taken while they cost the budget
    together; with one, each is taken where it adds matches, and a key
    without windows within the budget always."""
    codes = [np.arange(100, dtype=np.int64) % (5 + f) for f in range(4)]
    profiles = profile(["a", "b", "c", "d"], [{f: f"{f}{i}" for f in "abcd"} for i in range(100)])
    # Field 0 makes every pair it shares (no window), the others window their buckets, each within the budget alone.
    costs = {0: 1.0, 1: 60.0, 2: 70.0, 3: 80.0}

    def cost(fields: tuple[int, ...]) -> tuple[Key, float, bool]:
        return Key(fields), costs[fields[0]] if len(fields) == 1 else 1e9, fields == (0,)

    assert choose(codes, profiles, 100.0, cost) == [Key((0,)), Key((1,))]
    adding = {Key((2,)), Key((3,))}
    taken: list[list[Key]] = []

    def adds(key: Key, before: Sequence[Key]) -> bool:
        taken.append(list(before))
        return key in adding

    assert choose(codes, profiles, 100.0, cost, adds) == [Key((0,)), Key((2,)), Key((3,))]
    # Asked of the keys with windows only, against the keys taken before.
    assert taken == [[Key((0,))], [Key((0,))], [Key((0,)), Key((2,))]]


def test_missed_share_is_the_chance_of_disagreeing_on_every_key():
    keys = [Key((0,)), Key((1, 2))]
    # Field 0 agrees half the time, 1 and 2 each 0.8: missed = 0.5 * (1 - 0.64).
    assert missed_share({0: 0.5, 1: 0.8, 2: 0.8}, keys, [1.0, 1.0, 1.0], draws=400_000) == pytest.approx(0.18, abs=0.005)
    assert missed_share({}, [], [1.0]) == 1.0


@pytest.mark.parametrize(("values", "kind"), [
    (["%05d" % (n * 97 % 99999) for n in range(200)], "code"),  # zip codes: some with leading zeros
    ([str(10000 + n * 37) for n in range(200)], "code"),  # all of five digits: an account number
    ([str(n * 37) for n in range(1, 200)], "number"),  # counts of any length
    ([str(1900 + n % 120) for n in range(200)], "number"),  # years: four digits
])
def test_codes_written_in_digits_are_codes_not_numbers(values, kind):
    assert kind_of(values) == kind
    if kind == "code":
        assert level_names(kind)[compare_values(kind, values[0], values[1])] != "within 0.5%"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["Ann", "ann ", "Bob", "", None]), st.sampled_from(["1 May 2020", "", "x"])),
                min_size=1, max_size=30))
def test_records_are_copies_where_every_field_has_the_same_normal_form(rows):
    records = Records([str(n) for n in range(len(rows))],
                      [Column.of("name", [row[0] for row in rows]), Column.of("text", [row[1] for row in rows])],
                      BandKeys.of([]))
    groups = records.copies()
    forms = [(normal("name", a) if a else "", normal("text", b) if b else "") for a, b in rows]
    for x, y in combinations(range(len(rows)), 2):
        assert (groups[x] == groups[y]) == (forms[x] == forms[y])


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 40), st.lists(st.tuples(st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=30),
                                              st.integers(0, 15)), max_size=6), st.booleans())
def test_union_pairs_are_every_part_s_pairs_once_with_their_bits(count, parts, compiled):
    """The distinct pairs of every part, each with the or of the bits of
    the parts holding it, against a plain dict."""
    given_parts = [(np.array([min(a, b) % count for a, b in pairs], np.int64),
                    np.array([max(a, b) % count for a, b in pairs], np.int64), bit) for pairs, bit in parts]
    expected: dict[tuple[int, int], int] = {}
    for left, right, bit in given_parts:
        for a, b in zip(left.tolist(), right.tolist()):
            expected[a, b] = expected.get((a, b), 0) | 1 << bit
    left, right, bits = union_pairs(iter(given_parts), count, compiled=compiled)
    assert list(zip(left.tolist(), right.tolist())) == sorted(expected)
    assert bits.tolist() == [expected[pair] for pair in sorted(expected)]


def test_a_key_whose_windows_add_no_match_is_left_out_of_the_fit():
    """Three records a person sharing an email; a state of 60 values
    (buckets of 200, past the limit, paired by windows: within the budget
    alone) adds only pairs of different people. It is no key, and every
    true pair is a candidate."""
    rng = np.random.default_rng(7)
    people = 4000
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    states = ["".join(rng.choice(letters, 7)) for _ in range(60)]
    names = ["".join(rng.choice(letters, 6)) for _ in range(people)]
    rows = []
    for person in range(people):
        state = states[rng.integers(len(states))]
        for copy in range(3):
            name = names[person] if copy < 2 else names[person][:-1] + "x"
            rows.append({"email": f"p{person}@mail.example", "name": name, "state": state})
    fields = ["email", "name", "state"]
    profiles = profile(fields, rows[::6])
    assert [p.name for p in profiles] == fields and profiles[2].kind == "name"
    records = Records([str(n) for n in range(len(rows))], [Column.of(p.kind, [r[p.name] for r in rows]) for p in profiles],
                      BandKeys.of([]))
    fitted = fit_records(records, profiles)
    chosen = {tuple(profiles[f].name for f in key.fields) for key in fitted.keys}
    assert ("state",) not in chosen and ("email",) in chosen
    found = set(zip(fitted.found.left.tolist(), fitted.found.right.tolist()))
    assert all((3 * p + a, 3 * p + b) in found for p in range(people) for a, b in ((0, 1), (0, 2), (1, 2)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=5), max_size=20), st.randoms(use_true_random=False))
def test_band_keys_reordered_are_each_record_s_keys_in_the_new_order(per_record, random):
    """Records' band keys moved with their records, against lists reordered plainly."""
    order = list(range(len(per_record)))
    random.shuffle(order)
    arrays = [np.array(keys, np.uint64) for keys in per_record]
    moved = BandKeys.of(arrays).reordered(np.array(order, np.int64))
    assert moved.counts.tolist() == [len(per_record[i]) for i in order]
    assert moved.keys.tolist() == [key for i in order for key in per_record[i]]
