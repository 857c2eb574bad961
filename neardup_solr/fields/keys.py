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
city). A bucket past the limit is paired by a window, which costs about
:data:`WINDOW` pairs a record whatever the value: before a match model
exists the keys with windows share one budget, and once it does such a
key is taken only where the model expects matches among the pairs it adds
(``matching.chance_keys``). A true pair is missed only if it disagrees on
every key (and on every LSH band): :func:`missed_share` estimates how often
from the match model's field agreements.

In Solr each record holds its fields' forms as terms of one field
(``schema.FIELD_VALUES``: ``<field number>:<form>``), so an online query
asks for the records sharing all forms of one of the keys, and a report
reads every record's forms once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..compiled import chosen, njit
from .comparisons import Column
from .kinds import FieldProfile, key_form, normal

# Chance pairs a record a key may cost: a report verifies every candidate,
# and an online query reads them all. Ten, the budget the LSH banding
# keeps at scale (``bands.chance_budget``).
KEY_BUDGET = 10.0
# At most this many keys in all: each adds a query clause online and a
# grouping in a report.
MAX_KEYS = 12
# Fields too common alone paired into keys, at most: the most filled and distinct.
PAIRED = 12


# In a bucket larger than the limit (refined, where the key refines, and
# still larger), each record is compared with the next this many in the
# bucket's order (records alike in their fields side by side): linear in the
# bucket, and enough for its entity to be joined through them.
WINDOW = 10


@dataclass(frozen=True)
class Key:
    """Records agreeing on every field of ``fields`` (by ``kinds.key_form``)
    share this key; inside a bucket of more records than the limit, those
    agreeing on the ``refine`` fields too."""

    fields: tuple[int, ...]
    refine: tuple[int, ...] = ()

    @property
    def reads(self) -> tuple[int, ...]:
        """Every field whose agreement the key may force: its own, and the refining ones."""
        return self.fields + self.refine

    def name(self, profiles: Sequence[FieldProfile]) -> str:
        named = " + ".join(profiles[i].name for i in self.fields)
        if self.refine:
            named += " (" + " + ".join(profiles[i].name for i in self.refine) + " in large groups)"
        return named

    def to_json(self) -> list | dict:
        """As the index keeps it: its fields, and what refines it where it does."""
        return list(self.fields) if not self.refine else {"fields": list(self.fields), "refine": list(self.refine)}

    @classmethod
    def of_json(cls, data: list | dict) -> Key:
        if isinstance(data, dict):
            return cls(tuple(int(f) for f in data["fields"]), tuple(int(f) for f in data.get("refine", ())))
        return cls(tuple(int(f) for f in data))


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


def combined(codes: Sequence[np.ndarray], fields: Sequence[int]) -> np.ndarray:
    """Each record's code of the key of ``fields`` (-1 where a field of it
    is missing), numbered densely."""
    joined = codes[fields[0]].astype(np.int64)
    missing = joined < 0
    for f in fields[1:]:
        part = codes[f].astype(np.int64)
        joined = np.unique(joined * (int(part.max()) + 2 if len(part) else 1) + (part + 1), return_inverse=True)[1]
        missing |= part < 0
    joined = joined.astype(np.int64).ravel()
    joined[missing] = -1
    return joined


def record_order(codes: Sequence[np.ndarray]) -> np.ndarray:
    """Each record's place when records are sorted by their fields' forms,
    field by field: identical records side by side, and records alike in
    their first fields near each other. The order records keep inside a
    bucket (:data:`WINDOW`)."""
    if not codes:
        return np.zeros(0, np.int64)
    order = np.lexsort(tuple(reversed([c.astype(np.int64) for c in codes])))
    place = np.empty(len(order), np.int64)
    place[order] = np.arange(len(order))
    return place


@dataclass(frozen=True)
class Buckets:
    """A key's buckets: the records holding it (``owners``, bucket after
    bucket, each bucket in the records' order), where each bucket starts and
    its size, and whether it is paired by :data:`WINDOW` (larger than the
    limit even refined) or whole."""

    owners: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray
    windowed: np.ndarray

    @classmethod
    def of(cls, codes: Sequence[np.ndarray], key: Key, max_bucket: int | None, order: np.ndarray) -> Buckets:
        """Costs a sort of the records holding the key (two where it refines)."""
        joined = combined(codes, key.fields)
        owners = np.flatnonzero(joined >= 0)
        owners = owners[np.argsort(joined[owners] * len(order) + order[owners])]
        starts, sizes = runs(joined[owners])
        if max_bucket is None or not key.refine or not (sizes > max_bucket).any():
            big = sizes > max_bucket if max_bucket is not None else np.zeros(len(sizes), bool)
            return cls(owners, starts, sizes, big)
        # Inside the buckets past the limit, records sharing the refining fields too: a bucket each.
        big = np.repeat(sizes > max_bucket, sizes)
        inside = owners[big]
        refined = combined(codes, key.fields + key.refine)[inside]
        # Those that lack a refining field stay together, in their own bucket's group.
        refined = np.where(refined >= 0, refined, -2 - joined[inside])
        arranged = np.argsort((refined - refined.min()) * len(order) + order[inside])
        inside, refined = inside[arranged], refined[arranged]
        sub_starts, sub_sizes = runs(refined)
        small_owners = owners[~big]
        small_starts, small_sizes = runs(joined[small_owners])
        owners = np.concatenate([small_owners, inside])
        starts = np.concatenate([small_starts, sub_starts + len(small_owners)])
        sizes = np.concatenate([small_sizes, sub_sizes])
        return cls(owners, starts, sizes, sizes > max_bucket)

    @property
    def cost(self) -> float:
        """The pairs the key makes: every pair of a whole bucket, the
        window's of the others."""
        whole = self.sizes[~self.windowed]
        windowed = self.sizes[self.windowed]
        return float((whole * (whole - 1) // 2).sum() + _window_pairs(windowed).sum())

    def pairs(self) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """The key's pairs (record numbers, smaller first): those of its
        whole buckets, and those of its windows."""
        whole = np.repeat(~self.windowed, self.sizes)
        return (bucket_pairs(np.repeat(np.arange(int((~self.windowed).sum())), self.sizes[~self.windowed]),
                             self.owners[whole]),
                window_pairs(self.owners[~whole], self.sizes[self.windowed]))

    def holds(self, left: np.ndarray, right: np.ndarray, records: int) -> np.ndarray:
        """Whether the key makes each pair ``(left, right)`` (of ``records``
        records): both in one bucket, and within :data:`WINDOW` of each
        other in it where it is windowed. Costs two arrays of ``records``."""
        if not len(self.sizes):
            return np.zeros(len(left), bool)
        bucket = np.full(records, -1, np.int32)
        place = np.zeros(records, np.int32)
        bucket[self.owners] = np.repeat(np.arange(len(self.sizes), dtype=np.int32), self.sizes)
        place[self.owners] = np.arange(len(self.owners), dtype=np.int32)
        same = (bucket[left] == bucket[right]) & (bucket[left] >= 0)
        near = np.abs(place[left].astype(np.int64) - place[right]) <= WINDOW
        return same & (~self.windowed[np.maximum(bucket[left], 0)] | near)

    def sample(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """About ``size`` of the key's pairs drawn at random, each pair about
        as likely as any other."""
        whole = (self.sizes * (self.sizes - 1) // 2).astype(np.float64)
        counts = np.where(self.windowed, _window_pairs(self.sizes), whole)
        if not counts.sum():
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        bucket = rng.choice(len(counts), size=size, p=counts / counts.sum())
        n, start = self.sizes[bucket], self.starts[bucket]
        first = (rng.random(size) * np.where(self.windowed[bucket], n - 1, n)).astype(np.int64)
        reach = np.where(self.windowed[bucket], np.minimum(WINDOW, n - 1 - first), n - 1)
        offset = 1 + (rng.random(size) * np.maximum(reach, 1)).astype(np.int64)
        second = np.where(self.windowed[bucket], first + offset, (first + offset) % n)
        a, b = self.owners[start + first], self.owners[start + second]
        return np.minimum(a, b), np.maximum(a, b)


def runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each run of equal ``values`` (sorted) starts, and its length."""
    if not len(values):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
    return starts, np.diff(np.append(starts, len(values)))


def grouped_pairs(owners: np.ndarray, sizes: np.ndarray, windowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of buckets of ``sizes`` one after another (``owners`` in
    order): every pair of a whole bucket, each owner with the next
    :data:`WINDOW` in a ``windowed`` one; smaller owner first."""
    (left, right), (wl, wr) = Buckets(owners, np.zeros(len(sizes), np.int64), sizes, windowed).pairs()
    return np.concatenate([left, wl]), np.concatenate([right, wr])


def _window_pairs(sizes: np.ndarray) -> np.ndarray:
    """How many pairs a window makes in buckets of ``sizes``."""
    w = np.minimum(WINDOW, np.maximum(sizes - 1, 0))
    return (sizes * w - w * (w + 1) // 2).astype(np.float64)


def window_pairs(owners: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """In buckets of ``sizes`` one after another, each owner with the next
    :data:`WINDOW` of its bucket (smaller first)."""
    lefts, rights = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    bucket = np.repeat(np.arange(len(sizes)), sizes)
    for offset in range(1, WINDOW + 1):
        same = bucket[offset:] == bucket[:-offset] if len(bucket) > offset else np.zeros(0, bool)
        a, b = owners[:-offset][same], owners[offset:][same]
        lefts.append(np.minimum(a, b))
        rights.append(np.maximum(a, b))
    return np.concatenate(lefts), np.concatenate(rights)


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


def choose_keys(codes: Sequence[np.ndarray], profiles: Sequence[FieldProfile], total: int | None = None,
                max_bucket: int | None = None, order: np.ndarray | None = None) -> list[Key]:
    """The keys of the data whose key forms ``codes`` are (one array per
    field, a sample or all records), for ``total`` records (default: as many
    as ``codes`` holds), chosen by their pairs (:func:`choose`; a bucket
    past ``max_bucket`` costs its window's, :class:`Buckets`).

    Costs a grouping of the records per key tried (fields and pairs of
    fields: 15 fields try 120 keys).
    """
    records = len(codes[0]) if codes else 0
    if not records:
        return []
    total = total or records
    order = record_order(codes) if order is None else order
    scale = (total * (total - 1)) / max(records * (records - 1), 1)

    def cost(fields: tuple[int, ...]) -> tuple[Key, float, bool]:
        buckets = Buckets.of(codes, Key(fields), max_bucket, order)
        return Key(fields), buckets.cost * scale, not buckets.windowed.any()

    return choose(codes, profiles, key_budget(total), cost)


def choose(codes: Sequence[np.ndarray], profiles: Sequence[FieldProfile], budget: float,
           cost: Callable[[tuple[int, ...]], tuple[Key, float, bool]],
           adds: Callable[[Key, Sequence[Key]], bool] | None = None) -> list[Key]:
    """The keys of single fields, then of pairs of the fields too common
    alone, cheapest first, at most :data:`MAX_KEYS` in all; ``cost`` gives
    the key of some fields (refined or not), what it costs, and whether it
    makes every pair sharing it (no window): a field whose key does not is
    tried beside others still. A key is taken where it costs at most
    ``budget`` alone; one that has windows, where ``adds`` says it brings
    matches the keys taken before it do not, or without ``adds`` while the
    keys that have windows cost at most ``budget`` together."""
    if not codes or not len(codes[0]):
        return []
    usable = [i for i, p in enumerate(profiles) if p.kind != "category"]
    costs = {(i,): cost((i,)) for i in usable}
    alone = {fields[0] for fields, (_, c, whole) in costs.items() if c <= budget and whole}
    # Pairs of the fields most filled and most distinct (their pairs are the keys that cost least).
    common = sorted(sorted((i for i in range(len(profiles)) if i not in alone),
                           key=lambda i: -profiles[i].filled * profiles[i].distinct)[:PAIRED])
    costs.update({(x, y): cost((x, y)) for n, x in enumerate(common) for y in common[n + 1:]})
    chosen: list[Key] = []
    windows = 0.0
    for fields, (key, c, whole) in sorted(costs.items(), key=lambda kv: (len(kv[0]), kv[1][1])):
        if len(chosen) == MAX_KEYS:
            break
        if c > budget or not fills(codes, fields):
            continue
        # A window costs about WINDOW pairs a record whatever its values: a key that has windows is taken
        # where it adds matches, or, with nothing to tell, while those keys cost the budget together.
        if not whole and adds is not None and not adds(key, chosen):
            continue
        if not whole and adds is None:
            if windows + c > budget:
                continue
            windows += c
        chosen.append(key)
    return chosen


def fills(codes: Sequence[np.ndarray], fields: Sequence[int]) -> int:
    """How many records fill every one of ``fields``."""
    return int((combined(codes, fields) >= 0).sum())


def key_pairs(codes: Sequence[np.ndarray], keys: Sequence[Key], max_bucket: int | None = None,
              order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of records sharing one of ``keys`` (record numbers, smaller
    first, each pair once), and what found it: a bit a key, in order, for
    the pairs of its whole buckets, and bit ``len(keys)`` for those of any
    key's windows (:func:`key_parts` made distinct by :func:`union_pairs`)."""
    return union_pairs(key_parts(codes, keys, max_bucket, order), len(codes[0]) if len(codes) else 0)


def key_parts(codes: Sequence[np.ndarray], keys: Sequence[Key], max_bucket: int | None = None,
              order: np.ndarray | None = None) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
    """Each key's pairs (record numbers, smaller first) with the number of
    the bit that marks them: ``k`` for key ``k``'s whole buckets and
    ``len(keys)`` for its windows. A bucket held by more than
    ``max_bucket`` records is refined where the key refines, and paired by
    :data:`WINDOW` where it is still larger. Memory holds one key's pairs."""
    order = record_order(codes) if order is None else order
    for number, key in enumerate(keys):
        (a, b), (wa, wb) = Buckets.of(codes, key, max_bucket, order).pairs()
        yield a, b, number
        yield wa, wb, len(keys)


# Bits a pair's sources may set in :func:`union_pairs`: a pair and its bits are one int64 there.
PAIR_BITS = 16


def union_pairs(parts: Iterable[tuple[np.ndarray, np.ndarray, int]], count: int,
                compiled: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of ``parts`` (left and right record numbers below
    ``count``, and the number of the bit that marks them) made distinct,
    each with its parts' bits or-ed together, in (left, right) order.
    Each pair and its bits are packed into one number: each part is sorted
    and merged into the distinct pairs so far as it comes (a compiled walk
    of both; ``compiled=False``, its plain twin). Memory holds the distinct
    pairs twice and a part: keys whose pairs mostly coincide (one entity's
    records sharing every key) cost the pairs once.

    Example:
        >>> [x.tolist() for x in union_pairs([(np.array([0, 1]), np.array([2, 2]), 0),
        ...                                    (np.array([0]), np.array([2]), 3)], 3)]
        [[0, 1], [2, 2], [9, 1]]
    """
    if count * count >= 1 << (63 - PAIR_BITS):  # past about 11 million records: merged as pairs
        lefts, rights, bits = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        for a, b, bit in parts:
            lefts.append(a)
            rights.append(b)
            bits.append(np.full(len(a), 1 << bit, np.int64))
        return merge_pairs(np.concatenate(lefts), np.concatenate(rights), np.concatenate(bits))
    merge = chosen(_merge_packed, compiled)
    merged = np.zeros(0, np.int64)
    for a, b, bit in parts:
        part = (a.astype(np.int64) * count + b) << PAIR_BITS | (1 << bit)
        part.sort()
        merged = merge(merged, part, PAIR_BITS)
    pairs = merged >> PAIR_BITS
    return pairs // max(count, 1), pairs % max(count, 1), merged & ((1 << PAIR_BITS) - 1)


@njit(cache=True, nogil=True)
def _merge_packed(first: np.ndarray, second: np.ndarray, shift: int) -> np.ndarray:
    """Two sorted arrays of packed pairs (pair above ``shift`` bits, its bits
    below) as one, sorted, each pair once with its bits or-ed."""
    out = np.empty(len(first) + len(second), np.int64)
    i = j = m = 0
    while i < len(first) or j < len(second):
        if j >= len(second) or (i < len(first) and first[i] <= second[j]):
            x = first[i]
            i += 1
        else:
            x = second[j]
            j += 1
        if m > 0 and (out[m - 1] >> shift) == (x >> shift):
            out[m - 1] |= x
        else:
            out[m] = x
            m += 1
    return out[:m]


def bucket_pairs(keys: np.ndarray, owners: np.ndarray, max_bucket: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of ``owners`` whose ``keys`` are equal (``keys`` sorted,
    ``owners`` in their order), smaller owner first; keys held by more
    than ``max_bucket`` owners are left out. Buckets of one size are paired
    at once; memory holds the pairs.

    Example:
        >>> [x.tolist() for x in bucket_pairs(np.array([1, 1, 2, 5, 5, 5]), np.array([4, 0, 3, 1, 2, 9]))]
        [[0, 1, 1, 2], [4, 2, 9, 9]]
    """
    starts, sizes = runs(keys)
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
