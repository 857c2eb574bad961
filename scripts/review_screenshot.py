"""docs/review.png: the review page's clusters, largest first, with some
labels, photographed in headless Chromium.

It builds what a user would have, with the command line: a local Solr of
its own (in a temporary folder, on a free port, stopped at the end), the
restaurant data indexed, `neardup report`'s pairs and `neardup serve
--pairs`. Then, in the browser, it labels every pair of the first clusters
through the page's own buttons, as the data's known matches say (same for
a gold pair, else different), leaves the next cluster unlabeled, and takes
the picture. The same data and the same commands give the same page.

    scripts/screenshot                        # fetches the restaurants from PyPI
    scripts/screenshot --restaurants DIR      # fodors.txt, zagats.txt, gold_pairs.tsv
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
# The first clusters of the page get labels; the one after them stays
# unlabeled, so the picture shows both. On the restaurants the two largest
# clusters join restaurants that share a hotel, so they hold both kinds.
LABELED_CLUSTERS = 2
VIEWPORT = {"width": 1100, "height": 900}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def neardup(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "neardup_solr", *args], check=True)


def restaurants(work: Path, given: Path | None) -> tuple[Path, Path]:
    """The records file and the gold pairs: prepared from ``given``'s guide files, or fetched."""
    if given is None:
        neardup("datasets", "restaurants", "-o", str(work / "data"))
        return work / "data" / "addresses.txt", work / "data" / "gold_pairs.tsv"
    neardup("prepare-restaurants", "--fodors", str(given / "fodors.txt"), "--zagats", str(given / "zagats.txt"),
            "-o", str(work / "addresses.txt"))
    return work / "addresses.txt", given / "gold_pairs.tsv"


def serving(url: str, process: subprocess.Popen) -> None:
    """Wait until the service answers."""
    # The service imports its web framework and connects first: a few seconds, a minute on a busy machine.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            requests.get(f"{url}/health", timeout=5)
            return
        except requests.ConnectionError:
            time.sleep(0.2)
    raise SystemExit("the service did not start")


def photograph(url: str, gold: set[frozenset[str]], chromium: str, out: Path) -> None:
    """Label the first clusters' pairs on the page and save the picture."""
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{url}/", wait_until="load")
        sections = page.locator("#clusters section.cluster")
        for cluster in range(LABELED_CLUSTERS):
            rows = sections.nth(cluster).locator("table.pairs tr[id]")
            for row in range(rows.count()):
                first, second = rows.nth(row).locator("td.id").inner_text().split(" – ")
                label = "same" if frozenset((first, second)) in gold else "different"
                rows.nth(row).locator(f"button[value={label}]").click()
                page.wait_for_load_state("load")
        page.goto(f"{url}/", wait_until="load")
        bottom = sections.nth(LABELED_CLUSTERS).bounding_box()
        page.screenshot(path=str(out), full_page=True,
                        clip={"x": 0, "y": 0, "width": VIEWPORT["width"], "height": bottom["y"] + bottom["height"] + 16})
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restaurants", type=Path, help="a folder with fodors.txt, zagats.txt and gold_pairs.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "review.png")
    parser.add_argument("--chromium", default=os.environ.get("NEARDUP_CHROMIUM") or shutil.which("chromium"),
                        help="Chromium to drive [default: $NEARDUP_CHROMIUM, else chromium on the PATH]")
    options = parser.parse_args()
    if not options.chromium:
        raise SystemExit("no Chromium: install it (apt-get install chromium) or give --chromium PATH")
    from neardup_solr.results.evaluate import read_gold

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        solr_port, port = free_port(), free_port()
        solr_url = f"http://127.0.0.1:{solr_port}/solr/neardup"
        neardup("solr", "start", "--port", str(solr_port), "--data-dir", str(work / "solr"))
        service = None
        try:
            records, gold = restaurants(work, options.restaurants)
            neardup("index", str(records), "--solr-url", solr_url, "--quiet")
            neardup("report", str(work / "pairs.tsv"), "--solr-url", solr_url, "--quiet")
            service = subprocess.Popen([sys.executable, "-m", "neardup_solr", "serve", "--port", str(port),
                                        "--solr-url", solr_url, "--pairs", str(work / "pairs.tsv"),
                                        "--labels", str(work / "labels.tsv"), "--log-level", "warning"])
            url = f"http://127.0.0.1:{port}"
            serving(url, service)
            photograph(url, read_gold(gold), options.chromium, options.out)
        finally:
            if service is not None:
                service.terminate()
                service.wait(timeout=30)
            neardup("solr", "stop", "--data-dir", str(work / "solr"))
    print(f"wrote {options.out}")


if __name__ == "__main__":
    main()
