"""The service's review page, rendered on the server as one page without
script (the service's ``/``): a search box and a text's near duplicates,
the clusters of the last report's pairs, and labels on pairs.

What the page shows is all in its address (:class:`State`): the text looked
up, or an indexed record's id (its near duplicates then pair two indexed
records, so they can be labeled), and the clusters' order and page. Label
buttons are plain forms that post to the service and are redirected back
to the same address (post/redirect/get), so reloading never posts twice and
a label is seen as the file holds it. Clusters come from a pair file
(:class:`PairClusters`, read again when the report writes it anew), largest
first or least certain first, :data:`CLUSTERS_PER_PAGE` a page; their texts
come from the index.

Every text is escaped; the page's policy allows no script, no frame and no
request beyond its own forms."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
import re
from urllib.parse import urlencode

from ..results.clusters import Cluster, certainty_of, cluster_pairs, least_certain_first, pairs_by_cluster
from ..files import reading
from ..results.html import PAIR_CSS, WHY_CSS, diff_words, esc, why_cell
from ..results.labels import DIFFERENT, SAME
from ..results.pairs import Pair, read_pairs
from ..modes.text_search import Match

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'"

SIZE = "size"
UNCERTAIN = "uncertain"
ORDERS = {SIZE: "largest first", UNCERTAIN: "least certain first"}
# Enough clusters to read through at a time; a page of them with their
# texts comes from one request to the index.
CLUSTERS_PER_PAGE = 20
# Members and pairs shown of one cluster: each pair is a row with two forms,
# and a page of giant clusters should still open at once.
MAX_ROWS = 50
LABEL_ACTION = "/labels/form"
SIGN_IN_ACTION = "/sign-in"

_CSS = PAIR_CSS + WHY_CSS + """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 70em; padding: 0 1em; color: #222; }
form.search { display: flex; gap: .5em; margin: 1em 0; }
form.search input[type=search] { flex: 1; font: inherit; padding: .4em .6em; }
form.label { display: inline-flex; gap: .3em; margin: 0; }
form.sign-in { display: flex; gap: .5em; align-items: center; margin: 1em 0; }
button { font: inherit; padding: .4em 1em; }
form.label button { font-size: .85em; padding: .15em .6em; }
button[aria-pressed=true] { background: #1d4f91; color: #fff; border: 1px solid #1d4f91; border-radius: 3px; }
table { border-collapse: collapse; width: 100%; margin: 0 0 .6em; }
th, td { text-align: left; padding: .3em .6em; border-bottom: 1px solid #ddd; vertical-align: top; }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
td.id { white-space: nowrap; font-family: ui-monospace, monospace; }
td.label { white-space: nowrap; font-weight: 600; }
td.label.same { color: #1b6b1b; }
td.label.different { color: #8a1f1f; }
td.label.none { color: #888; font-weight: normal; }
section.cluster { border: 1px solid #ddd; border-radius: 6px; padding: .6em 1em; margin: 0 0 1em; }
h3 { font-size: 1.05em; margin: .2em 0 .5em; }
.error { color: #8a1f1f; }
"""


@dataclass(frozen=True)
class State:
    """What the page shows, as its address holds it: a ``text`` looked up or
    the ``id`` of an indexed record, and the clusters' ``order`` and ``page``.
    The page's forms carry it, so the redirect after a post shows the same page."""

    text: str = ""
    id: str = ""
    order: str = SIZE
    page: int = 1

    @classmethod
    def of(cls, fields: Mapping[str, str]) -> State:
        """The state in query or form ``fields``; an order or page that is no
        such thing falls back to the first page, largest first."""
        page = fields.get("page", "")
        order = fields.get("order", SIZE)
        return cls(text=fields.get("text", ""), id=fields.get("id", ""), order=order if order in ORDERS else SIZE,
                   page=int(page) if page.isdigit() and int(page) > 0 else 1)

    def fields(self) -> dict[str, str]:
        """The state as fields of a query or form, defaults left out."""
        fields = {"text": self.text, "id": self.id, "order": "" if self.order == SIZE else self.order,
                  "page": "" if self.page == 1 else str(self.page)}
        return {name: value for name, value in fields.items() if value}

    def url(self, anchor: str = "", **changes: object) -> str:
        """The page's address with ``changes`` to the state, at ``anchor``."""
        query = urlencode(replace(self, **changes).fields())
        return "/" + (f"?{query}" if query else "") + (f"#{anchor}" if anchor else "")


@dataclass(frozen=True)
class Labeling:
    """The labels the page shows (pair -> same) and what it offers:
    ``writable`` shows the same and different buttons; ``sign_in`` the form
    that takes the service's token (one is set and this browser has not given it)."""

    labels: Mapping[frozenset[str], bool]
    writable: bool
    sign_in: bool = False


@dataclass(frozen=True)
class ClusterPage:
    """One page of a pair file's clusters: ``clusters`` in the order shown,
    ``pairs`` inside each (by cluster id), the members' ``texts``; ``total``
    clusters in the file, this is page ``page`` of ``pages``; ``measure`` is
    what least certain goes by ("probability", "similarity" or ``None``)."""

    source: str
    clusters: Sequence[Cluster]
    pairs: Mapping[int, Sequence[Pair]]
    texts: Mapping[str, str]
    total: int
    page: int
    pages: int
    measure: str | None


class PairClusters:
    """The clusters of a pair file (any format :func:`read_pairs` reads),
    read again whenever the file changes, so a new report shows without a
    restart. Safe to use from many threads.

    Raises (when made, and from :meth:`current`):
        InputError: the file cannot be read as pairs.
    """

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._loaded: tuple[list[Cluster], dict[int, list[Pair]], str | None] = ([], {}, None)
        self.current()

    def current(self) -> tuple[list[Cluster], dict[int, list[Pair]], str | None]:
        """The clusters largest first, the pairs of each, and what the
        pairs' certainty is measured by (:func:`certainty_of`)."""
        with reading(self.path, "pairs"):
            seen = self.path.stat()
        stamp = (seen.st_mtime_ns, seen.st_size, seen.st_ino)
        with self._lock:
            if stamp != self._stamp:
                pairs = read_pairs(self.path)
                clusters = cluster_pairs(pairs)
                self._loaded = (clusters, pairs_by_cluster(clusters, pairs), certainty_of(pairs))
                self._stamp = stamp
            return self._loaded

    def page(self, state: State, texts: Callable[[Sequence[str]], Mapping[str, str]]) -> ClusterPage:
        """The clusters ``state`` asks for (its order, its page, the last page
        when it asks beyond), their members' texts from ``texts``."""
        clusters, by_cluster, measure = self.current()
        if state.order == UNCERTAIN and measure is not None:
            clusters = least_certain_first(clusters, by_cluster, measure)
        pages = max(1, -(-len(clusters) // CLUSTERS_PER_PAGE))
        page = min(state.page, pages)
        shown = clusters[(page - 1) * CLUSTERS_PER_PAGE:page * CLUSTERS_PER_PAGE]
        wanted = [member for cluster in shown for member in cluster.members[:MAX_ROWS]]
        return ClusterPage(source=self.path.name, clusters=shown, pairs={c.id: by_cluster[c.id] for c in shown},
                           texts=texts(wanted) if wanted else {}, total=len(clusters), page=page, pages=pages,
                           measure=measure)


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def render_review(state: State = State(), matches: Sequence[Match] | None = None, *, asked: str | None = None,
                  records: int | None = None, error: str | None = None, hint: str | None = None,
                  back: str | None = None, clusters: ClusterPage | None = None,
                  labeling: Labeling | None = None, why: Mapping[frozenset[str], str] | None = None,
                  closed: bool = False) -> str:
    """The page for ``state``: the search box, then ``matches`` (each text's
    words that differ from the text looked up marked; ``asked`` is the
    record's text when ``state`` names a record, and its matches get labels),
    or ``error`` and ``hint`` (and a link ``back`` to the page a form came
    from); then ``clusters``. ``records`` is how many the
    index holds; ``labeling`` the labels shown and whether they may change;
    ``why`` each pair's explanation in brief, shown beside it. A ``closed``
    page (reads need the service's token, not given yet) shows the form
    that takes it instead of anything of the index."""
    text = asked if asked is not None else state.text
    title = f"record {state.id}" if state.id else state.text
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',
        f"<title>Near duplicates{esc(': ' + title) if title else ''}</title><style>{_CSS}</style></head><body>",
        "<h1>Near duplicates</h1>",
        '<form method="get" action="/" role="search" class="search">',
        f'<input type="search" name="text" value="{esc(state.text)}" placeholder="a record\'s text" '
        'aria-label="text to look up" autofocus required>',
        *(f'<input type="hidden" name="{name}" value="{esc(value)}">'
          for name, value in state.fields().items() if name in ("order", "page")),
        '<button type="submit">Find</button></form>',
    ]
    if closed:
        parts.append(_sign_in(state, "This service shows its records only with its token:"))
    elif labeling is not None and labeling.sign_in:
        parts.append(_sign_in(state, "Labels need the service's token:"))
    if records is not None:
        parts.append(f'<p class="small" id="records">{records:,} records indexed.</p>')
    if error is not None:
        parts.append(f'<p class="error" id="error">{esc(error)}</p>')
        if hint:
            parts.append(f'<p class="small" id="hint">{esc(hint)}</p>')
        if back is not None:
            parts.append(f'<p><a id="back" href="{esc(back)}">Back to the page</a></p>')
    elif matches is not None:
        parts.extend(_matches(state, text, matches, labeling if state.id else None, why or {}))
    if clusters is not None:
        parts.extend(_clusters(state, clusters, labeling, why or {}))
    parts.append('<p class="small">The API: <a href="/docs">/docs</a>; labels: <a href="/labels">/labels</a>, '
                 'the pairs labeled same as gold pairs: <a href="/labels/gold">/labels/gold</a>.</p></body></html>')
    return "\n".join(parts)


def _sign_in(state: State, why: str) -> str:
    """The form that takes the service's token, so this browser may label
    (and read, where reads need it), saying ``why``."""
    return (f'<form method="post" action="{SIGN_IN_ACTION}" class="sign-in" id="sign-in">'
            f'<label for="token">{esc(why)}</label>'
            '<input type="password" id="token" name="token" autocomplete="current-password" required>'
            f"{_hidden(state.fields())}<button type=\"submit\">Sign in</button></form>")


def _hidden(fields: Mapping[str, str]) -> str:
    return "".join(f'<input type="hidden" name="{esc(name)}" value="{esc(value)}">' for name, value in fields.items())


def _matches(state: State, text: str, matches: Sequence[Match], labeling: Labeling | None,
             why: Mapping[frozenset[str], str]) -> list[str]:
    """The near duplicates of ``text``; with ``labeling``, of the record
    ``state.id``, each with its label."""
    if state.id:
        heading = f'<p id="asked">Near duplicates of record <span class="id">{esc(state.id)}</span>: {esc(text)}</p>'
    else:
        heading = ""
    if not matches:
        return [heading, '<p id="none">No near duplicate found.</p>']
    label_head = "<th>label</th><th></th>" if labeling is not None else ""
    explained = any(frozenset((state.id, m.id)) in why for m in matches)
    label_head = ("<th>why</th>" if explained else "") + label_head
    rows = [heading,
            '<p class="small">Best first. In each text, <ins>green</ins> words the record adds to the one '
            'looked up, <mark>yellow</mark> words it has in place of others, <del>red</del> words it lacks.</p>',
            '<table id="matches"><thead><tr><th>similarity</th><th>probability</th><th>id</th>'
            f"<th>text</th>{label_head}</tr></thead><tbody>"]
    for match in matches:
        anchor = anchor_of("match", match.id)
        label = _label_cells(state, state.id, match.id, labeling, anchor) if labeling is not None else ""
        reason = f'<td class="why">{why_cell(why.get(frozenset((state.id, match.id))))}</td>' if explained else ""
        rows.append(f'<tr id="{esc(anchor)}"><td class="num">{_number(match.similarity)}</td>'
                    f'<td class="num">{_number(match.probability)}</td><td class="id">{esc(match.id)}</td>'
                    f'<td class="text">{diff_words(text, match.text)}</td>{reason}{label}</tr>')
    rows.append("</tbody></table>")
    return rows


# What an element id on the page keeps of a key as it is; any other
# character is written "!" and its code point in hex, so every key gives
# an id that a URL's fragment and a CSS selector carry as they are.
_ANCHOR_SAFE = re.compile(r"[^A-Za-z0-9._:/-]")


def anchor_of(kind: str, *keys: str) -> str:
    """The element id of a row of ``kind`` ("pair", "match") for ``keys``
    (joined with ``~``): ``pair-20~21``; ``match-ann!40!x.com``."""
    return f"{kind}-" + "~".join(_ANCHOR_SAFE.sub(lambda c: f"!{ord(c.group()):x}!", key) for key in keys)


def _label_cells(state: State, a: str, b: str, labeling: Labeling, anchor: str) -> str:
    """The pair's label, and the buttons that change it when the page may."""
    same = labeling.labels.get(frozenset((a, b)))
    word = "unlabeled" if same is None else SAME if same else DIFFERENT
    cells = f'<td class="label {"none" if same is None else word}">{word}</td>'
    if not labeling.writable:
        return cells + "<td></td>"
    buttons = "".join(f'<button type="submit" name="label" value="{value}" '
                      f'aria-pressed="{"true" if word == value else "false"}">{value}</button>'
                      for value in (SAME, DIFFERENT))
    fields = {"a": a, "b": b, "anchor": anchor} | state.fields()
    form = f'<form method="post" action="{LABEL_ACTION}" class="label">{_hidden(fields)}{buttons}</form>'
    return f"{cells}<td>{form}</td>"


def _clusters(state: State, shown: ClusterPage, labeling: Labeling | None,
              why: Mapping[frozenset[str], str]) -> list[str]:
    """The clusters section: the order, the page, each cluster."""
    orders = []
    for order, words in ORDERS.items():
        if order == UNCERTAIN and shown.measure is None:
            orders.append(f'<span class="missing">{words} (the pairs carry no probability or similarity)</span>')
        elif order == state.order or (order == SIZE and shown.measure is None):
            orders.append(f'<strong aria-current="true">{words}</strong>')
        else:
            orders.append(f'<a href="{esc(state.url("clusters", order=order, page=1))}">{words}</a>')
    by = {"probability": "the lowest match probability", "similarity": "the lowest similarity"}.get(shown.measure or "")
    parts = ['<section id="clusters"><h2>Clusters</h2>',
             f'<p class="small">{shown.total:,} clusters of the pairs in {esc(shown.source)}. Order: '
             + " · ".join(orders) + (f" (least certain: by {by} among a cluster's pairs)" if by else "") + ".</p>"]
    if not shown.total:
        parts.append('<p id="no-clusters">No clusters: the pair file holds no pairs.</p>')
    parts.append(_pager(state, shown))
    parts.extend(_cluster(state, cluster, shown, labeling, why) for cluster in shown.clusters)
    if shown.pages > 1:
        parts.append(_pager(state, shown))
    parts.append("</section>")
    return parts


def _pager(state: State, shown: ClusterPage) -> str:
    """Where this page is among the clusters, with links to the pages beside it."""
    first = (shown.page - 1) * CLUSTERS_PER_PAGE + 1
    where = f"Clusters {first}–{first + len(shown.clusters) - 1} of {shown.total}" if shown.clusters else ""
    links = []
    if shown.page > 1:
        links.append(f'<a rel="prev" href="{esc(state.url("clusters", page=shown.page - 1))}">previous</a>')
    if shown.page < shown.pages:
        links.append(f'<a rel="next" href="{esc(state.url("clusters", page=shown.page + 1))}">next</a>')
    return f'<p class="small pager">{" · ".join([where, *links]) if where else ""}</p>'


def _cluster(state: State, cluster: Cluster, shown: ClusterPage, labeling: Labeling | None,
             why: Mapping[frozenset[str], str]) -> str:
    """One cluster: its members' texts (the words that differ from the first
    one's marked, each id a link to its near duplicates), then its pairs."""
    pairs = shown.pairs[cluster.id]
    weakest = min((getattr(p, shown.measure) for p in pairs), default=None) if shown.measure else None
    heading = (f"Cluster {esc(cluster.id)} · {cluster.size} records"
               + (f" · lowest {shown.measure} {_number(weakest)}" if weakest is not None else ""))
    reference = shown.texts.get(cluster.members[0], "")
    members = []
    for position, member in enumerate(cluster.members[:MAX_ROWS]):
        text = shown.texts.get(member)
        cell = ('<span class="missing">(not in the index)</span>' if text is None
                else esc(text) if position == 0 else diff_words(reference, text))
        link = esc(state.url(id=member, text=""))
        css = ' class="reference"' if position == 0 else ""
        members.append(f'<tr{css}><td class="id"><a href="{link}">{esc(member)}</a></td>'
                       f'<td class="text">{cell}</td></tr>')
    more = cluster.size - len(members)
    return (f'<section class="cluster" id="cluster-{esc(cluster.id)}"><h3>{heading}</h3>'
            f'<table class="members"><tr><th>id</th><th>text</th></tr>{"".join(members)}</table>'
            + (f'<p class="small">… and {more} more records.</p>' if more > 0 else "")
            + _pair_rows(state, pairs, labeling, why) + "</section>")


def _pair_rows(state: State, pairs: Sequence[Pair], labeling: Labeling | None,
               why: Mapping[frozenset[str], str]) -> str:
    """A cluster's pairs, each with why it has its probability, its label
    and the buttons that change it."""
    shown = [name for name in ("similarity", "probability") if any(getattr(p, name) is not None for p in pairs)]
    explained = any(p.key in why for p in pairs)
    head = "".join(f"<th>{name}</th>" for name in ("pair", "distance", *shown, *(("why",) if explained else ())))
    head += "<th>label</th><th></th>" if labeling is not None else ""
    rows = []
    for p in pairs[:MAX_ROWS]:
        anchor = anchor_of("pair", p.a, p.b)
        cells = "".join(f'<td class="num">{_number(getattr(p, name))}</td>' for name in shown)
        if explained:
            cells += f'<td class="why">{why_cell(why.get(p.key))}</td>'
        label = _label_cells(state, p.a, p.b, labeling, anchor) if labeling is not None else ""
        rows.append(f'<tr id="{esc(anchor)}"><td class="id">{esc(p.a)} – {esc(p.b)}</td>'
                    f'<td class="num">{p.distance}</td>{cells}{label}</tr>')
    more = f'<p class="small">… and {len(pairs) - MAX_ROWS} more pairs.</p>' if len(pairs) > MAX_ROWS else ""
    return f'<table class="pairs"><tr>{head}</tr>{"".join(rows)}</table>{more}'
