"""Clusters whose members are matches of each other, not chains.

The connected components of the kept pairs chain: one false link joins two
entities, and in data where many records look alike (one name, one city,
one employer) a component grows to thousands of records of different
entities through pairs that each looked like a match. Instead each
component is split so that a cluster's members are, on the whole, matches
of each other: agglomerative clustering by **average linkage** on the
pairs' match weights (log-odds, bits), which merges two clusters only while
the mean weight of all pairs across them is positive (a mean probability,
on the log-odds scale, of at least 1/2). This is the greedy average-link
heuristic for correlation clustering with log-odds as edge weights.

A pair of a component that is not among the weighed pairs (neither kept
nor scored) counts as :data:`MISSING` bits: weak evidence against, so that
a record linked to one member of a large cluster by one pair does not join
it on that pair alone, while one linked strongly to most members does. A
caller that can weigh any pair (a report of field records) gives
``weigh``, and every pair of a component is weighed instead.

Components larger than :data:`AVERAGED` records are split by average
linkage along their pairs, the mean weight across two clusters read off a
sample of their cross pairs where the caller can weigh any pair
(:func:`sampled_linkage`: no cap on a cluster's size), else by pivots
(KwikCluster, Ailon, Charikar and Newman): the record with the strongest
links that is left takes every record left it is linked to by a kept pair;
linear in the pairs, deterministic.

A probability of 1 counts as :data:`STRONGEST` bits, so one certain pair
cannot outweigh any number of others.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..compiled import chosen, njit

# Bits a pair of one component counts for when it was not weighed (not a
# kept pair, and no weigh given): a pair no band or key made a candidate is
# rarely a match, but it says less than a pair compared and found wanting.
MISSING = -4.0
# A pair's weight is at most this many bits either way (a probability of 1 or 0).
STRONGEST = 30.0
# Components up to this many records are split by average linkage (their
# pairs' weights held as a matrix: 300 records, 90,000 weights); larger ones
# by pivots.
AVERAGED = 300


def bits(probability: float | None) -> float:
    """A probability as a match weight in bits, within +-:data:`STRONGEST`."""
    if probability is None:
        return STRONGEST
    if probability >= 1.0:
        return STRONGEST
    if probability <= 0.0:
        return -STRONGEST
    return max(-STRONGEST, min(STRONGEST, math.log2(probability / (1.0 - probability))))


def bits_of(probabilities: np.ndarray) -> np.ndarray:
    """:func:`bits` of each of ``probabilities`` (none missing), at once."""
    p = np.asarray(probabilities, np.float64)
    inside = (p > 0.0) & (p < 1.0)
    out = np.where(p >= 1.0, STRONGEST, -STRONGEST)
    out[inside] = np.clip(np.log2(p[inside] / (1.0 - p[inside])), -STRONGEST, STRONGEST)
    return out


@njit(cache=True, nogil=True)
def _roots(count, left, right):  # pragma: no cover - compiled; twin tested
    """Each record's smallest fellow in the components of the pairs: a
    union-find with path halving, the smaller root kept."""
    parent = np.arange(count)
    for i in range(len(left)):
        a, b = left[i], right[i]
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        if a < b:
            parent[b] = a
        elif b < a:
            parent[a] = b
    for x in range(count):
        parent[x] = parent[parent[x]]  # a root is smaller than all it holds: one pass in order settles each
    return parent


def components(count: int, left: np.ndarray, right: np.ndarray, smallest: int = 2) -> list[np.ndarray]:
    """The connected components (record numbers, ascending) of the pairs
    over ``count`` records, of ``smallest`` records or more, in the order
    of their smallest numbers. Costs a number a record, nearly linear in
    the pairs, and no Python object a pair."""
    roots = chosen(_roots)(count, np.asarray(left, np.int64), np.asarray(right, np.int64))
    order = np.argsort(roots, kind="stable")
    starts = np.flatnonzero(np.concatenate(([True], roots[order][1:] != roots[order][:-1]))) if count else []
    groups = np.split(order, starts[1:]) if count else []
    return [g for g in groups if len(g) >= smallest]


def connected(groups: Iterable[Sequence[str]]) -> list[list[str]]:
    """The connected components of ``groups`` of ids (pairs, or clusters of
    any size): ids that share a group, directly or through others, are one
    component; every id once, a group of one its own component."""
    number: dict[str, int] = {}
    left: list[int] = []
    right: list[int] = []
    for group in groups:
        members = [number.setdefault(member, len(number)) for member in group]
        left += members[:1] * (len(members) - 1)
        right += members[1:]
    ids = list(number)
    return [[ids[n] for n in component.tolist()] for component in components(len(ids), left, right, smallest=1)]


def average_linkage(weights: np.ndarray) -> list[list[int]]:
    """Clusters of the records of a square matrix of pair ``weights``
    (bits; the diagonal unread): start from each record alone and merge the
    two clusters of the largest mean weight across them while it is
    positive (ties: the lowest numbers first)."""
    size = len(weights)
    members = [[i] for i in range(size)]
    total = np.array(weights, np.float64)
    np.fill_diagonal(total, -np.inf)
    counts = np.ones((size, size))
    alive = np.ones(size, bool)
    while True:
        mean = np.where(alive[:, None] & alive[None, :], total / counts, -np.inf)
        np.fill_diagonal(mean, -np.inf)
        best = int(np.argmax(mean))
        i, j = divmod(best, size)
        if not mean[i, j] > 0.0:
            break
        i, j = min(i, j), max(i, j)
        members[i] += members[j]
        members[j] = []
        alive[j] = False
        total[i, :] += total[j, :]
        total[:, i] = total[i, :]
        counts[i, :] += counts[j, :]
        counts[:, i] = counts[i, :]
        total[i, i] = -np.inf
    return [sorted(m) for m in members if m]


def pivots(size: int, left: np.ndarray, right: np.ndarray, weights: np.ndarray) -> list[list[int]]:
    """Clusters of ``size`` records by pivots: the record left with the
    largest sum of positive weights takes the records left that a positive
    pair links it to, until none is left."""
    strength = np.zeros(size)
    np.add.at(strength, left, np.maximum(weights, 0))
    np.add.at(strength, right, np.maximum(weights, 0))
    linked: list[list[int]] = [[] for _ in range(size)]
    for a, b, w in zip(left.tolist(), right.tolist(), weights.tolist()):
        if w > 0:
            linked[a].append(b)
            linked[b].append(a)
    taken = np.zeros(size, bool)
    found = []
    for pivot in np.argsort(-strength, kind="stable").tolist():
        if taken[pivot]:
            continue
        group = [pivot] + [x for x in linked[pivot] if not taken[x]]
        taken[group] = True
        found.append(sorted(set(group)))
    return found


def split(count: int, left: np.ndarray, right: np.ndarray, weights: np.ndarray,
          weigh: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
          together: np.ndarray | None = None) -> list[list[int]]:
    """Clusters of ``count`` records (numbered 0 ..) from weighed pairs:
    the components of the pairs of positive weight, each split by average
    linkage (larger than :data:`AVERAGED`: by :func:`sampled_linkage` where
    ``weigh`` is given, else by pivots). Records in no such pair are left
    out.

    Args:
        count: how many records the numbers run over.
        left, right, weights: pairs (record numbers) and their weights in
            bits: the kept pairs, and any others weighed.
        weigh: the weights of any pairs of records (numbers), when the
            caller can weigh them; else pairs not given count as
            :data:`MISSING`.
        together: each record's group of records that are one record
            written again (the same number): where ``weigh`` calls such
            a pair a match, the group is one component, and a large
            component's linkage starts from it as one cluster; none by
            default.

    Returns:
        The clusters of two records or more, each its record numbers in
        ascending order. Costs a component's size squared for those up to
        :data:`AVERAGED` records (each merge a pass over its matrix), and
        its pairs for larger ones.
    """
    left, right = np.asarray(left, np.int64), np.asarray(right, np.int64)
    weights = np.clip(np.asarray(weights, np.float64), -STRONGEST, STRONGEST)
    if together is not None:  # a copy is paired with the first of its group, so that its group is one component
        together = _firsts(together)
        copies = np.flatnonzero(together != np.arange(count))
        alike = np.clip(weigh(together[copies], copies), -STRONGEST, STRONGEST) if weigh is not None and len(copies) \
            else np.full(len(copies), STRONGEST)
        together[copies[alike <= 0]] = copies[alike <= 0]  # copies the model calls different are not kept together
        left, right = np.concatenate([left, together[copies]]), np.concatenate([right, copies])
        weights = np.concatenate([weights, alike])
    positive = weights > 0
    found: list[list[int]] = []
    groups_of = components(count, left[positive], right[positive])
    home = np.full(count, -1, np.int64)
    for number, component in enumerate(groups_of):
        home[component] = number
    inside = np.flatnonzero((home[left] >= 0) & (home[left] == home[right]))
    inside = inside[np.argsort(home[left[inside]], kind="stable")]
    starts = np.searchsorted(home[left[inside]], np.arange(len(groups_of) + 1))
    weighed = _weighed_matrices(groups_of, weigh) if weigh is not None else {}
    for number, component in enumerate(groups_of):
        if len(component) == 2:
            found.append(component.tolist())
            continue
        mine = inside[starts[number]:starts[number + 1]]
        a, b = np.searchsorted(component, left[mine]), np.searchsorted(component, right[mine])
        if len(component) > AVERAGED:
            groups = sampled_linkage(component, a, b, weights[mine], weigh,
                                     together=None if together is None else together[component]) \
                if weigh is not None else \
                pivots(len(component), a, b, weights[mine])
        else:
            matrix = weighed.get(number)
            if matrix is None:
                matrix = np.full((len(component), len(component)), MISSING)
                matrix[a, b] = weights[mine]
                matrix[b, a] = weights[mine]
            groups = average_linkage(matrix)
        found.extend(sorted(component[g].tolist()) for g in groups if len(g) > 1)
    return found


def _firsts(labels: np.ndarray) -> np.ndarray:
    """Each place's first place of the same label."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    return first[inverse.ravel()]


# Pairs weighed at once when the components' matrices are filled.
WEIGHED_AT_ONCE = 1 << 21


def _weighed_matrices(groups: Sequence[np.ndarray],
                      weigh: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> dict[int, np.ndarray]:
    """The weight matrix of every component of three records up to
    :data:`AVERAGED` (by its number), every pair of it weighed, many
    components' pairs in one call."""
    matrices: dict[int, np.ndarray] = {}
    batch: list[int] = []
    pairs = 0

    def flush() -> None:
        if not batch:
            return
        spans = [np.triu_indices(len(groups[n]), k=1) for n in batch]
        firsts = np.concatenate([groups[n][i] for n, (i, _) in zip(batch, spans)])
        seconds = np.concatenate([groups[n][j] for n, (_, j) in zip(batch, spans)])
        weights = np.clip(weigh(firsts, seconds), -STRONGEST, STRONGEST)
        at = 0
        for n, (i, j) in zip(batch, spans):
            matrix = np.full((len(groups[n]), len(groups[n])), MISSING)
            matrix[i, j] = weights[at:at + len(i)]
            matrix[j, i] = matrix[i, j]
            matrices[n] = matrix
            at += len(i)
        batch.clear()

    for number, component in enumerate(groups):
        if 2 < len(component) <= AVERAGED:
            batch.append(number)
            pairs += len(component) * (len(component) - 1) // 2
            if pairs >= WEIGHED_AT_ONCE:
                flush()
                pairs = 0
    flush()
    return matrices


# Cross pairs of two clusters weighed to decide whether they merge: every
# one up to this many, else this many drawn at random.
CROSS_PAIRS = 64


def sampled_linkage(component: np.ndarray, a: np.ndarray, b: np.ndarray, weights: np.ndarray,
                    weigh: Callable[[np.ndarray, np.ndarray], np.ndarray], seed: int = 0,
                    together: np.ndarray | None = None) -> list[list[int]]:
    """Average linkage of a large component along its weighed pairs (``a``,
    ``b``: places in ``component``, their ``weights``): two clusters linked
    by a positive pair merge when the mean weight of the pairs across them
    is positive, that mean taken over all of them (``weigh``: weights of any
    records) or over :data:`CROSS_PAIRS` drawn at random where there are
    more. In rounds: each cluster's strongest link to another is tried, as
    many at once as share no cluster, until no link merges. No cap on a
    cluster's size, and one strong pair cannot chain two groups whose other
    pairs say they differ. Records of one ``together`` number (a label for
    each of the component's records) start as one cluster.

    Costs a weighing of at most :data:`CROSS_PAIRS` pairs for each link
    tried, the links of a round weighed together.
    """
    rng = np.random.default_rng(seed)
    size = len(component)
    parent = np.arange(size)
    if together is not None:  # each record's cluster is the first of its group
        parent = _firsts(together)
    members: dict[int, list[int]] = {}
    for i, top in enumerate(parent.tolist()):
        members.setdefault(top, []).append(i)
    changed = np.zeros(size, np.int64)  # a cluster's version: a link refused stays refused until either changes
    refused: dict[tuple[int, int], tuple[int, int]] = {}

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = int(parent[x])
        return x

    positive = weights > 0
    a, b, weights = a[positive], b[positive], weights[positive]
    while True:
        ra = np.array([root(int(x)) for x in a], np.int64)
        rb = np.array([root(int(x)) for x in b], np.int64)
        across = ra != rb
        if not across.any():
            break
        x, y = np.minimum(ra, rb)[across], np.maximum(ra, rb)[across]
        strongest = np.argsort(-weights[across], kind="stable")
        taken: set[int] = set()
        tried: list[tuple[int, int]] = []
        for at in strongest.tolist():
            pair = (int(x[at]), int(y[at]))
            if pair[0] in taken or pair[1] in taken:
                continue
            if refused.get(pair) == (changed[pair[0]], changed[pair[1]]):
                continue
            taken.update(pair)
            tried.append(pair)
        if not tried:
            break
        lefts, rights, spans = [], [], [0]
        for p, q in tried:
            one, other = np.array(members[p]), np.array(members[q])
            if len(one) * len(other) <= CROSS_PAIRS:
                first, second = np.repeat(one, len(other)), np.tile(other, len(one))
            else:
                first, second = rng.choice(one, CROSS_PAIRS), rng.choice(other, CROSS_PAIRS)
            lefts.append(first)
            rights.append(second)
            spans.append(spans[-1] + len(first))
        cross = np.clip(weigh(component[np.concatenate(lefts)], component[np.concatenate(rights)]),
                        -STRONGEST, STRONGEST)
        for (p, q), start, end in zip(tried, spans[:-1], spans[1:]):
            if cross[start:end].mean() > 0:
                keep, gone = (p, q) if len(members[p]) >= len(members[q]) else (q, p)
                parent[gone] = keep
                members[keep] += members.pop(gone)
                changed[keep] += 1
            else:
                refused[(p, q)] = (changed[p], changed[q])
    return [sorted(group) for group in members.values()]


def split_pairs(ids: Sequence[str], pairs: Sequence[tuple[str, str, float | None]]) -> list[list[str]]:
    """:func:`split` of pairs named by id, each weighed by its probability
    (:func:`bits`; ``None`` counts as certain)."""
    number = {record_id: n for n, record_id in enumerate(ids)}
    left = np.array([number[a] for a, _, _ in pairs], np.int64)
    right = np.array([number[b] for _, b, _ in pairs], np.int64)
    weights = np.array([bits(p) for _, _, p in pairs], np.float64)
    return [[ids[n] for n in group] for group in split(len(ids), left, right, weights)]
