"""The kinds of fields, each listed once: what its values look like, their
normal form, their key form, and the levels two of them compare by.

What a field holds is not configured: it is read off a sample of the data
(:func:`profile`), as the first kind of :data:`KINDS` whose values it looks
like (:func:`kind_of`):

==========  ===================================  ==================================================
kind        looks like                           levels after "exact", the last "different"
==========  ===================================  ==================================================
email       most values are emails               the same mailbox at another domain; Jaro-Winkler
                                                 >= 0.9
date        most values parse as dates           day and month swapped; one of year, month, day
            (``values.parse_date``)              differs; the same year ("exact" also takes one day
                                                 written apart)
category    few distinct values, each repeated   (none)
number      most values parse as numbers (but    within 0.5%; within 10%
            zip codes: leading zeros, or digits
            all as many)
phone       most values are 7 to 16 digits       the same last 7 digits; two edits
code        most values one token with digits    one edit; two edits
name        a few words on average               Jaro-Winkler >= 0.92; >= 0.8; an initial or a part
                                                 of the other
text        anything else (longer text)          token set ratio >= 90; >= 60
==========  ===================================  ==================================================

"Exact" means equal :func:`normal` forms; the levels are ``levels.py``'s,
each holding its test and threshold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import lru_cache

import numpy as np

from .levels import (DIFFERENT, EDITS, EXACT_LEVEL, JARO_WINKLER, RELATIVE, TOKEN_SET, Level, nickname, one_differs,
                     part_of, same_date, same_mailbox, same_tail, same_year, swapped, threshold)
from .values import (PHONE_TAIL, clean, code_form, date_form, day_key, email_form, is_code, is_email, is_given_name, is_phone,
                     mailbox_key, number_form, parse_date, parse_number, phone_form, phone_key, prefix_key,
                     whole_key, words_form, words_of)

# A kind is read off the values when this share of a field's sampled values
# has it: most, so a few typed-in exceptions do not change what a field is.
KIND_SHARE = 0.8
# A field of at most this many distinct values in the sample, each seen
# ``REPEATS`` times on average, or under this share of them distinct, is a
# category.
CATEGORY_VALUES = 30
REPEATS = 3
CATEGORY_SHARE = 0.02
# Names are short: a field averaging more words than this is text.
NAME_WORDS = 4
# Whole numbers all of this many digits or more, or any with a leading zero,
# are codes (zip codes, account numbers), compared by their digits' edits.
CODE_DIGITS = 5


@dataclass(frozen=True)
class Kind:
    """A kind of field: whether a field's cleaned, filled values are of it
    (``looks``), a cleaned value's normal form (``form``), a normal form's
    key form (``key``: the form and how many leading words a name keeps),
    and its levels after "missing", "exact" first and "different" last."""

    name: str
    looks: Callable[[list[str]], bool]
    form: Callable[[str], str]
    key: Callable[[str, int], str]
    levels: tuple[Level, ...]

    @property
    def level_names(self) -> tuple[str, ...]:
        """Every level's label, "missing" first."""
        return ("missing", *(level.label for level in self.levels))


def _most(test: Callable[[str], bool]) -> Callable[[list[str]], bool]:
    return lambda cleaned: sum(1 for c in cleaned if test(c)) / len(cleaned) >= KIND_SHARE


def _few_values(cleaned: list[str]) -> bool:
    distinct = len(set(cleaned))
    return distinct < CATEGORY_SHARE * len(cleaned) or (distinct <= CATEGORY_VALUES
                                                         and distinct * REPEATS <= len(cleaned))


def _numbers(cleaned: list[str]) -> bool:
    """Most values are numbers, and they are not codes written in digits:
    a zip code or an account number keeps its leading zeros, or all have
    as many digits (:data:`CODE_DIGITS` or more)."""
    if not _most(lambda c: parse_number(c) is not None)(cleaned):
        return False
    whole = [c for c in cleaned if c.isdigit()]
    if len(whole) < KIND_SHARE * len(cleaned):
        return True
    if any(len(c) > 1 and c.startswith("0") for c in whole):
        return False
    return not (len({len(c) for c in whole}) == 1 and len(whole[0]) >= CODE_DIGITS)


def _short(cleaned: list[str]) -> bool:
    return sum(len(words_of(c)) for c in cleaned) / len(cleaned) <= NAME_WORDS


# A given name written where the family name goes (or the other way round),
# in either record: set across two fields (``comparisons.swaps``), not by a
# test of one field's values.
SWAPPED = Level("the other's given or family name")

# In the order a field's kind is told.
KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("email", _most(is_email), email_form, mailbox_key,
         (EXACT_LEVEL, Level("same mailbox, other domain", same_mailbox), threshold(JARO_WINKLER, 0.9), DIFFERENT)),
    Kind("date", _most(lambda c: parse_date(c) is not None), date_form, day_key,
         (Level("exact", same_date), Level("day and month swapped", swapped),
          Level("one of year, month, day differs", one_differs), Level("same year", same_year), DIFFERENT)),
    Kind("category", _few_values, words_form, whole_key, (EXACT_LEVEL, DIFFERENT)),
    Kind("number", _numbers, number_form, whole_key,
         (EXACT_LEVEL, threshold(RELATIVE, 0.005), threshold(RELATIVE, 0.1), DIFFERENT)),
    Kind("phone", _most(is_phone), phone_form, phone_key,
         (EXACT_LEVEL, Level(f"same last {PHONE_TAIL} digits", same_tail), threshold(EDITS, 2), DIFFERENT)),
    Kind("code", _most(is_code), code_form, whole_key,
         (EXACT_LEVEL, threshold(EDITS, 1), threshold(EDITS, 2), DIFFERENT)),
    Kind("name", _short, words_form, prefix_key,
         (EXACT_LEVEL, SWAPPED, threshold(JARO_WINKLER, 0.92), threshold(JARO_WINKLER, 0.8),
          Level("a nickname of the other", nickname), Level("an initial or a part of the other", part_of),
          DIFFERENT)),
    Kind("text", lambda cleaned: True, words_form, prefix_key,
         (EXACT_LEVEL, threshold(TOKEN_SET, 90), threshold(TOKEN_SET, 60), DIFFERENT)),
)}

# Normal forms remembered: most fields repeat their values (a city, a status,
# a first name), and repairing one costs tens of microseconds.
NORMAL_CACHE = 1 << 16


@lru_cache(maxsize=NORMAL_CACHE)
def normal(kind: str, value: str) -> str:
    """The form of ``value`` that another value of a field of ``kind`` must
    share to be the same value; "" when nothing of it is left (a missing
    value). The one way a field's value is made comparable: indexed,
    reported and looked up alike.

    >>> normal("phone", "+1 (524) 555-0129")
    '15245550129'
    >>> normal("date", "24/05/2023 16:00")
    '2023-05-24 16:00:00'
    """
    return KINDS[kind].form(clean(value))


def key_form(kind: str, form: str, words: int = 1) -> str:
    """What a field's normal form keys on (its kind's ``key``; "" for a
    missing value); ``words``: the leading words a name or text keeps
    the first letters of."""
    return KINDS[kind].key(form, words) if form else ""


@dataclass(frozen=True)
class FieldProfile:
    """What a field holds, read off a sample: its ``kind`` (one of
    :data:`KINDS`), the share of records that fill it, the share of its
    filled values that are distinct, its values' words on average, and its
    ``role``: "given" or "family" for a person's given and family names
    (:func:`name_roles`), else ""."""

    name: str
    kind: str
    filled: float = 1.0
    distinct: float = 1.0
    words: float = 1.0
    role: str = ""

    def to_dict(self) -> dict:
        found = asdict(self)
        if not self.role:
            del found["role"]  # as profiles were written before roles were read
        return found

    @classmethod
    def from_dict(cls, data: Mapping) -> FieldProfile:
        return cls(name=str(data["name"]), kind=str(data["kind"]), filled=float(data.get("filled", 1.0)),
                   distinct=float(data.get("distinct", 1.0)), words=float(data.get("words", 1.0)),
                   role=str(data.get("role", "")))


# A field of single words most of whose values are given names a nicknames
# table knows holds given names.
GIVEN_SHARE = 0.5


def name_roles(profiles: Sequence[FieldProfile], given_share: Sequence[float]) -> tuple[FieldProfile, ...]:
    """``profiles`` with the given and family names marked: the field of
    single names with the most values that are given names (at least
    :data:`GIVEN_SHARE` of them, ``given_share``), and beside it (the column
    before or after, as tables write a person's names) a field of single
    names mostly not given names, its family names. Neither where the data
    has no such pair."""
    single = [i for i, p in enumerate(profiles) if p.kind == "name" and p.words < 1.5]
    given = max(single, key=lambda i: given_share[i], default=None)
    if given is None or given_share[given] < GIVEN_SHARE:
        return tuple(profiles)
    family = next((i for i in (given + 1, given - 1) if i in single and given_share[i] < GIVEN_SHARE), None)
    if family is None:
        return tuple(profiles)
    return tuple(replace(p, role="given") if i == given else replace(p, role="family") if i == family else p
                 for i, p in enumerate(profiles))


def kind_of(values: Sequence[str]) -> str:
    """The kind of a field whose (filled) values are ``values``: the first
    of :data:`KINDS` they look like (text when none is filled)."""
    cleaned = [c for c in (clean(v) for v in values) if c]
    if not cleaned:
        return "text"
    return next(kind.name for kind in KINDS.values() if kind.looks(cleaned))


def profile(names: Sequence[str], rows: Iterable[Mapping[str, str]]) -> tuple[FieldProfile, ...]:
    """The fields ``names`` worth comparing (:func:`worth_comparing`)
    profiled from sampled records' fields ``rows``, the given and family
    names marked (:func:`name_roles`).

    Costs a cleaning of every sampled value (2000 records of 15 fields:
    about a quarter of a second).
    """
    rows = list(rows)
    found, given, telling = [], [], []
    for name in names:
        values = [row[name] for row in rows if row.get(name, "").strip()]
        kind = kind_of(values)
        normals = [normal(kind, v) for v in values]
        normals = [v for v in normals if v]
        found.append(FieldProfile(
            name=name, kind=kind, filled=round(len(normals) / len(rows), 4) if rows else 0.0,
            distinct=round(len(set(normals)) / len(normals), 4) if normals else 0.0,
            words=round(sum(len(v.split()) for v in normals) / len(normals), 2) if normals else 0.0))
        given.append(sum(map(is_given_name, normals)) / len(normals) if kind == "name" and normals else 0.0)
        telling.append(_entropy(normals) * len(normals) / max(len(rows), 1))
    kept = worth_comparing(telling) if rows else list(range(len(found)))  # no sample tells none apart
    return name_roles([found[i] for i in kept], [given[i] for i in kept])


# At most this many fields are compared, those that tell records apart most:
# a table of hundreds of columns costs what one of this many does.
MAX_FIELDS = 32


def worth_comparing(telling: Sequence[float]) -> list[int]:
    """Which fields are compared (their places, in order): those whose
    values tell records apart at all (``telling``: the entropy of a field's
    values, in bits, times the share of records filling it; none for a
    field empty or alike in every sampled record), at most
    :data:`MAX_FIELDS`, the most telling."""
    ranked = sorted((i for i, t in enumerate(telling) if t > 0), key=lambda i: -telling[i])
    return sorted(ranked[:MAX_FIELDS])


def _entropy(values: Sequence[str]) -> float:
    """The entropy of ``values``' distribution, in bits."""
    if not values:
        return 0.0
    counts = np.array(list(Counter(values).values()), np.float64)
    shares = counts / counts.sum()
    return float(-(shares * np.log2(shares)).sum())


__all__ = ["KINDS", "SWAPPED", "FieldProfile", "Kind", "key_form", "kind_of", "name_roles", "normal", "profile",
           "worth_comparing"]
