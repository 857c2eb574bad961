"""The README is a front door: short, and every other document is reachable
from it; no relative link in the README or docs/ leads nowhere."""

import re
from pathlib import Path

from conftest import ROOT

# The README holds what a newcomer needs first (what it is, quick start, own
# data, Python, linking, how it works in one screen, the table of documents);
# everything else lives in docs/. It was 54,617 characters before the split.
README_LIMIT = 12_000

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for a Markdown file's headings (outside code blocks)."""
    found, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := re.match(r"#{1,6} (.*)", line)):
            slug = re.sub(r"[^\w\- ]", "", heading[1].strip().lower()).replace(" ", "-")
            found.add(slug)
    return found


def relative_links(path: Path) -> list[str]:
    """The links of a Markdown file outside code blocks, other than to the web."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


def test_the_readme_is_under_its_limit():
    size = len((ROOT / "README.md").read_text(encoding="utf-8"))
    assert size < README_LIMIT, f"README.md is {size} characters; move detail to docs/"


def test_every_document_is_linked_from_the_readme():
    linked = {(ROOT / target.split("#")[0]).resolve() for target in relative_links(ROOT / "README.md")}
    docs = sorted((ROOT / "docs").glob("*.md"))
    assert docs
    assert [doc.name for doc in docs if doc.resolve() not in linked] == []


def test_every_relative_link_leads_to_a_file_and_heading_that_exist():
    broken = []
    for doc in documents():
        for target in relative_links(doc):
            file, _, anchor = target.partition("#")
            where = (doc.parent / file).resolve() if file else doc
            if not where.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_link_checker_sees_links_and_headings():
    """The checks above would pass vacuously if the patterns matched nothing."""
    readme = relative_links(ROOT / "README.md")
    assert "docs/usage.md#your-own-data" in readme and "bench/RESULTS.md" in readme
    assert "modes-of-neardup-report" in anchors(ROOT / "docs" / "how-it-works.md")
