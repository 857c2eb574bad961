"""The default mode for records of fields: every pair, compared field by field.

An index whose records have two or more fields (a table's columns;
``IndexSettings.fields``) is reported here instead of by the text
similarity of ``text_report.py``: its records are read once
(``index.columns``), matched field by field (``fields.matching``: candidates
by band and key, each field compared, the Fellegi-Sunter model fitted
without labels), the records clustered into entities, and the candidates
whose two records are in one entity kept (linking sources: those of
probability 1/2 or more) with their probability and, as their distance,
how many fields they fill both and do not agree on exactly (they have no
text similarity: their fields' levels are the evidence).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..fields.keys import Key
from ..fields.matching import Fitted, Records, differing, fit_records, pair_weights
from ..fields.model import FieldModel, ambiguity, hidden
from ..index.columns import read_records
from ..index.solr import Solr
from ..index.state import IndexSettings
from ..lsh.bands import MAX_BUCKET
from ..evidence import probability
from ..match.summary import Estimates, FieldSummary, ReportSummary
from ..progress import Progress, Tally
from ..records.record import id_key
from ..results.clustering import bits_of, split
from ..results.labels import labeled_pairs
from ..results.pairs import HeldPairs, Pair, ordered


@dataclass
class Linked(HeldPairs):
    """The field records' pairs kept, the fitted model, the keys that made
    candidates, and the report's summary; with ``entities``, every
    record's entity (a record alone where it is in no cluster) and no
    pairs. Iterating it gives the pairs; ``to_pandas()`` and ``to_arrow()``
    give them as a table."""

    pairs: list[Pair]
    model: FieldModel
    keys: list[Key]
    summary: ReportSummary
    entities: list[list[str]] | None = None

    def __repr__(self) -> str:
        """One line: how many pairs, and the model's estimates
        (``Pairs(230 pairs, estimated precision 0.99 recall 0.97)``)."""
        return self._line()


def summary_of(fitted: Fitted, settings: IndexSettings,
               labels: Mapping[frozenset[str], bool] | None = None,
               kept: np.ndarray | None = None) -> ReportSummary:
    """What the report says of the fit: the keys, what they are estimated
    to miss, and the estimated precision and recall of the ``kept`` pairs
    (a mask over the candidates; by default those of probability 1/2 or
    more). Kept pairs inside one entity (:func:`kept_pairs`) count their
    probability as pairs inside a component (:func:`linked_weights`), in
    the pairs kept and in the matches expected in all."""
    p, model = fitted.p, fitted.model
    linked = kept is not None
    if kept is None:
        kept = p >= 0.5
    held = probability(linked_weights(model, bits_of(p[kept]))) if linked else p[kept]
    expected = fitted.expected if not linked else \
        float(held.sum() + p[~kept].sum()) / max(1.0 - fitted.missed, 1e-3)
    labeled = [same for same in (labels or {}).values()]
    return ReportSummary.of_fields(
        FieldSummary(keys=tuple(k.name(settings.fields) for k in fitted.keys), missed=fitted.missed,
                     random_pairs=fitted.random_pairs, separated=model.tells(p), model=model,
                     ambiguity=ambiguity(p), hidden=hidden(p, fitted.expected)),
        candidates=len(fitted.found), true_pairs=expected, pairs=int(kept.sum()),
        precision=float(held.mean()) if len(held) else 1.0,
        recall=min(float(held.sum() / expected), 1.0) if expected else 1.0,
        labeled_same=sum(labeled), labeled_different=len(labeled) - sum(labeled))


# Each pair's weight carries the prior odds that two records drawn at random
# match (strongly against, where records are many). Records that kept pairs
# put in one component are not drawn at random: inside it a pair counts
# this share of those odds, so that clusters merge where their records'
# fields, taken together, say so, not only where each pair would be kept alone.
LINKED_PRIOR = 0.5


def linked_weights(model: FieldModel, weights: np.ndarray) -> np.ndarray:
    """Pairs' match ``weights`` (bits) as pairs inside one component count
    them: only :data:`LINKED_PRIOR` of the prior's weight left in."""
    return weights - model.prior_weight * (1.0 - LINKED_PRIOR)


def cluster_numbers(records: Records, fitted: Fitted, settings: IndexSettings) -> list[list[int]]:
    """The clusters (record numbers) of the kept pairs (probability 1/2 or
    more), split so that members are matches of each other
    (``clustering.split``), every pair of a component weighed by the model
    with the prior counted as inside a component (:func:`linked_weights`),
    records identical in every field kept together (:meth:`Records.copies`)."""
    kept = fitted.p >= 0.5
    model = fitted.model
    weights = linked_weights(model, bits_of(fitted.p[kept]))
    roles = [p.role for p in settings.fields]
    return split(len(records), fitted.found.left[kept], fitted.found.right[kept], weights,
                 lambda left, right: linked_weights(model, pair_weights(records, model, left, right, roles)),
                 together=records.copies())


def clusters_of(records: Records, fitted: Fitted, settings: IndexSettings) -> list[list[str]]:
    """:func:`cluster_numbers` as ids."""
    return [[records.ids[n] for n in group] for group in cluster_numbers(records, fitted, settings)]


def homes(count: int, groups: Sequence[Sequence[int]]) -> np.ndarray:
    """Each of ``count`` records' group number in ``groups``, -1 where it is in none."""
    home = np.full(count, -1, np.int64)
    for number, members in enumerate(groups):
        home[np.asarray(members, np.int64)] = number
    return home


def kept_pairs(fitted: Fitted, home: np.ndarray) -> np.ndarray:
    """Which candidates a report of one source keeps: those whose two
    records are in one entity (``home``: each record's, :func:`homes` of
    :func:`cluster_numbers`), so that its pairs and its entities agree.
    The entities gain matches transitivity implies, which a pair's
    probability alone (1/2 or more) misses, and split apart what it would
    chain."""
    left, right = home[fitted.found.left], home[fitted.found.right]
    return (left == right) & (left >= 0)


def field_clusters(solr: Solr, settings: IndexSettings, *, max_bucket: int | None = MAX_BUCKET,
                   progress: Progress | None = None) -> list[list[str]]:
    """The clusters of an index of field records (:func:`clusters_of`), found
    as :func:`field_pairs` finds its pairs; nothing is kept with the index.
    Costs what :func:`field_pairs` does but the kept pairs' texts."""
    records = read_records(solr, settings.fields, Tally(progress, "reading records", solr.count()))
    return clusters_of(records, fit_records(records, settings.fields, max_bucket=max_bucket), settings)


def field_pairs(solr: Solr, settings: IndexSettings, *, link: bool = False, max_bucket: int | None = MAX_BUCKET,
                labels: Mapping[frozenset[str], bool] | None = None, progress: Progress | None = None,
                warn: Callable[[str], None] = lambda _: None, explain: bool = False,
                entities: bool = False) -> Linked:
    """Every near-duplicate pair of an index of field records, and the
    model fitted to all candidates (see the module's docstring); with
    ``entities``, every record's entity instead of the pairs
    (:func:`cluster_numbers`, a record in none alone), their estimates in
    the summary (:func:`entity_estimates`).

    Returns:
        The kept pairs (:func:`kept_pairs`; linking sources, those of
        probability 1/2 or more; a labeled pair as labeled; smaller id
        first, in id order) with their distance
        (the fields that differ, ``fields.matching.differing``) and match
        probability (and, with ``explain``, why: each field's level and
        weight); the model, the keys and the summary. Costs one request per
        1000 records read; memory holds every record's fields once (their
        distinct values), 8 bytes a band key, and every candidate's levels
        (a byte a field).

    Raises:
        SolrUnavailable, SolrFailure: Solr could not be reached or refused.
    """
    records = read_records(solr, settings.fields, Tally(progress, "reading records", solr.count()))
    fitted = fit_records(records, settings.fields, link=link, max_bucket=max_bucket, progress=progress)
    if labels:
        labeled, same = labeled_pairs(records.ids, fitted.found.left, fitted.found.right, labels, warn)
        fitted.p = fitted.p.copy()
        fitted.p[labeled] = same
    groups = cluster_numbers(records, fitted, settings) if entities or not link else []
    home = homes(len(records), groups)
    held = None
    if not link:
        held = kept_pairs(fitted, home)
        if labels:
            held[labeled] = same
    summary = summary_of(fitted, settings, labels, held)
    if entities:  # no pair is held: the entities of a million mentions keep tens of millions
        summary = replace(summary, entities=entity_estimates(records, fitted, groups, settings,
                                                             expected=summary.estimated.true_pairs))
        alone = home < 0
        entities = [[records.ids[n] for n in group] for group in groups] + \
            [[records.ids[n]] for n in np.flatnonzero(alone).tolist()]
        return Linked([], fitted.model, fitted.keys, summary, entities)
    kept = np.flatnonzero(fitted.p >= 0.5 if held is None else held)
    differ = differing(fitted.field_levels[kept])
    pairs = [ordered(records.ids[a], records.ids[b], int(d), None, float(p),
                     fitted.explanation(at) if explain else None)
             for at, a, b, d, p in zip(kept.tolist(), fitted.found.left[kept].tolist(),
                                       fitted.found.right[kept].tolist(), differ.tolist(), fitted.p[kept].tolist())]
    return Linked(sorted(pairs, key=lambda pair: (id_key(pair.a), id_key(pair.b))), fitted.model, fitted.keys,
                  summary)


# Pairs of the entities' records scored to estimate how many are matches.
ENTITY_SAMPLE = 200_000


def entity_estimates(records: Records, fitted: Fitted, groups: Sequence[Sequence[int]], settings: IndexSettings,
                     seed: int = 0, expected: float | None = None) -> Estimates:
    """The estimates of the entities ``groups`` (record numbers) taken as
    pairs (every two records of one entity): how many such pairs, the share of them the
    model takes for matches (their mean probability as pairs inside a
    component, :func:`linked_weights`; every pair scored up to
    :data:`ENTITY_SAMPLE`, else that many drawn), and the share of all
    expected matches they hold: of the model's expected matches
    (``expected``, the pairs' summary's; by default ``fitted.expected``), or where
    the entities hold more, of theirs and those of the candidates they
    split apart (``true_pairs`` then exceeds the model's count, which is
    short: the recall's estimate is then an upper bound)."""
    sizes = np.array([len(g) for g in groups], np.int64)
    within = sizes * (sizes - 1) // 2
    total = float(within.sum())
    if not total:
        return Estimates(true_pairs=fitted.expected if expected is None else expected, pairs=0.0, precision=1.0,
                         recall=0.0)
    numbers = [np.asarray(g, np.int64) for g in groups]
    if total <= ENTITY_SAMPLE:
        firsts, seconds = zip(*((g[a], g[b]) for g in numbers for a, b in zip(*np.triu_indices(len(g), k=1))))
        left, right = np.array(firsts, np.int64), np.array(seconds, np.int64)
    else:
        rng = np.random.default_rng(seed)
        drawn = rng.choice(len(groups), ENTITY_SAMPLE, p=within / total)
        n = sizes[drawn]
        first = (rng.random(ENTITY_SAMPLE) * n).astype(np.int64)
        second = (first + 1 + (rng.random(ENTITY_SAMPLE) * (n - 1)).astype(np.int64)) % n
        left = np.array([numbers[g][a] for g, a in zip(drawn.tolist(), first.tolist())], np.int64)
        right = np.array([numbers[g][b] for g, b in zip(drawn.tolist(), second.tolist())], np.int64)
    roles = [p.role for p in settings.fields]
    weights = pair_weights(records, fitted.model, np.minimum(left, right), np.maximum(left, right), roles)
    precision = float(probability(linked_weights(fitted.model, weights)).mean())
    inside = precision * total
    home = homes(len(records), numbers)
    found = fitted.found
    apart = (home[found.left] != home[found.right]) | (home[found.left] < 0)
    expected = max(fitted.expected if expected is None else expected, inside + float(fitted.p[apart].sum()))
    return Estimates(true_pairs=expected, pairs=total, precision=precision,
                     recall=min(inside / expected, 1.0) if expected else 1.0)


__all__ = ["Linked", "cluster_numbers", "clusters_of", "entity_estimates", "field_clusters", "field_pairs", "homes",
           "kept_pairs", "summary_of"]
