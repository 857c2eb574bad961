"""The default mode for records of fields: every pair, compared field by field.

An index whose records have two or more fields (a table's columns;
``IndexSettings.fields``) is reported here instead of by the text
similarity of ``bulk.py``:

1. every record's fields, band keys and id are read once (in id order);
2. candidates are the pairs sharing an LSH band key of the joined text
   (as for texts) or one of the keys chosen from the fields
   (``keys.py``: each field's key form, or two fields' together, as long
   as a key costs at most its budget of chance pairs);
3. each field of each candidate is compared (``comparisons.py``), and so is
   each field of a million random pairs, whose levels measure chance
   agreement (u);
4. the Fellegi-Sunter model (``fieldmodel.py``) is fitted to the candidates
   by EM with u held fixed, and every candidate gets its match probability,
   agreement on rare values weighing more (term frequencies from the whole
   index); those of probability 1/2 or more are kept;
5. the kept pairs are written with their probability and, as their
   distance, how many fields they fill both and do not agree on exactly
   (they have no text similarity: their fields' levels are the evidence).

The estimates (precision: the kept pairs' mean probability; recall: their
expected matches over all expected matches, the matches no key or band
found included) and the keys used are the summary's
(:class:`~neardup_solr.match.summary.FieldSummary`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..fields.comparisons import EXACT, MISSING, Column, compare, joint, joint_kind
from ..match.explanations import Explanation, Step
from ..match.fieldmodel import FieldModel, Patterns, Round, ambiguity, chance, fit
from ..fields.values import FieldProfile
from ..fields.keys import (Key, bucket_pairs, choose_keys, key_codes, key_form, key_pairs, key_words, merge_pairs,
                          missed_share)
from ..results.clustering import bits, split
from ..results.pairs import HeldPairs, Pair, ordered
from ..progress import Progress, Tally
from ..records.record import id_key, source_of
from ..parallel import bounded_map, cores
from ..index.schema import BAND_KEYS, ID, RANK, RECORD_FIELDS
from ..index.solr import Solr
from ..index.state import IndexSettings
from ..match.summary import FieldSummary, ReportSummary

# Random pairs whose levels measure chance agreement: a million see a level
# of one chance in a hundred thousand about ten times.
RANDOM_PAIRS = 1_000_000
RANDOM_SEED = 0
# The share of true pairs the keys and bands are taken to miss at most, in
# the prior: estimated from the model it feeds, a larger one could grow on itself.
MAX_MISSED = 0.5
# A pair found by the bands, not a key, is this bit; key k is bit k + 1.
BAND_BIT = 1
# Bucket of a band key or key larger than this are left out (``collisions.MAX_BUCKET``).
MAX_BUCKET = 100


@dataclass
class Records:
    """Every record of an index of fields, as read once: ids in id order,
    each field as a :class:`~neardup_solr.fields.comparisons.Column`, each
    record's band keys as numbers."""

    ids: list[str]
    columns: list[Column]
    bands: list[np.ndarray]

    def __len__(self) -> int:
        return len(self.ids)


def read_records(solr: Solr, profiles: Sequence[FieldProfile], progress: Callable[[int], None] = lambda n: None
                 ) -> Records:
    """Every record's id, fields and band keys, in id order.

    Read as ``cores()`` streams at once, each a cursor over a slice of the
    records' ``rank`` (a hash of the key, so the slices hold alike many):
    Solr reads its stored fields on every core while the streams' pages
    are taken apart here. Costs one request per ``READ_BATCH`` records;
    memory holds each field's distinct raw values while reading and its
    distinct normal forms after, and 8 bytes a band key.
    """
    names = [p.name for p in profiles]
    streams = max(cores(), 1)
    told = threading.Lock()
    edges = [-(1 << 63) + (1 << 64) * n // streams for n in range(streams)] + [None]

    def stream(at: int) -> list[tuple[str, list, np.ndarray]]:
        low, high = edges[at], edges[at + 1]
        query = f"{RANK}:[{low} TO {'*' if high is None else high}" + ("]" if high is None else "}")
        read = []
        for page in _pages(solr.iter_docs([ID, RECORD_FIELDS, BAND_KEYS], q=query, batch=READ_BATCH)):
            keys = [doc.get(BAND_KEYS) or () for doc in page]
            flat = np.frombuffer(bytes.fromhex("".join(k for record in keys for k in record)), ">u8")
            bounds = np.cumsum([0, *map(len, keys)])
            for doc, start, end in zip(page, bounds[:-1].tolist(), bounds[1:].tolist()):
                values = json.loads(doc.get(RECORD_FIELDS) or "{}")
                read.append((doc[ID], [values.get(name) or None for name in names],
                             flat[start:end].astype(np.uint64)))
            with told:
                progress(len(page))
        return read

    found = [record for part in bounded_map(stream, range(streams), streams) for record in part]
    found.sort(key=lambda record: record[0])
    ids = [record[0] for record in found]
    columns = [Column.of(p.kind, [record[1][at] for record in found]) for at, p in enumerate(profiles)]
    return Records(ids, columns, [record[2] for record in found])


def _pages(docs: Iterable[dict]) -> Iterator[list[dict]]:
    """Documents in lists of ``READ_BATCH``, as a cursor's pages bring them."""
    page: list[dict] = []
    for doc in docs:
        page.append(doc)
        if len(page) == READ_BATCH:
            yield page
            page = []
    if page:
        yield page


READ_BATCH = 1000


def band_pairs(bands: Sequence[np.ndarray], max_bucket: int | None = MAX_BUCKET) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of records sharing a band key (record numbers, smaller
    first, each once); keys held by more than ``max_bucket`` records are
    left out."""
    counts = np.array([len(b) for b in bands], np.int64)
    if not counts.sum():
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    keys = np.concatenate(bands).astype(np.uint64)
    owner = np.repeat(np.arange(len(bands), dtype=np.int64), counts)
    order = np.argsort(keys, kind="stable")
    keys, owner = keys[order], owner[order]
    left, right = bucket_pairs(keys, owner, max_bucket)
    if not len(left):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    left, right, _ = merge_pairs(left, right, np.zeros(len(left), np.int64))
    distinct = left != right
    return left[distinct], right[distinct]


@dataclass
class Found:
    """Candidate pairs (record numbers, smaller first) and which bands or keys found each (bits)."""

    left: np.ndarray
    right: np.ndarray
    bits: np.ndarray

    def __len__(self) -> int:
        return len(self.left)

    def where(self, keep: np.ndarray) -> Found:
        return Found(self.left[keep], self.right[keep], self.bits[keep])


def candidates(records: Records, keys: Sequence[Key], codes: Sequence[np.ndarray],
               max_bucket: int | None = MAX_BUCKET) -> Found:
    """The pairs sharing a band key or one of ``keys``, with the bits of what found them."""
    band_left, band_right = band_pairs(records.bands, max_bucket)
    key_left, key_right, key_bits = key_pairs(codes, keys, max_bucket)
    left, right, bits = merge_pairs(np.concatenate([band_left, key_left]), np.concatenate([band_right, key_right]),
                                    np.concatenate([np.full(len(band_left), BAND_BIT, np.int64), key_bits << 1]))
    return Found(left, right, bits)


def across(records: Records, found: Found) -> Found:
    """The candidates whose two records are of different sources."""
    sources: dict[str, int] = {}
    numbered = np.fromiter((sources.setdefault(source_of(i), len(sources)) for i in records.ids), np.int32,
                           len(records))
    return found.where(numbered[found.left] != numbered[found.right])


def levels_of(columns: Sequence[Column], left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Pairs x fields levels of the pairs ``(left, right)``."""
    if not len(left):
        return np.zeros((0, len(columns)), np.int8)
    return np.stack([compare(column, left, right) for column in columns], axis=1)


def shares_of(columns: Sequence[Column], left: np.ndarray) -> np.ndarray:
    """Pairs x fields: the share of the records filling each field that hold
    ``left``'s value of it (what an exact agreement is weighed by)."""
    if not len(left):
        return np.zeros((0, len(columns)))
    out = np.empty((len(left), len(columns)))
    for f, column in enumerate(columns):
        frequency = column.frequencies()
        codes = column.codes[left]
        out[:, f] = np.where(codes >= 0, frequency[np.maximum(codes, 0)], 1.0)
    return out


def random_pairs(records: Records, count: int = RANDOM_PAIRS, link: bool = False,
                 seed: int = RANDOM_SEED) -> tuple[np.ndarray, np.ndarray]:
    """``count`` pairs of distinct records drawn at random (across sources
    with ``link``), or every pair when there are fewer; the same records
    give the same pairs, whatever order they were indexed in."""
    n = len(records)
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if n * (n - 1) // 2 <= count and not link:
        left, right = np.triu_indices(n, k=1)
        return left.astype(np.int64), right.astype(np.int64)
    rng = np.random.default_rng(seed)
    left, right = rng.integers(0, n, count), rng.integers(0, n, count)
    keep = left != right
    if link:
        found = across(records, Found(np.minimum(left, right), np.maximum(left, right), np.zeros(count, np.int64)))
        return found.left, found.right
    return np.minimum(left, right)[keep], np.maximum(left, right)[keep]


def all_pairs(records: Records, link: bool) -> float:
    """How many pairs there are: every pair of records, or with ``link`` every pair across sources."""
    if not link:
        return len(records) * (len(records) - 1) / 2
    counts: dict[str, int] = {}
    for i in records.ids:
        source = source_of(i)
        counts[source] = counts.get(source, 0) + 1
    total = sum(counts.values())
    return (total * total - sum(c * c for c in counts.values())) / 2


def usable_bits(found: Found, keys: Sequence[Key], units: Sequence[Sequence[int]]) -> np.ndarray:
    """Bit u of a pair: whether a key reading no field of unit u (a field,
    or fields compared together) found it, so its agreement there is not
    forced. A band reads every field (the joined text): the non-matches it
    brings look alike in all of them."""
    usable = np.zeros(len(found), np.int64)
    for at, unit in enumerate(units):
        forcing = BAND_BIT | sum(1 << (k + 1) for k, key in enumerate(keys) if set(unit) & set(key.fields))
        usable |= ((found.bits & ~forcing) != 0).astype(np.int64) << at
    return usable


def key_rounds(found: Found, keys: Sequence[Key], units: Sequence[Sequence[int]], levels: np.ndarray) -> list[Round]:
    """Each key's candidates as a training round of the model
    (:class:`~neardup_solr.match.fieldmodel.Round`), the units reading its
    fields left out. Costs a sort of each key's candidates' levels."""
    rounds = []
    for k, key in enumerate(keys):
        mine = ((found.bits >> (k + 1)) & 1) == 1
        if mine.any():
            left_out = frozenset(at for at, unit in enumerate(units) if set(unit) & set(key.fields))
            rounds.append(Round(Patterns.of(levels[mine]), left_out))
    return rounds


# Fields whose exact agreements among random pairs come together this many
# times more often than if they were independent are dependent (a city and
# its state, a postcode and its city), and are compared together.
DEPENDENT_LIFT = 3.0
# A field is distinctive when random pairs share its values less often than
# this many times the share of random pairs that are matches (about one in
# as many pairs as there are records, a duplicate a record): a tenth or more
# of its agreements among them may then be matches'.
DISTINCTIVE = 10.0
# Joint agreements seen among the random pairs before a lift is believed.
DEPENDENT_SEEN = 5
# At most this many fields are compared together (their levels multiply).
UNIT_FIELDS = 3


def units_of(levels: np.ndarray, records: int) -> list[tuple[int, ...]]:
    """Which fields are compared together: those whose exact agreements
    among random pairs' ``levels`` (pairs x fields) depend on each other
    (:data:`DEPENDENT_LIFT`), joined strongest first, at most
    :data:`UNIT_FIELDS` in a unit; every other field alone. In field order.

    The model takes its units to be independent of each other within each
    class; a city and its state are not (one implies the other), and
    counted apart they would count one agreement twice. A distinctive field
    (values random pairs of ``records`` rarely share, :data:`DISTINCTIVE`)
    stays alone, and pairs whose agreements on the other fields are together
    as rare as a distinctive value are left out of the count: among random
    pairs those are likely matches, which agree together for another reason
    than dependence."""
    exact = levels == EXACT
    filled = levels != MISSING
    filled_share = np.maximum(filled.mean(axis=0), 1e-12)
    chance_exact = np.maximum(exact.mean(axis=0) / filled_share, 1e-12)
    rare = min(DISTINCTIVE / max(records, 1), 0.5)
    distinctive = chance_exact < rare
    # How rare each pair's agreements are, as -log of their chance taken independently.
    rarity = -np.log(chance_exact)
    agreed = exact @ rarity
    found = []
    for f in range(levels.shape[1]):
        for g in range(f + 1, levels.shape[1]):
            # Among random pairs a rare value shared is mostly a match's, which agree on other fields too:
            # how a distinctive field depends cannot be told from them (and matters little, few non-matches share it).
            if distinctive[f] or distinctive[g]:
                continue
            # Among a few thousand records every pair is "random", and some are matches.
            others = agreed - exact[:, f] * rarity[f] - exact[:, g] * rarity[g]
            apart = others < -np.log(rare)
            both = filled[:, f] & filled[:, g] & apart
            if not both.any():
                continue
            a, b = exact[both, f].mean(), exact[both, g].mean()
            joint_share = (exact[both, f] & exact[both, g]).mean()
            if 0 < a < 0.5 and 0 < b < 0.5 and joint_share * both.sum() >= DEPENDENT_SEEN:
                lift = joint_share / (a * b)
                if lift >= DEPENDENT_LIFT:
                    found.append((lift, f, g))
    unit = {f: (f,) for f in range(levels.shape[1])}
    for _, f, g in sorted(found, reverse=True):
        merged = tuple(sorted(unit[f] + unit[g]))
        if unit[f] is not unit[g] and len(merged) <= UNIT_FIELDS:
            for member in merged:
                unit[member] = merged
    return sorted(set(unit.values()))


def key_agreement(columns: Sequence[Column], profiles: Sequence[FieldProfile], found: Found, usable: np.ndarray,
                  posterior: np.ndarray, model: FieldModel) -> dict[int, float]:
    """Each field's chance that a match agrees on its key form, where both
    fill it: the posterior-weighted share among the candidates not forced to
    agree on it (nor on a field compared with it); where there are none, the
    model's chance of its unit's exact level (a key form is shared at least
    by equal values)."""
    agree = {}
    unit_of = {f: at for at, unit in enumerate(model.units) for f in unit}
    for f, (column, profile) in enumerate(zip(columns, profiles)):
        forms = np.array([key_form(column.kind, v, key_words(profile)) for v in column.values] + [""], object)
        a, b = forms[column.codes[found.left]], forms[column.codes[found.right]]
        filled = (column.codes[found.left] >= 0) & (column.codes[found.right] >= 0)
        mask = filled & (((usable >> unit_of[f]) & 1) == 1)
        weight = posterior[mask]
        agree[f] = float((weight * (a[mask] == b[mask])).sum() / weight.sum()) if weight.sum() > 1.0 \
            else model.agreement(unit_of[f])
    return agree


def unit_shares(shares: np.ndarray, units: Sequence[Sequence[int]]) -> np.ndarray:
    """Pairs x units: a unit's share of the index holding the values its
    fields agree on, taken as the rarest of them (a city's share, which its
    state only widens)."""
    return np.stack([shares[:, list(unit)].min(axis=1) for unit in units], axis=1) if len(shares) else \
        np.zeros((0, len(units)))


@dataclass
class Linked(HeldPairs):
    """The field records' pairs kept, the fitted model, the keys that made
    candidates, and the report's summary. Iterating it gives the pairs;
    ``to_pandas()`` and ``to_arrow()`` give them as a table."""

    pairs: list[Pair]
    model: FieldModel
    keys: list[Key]
    summary: ReportSummary


@dataclass
class Fitted:
    """What :func:`fit_records` found: the candidates, their levels (pairs x
    fields, and pairs x the model's units: fields compared together joined),
    the share of the index holding each one's values (what an exact
    agreement is weighed by), their probabilities, the model, the keys and
    the report's summary."""

    found: Found
    field_levels: np.ndarray
    levels: np.ndarray
    shares: np.ndarray
    p: np.ndarray
    model: FieldModel
    keys: list[Key]
    summary: ReportSummary

    def explanation(self, at: int) -> str:
        """Candidate ``at``'s explanation in brief (``explanations.Explanation.brief``)."""
        rows = self.model.explain(self.levels[at].tolist(), self.shares[at].tolist())
        return Explanation("", "", tuple(Step(name, level, weight) for name, level, weight in rows)).brief()


def fit_records(records: Records, profiles: Sequence[FieldProfile], *, link: bool = False,
                max_bucket: int | None = MAX_BUCKET, labels: Mapping[frozenset[str], bool] | None = None,
                warn: Callable[[str], None] = lambda _: None, progress: Progress | None = None) -> Fitted:
    """Candidates, their levels and probabilities, the model, the keys and
    the summary of ``records`` (see the module's docstring)."""
    kinds = [p.kind for p in profiles]
    codes = key_codes(records.columns, profiles)
    keys = choose_keys(codes, profiles)
    found = candidates(records, keys, codes, max_bucket)
    if link:
        found = across(records, found)
    verifying = Tally(progress, "verifying candidates", len(found))
    verifying(0)
    field_levels = levels_of(records.columns, found.left, found.right)
    verifying(len(found))
    random_left, random_right = random_pairs(records, link=link)
    random_levels = levels_of(records.columns, random_left, random_right)
    units = units_of(random_levels, len(records))
    unit_kinds = [joint_kind([kinds[f] for f in unit]) for unit in units]
    names = [" + ".join(profiles[f].name for f in unit) for unit in units]
    levels = joint(field_levels, units, kinds)
    u = chance(joint(random_levels, units, kinds), unit_kinds)
    usable = usable_bits(found, keys, units)
    total = all_pairs(records, link)
    min_share = 2.0 / max(len(records), 2)
    filled = tuple(int((c.codes >= 0).sum()) for c in records.columns)
    patterns = Patterns.of(levels, usable)
    rounds = key_rounds(found, keys, units, levels)

    def fitted(found_share: float = 1.0) -> FieldModel:
        return replace(fit(patterns, u, names, unit_kinds, total_pairs=total, random_pairs=len(random_left),
                           min_share=min_share, found_share=found_share, rounds=rounds),
                       filled=filled, units=tuple(units))

    model = fitted()
    shares = unit_shares(shares_of(records.columns, found.left), units)
    # What the keys and bands missed is estimated from the matches found, then counted into the prior.
    posterior = model.probabilities(levels)
    agree = key_agreement(records.columns, profiles, found, usable, posterior, model)
    by_keys = missed_share(agree, keys, [n / max(len(records), 1) for n in filled])
    by_bands = float(posterior[(found.bits & BAND_BIT) == 0].sum() / posterior.sum()) if posterior.sum() else 1.0
    # At most half: a guess past that would let the prior feed on itself.
    missed = min(by_keys * by_bands, MAX_MISSED)
    if missed > 1e-3:
        model = fitted(1.0 - missed)
    p = model.probabilities(levels, shares)
    if labels:
        p = _labeled(records, found, p, labels, warn)
    kept = p >= 0.5
    expected = float(p.sum()) / max(1.0 - missed, 1e-3)
    labeled = [same for pair, same in (labels or {}).items()]
    summary = ReportSummary.of_fields(
        FieldSummary(keys=tuple(k.name(profiles) for k in keys), missed=missed, random_pairs=len(random_left),
                     separated=model.tells(p), model=model, ambiguity=ambiguity(p)),
        candidates=len(found), true_pairs=expected, pairs=int(kept.sum()),
        precision=float(p[kept].mean()) if kept.any() else 1.0,
        recall=float(p[kept].sum() / expected) if expected else 1.0,
        labeled_same=sum(labeled), labeled_different=len(labeled) - sum(labeled))
    return Fitted(found, field_levels, levels, shares, p, model, keys, summary)


def _labeled(records: Records, found: Found, p: np.ndarray, labels: Mapping[frozenset[str], bool],
             warn: Callable[[str], None]) -> np.ndarray:
    """``p`` with the labeled candidates at 1 (the same) or 0 (different)."""
    position = {record_id: n for n, record_id in enumerate(records.ids)}
    width = max(len(records), 1)
    codes = found.left * width + found.right
    at = {}
    for pair, same in labels.items():
        ends = sorted(position[i] for i in pair if i in position)
        if len(ends) == 2:
            at[ends[0] * width + ends[1]] = same
    hits = np.flatnonzero(np.isin(codes, np.fromiter(at, np.int64, len(at))))
    if len(hits) < len(labels):
        warn(f"{len(labels) - len(hits)} of {len(labels)} labeled pairs are not candidate pairs of this index "
             "and do not count")
    p = p.copy()
    for h in hits.tolist():
        p[h] = 1.0 if at[int(codes[h])] else 0.0
    return p


def clusters_of(records: Records, found: Found, p: np.ndarray, model: FieldModel) -> list[list[str]]:
    """The clusters of the kept pairs (probability 1/2 or more), split so
    that members are matches of each other (``clustering.split``), every
    pair of a component weighed by the model."""
    kept = p >= 0.5

    def weigh(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        field_levels = levels_of(records.columns, left, right)
        return model.weights(joint(field_levels, model.units, [c.kind for c in records.columns]),
                             unit_shares(shares_of(records.columns, left), model.units))

    weights = np.array([bits(x) for x in p[kept].tolist()])
    groups = split(len(records), found.left[kept], found.right[kept], weights, weigh)
    return [[records.ids[n] for n in group] for group in groups]


def field_clusters(solr: Solr, settings: IndexSettings, *, max_bucket: int | None = MAX_BUCKET,
                   progress: Progress | None = None) -> list[list[str]]:
    """The clusters of an index of field records (:func:`clusters_of`), found
    as :func:`field_pairs` finds its pairs; nothing is kept with the index.
    Costs what :func:`field_pairs` does but the kept pairs' texts."""
    records = read_records(solr, settings.fields, Tally(progress, "reading records", solr.count()))
    fitted = fit_records(records, settings.fields, max_bucket=max_bucket)
    return clusters_of(records, fitted.found, fitted.p, fitted.model)


def field_pairs(solr: Solr, settings: IndexSettings, *, link: bool = False, max_bucket: int | None = MAX_BUCKET,
                labels: Mapping[frozenset[str], bool] | None = None, progress: Progress | None = None,
                warn: Callable[[str], None] = lambda _: None, explain: bool = False) -> Linked:
    """Every near-duplicate pair of an index of field records, and the
    model fitted to all candidates (see the module's docstring).

    Returns:
        The kept pairs (smaller id first, in id order) with their distance
        (the fields that differ, :func:`differing`) and match probability
        (and, with ``explain``, why: each field's level and weight); the
        model, the keys and the summary. Costs one request per 1000 records
        read; memory holds every record's fields once (their distinct
        values), 8 bytes a band key, and every candidate's levels (a byte a
        field).

    Raises:
        SolrUnavailable, SolrFailure: Solr could not be reached or refused.
    """
    reading = Tally(progress, "reading records", solr.count())
    records = read_records(solr, settings.fields, reading)
    fitted = fit_records(records, settings.fields, link=link, max_bucket=max_bucket, labels=labels, warn=warn,
                         progress=progress)
    kept = np.flatnonzero(fitted.p >= 0.5)
    differ = differing(fitted.field_levels[kept])
    pairs = [ordered(records.ids[a], records.ids[b], int(d), None, float(p),
                     fitted.explanation(at) if explain else None)
             for at, a, b, d, p in zip(kept.tolist(), fitted.found.left[kept].tolist(),
                                       fitted.found.right[kept].tolist(), differ.tolist(), fitted.p[kept].tolist())]
    return Linked(sorted(pairs, key=lambda pair: (id_key(pair.a), id_key(pair.b))), fitted.model, fitted.keys,
                  fitted.summary)


def differing(levels: np.ndarray) -> np.ndarray:
    """How many fields of each pair (levels: pairs x fields) both records
    fill and do not agree on exactly: a pair of field records' distance."""
    return ((levels != MISSING) & (levels != EXACT)).sum(axis=1) if len(levels) else np.zeros(0, np.int64)


__all__ = ["Fitted", "Linked", "Records", "clusters_of", "field_clusters", "field_pairs", "fit_records",
           "read_records"]
