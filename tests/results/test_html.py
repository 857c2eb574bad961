"""The HTML report: escaping checked by parsing, then the real page in a real
headless Chromium (Debian's, driven by Playwright), which also takes the
screenshot docs/usage.md shows (tests/artifacts/report.png)."""

from __future__ import annotations

import base64
import re
import shutil
from html.parser import HTMLParser

from conftest import ARTIFACTS, run_cli, write_records

from neardup_solr.results import plots
from neardup_solr.results.clusters import Cluster, cluster_pairs
from neardup_solr.results.html import diff_words, render, write_report
from neardup_solr.results.pairs import Pair


TEXTS = {
    "1": "Arnie Morton's of Chicago 435 S. La Cienega Blvd. Los Angeles",
    "534": "Arnie Morton's 435 S. La Cienega Boulevard Los Angeles",
    "2": "Art's Delicatessen 12224 Ventura Blvd. Studio City",
    "535": "Art's Deli 12224 Ventura Blvd. Studio City",
    "760": "Arts Deli 12224 Ventura Boulevard Studio City CA",
    "7": '<script>alert(1)</script> Café "Le Chat" & Co 12 Rue d\'Été',
    "x-9": '<script>alert(1)</script> Cafe "Le Chat" &amp; Co 12 Rue d\'Ete',
    "e:1": "<img src=x onerror=alert(2)> Straße 5 München",
    "e:2": "<img src=x onerror=alert(2)> Strasse 5 München </td></table><b>bold",
    "40": "Hotel Bel-Air 701 Stone Canyon Rd. Bel Air",
    "41": "Hotel Bel-Air 701 Stone Canyon Road Bel Air",
    "99": "a record in no cluster",
}
PAIRS = [
    Pair("1", "534", 3, 0.8412),
    Pair("2", "535", 1, 0.8123),
    Pair("535", "760", 3, 0.7301),
    Pair("7", "x-9", 3, 0.7712),
    Pair("e:1", "e:2", 5, 0.7055),
    Pair("40", "41", 1, 0.9310),
]
HOSTILE = [TEXTS["7"], TEXTS["x-9"], TEXTS["e:1"]]


class Page(HTMLParser):
    """What a browser would build from the markup: tags, attributes, text."""

    def __init__(self, markup: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []
        self.chunks: list[str] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend((tag, name, value) for name, value in attrs)

    def handle_data(self, data):
        self.chunks.append(data)

    @property
    def text(self) -> str:
        return "".join(self.chunks)


def report(**kwargs) -> str:
    clusters = cluster_pairs(PAIRS)
    options = {"title": "Near duplicates <&> \"test\"", "summary": {"mode": "lsh", "f1": 0.9651}, "images": []}
    return render(clusters, TEXTS, PAIRS, **{**options, **kwargs})


def test_clusters_of_the_sample():
    assert [list(c.members) for c in cluster_pairs(PAIRS)] == [
        ["2", "535", "760"], ["1", "534"], ["7", "x-9"], ["40", "41"], ["e:1", "e:2"]]


def test_hostile_text_is_escaped_not_markup():
    markup = report()
    page = Page(markup)
    assert "script" not in page.tags
    assert set(page.tags) <= {"html", "head", "meta", "link", "title", "style", "body", "h1", "h2", "dl", "div", "dt",
                              "dd", "p", "ins", "mark", "del", "section", "table", "tr", "th", "td", "span", "figure",
                              "img", "figcaption"}
    assert page.tags.count("img") == 0 and page.tags.count("b") == 0
    assert not [a for a in page.attrs if a[1].startswith("on")]
    for tag, name, value in page.attrs:
        if name in ("src", "href"):
            assert value.startswith("data:"), (tag, name, value)
    # The reference member of each cluster is shown whole, exactly as written.
    for text in (TEXTS["7"], TEXTS["e:1"]):
        assert text in page.text
    assert "&amp; Co" in page.text  # a literal "&amp;" in a record stays literal
    assert "&amp;amp;" in markup
    assert "Near duplicates <&> \"test\"" in page.text
    assert "<script>" not in markup and "<img src=x" not in markup


def test_summary_numbers_come_first():
    page = Page(report()).text
    summary = page[: page.index("Cluster 1")]
    for label, value in [("records", "12"), ("pairs", "6"), ("clusters", "5"), ("largest cluster", "3"),
                         ("records in clusters", "11"), ("mode", "lsh"), ("f1", "0.9651")]:
        assert re.search(rf"{re.escape(label)}\s*{re.escape(value)}\b", summary), (label, value, summary)


def test_summary_items_replace_computed_ones():
    page = Page(report(summary={"records": 864})).text
    assert re.search(r"records\s*864", page) and not re.search(r"records\s*12\b", page)


def test_every_cluster_member_and_pair_is_shown():
    page = Page(report()).text
    for cluster in cluster_pairs(PAIRS):
        assert f"Cluster {cluster.id} · {cluster.size} records" in page
    for p in PAIRS:
        assert f"{p.a} – {p.b}" in page and f"{p.similarity:.4f}" in page


def test_diff_marks_inserted_replaced_and_missing_words():
    assert diff_words("a b c", "a b c") == "a b c"
    assert diff_words("a b c", "a B c") == "a B c"  # case is not a difference
    assert diff_words("a b c", "a b x c") == "a b <ins>x</ins> c"
    assert diff_words("a b c", "a y c") == 'a <mark title="reference: b">y</mark> c'
    assert diff_words("a b c", "a c") == "a <del>b</del> c"
    assert diff_words("<b>", "<i> &") == '<mark title="reference: &lt;b&gt;">&lt;i&gt; &amp;</mark>'


def test_the_first_member_is_the_reference_and_others_are_diffed():
    markup = report()
    assert "Deli <mark" not in markup
    assert '<mark title="reference: Delicatessen">Deli</mark>' in markup
    assert '<mark title="reference: Blvd.">Boulevard</mark> Studio City <ins>CA</ins>' in markup


def test_missing_text_is_said():
    page = Page(render([Cluster("1", ("1", "2"))], {"1": "only one"}, [("1", "2")], title="t", summary={},
                       images=[])).text
    assert "(text not available)" in page and "only one" in page


def test_pairs_without_similarity_have_no_similarity_column():
    markup = render(cluster_pairs([Pair("1", "2", 2)]), {"1": "a b", "2": "a c"}, [Pair("1", "2", 2)], title="t",
                    summary={}, images=[])
    assert "similarity</th>" not in markup and "<td class=\"num\">2</td>" in markup


def test_many_clusters_are_capped_with_a_note():
    pairs = [(str(2 * i), str(2 * i + 1)) for i in range(30)] + [("100", "101"), ("101", "102")]
    clusters = cluster_pairs(pairs)
    page = Page(render(clusters, {}, pairs, title="t", summary={}, images=[], max_clusters=10)).text
    assert "Cluster 10 ·" in page and "Cluster 11 ·" not in page
    assert "Showing the 10 largest clusters; 21 smaller clusters (42 records) are left out." in page


def test_big_clusters_are_capped_with_a_note():
    pairs = [("0", str(i)) for i in range(1, 50)]
    page = Page(render(cluster_pairs(pairs), {}, pairs, title="t", summary={}, images=[], max_rows=10)).text
    assert "… and 40 more records." in page and "… and 39 more pairs." in page


def test_no_clusters():
    assert "No clusters" in Page(render([], {"1": "x"}, [], title="t", summary={}, images=[])).text


def test_images_are_embedded_and_missing_ones_left_out(tmp_path):
    png = plots.similarity_histogram(tmp_path / "pairs.png", [0.8, 0.9, 0.95], [0.71], "similarity")
    markup = report(images=[png, tmp_path / "absent.png"])
    [src] = [v for tag, name, v in Page(markup).attrs if tag == "img" and name == "src"]
    assert src.startswith("data:image/png;base64,")
    assert base64.b64decode(src.split(",", 1)[1]) == png.read_bytes()
    assert "absent.png" not in markup


def test_same_input_same_page():
    assert report() == report()


def test_same_page_from_processes_with_different_hash_seeds(tmp_path):
    """Nothing on the page follows the order of a set or dict of strings,
    which changes with PYTHONHASHSEED from one process to the next."""
    texts = dict(TEXTS)
    pairs = [f"{p.a}\t{p.b}\t{p.distance}\t{p.similarity}" for p in PAIRS]
    for n in range(20):  # many clusters of one size, ids that sort apart as text and as numbers
        a, b, c = f"k{n}", f"{n * 7 + 100}", f"z-{n}"
        texts.update({a: f"Kitchen {n} on Elm Street", b: f"Kitchen {n} on Elm St", c: f"Kitchen {n} Elm Street"})
        pairs += [f"{b}\t{a}\t1\t0.91", f"{c}\t{a}\t2\t0.82"]
    records = write_records(tmp_path / "records.txt", [f"{i} {t}" for i, t in texts.items()])
    (tmp_path / "pairs.tsv").write_text("".join(line + "\n" for line in pairs))
    pages = []
    for seed in ("1", "2"):
        out = tmp_path / f"report-{seed}.html"
        done = run_cli("html", str(tmp_path / "pairs.tsv"), "-o", str(out), "--records", str(records),
                       env={"PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stderr
        pages.append(out.read_bytes())
    assert pages[0] == pages[1]
    # Each cluster named by its smallest member: the last kitchen (19 * 7 + 100), and e:1 (after 1, 7 and 40).
    assert "Cluster 233 · 3 records" in pages[0].decode() and "Cluster e:1 · 2 records" in pages[0].decode()


# --- in a real browser ----------------------------------------------------


def test_report_in_a_real_browser(browser, tmp_path):
    png = plots.similarity_histogram(tmp_path / "pairs.png", [0.94, 0.93, 0.81, 0.77], [0.73, 0.71], "similarity")
    clusters = cluster_pairs(PAIRS)
    page_file = write_report(tmp_path / "report.html", render(
        clusters, TEXTS, PAIRS, title="Near-duplicate clusters", images=[png],
        summary={"mode": "default (LSH)", "cut": 0.7}))

    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda msg: errors.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda err: errors.append(f"page error: {err}"))
    page.on("dialog", lambda dialog: (errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.on("request", lambda request: requests.append(request.url))
    page.goto(page_file.as_uri(), wait_until="load")

    body = page.inner_text("body")
    assert page.locator("script").count() == 0
    for cluster in clusters:
        section = page.locator(f'[id="cluster-{cluster.id}"]')
        assert section.locator("h2").inner_text() == f"Cluster {cluster.id} · {cluster.size} records"
        assert section.locator("table.members td.id").all_inner_texts() == list(cluster.members)
        assert f"Cluster {cluster.id}" in body
        for member in cluster.members:
            assert member in body
    for text in HOSTILE[:1] + HOSTILE[2:]:  # the references, shown as written
        assert text in body
    assert page.locator("img").evaluate_all("imgs => imgs.map(i => i.complete && i.naturalWidth > 0)") == [True]
    assert all(url.startswith(("file:", "data:")) for url in requests), requests

    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copyfile(shot, ARTIFACTS / "report.png")
    context.close()
    assert shot.stat().st_size > 10_000
    assert errors == []


def test_the_legend_says_what_a_distance_counts():
    texts = {"1": "Ann Lee Paris", "2": "Ann Lee Lyon"}
    of_texts = render(cluster_pairs([Pair("1", "2", 1)]), texts, [Pair("1", "2", 1)], title="t", summary={}, images=[])
    assert "Distance is the word edit distance of a pair" in of_texts
    # Field records' pairs carry a probability and no similarity: their distance counts the fields that differ.
    fielded = [Pair("1", "2", 1, None, 0.97)]
    of_fields = render(cluster_pairs(fielded), texts, fielded, title="t", summary={}, images=[])
    assert "Distance is the number of fields that differ in a pair" in of_fields
    assert "word edit distance" not in of_fields
