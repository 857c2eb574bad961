"""Synthetic documents of real English prose with known near copies.

``python -m bench.documents --n 2000 --seed 1 --out-dir bench/data/documents``
writes ``records.txt`` (``ID TEXT``, one document a line, ids 1..N in file
order) and ``true_pairs.tsv`` (every pair of copies of one document, smaller
id first), as ``bench.generate`` does for business records.

The prose is text CPython ships with itself, so any machine with Python has
it and nothing is downloaded: the help topics of ``pydoc_data.topics`` (the
language reference's chapters as ``help()`` shows them) and the docstrings
of the standard library's own modules, read from their source files with
``ast`` (nothing is imported; tests and IDLE are left out). Their prose
paragraphs, not grammar, code, examples, argument lists or headings, are
cut into sentences: about 11,000 distinct ones, 165,000 words. A pool that
large keeps documents that are not copies apart: two of them rarely share a
sentence. The text changes a little with each Python release, so the same
seed and size give the same bytes under the same Python version; reading
the sources takes a few seconds, once per process.

A document is 100-600 words: paragraphs, each a run of one to four
consecutive sentences from a random place in that prose, until a length
drawn for the document is reached. Three in ten documents end with one of
three boilerplate footers (a notice a site prints under every page), so
many documents that are not copies of each other share a paragraph.

A tenth of the documents sit in clusters of 2-5: an original and near copies
of it, each made by two to four edits: a paragraph moved elsewhere, a
sentence dropped (at most one in five), a sentence from elsewhere added.
A copy keeps most of its original's sentences; two copies of one original
are a true pair too.

Documents are made one at a time, each from a random generator of its own,
and written as they are made: 400,000 of them never sit in memory.
"""

from __future__ import annotations

import ast
import itertools
import random
import re
import sysconfig
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from .generate import Layout, command_line

# Lengths in words: every document, copies included, stays within 100-600;
# an original aims at 120-520 so a copy's added sentences and a footer fit.
MIN_WORDS, MAX_WORDS = 100, 600
TARGET = (120, 520)
RUN = (1, 4)  # sentences in one paragraph
MAX_SENTENCE = 50  # words
# Folders of the standard library whose docstrings are not prose about the library.
LEFT_OUT = {"test", "tests", "idlelib", "lib2to3", "site-packages", "dist-packages", "__pycache__"}
FOOTER_SHARE = 0.3
EDITS = (2, 4)

FOOTERS = (
    "This page is part of a collection of notes kept for readers of the language reference. It is provided as "
    "is, without warranty of any kind. Corrections and suggestions are welcome; please mention the title of the "
    "page and the sentence in question when you write to the editors.",
    "The text above may be copied and shared for teaching and study, provided that this notice is kept with it "
    "and that any changes are marked as such. For any other use, ask the publisher for permission in writing "
    "before you reprint, translate or sell it.",
    "You are reading an archived copy of this document. Links in it may point to pages that have moved or no "
    "longer exist, and some details may be out of date. For the current version, see the main site, where the "
    "same material is kept up to date by its maintainers.",
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"(‘“*])")
_UNDERLINE = set("*=-~^")


def _prose(block: str, previous: str) -> str | None:
    """A block of a help topic as one line of prose, or None for grammar,
    code, examples and headings."""
    lines = block.split("\n")
    text = re.sub(r"^\*+\s+", "", " ".join(line.strip() for line in lines))  # a bullet's text is prose
    if previous.rstrip().endswith(":") and block.startswith(" "):
        return None  # a literal block: code or an example
    if len(lines) >= 2 and set(lines[-1].strip()) <= _UNDERLINE:
        return None  # a heading
    if not text.endswith(".") or "::=" in text or ">>>" in text or not re.match(r"[A-Z\"*“‘(]", text):
        return None
    letters = sum(c.isalpha() or c == " " for c in text) / len(text)
    # Prose has at least 8 words and is mostly letters; code and tables are not.
    return text if len(text.split()) >= 8 and letters >= 0.85 else None


def _topic_blocks() -> Iterator[str]:
    """The prose blocks of the help topics, in topic order."""
    from pydoc_data.topics import topics

    for name in sorted(topics):
        previous = ""
        for block in re.split(r"\n\s*\n", topics[name]):
            text = _prose(block, previous)
            previous = block
            if text:
                yield text


def _docstring_blocks() -> Iterator[str]:
    """The prose blocks of the docstrings of the standard library's own
    modules (tests left out), read from their source without importing them."""
    lib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(lib.rglob("*.py")):
        if LEFT_OUT & set(path.relative_to(lib).parts):
            continue
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue  # a file this Python cannot parse holds no prose for us
        for docstring in _docstrings(tree):
            for block in re.split(r"\n\s*\n", docstring):
                # An indented line in a cleaned docstring is code, a table or a list of arguments.
                text = None if re.search(r"^\s", block, re.M) else _prose(block, "")
                if text:
                    yield text


def _docstrings(node: ast.AST) -> Iterator[str]:
    """The docstrings of a module and of the classes and functions defined in
    it, nested ones too, in source order (only bodies that can hold them are visited)."""
    docstring = ast.get_docstring(node)
    if docstring:
        yield docstring
    for child in node.body:
        if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _docstrings(child)


@lru_cache(maxsize=1)
def paragraphs() -> tuple[tuple[str, ...], ...]:
    """The prose paragraphs, each a tuple of sentences: the help topics, then the docstrings."""
    found, seen = [], set()
    for text in itertools.chain(_topic_blocks(), _docstring_blocks()):
        # Sources repeat some sentences; each is kept once, so documents that
        # are not copies share no more text than chance gives them. Longer
        # "sentences" are lists or tables run together.
        sentences = [s for s in (" ".join(s.split()) for s in _SENTENCE_END.split(text))
                     if s not in seen and len(s.split()) <= MAX_SENTENCE]
        seen.update(sentences)
        if sentences:
            found.append(tuple(sentences))
    return tuple(found)


def _words(document: list[list[str]]) -> int:
    return sum(len(sentence.split()) for paragraph in document for sentence in paragraph)


def _run(rng: random.Random) -> list[str]:
    """One to four consecutive sentences from a random paragraph of the reference."""
    source = rng.choice(paragraphs())
    start = rng.randrange(len(source))
    return list(source[start : start + rng.randint(*RUN)])


class Documents(Layout):
    """Which document sits where, and each document's paragraphs."""

    def base(self, i: int) -> tuple[list[list[str]], str | None]:
        """Document ``i``'s paragraphs and its footer (or None)."""
        rng = random.Random(f"{self.seed}:document:{i}")
        target = rng.randint(*TARGET)
        footer = rng.choice(FOOTERS) if rng.random() < FOOTER_SHARE else None
        room = MAX_WORDS - len(footer.split()) if footer else MAX_WORDS
        document: list[list[str]] = []
        words = 0
        while words < target:
            run = _run(rng)
            while run and words + _words([run]) > min(room, TARGET[1]):
                run.pop()
            if not run:
                break  # even its first sentence would not fit
            document.append(run)
            words += _words([run])
        return document, footer

    def copy(self, logical: int, base: int) -> tuple[list[list[str]], str | None]:
        """A near copy of ``base``: two to four edits, within the length limits."""
        rng = self.variant_rng(logical)
        document, footer = self.base(base)
        sentences = sum(map(len, document))
        footer_words = len(footer.split()) if footer else 0
        dropped, made, wanted = 0, 0, rng.randint(*EDITS)
        while made < wanted:  # count only the edits that change the document
            before = [list(p) for p in document]
            how = rng.randrange(3)
            words = _words(document) + footer_words
            if how == 0 and len(document) >= 2:
                moved = document.pop(rng.randrange(len(document)))
                document.insert(rng.randrange(len(document) + 1), moved)
            elif how == 1 and (dropped + 1) * 5 <= sentences:  # at most one sentence in five goes
                paragraph = rng.choice(document)
                at = rng.randrange(len(paragraph))
                if words - len(paragraph[at].split()) >= MIN_WORDS:
                    del paragraph[at]
                    dropped += 1
                    document = [p for p in document if p]
            else:
                added = _run(rng)[0]
                if words + len(added.split()) <= MAX_WORDS:
                    paragraph = rng.choice(document)
                    paragraph.insert(rng.randrange(len(paragraph) + 1), added)
            made += document != before
        return document, footer

    def text(self, logical: int) -> str:
        base = self.original(logical)
        document, footer = self.base(logical) if base is None else self.copy(logical, base)
        return " ".join([*(sentence for paragraph in document for sentence in paragraph), *([footer] if footer else [])])


def generate(n: int, seed: int, out_dir: Path) -> tuple[Path, Path]:
    """Write ``records.txt`` and ``true_pairs.tsv`` into ``out_dir``."""
    documents = Documents(n, seed)
    return documents.write(out_dir, documents.text)


def main(argv: list[str] | None = None) -> None:
    command_line("python -m bench.documents", __doc__,
                 "python -m bench.documents --n 2000 --seed 1 --out-dir bench/data/documents",
                 lambda args: generate(args.n, args.seed, args.out_dir), argv)


if __name__ == "__main__":
    main()
