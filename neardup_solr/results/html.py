"""One self-contained HTML page that shows the clusters to a person.

Pair files and cluster files say *which* records match; this page shows
*why*: every cluster's texts one under the other, with the words that differ
from the cluster's first record highlighted, and the pairs' distances and
similarities. Everything is in the one file (inline CSS, images as data
URIs, no JavaScript, no external URL), so it can be mailed, archived or
opened from a CI artifact and look the same. A Content-Security-Policy that
allows no script is part of the page, as a second line of defence after
escaping: record text is untrusted input.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher
from pathlib import Path

from .clusters import Cluster, pairs_by_cluster
from ..files import atomic_output
from .pairs import Pair, distance_name
from ..records.record import id_key

# What one page shows at most: the largest clusters, and members and pairs
# of each. A huge result still makes a page a browser opens quickly; what
# is left out is said on the page.
MAX_CLUSTERS = 500
MAX_ROWS = 200

_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                ".webp": "image/webp", ".svg": "image/svg+xml"}

# How a pair's rows and words are marked, on this page and the review page
# (``review.py``): the reference record's row, a missing text, the words
# one text adds (ins), changes (mark) and drops (del).
PAIR_CSS = """
tr.reference td { background: #f4f6fb; }
.missing { color: #888; font-style: italic; }
ins, mark, del { border-radius: 3px; padding: 0 .15em; }
ins { background: #c8f0c8; text-decoration: none; }
mark { background: #ffe28a; }
del { background: #fbd3d3; color: #8a1f1f; }
.small { font-size: .85em; color: #555; }
"""

# A pair's explanation, a step a line, on this page and the review page.
WHY_CSS = """
td.why { font-size: .85em; line-height: 1.35; }
td.why .for b { color: #1a6b1a; }
td.why .against b { color: #8a1f1f; }
"""

_CSS = PAIR_CSS + WHY_CSS + """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: #1d1d1f; background: #fafafa; margin: 0 auto; padding: 1.5em 2em; max-width: 72em; }
h1 { font-size: 1.6em; margin: 0 0 .6em; }
h2 { font-size: 1.15em; margin: 0 0 .5em; }
.summary { display: flex; flex-wrap: wrap; gap: .6em; margin: 0 0 1em; padding: 0; }
.summary div { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .45em .9em; min-width: 7em; }
.summary dt { font-size: .8em; color: #555; text-transform: uppercase; letter-spacing: .03em; }
.summary dd { margin: 0; font-size: 1.3em; font-weight: 600; font-variant-numeric: tabular-nums; }
.legend, .note { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .5em .9em; margin: 0 0 1em; }
.note { border-color: #e0b000; background: #fffbea; }
figure { display: inline-block; margin: 0 1em 1em 0; background: #fff; border: 1px solid #ddd;
         border-radius: 6px; padding: .5em; }
figure img { display: block; max-width: 100%; height: auto; }
figcaption { font-size: .85em; color: #555; text-align: center; }
section.cluster { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .8em 1em; margin: 0 0 1em; }
table { border-collapse: collapse; width: 100%; margin: 0 0 .6em; }
th, td { border-bottom: 1px solid #eee; padding: .3em .6em; text-align: left; vertical-align: top; }
th { font-size: .8em; color: #555; text-transform: uppercase; letter-spacing: .03em; }
td.id { white-space: nowrap; font-family: ui-monospace, "DejaVu Sans Mono", monospace; width: 1%; }
td.num { font-variant-numeric: tabular-nums; width: 1%; white-space: nowrap; }
td.text { overflow-wrap: anywhere; }
table.pairs { width: auto; font-size: .9em; }
table.pairs td { width: auto; }
"""

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

_LEGEND = (
    '<p class="legend">Each cluster\'s first record (shaded) is the reference; the others show how their words '
    "differ from it, ignoring case: <ins>green</ins> words the record adds, "
    '<mark title="the reference has other words here">yellow</mark> words that replace different words '
    "of the reference (hover to see them), <del>red, struck through</del> words of the reference the "
    "record lacks. Distance is {distance}; similarity, where given, the score it "
    "was verified with.</p>"
)
# What a distance counts, as the legend says it.
_DISTANCE = {"word edit distance": "the word edit distance of a pair",
             "fields that differ": "the number of fields that differ in a pair"}


def esc(value: object) -> str:
    """Text for HTML content or a quoted attribute: record text is untrusted."""
    return html.escape(str(value), quote=True)


def diff_words(reference: str, text: str) -> str:
    """HTML of ``text`` with the words that differ from ``reference`` marked.

    Words are compared case-folded (case rarely tells records apart) but shown
    as written.
    """
    old, new = reference.split(), text.split()
    matcher = SequenceMatcher(None, [w.casefold() for w in old], [w.casefold() for w in new], autojunk=False)
    parts = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        added, removed = esc(" ".join(new[j1:j2])), esc(" ".join(old[i1:i2]))
        if tag == "equal":
            parts.append(added)
        elif tag == "insert":
            parts.append(f"<ins>{added}</ins>")
        elif tag == "replace":
            parts.append(f'<mark title="reference: {removed}">{added}</mark>')
        else:
            parts.append(f"<del>{removed}</del>")
    return " ".join(parts)


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _image(path: Path) -> str:
    mime = _IMAGE_TYPES.get(path.suffix.lower(), "application/octet-stream")
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure><img src="data:{mime};base64,{data}" alt="{esc(path.name)}">'
            f"<figcaption>{esc(path.name)}</figcaption></figure>")


def _member_rows(cluster: Cluster, texts: Mapping[str, str], max_rows: int) -> list[str]:
    reference = texts.get(cluster.members[0]) if cluster.members else None
    rows = []
    for position, member in enumerate(cluster.members[:max_rows]):
        text = texts.get(member)
        if text is None:
            cell = '<span class="missing">(text not available)</span>'
        elif position == 0 or reference is None:
            cell = esc(" ".join(text.split()))
        else:
            cell = diff_words(reference, text)
        css = ' class="reference"' if position == 0 else ""
        rows.append(f'<tr{css}><td class="id">{esc(member)}</td><td class="text">{cell}</td></tr>')
    return rows


def _pair_table(pairs: Sequence[Pair], max_rows: int) -> str:
    if not pairs:
        return ""
    with_similarity = any(getattr(p, "similarity", None) is not None for p in pairs)
    with_probability = any(getattr(p, "probability", None) is not None for p in pairs)
    explained = any(getattr(p, "explanation", None) for p in pairs)
    head = ("<tr><th>pair</th><th>distance</th>" + ("<th>similarity</th>" if with_similarity else "")
            + ("<th>probability</th>" if with_probability else "") + ("<th>why</th>" if explained else "") + "</tr>")
    rows = []
    for p in pairs[:max_rows]:
        distance = getattr(p, "distance", None)
        similarity = getattr(p, "similarity", None)
        probability = getattr(p, "probability", None)
        cells = (f'<td class="id">{esc(p[0])} – {esc(p[1])}</td>'
                 f'<td class="num">{"" if distance is None else esc(distance)}</td>')
        if with_similarity:
            cells += f'<td class="num">{"" if similarity is None else f"{similarity:.4f}"}</td>'
        if with_probability:
            cells += f'<td class="num">{"" if probability is None else f"{probability:.4f}"}</td>'
        if explained:
            cells += f'<td class="why">{why_cell(getattr(p, "explanation", None))}</td>'
        rows.append(f"<tr>{cells}</tr>")
    more = f'<p class="small">… and {len(pairs) - max_rows} more pairs.</p>' if len(pairs) > max_rows else ""
    return f'<table class="pairs">{head}{"".join(rows)}</table>{more}'


def why_cell(explanation: str | None) -> str:
    """A pair's explanation in brief as a waterfall: each step on a line,
    its weight after it, those for the pair green and those against red."""
    if not explanation:
        return ""
    steps = []
    for step in explanation.split("; "):
        what, _, weight = step.rpartition(" ")
        sign = "for" if weight.startswith("+") else "against"
        steps.append(f'<span class="{sign}">{esc(what)} <b>{esc(weight)}</b></span>')
    return "<br>".join(steps)


def render(
    clusters: Sequence[Cluster],
    texts: Mapping[str, str],
    pairs: Iterable[Pair],
    *,
    title: str = "Near-duplicate clusters",
    summary: Mapping[str, str | int | float] | None = None,
    images: Iterable[Path | str] = (),
    max_clusters: int = MAX_CLUSTERS,
    max_rows: int = MAX_ROWS,
) -> str:
    """The report page as one HTML string.

    ``texts`` maps record ids to their text; "records" in the summary is its
    length unless ``summary`` names "records" itself (items of ``summary``
    replace computed ones of the same name and are shown after them
    otherwise). ``images`` that do not exist are left out. Only the first
    ``max_clusters`` clusters (the largest, in the clusters' order) and the
    first ``max_rows`` members and pairs of each are shown, with a note
    saying what was left out, so a huge result still gives a page a browser
    opens quickly.
    """
    pairs = list(pairs)
    shown = list(clusters[:max(max_clusters, 0)])
    by_cluster = pairs_by_cluster(shown, pairs)
    out = [
        *_head(title),
        *_summary(_numbers(clusters, texts, pairs, summary)),
        *_figures(images),
        _LEGEND.format(distance=_DISTANCE[distance_name(pairs)]),
        *_notes(clusters, shown),
        *(_cluster_section(cluster, texts, by_cluster[cluster.id], max_rows) for cluster in shown),
        "</body></html>",
    ]
    return "\n".join(out) + "\n"


def _numbers(clusters: Sequence[Cluster], texts: Mapping[str, str], pairs: list[Pair],
             summary: Mapping[str, str | int | float] | None) -> dict[str, str | int | float]:
    """The summary's figures: counted ones, then (or replaced by) the given ones."""
    sizes = [c.size for c in clusters]
    numbers: dict[str, str | int | float] = {
        "records": len(texts),
        "pairs": len(pairs),
        "clusters": len(clusters),
        "largest cluster": max(sizes, default=0),
        "records in clusters": sum(sizes),
    }
    numbers.update(summary or {})
    return numbers


def _head(title: str) -> list[str]:
    """The document's start: the policy that allows no script, the style, the title."""
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
    ]


def _summary(numbers: Mapping[str, str | int | float]) -> list[str]:
    return [
        '<dl class="summary">',
        *(f"<div><dt>{esc(name)}</dt><dd>{esc(_number(value))}</dd></div>" for name, value in numbers.items()),
        "</dl>",
    ]


def _figures(images: Iterable[Path | str]) -> list[str]:
    """The images that exist, inline."""
    figures = [_image(Path(p)) for p in images if Path(p).is_file()]
    return [f'<div class="figures">{"".join(figures)}</div>'] if figures else []


def _notes(clusters: Sequence[Cluster], shown: Sequence[Cluster]) -> list[str]:
    """What the page leaves out, or that there is nothing to show."""
    notes = []
    left_out = clusters[len(shown):]
    if left_out:
        notes.append(f'<p class="note">Showing the {len(shown)} largest clusters; {len(left_out)} smaller clusters '
                     f"({sum(c.size for c in left_out)} records) are left out.</p>")
    if not clusters:
        notes.append('<p class="note">No clusters: no near-duplicate pairs were found.</p>')
    return notes


def _cluster_section(cluster: Cluster, texts: Mapping[str, str], pairs: list[Pair], max_rows: int) -> str:
    """One cluster: its members' texts (differences marked), then its pairs."""
    members = _member_rows(cluster, texts, max_rows)
    extra = cluster.size - len(members)
    ordered = sorted(pairs, key=lambda p: (id_key(p[0]), id_key(p[1])))
    return (
        f'<section class="cluster" id="cluster-{esc(cluster.id)}">'
        f"<h2>Cluster {esc(cluster.id)} · {cluster.size} records</h2>"
        f'<table class="members"><tr><th>id</th><th>text</th></tr>{"".join(members)}</table>'
        + (f'<p class="small">… and {extra} more records.</p>' if extra > 0 else "")
        + _pair_table(ordered, max_rows)
        + "</section>"
    )


def write_report(path: Path | str, page: str) -> Path:
    """Write a rendered page; it appears only when complete."""
    with atomic_output(path) as out:
        out.write(page)
    return Path(path)
