"""The service's review page: a search box and a text's near duplicates,
rendered on the server as one page without script (the service's ``/``).

Every text is escaped; the page's policy allows no script, no frame and no
request beyond its own form."""

from __future__ import annotations

from collections.abc import Sequence

from .html_report import diff_words, esc
from .search import Match

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'"

_CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 70em; padding: 0 1em; color: #222; }
form { display: flex; gap: .5em; margin: 1em 0; }
input[type=search] { flex: 1; font: inherit; padding: .4em .6em; }
button { font: inherit; padding: .4em 1em; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3em .6em; border-bottom: 1px solid #ddd; vertical-align: top; }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
ins, mark, del { border-radius: 3px; padding: 0 .15em; }
ins { background: #c8f0c8; text-decoration: none; }
mark { background: #ffe28a; }
del { background: #fbd3d3; color: #8a1f1f; }
.error { color: #8a1f1f; }
.small { font-size: .85em; color: #555; }
"""


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def render_review(text: str = "", matches: Sequence[Match] | None = None, *, records: int | None = None,
                  error: str | None = None, hint: str | None = None) -> str:
    """The page: the search box (holding ``text``), then ``matches`` (each
    text's words that differ from ``text`` marked), or ``error`` and
    ``hint``; ``records`` is how many the index holds."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',
        f"<title>Near duplicates{esc(': ' + text) if text else ''}</title><style>{_CSS}</style></head><body>",
        "<h1>Near duplicates</h1>",
        '<form method="get" action="/" role="search">',
        f'<input type="search" name="text" value="{esc(text)}" placeholder="a record\'s text" '
        'aria-label="text to look up" autofocus required>',
        '<button type="submit">Find</button></form>',
    ]
    if records is not None:
        parts.append(f'<p class="small" id="records">{records:,} records indexed.</p>')
    if error is not None:
        parts.append(f'<p class="error" id="error">{esc(error)}</p>')
        if hint:
            parts.append(f'<p class="small" id="hint">{esc(hint)}</p>')
    elif matches is not None:
        if not matches:
            parts.append('<p id="none">No near duplicate found.</p>')
        else:
            parts.append(
                '<p class="small">Best first. In each text, <ins>green</ins> words the record adds to the one '
                'looked up, <mark>yellow</mark> words it has in place of others, <del>red</del> words it lacks.</p>')
            parts.append('<table id="matches"><thead><tr><th>similarity</th><th>probability</th><th>id</th>'
                         "<th>text</th></tr></thead><tbody>")
            for match in matches:
                parts.append(f'<tr><td class="num">{_number(match.similarity)}</td>'
                             f'<td class="num">{_number(match.probability)}</td><td class="id">{esc(match.id)}</td>'
                             f'<td class="text">{diff_words(text, match.text)}</td></tr>')
            parts.append("</tbody></table>")
    parts.append('<p class="small">The API: <a href="/docs">/docs</a>.</p></body></html>')
    return "\n".join(parts)
