"""The default mode in bulk: every candidate pair of the index, verified,
and the match model fitted to all of them.

Candidates come from the band keys' buckets (:mod:`neardup_solr.match.buckets`),
every pair inside a bucket once, and from records sharing an MD5 (exact
copies, kept whatever the bucket limit). Each record is weighed when it
first arrives (its text then dropped) and each candidate scored by the
compiled kernel (:mod:`neardup_solr.match.weighing`); the match model fitted
to the scores (:mod:`neardup_solr.match.text_model`) keeps the pairs with a match
probability of at least 1/2, and only the kept pairs are made, a block of
their texts at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ..lsh.bands import MAX_BUCKET, collision_probability
from ..match.buckets import Candidates, distinct
from ..text.analysis import lsh_shingles, repaired_tokens
from ..match.mixture import fit
from ..match.text_model import MatchModel, histogram, with_labels
from ..match.text_explanation import of_text
from ..results.labels import labeled_pairs
from ..results.pairs import HeldPairs, Pair
from ..records.record import source_of
from ..parallel import forked_map
from ..progress import Progress, Tally
from ..text.repair import repair
from ..text.shingles import jaccard
from ..index.solr import Solr
from ..index.state import IndexSettings
from ..match.summary import ReportSummary
from ..match.verify import word_distance
from ..match.weighing import TWICE, pieces, scored, weighed_candidates, workers_for


@dataclass
class Verified(HeldPairs):
    """The default mode's result: the pairs kept, and the match model fitted
    to all candidates (whose cut kept them, unless a fixed cut was given).
    Iterating it gives the pairs; ``to_pandas()`` and ``to_arrow()`` give
    them as a table (:class:`~neardup_solr.results.pairs.PairTables`)."""

    pairs: list[Pair]
    model: MatchModel
    cut: float
    # The estimated share of the true pairs that share a band key at all
    # (:func:`proposed_share`); the model sees only those that do.
    proposed: float = 1.0
    # Whether ``cut`` was given (a fixed cut) rather than the model's.
    forced: bool = False

    @property
    def summary(self) -> ReportSummary:
        """What the report says of its model and cut (``PAIRS.model.json``)."""
        return ReportSummary.of(self.model, self.cut, forced=self.forced, proposed=self.proposed)


    def __repr__(self) -> str:
        """One line: how many pairs, the cut, and the model's estimates
        (``Pairs(114 pairs, cut 0.66, estimated precision 0.99 recall 0.96)``)."""
        return self._line(f"cut {self.cut:.2f}{' (given)' if self.forced else ''}")


def lsh_pairs(solr: Solr, *, link: bool = False, cut: float | None = None,
              max_bucket: int | None = MAX_BUCKET, labels: Mapping[frozenset[str], bool] | None = None,
              progress: Progress | None = None, warn: Callable[[str], None] = lambda _: None,
              explain: bool = False) -> Verified:
    """Every pair sharing a band key (or its MD5), scored; a match model fitted
    to all their similarities and number agreements; the pairs it calls
    matches (or those at or above a fixed ``cut``).

    The buckets are read and their new records weighed as they arrive (on
    every core when the index is large); then every candidate is scored by
    the compiled kernel (``kernel.py``), keeping only a float and a level
    per pair; the model is fitted to their histogram; last, the kept pairs
    are made, with their word edit distance and probability.

    Args:
        solr: the index, built by :func:`neardup_solr.index.writer.index_records`
            with the LSH fields.
        link: only pairs across sources (:func:`across_sources`): the
            candidates within one source are dropped as soon as they are
            found, so the model is fitted to the cross-source ones alone.
        cut: a fixed smallest similarity instead of the model's cut.
        max_bucket: band keys held by more records than this are skipped
            (and ``warn`` told how many); ``None`` keeps every key.
        labels: pairs a person labeled (``True``: the same), which sharpen
            the fitted model (:func:`neardup_solr.match.text_model.with_labels`) and are
            kept (probability 1) or left out as labeled; only those that are
            candidates count (``warn`` is told of the others).
        progress: told of the steps "colliding bands" (one unit a band) and
            "verifying candidates" (one unit a candidate pair).
        warn: told, in a sentence, of keys skipped.
        explain: give each kept pair its explanation in brief (its
            similarity's weight and its numbers', ``match.text_explanation``).

    Returns:
        The kept pairs (smaller id first, in id order), the model and the
        cut used. Costs a request per piece of a band and per page of
        records first met (``match.buckets``), one for the document
        frequencies, and one per 1000 records of kept pairs (their texts);
        memory holds every candidate as 8 bytes plus a float and a byte (and
        8 bytes for each time a pair was met since the last fold while the
        buckets are read, ``match.buckets.Pairing``), every record in a
        bucket as its id, and, until the candidates are scored, 12 bytes a
        distinct word: texts are weighed as the buckets arrive and not
        kept. Then the kept pairs, as objects.

    Raises:
        SolrUnavailable, SolrFailure: Solr could not be reached or refused.
    """
    settings = IndexSettings.load(solr)
    found, weighed = weighed_candidates(solr, settings, max_bucket, progress, warn)
    if link:
        found = across_sources(found, warn)
    # Progress goes on with the candidate pairs.
    tick = Tally(progress, "verifying candidates", len(found))
    tick(0)
    scores, levels = scored(found, weighed, tick)
    # The records' weighted words, most of a large report's memory, are let go before the kept pairs are made.
    words = weighed.words
    del weighed
    model = fit(histogram(scores, levels))
    if labels:
        labeled, same = labeled_pairs(found.ids, found.left, found.right, labels, warn)
        model = with_labels(model, histogram(scores[labeled[same]], levels[labeled[same]]),
                            histogram(scores[labeled[~same]], levels[labeled[~same]]))
    keep = model.keeps(scores, levels, cut)
    if labels:
        # A labeled pair is what its label says, whatever its cell's probability.
        keep[labeled] = same
    chosen_cut = model.cut if cut is None else cut
    kept = np.flatnonzero(keep)
    probabilities = model.probabilities(scores[kept], levels[kept])
    if labels:
        for at in np.flatnonzero(np.isin(kept, labeled)).tolist():
            probabilities[at] = 1.0

    # Only the kept pairs' texts are read again (for their word edit
    # distance), a block of kept pairs at a time.
    texts: dict[str, str] = {}

    def made(span: tuple[int, int]) -> tuple[list[Pair], list[float]]:
        pairs, caught = [], []
        # A record's words and shingles, made once for its pairs that come
        # close together (the pairs are in order of their records' ids).
        prepared: dict[str, tuple[list[str], set[str]]] = {}

        def words_and_shingles(record_id: str) -> tuple[list[str], set[str]]:
            if (made_before := prepared.get(record_id)) is None:
                if len(prepared) >= PREPARED_RECORDS:
                    prepared.clear()
                repaired = repair(texts[record_id])
                made_before = prepared[record_id] = (repaired_tokens(repaired),
                                                     set(lsh_shingles(repaired, settings.lsh_shingles)))
            return made_before

        for i, p in zip(kept[span[0]:span[1]].tolist(), probabilities[span[0]:span[1]]):
            a, b = found.ids[found.left[i]], found.ids[found.right[i]]
            if a not in texts or b not in texts:
                continue  # deleted while the report ran
            (words_a, shingles_a), (words_b, shingles_b) = words_and_shingles(a), words_and_shingles(b)
            why = of_text(a, b, model, float(scores[i]), int(levels[i])).brief() if explain else None
            pairs.append(Pair(a, b, word_distance(words_a, words_b), float(scores[i]), p, why))
            caught.append(collision_probability(jaccard(shingles_a, shingles_b), settings.bands, settings.band_rows))
        return pairs, caught

    pairs, caught = [], []
    for first in range(0, len(kept), KEPT_BLOCK):
        last = min(first + KEPT_BLOCK, len(kept))
        records = distinct(np.concatenate([found.left[kept[first:last]], found.right[kept[first:last]]]))
        texts = solr.texts([found.ids[i] for i in records.tolist()])
        spans = [(first + a, first + b) for a, b in pieces(last - first, words, TWICE)]
        for part, chances in forked_map(made, spans, workers_for(last - first, words, TWICE)):
            pairs.extend(part)
            caught.extend(chances)
    return Verified(pairs, model, chosen_cut, proposed_share([p.probability for p in pairs], caught), cut is not None)


def across_sources(found: Candidates, warn: Callable[[str], None] = lambda _: None) -> Candidates:
    """The candidates whose two records are of different sources
    (:func:`neardup_solr.records.record.source_of`); ``ids`` kept as they are, so
    the records' numbers still hold. ``warn`` is told when none is left
    because every record is of one source. Costs a source lookup per
    record and a byte per candidate."""
    sources: dict[str, int] = {}
    numbered = np.fromiter((sources.setdefault(source_of(i), len(sources)) for i in found.ids), np.int32,
                           len(found.ids))
    across = numbered[found.left] != numbered[found.right]
    if len(sources) < 2 and len(found):
        warn("every record is of one source, so no pair links two sources")
    return Candidates(found.ids, found.left[across], found.right[across])


def proposed_share(probabilities: list[float | None], caught: list[float]) -> float:
    """The estimated share of all true pairs that share a band key, from the
    kept pairs' match probabilities and the chance their LSH shingles'
    Jaccard similarity gave each of sharing one (its S-curve, ``bands.py``).

    A true pair proposed with chance p stands for 1/p true pairs like it
    (the Horvitz-Thompson estimate): the true pairs the banding never
    proposed are those of similarities it rarely catches, which the match
    model, fitted to candidates only, cannot see. So the share is the kept
    pairs' expected matches over the same with each weighed by 1/p. Pairs
    without a probability (no model was fitted) say nothing: 1.

    A pair's chance counts as at least ``LEAST_CHANCE``: the S-curve is
    that of independent hash functions, and ours (one hash, XOR masks,
    16-bit values) catches some pairs it gives almost no chance, which
    would then stand for thousands each.
    """
    weighed = [(p, max(chance, LEAST_CHANCE)) for p, chance in zip(probabilities, caught) if p is not None]
    matches = sum(p for p, _ in weighed)
    standing = sum(p / chance for p, chance in weighed)
    return matches / standing if standing else 1.0


# The least chance of sharing a band key a kept pair is taken to have had:
# a few kept pairs far out on the S-curve would otherwise weigh for many (docs/scale.md).
LEAST_CHANCE = 0.1


# Kept pairs whose texts are read at once (at most twice as many texts):
# a million records keep about 136,000 pairs, ten million ten times that.
KEPT_BLOCK = 1 << 17
# Records whose words and shingles a worker keeps while it makes kept pairs
# (tens of megabytes at most, for documents of hundreds of words).
PREPARED_RECORDS = 1024
