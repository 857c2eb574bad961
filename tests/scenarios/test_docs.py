"""The README is a front door: short, and every other document is reachable
from it; no relative link in the README or docs/ leads nowhere. Claims the
documents make that the code can check are checked: the id rule they
state, and the columns of the files `neardup clusters` writes."""

import re
import shlex
from pathlib import Path

import pyarrow.parquet as pq

from conftest import ROOT, run_cli, write_records

from neardup_solr.records.record import ID_RULE, id_problem

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


def prose(path: Path) -> str:
    """A Markdown file's text outside code blocks, its lines joined as they are read."""
    return " ".join(re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M).split())


def test_the_id_rule_the_docs_state_is_the_one_the_records_follow():
    stated = [(doc.name, rule) for doc in documents() for rule in re.findall(r"id rule \(([^()]*)\)", prose(doc))]
    assert stated  # the rule is stated somewhere, and each statement of it is the code's
    assert [(name, rule) for name, rule in stated if rule.replace("`", "") != ID_RULE] == []
    examples = [ids for doc in documents() for ids in re.findall(r"((?:`[^`]+`,? (?:and )?)+)are ids", prose(doc))]
    given = [example for ids in examples for example in re.findall(r"`([^`]+)`", ids)]
    assert given and [(example, id_problem(example)) for example in given if id_problem(example)] == []


def documented_clusters_commands() -> list[tuple[str, list[str], list[str]]]:
    """Each `neardup clusters ... -o FILE  # columns...` line of a code block
    in the documents: where, its arguments, and the columns its comment
    names first (comma-separated), for the tables (not --json)."""
    found = []
    for doc in documents():
        for line in doc.read_text(encoding="utf-8").splitlines():
            command, _, comment = line.partition("#")
            if command.startswith("neardup clusters ") and "--json" not in command:
                named = re.search(r"\b([a-z_]+(?:,\s*[a-z_]+)+)", comment)
                assert named, f"{doc.name}: {line} (the comment does not name the columns)"
                found.append((doc.name, shlex.split(command)[1:], [c.strip() for c in named[1].split(",")]))
    return found


def written_columns(path: Path) -> list[str]:
    if path.suffix == ".parquet":
        return pq.read_schema(path).names
    return path.read_text(encoding="utf-8").splitlines()[0].split("," if path.suffix == ".csv" else "\t")


def test_the_clusters_files_hold_the_columns_the_docs_say(core, tmp_path):
    records = write_records(tmp_path / "records.txt", [
        "1 Art's Deli 12224 Ventura Blvd. Studio City", "2 Arts Deli 12224 Ventura Boulevard Studio City",
        "3 Hotel Bel-Air 701 Stone Canyon Rd. Bel Air", "4 Bel-Air Hotel 701 Stone Canyon Road Bel Air",
        "5 Philippe the Original 1001 N. Alameda St. Los Angeles"])
    assert run_cli("index", str(records), "--solr-url", core.url, "-q").returncode == 0
    for pairs in ("pairs.tsv", "pairs.csv"):
        assert run_cli("report", pairs, "--solr-url", core.url, "-q", cwd=tmp_path).returncode == 0
    commands = documented_clusters_commands()
    assert len(commands) >= 4
    for doc, args, columns in commands:
        out = tmp_path / args[args.index("-o") + 1]
        done = run_cli(*args, "--solr-url", core.url, cwd=tmp_path)
        assert done.returncode == 0, (doc, args, done.stderr)
        assert written_columns(out) == columns, (doc, args)
