"""Candidates of field records by keys: records that share a key are compared.

A **key** is a function of a record: one field's value in a form that
survives the usual damage (its kind's key form, ``kinds.key_form``: a date
without its time and with day and month in order, a phone's last digits, a
name's first letters), or two such forms together. Records
sharing a key become candidates, as records sharing an LSH band key do; the
keys unioned keep recall high while each stays selective.

Which keys are used is read off the data, never configured
(:func:`choose_keys`): a key costs the pairs of records sharing it,
``sum over its values of c (c - 1) / 2``, and the keys are taken cheapest
first while each costs at most :data:`KEY_BUDGET` chance pairs a record
(:func:`key_budget`): every field's own key first, then, for the fields too
common alone (a first name, a city), pairs of them (a first name and a
city). A true pair is missed only if it disagrees on every key (and on
every LSH band): :func:`missed_share` estimates how often from the match
model's field agreements.

In Solr each record holds its fields' forms as terms of one field
(``schema.FIELD_VALUES``: ``<field number>:<form>``), so an online query
asks for the records sharing all forms of one of the keys, and a report
reads every record's forms once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .comparisons import Column
from .kinds import FieldProfile, key_form, normal

# Chance pairs a record a key may cost: a report verifies every candidate,
# and an online query reads them all. Ten, the budget the LSH banding
# keeps at scale (``bands.chance_budget``).
KEY_BUDGET = 10.0
# At most this many keys in all: each adds a query clause online and a
# grouping in a report.
MAX_KEYS = 12


@dataclass(frozen=True)
class Key:
    """Records agreeing on every field of ``fields`` (by ``kinds.key_form``) share this key."""

    fields: tuple[int, ...]

    def name(self, profiles: Sequence[FieldProfile]) -> str:
        return " + ".join(profiles[i].name for i in self.fields)


def key_words(profile: FieldProfile) -> int:
    """How many leading words of a name or text its key keeps the first
    letters of: one for a field of single words (a given name, a middle
    initial after it changing nothing), two for longer ones (a company's
    name, whose first word alone many share)."""
    return 1 if profile.words < 1.5 else 2


def key_codes(columns: Sequence[Column], profiles: Sequence[FieldProfile]) -> list[np.ndarray]:
    """For each field, every record's key form as a number (-1 where missing)."""
    found = []
    for column, profile in zip(columns, profiles):
        numbered: dict[str, int] = {}
        words = key_words(profile)
        by_value = np.array([numbered.setdefault(key_form(column.kind, v, words), len(numbered)) for v in column.values]
                            + [-1], np.int64)
        missing = {k for k, n in numbered.items() if not k}
        codes = by_value[column.codes]  # -1 (a missing value) indexes the appended -1
        for gone in missing:
            codes[codes == numbered[gone]] = -1
        found.append(codes)
    return found


def combined(codes: Sequence[np.ndarray], key: Key) -> np.ndarray:
    """Each record's code of ``key`` (-1 where a field of it is missing)."""
    parts = [codes[i] for i in key.fields]
    joined = parts[0].copy()
    missing = parts[0] < 0
    for part in parts[1:]:
        width = int(part.max()) + 2 if len(part) else 1
        joined = joined * width + (part + 1)
        missing |= part < 0
    joined[missing] = -1
    return joined


def pairs_cost(codes: np.ndarray) -> float:
    """The pairs of records sharing a code (``sum c (c - 1) / 2``), missing ones apart."""
    present = codes[codes >= 0]
    if not len(present):
        return 0.0
    _, counts = np.unique(present, return_counts=True)
    return float((counts * (counts - 1) // 2).sum())


def key_budget(records: int) -> float:
    """Chance pairs a key may cost in all: :data:`KEY_BUDGET` a record."""
    return KEY_BUDGET * records


def choose_keys(codes: Sequence[np.ndarray], profiles: Sequence[FieldProfile], total: int | None = None) -> list[Key]:
    """The keys of the data whose key forms ``codes`` are (one array per
    field, a sample or all records), for ``total`` records (default: as many
    as ``codes`` holds): each field's key when it costs at most the budget,
    then pairs of the fields too common alone, cheapest first, at most
    :data:`MAX_KEYS` in all.

    Costs a grouping of the records per key tried (fields and pairs of
    fields: 15 fields try 120 keys).
    """
    records = len(codes[0]) if codes else 0
    if not records:
        return []
    total = total or records
    scale = (total * (total - 1)) / max(records * (records - 1), 1)
    budget = key_budget(total)
    usable = [i for i, p in enumerate(profiles) if p.kind != "category"]
    costs: dict[Key, float] = {}
    for i in usable:
        costs[Key((i,))] = pairs_cost(codes[i]) * scale
    alone = {i for i in usable if costs[Key((i,))] <= budget}
    common = [i for i in range(len(profiles)) if i not in alone]
    for x, y in ((a, b) for n, a in enumerate(common) for b in common[n + 1:]):
        costs[Key((x, y))] = pairs_cost(combined(codes, Key((x, y)))) * scale
    chosen = [key for key, cost in sorted(costs.items(), key=lambda kv: (len(kv[0].fields), kv[1]))
              if cost <= budget and _fills(codes, key) > 0]
    return chosen[:MAX_KEYS]


def _fills(codes: Sequence[np.ndarray], key: Key) -> int:
    return int((combined(codes, key) >= 0).sum())


def key_pairs(codes: Sequence[np.ndarray], keys: Iterable[Key], max_bucket: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of records sharing one of ``keys`` (record numbers, smaller
    first, each pair once), and which keys found it (a bit a key, in order).
    Keys held by more than ``max_bucket`` records are left out."""
    lefts, rights, bits = [], [], []
    for number, key in enumerate(keys):
        joined = combined(codes, key)
        order = np.argsort(joined, kind="stable")
        ordered = joined[order]
        present = ordered >= 0
        order, ordered = order[present], ordered[present]
        if not len(ordered):
            continue
        a, b = bucket_pairs(ordered, order, max_bucket)
        lefts.append(a)
        rights.append(b)
        bits.append(np.full(len(a), 1 << number, np.int64))
    if not lefts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    left, right, bit = np.concatenate(lefts), np.concatenate(rights), np.concatenate(bits)
    return merge_pairs(left, right, bit)


def bucket_pairs(keys: np.ndarray, owners: np.ndarray, max_bucket: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of ``owners`` whose ``keys`` are equal (``keys`` sorted,
    ``owners`` in their order), smaller owner first; keys held by more
    than ``max_bucket`` owners are left out. Buckets of one size are paired
    at once; memory holds the pairs.

    Example:
        >>> [x.tolist() for x in bucket_pairs(np.array([1, 1, 2, 5, 5, 5]), np.array([4, 0, 3, 1, 2, 9]))]
        [[0, 1, 1, 2], [4, 2, 9, 9]]
    """
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    sizes = np.diff(np.append(starts, len(keys)))
    lefts, rights = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for size in np.unique(sizes).tolist():
        if size < 2 or (max_bucket is not None and size > max_bucket):
            continue
        at = starts[sizes == size]
        grid = owners[at[:, None] + np.arange(size)]
        first, second = np.triu_indices(size, k=1)
        a, b = grid[:, first].ravel(), grid[:, second].ravel()
        lefts.append(np.minimum(a, b))
        rights.append(np.maximum(a, b))
    return np.concatenate(lefts), np.concatenate(rights)


def merge_pairs(left: np.ndarray, right: np.ndarray, bits: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs made distinct, their bits or-ed together, in (left, right) order."""
    if not len(left):
        return left, right, bits
    codes = left.astype(np.int64) << 32 | right.astype(np.int64)
    order = np.argsort(codes, kind="stable")
    codes, bits = codes[order], bits[order]
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    merged = np.bitwise_or.reduceat(bits, starts)
    codes = codes[starts]
    return codes >> 32, codes & 0xFFFFFFFF, merged


def missed_share(agree: Mapping[int, float], keys: Sequence[Key], filled: Sequence[float], draws: int = 100_000,
                 seed: int = 0) -> float:
    """The estimated share of true pairs that share none of ``keys``: each
    field of a true pair agrees on its key form with probability
    ``agree[field]`` (from the match model) when both records fill it
    (``filled[field]`` each), independently, as the model takes fields to
    be; drawn ``draws`` times."""
    if not keys:
        return 1.0
    rng = np.random.default_rng(seed)
    fields = sorted({i for key in keys for i in key.fields})
    hits = {i: rng.random(draws) < agree.get(i, 0.0) * filled[i] ** 2 for i in fields}
    caught = np.zeros(draws, bool)
    for key in keys:
        caught |= np.logical_and.reduce([hits[i] for i in key.fields])
    return float(1.0 - caught.mean())


# Forms longer than this (a long text field) are kept in Solr by their MD5:
# a term is at most 32 KB, and only equality is asked of it.
MAX_TERM = 200


def _term(prefix: str, form: str) -> str:
    if len(form) > MAX_TERM:
        return f"{prefix}#{hashlib.md5(form.encode('utf-8')).hexdigest()}"
    return f"{prefix}{form}"


def value_term(field: int, form: str) -> str:
    """The Solr term of field ``field``'s normal form (``schema.FIELD_VALUES``)."""
    return _term(f"{field}:", form)


def key_term(field: int, form: str) -> str:
    """The Solr term of field ``field``'s key form (``schema.FIELD_VALUES``)."""
    return _term(f"{field}k:", form)


def record_key_term(field: int, profile: FieldProfile, form: str) -> str:
    """The term a record holds for its key form of field ``field`` ("" when
    it lacks the field): the key form's, or the value's where the key form
    is the normal form itself."""
    keyed = key_form(profile.kind, form, key_words(profile))
    if not keyed:
        return ""
    return key_term(field, keyed) if keyed != form else value_term(field, form)


def field_terms(profiles: Sequence[FieldProfile], values: Mapping[str, str]) -> list[str]:
    """A record's terms of ``schema.FIELD_VALUES``: each filled field's normal
    form, and its key form where that differs."""
    terms = []
    for number, found in enumerate(profiles):
        form = normal(found.kind, values.get(found.name, ""))
        if not form:
            continue
        terms.append(value_term(number, form))
        keyed = record_key_term(number, found, form)
        if keyed and keyed != terms[-1]:
            terms.append(keyed)
    return terms
