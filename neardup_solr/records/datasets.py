"""The restaurant benchmark: Fodor's and Zagat's guides, 864 records, 112 true pairs.

Two sources give the same restaurants:

- the raw guide lines (``fodors.txt``, ``zagats.txt``) the reference workflow
  used, turned into ``addresses.txt`` by :func:`guide_records`;
- the cleaned CSV copy shipped in the py_entitymatching 0.4.2 source
  distribution on PyPI (BSD licence), with its own ids and matches file,
  fetched and checked by SHA-256 by :func:`fetch_restaurants`: the copy the
  demo, the docs' figures and the tests use.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path

import requests

from ..errors import NeardupError
from ..files import atomic_output, read_text

# Reference numbering: Fodor's records first, then Zagat's; each line is cut
# before its phone number, whose shape differs between the guides.
FODORS_PHONE = re.compile(r"\d{3}/")
ZAGATS_PHONE = re.compile(r"\d{3}-")

SDIST = "py-entitymatching-0.4.2.tar.gz"
SDIST_SHA256 = "3656a8ab0bdce297ed3ae13c890c0091deeae79367aad44e3f84effd44b60f7f"
SDIST_PROJECT = "py-entitymatching"
SDIST_FOLDER = "py-entitymatching-0.4.2/py_entitymatching/datasets/end-to-end/restaurants/"


def guide_texts(path: Path, phone: re.Pattern[str]) -> Iterator[str]:
    """Each non-empty line of a guide, cut before its phone number."""
    for line in read_text(path).splitlines():
        if not line.strip():
            continue
        found = phone.search(line)
        yield (line[: found.start()] if found else line).strip()


def guide_records(fodors: Path, zagats: Path) -> list[str]:
    """``addresses.txt`` lines, ``N text``, numbered from 1 over both guides."""
    texts = [*guide_texts(fodors, FODORS_PHONE), *guide_texts(zagats, ZAGATS_PHONE)]
    return [f"{number} {text}" for number, text in enumerate(texts, start=1)]


def _index_url() -> str:
    return os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")


def download_sdist(cache: Path) -> Path:
    """The py_entitymatching sdist, from the package index, checked by SHA-256
    (kept in ``cache``; a copy there with another SHA-256 is fetched again)."""
    target = cache / SDIST
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == SDIST_SHA256:
        return target
    index = f"{_index_url()}/{SDIST_PROJECT}/"
    try:
        # The listing is a few kilobytes; the source distribution some
        # megabytes, which a slow line may take minutes to bring.
        listing = requests.get(index, headers={"Accept": "application/vnd.pypi.simple.v1+json"}, timeout=60)
        listing.raise_for_status()
        url = next(f["url"] for f in listing.json()["files"] if f["filename"] == SDIST)
        body = requests.get(url, timeout=300)
        body.raise_for_status()
    except (requests.RequestException, ValueError, KeyError, StopIteration) as err:
        raise NeardupError(
            f"could not download {SDIST} from {index}: {type(err).__name__} {err}",
            hint="check network access to the package index (PIP_INDEX_URL)",
        ) from None
    if hashlib.sha256(body.content).hexdigest() != SDIST_SHA256:
        raise NeardupError(f"{SDIST} from {index} does not have the expected SHA-256")
    cache.mkdir(parents=True, exist_ok=True)
    partial = cache / f"{SDIST}.part-{os.getpid()}"
    partial.write_bytes(body.content)
    os.replace(partial, target)  # whole or not at all, also with another process fetching it
    return target


def fetch_restaurants(out_dir: Path, cache: Path | None = None) -> tuple[Path, Path]:
    """Write the CSV copy's records and matches to ``out_dir``, keeping its
    own ids (Fodor's 534-1066, Zagat's 1-331); returns the paths of the
    first two:

    - ``addresses.txt``: ``id name addr city`` lines, both guides;
    - ``gold_pairs.tsv``: the 112 matches, ``fodors_id<TAB>zagats_id``;
    - ``fodors.csv``, ``zagats.csv``: each guide as a table (``id,name,addr,city``),
      to link as two sources;
    - ``gold_links.tsv``: the matches as records of those sources
      (``fodors ID zagats ID``);
    - ``LICENSE.py_entitymatching``: the copy's licence.

    The source distribution is kept in ``cache`` (default ``out_dir``).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    sdist = download_sdist(cache or out_dir)
    with tarfile.open(sdist) as tar:
        def table(name: str) -> list[dict[str, str]]:
            member = tar.extractfile(SDIST_FOLDER + name)
            return list(csv.DictReader(io.TextIOWrapper(member, encoding="utf-8")))

        fodors, zagats = table("fodors.csv"), table("zagats.csv")
        matches = table("matches_fodors_zagats.csv")
        licence = tar.extractfile("py-entitymatching-0.4.2/LICENSE").read()
    columns = ("name", "addr", "city")
    addresses = out_dir / "addresses.txt"
    gold = out_dir / "gold_pairs.tsv"
    with atomic_output(addresses) as out:
        out.write("".join(f"{r['id']} {' '.join(r[k].strip() for k in columns)}\n" for r in fodors + zagats))
    with atomic_output(gold) as out:
        out.write("".join(f"{m['fodors_id']}\t{m['zagats_id']}\n" for m in matches))
    for name, rows in (("fodors.csv", fodors), ("zagats.csv", zagats)):
        with atomic_output(out_dir / name) as out:
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(("id", *columns))
            writer.writerows([r["id"], *(r[k].strip() for k in columns)] for r in rows)
    with atomic_output(out_dir / "gold_links.tsv") as out:
        out.write("".join(f"fodors\t{m['fodors_id']}\tzagats\t{m['zagats_id']}\n" for m in matches))
    with atomic_output(out_dir / "LICENSE.py_entitymatching", binary=True) as out:
        out.write(licence)
    return addresses, gold
