"""What every benchmark writes into its results file (``RESULTS``, in the
untracked ``bench/out/``, unless ``--out`` names another): its section,
under the marker line, newest first, with the machine it ran on."""

from __future__ import annotations

import os
import platform
from importlib.metadata import version
from pathlib import Path

from neardup_solr.index.solr import Solr

# Runs write here by default, a folder git ignores: the tracked bench/RESULTS.md is the page of
# current figures, which a run would otherwise rewrite.
OUT = Path(__file__).resolve().parent / "out"
RESULTS = OUT / "RESULTS.md"

RUNS_MARKER = "<!-- bench.run adds each run's section below this line, newest first -->"

HEADER = """# Benchmark results

`python -m bench.run --corpus records|documents --n N` and `python -m bench.load` add a section here for each
run, newest first; earlier runs stay, each with the command that made it.

""" + RUNS_MARKER + "\n"


def add_section(out: Path, section: str) -> None:
    """Put this run's section first under the marker, keeping everything else."""
    text = out.read_text() if out.exists() else HEADER
    if RUNS_MARKER not in text:
        text = text.rstrip("\n") + "\n\n" + RUNS_MARKER + "\n"
    before, after = text.split(RUNS_MARKER, 1)
    section = section.rstrip("\n") + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(before + RUNS_MARKER + "\n\n" + section + "\n" + after.lstrip("\n") if after.strip()
                   else before + RUNS_MARKER + "\n\n" + section)


def machine(solr: Solr | None = None,
            packages: tuple[str, ...] = ("numpy", "mmh3", "datasketch", "pysolr", "neardup-solr")) -> dict[str, str]:
    """The machine, the versions of ``packages`` and, given a Solr, of Solr and its Java (one request)."""
    memory = next(line for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
    found = {
        "cores": str(os.cpu_count()), "memory": f"{int(memory.split()[1]) / 2**20:.1f} GiB",
        "python": platform.python_version(),
        **{name: version(name) for name in packages},
    }
    if solr is not None:
        info = solr.get(solr.admin_url("info/system"))
        found.update({"solr": info["lucene"]["solr-spec-version"], "java": info["jvm"]["version"]})
    return {**found, "os": platform.platform()}

