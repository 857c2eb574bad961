"""The wheel is the product: built from the checkout, installed into a
fresh virtual environment in a folder away from the checkout, it starts the
local Solr and indexes, reports and queries the restaurants with nothing
from the checkout (its configset, the launcher's source and the list of
Solr's jars travel inside the package)."""

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, child_env, documented, free_port

pytestmark = pytest.mark.solr  # it starts a Solr of its own

# What the package must carry besides its modules.
CARRIED = {"neardup_solr/py.typed", "neardup_solr/solr_config/conf/schema.xml",
           "neardup_solr/solr_config/conf/solrconfig.xml", "neardup_solr/launcher/SolrLauncher.java",
           "neardup_solr/launcher/log4j2.xml", "neardup_solr/launcher/jars.txt"}


def run(*args, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd, env=env or child_env(),
                          timeout=900)
    assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done


def test_the_wheel_installed_alone_starts_solr_indexes_reports_and_queries(tmp_path, restaurants_dir):
    # The checkout's files, without what a clone leaves out, built into a wheel elsewhere.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info",
                                                                "__pycache__", ".pytest_cache", ".hypothesis", "data"))
    copied = set(os.listdir(source))
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--disable-pip-version-check", "-w",
        tmp_path / "dist", source, cwd=tmp_path)
    [wheel] = (tmp_path / "dist").glob("neardup_solr-*.whl")
    # What building leaves in a checkout (build/, the egg-info) is ignored by git.
    left = sorted(p.name + "/" * p.is_dir() for p in source.iterdir() if p.name not in copied)
    assert left and run("git", "check-ignore", "--no-index", *left, cwd=ROOT).stdout.split() == left
    names = set(zipfile.ZipFile(wheel).namelist())
    assert CARRIED <= names, CARRIED - names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert not any(name.startswith(("tests/", "bench/", "scripts/")) for name in names)

    # A fresh environment of its own (the core install: no extras), in a folder without the checkout.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # Installed from here, by the uv scripts/setup installed with (the test 37 s against 53 s with pip) or,
    # where uv is missing or fails (an index only pip is told of), by this pip (`--python`, pip 22.3 or
    # newer, as Python 3.11 has), which saves the fresh environment an installer of its own: what the
    # wheel brings is the same.
    venv.create(elsewhere / "venv", with_pip=False)
    bin_dir = elsewhere / "venv" / ("Scripts" if os.name == "nt" else "bin")
    uv = Path(sys.executable).with_name("uv")
    if not uv.exists() or subprocess.run(
            [uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", bin_dir / "python", wheel],
            capture_output=True, cwd=elsewhere, env=child_env(), timeout=900).returncode != 0:
        run(sys.executable, "-m", "pip", "--python", bin_dir / "python", "install", "--quiet",
            "--disable-pip-version-check", wheel, cwd=elsewhere)
    env = child_env({"PYTHONPATH": None, "VIRTUAL_ENV": None})
    where = run(bin_dir / "python", "-c", "import neardup_solr; print(neardup_solr.__file__)", cwd=elsewhere, env=env)
    assert Path(where.stdout.strip()).is_relative_to(elsewhere / "venv")
    shutil.copyfile(restaurants_dir / "addresses.txt", elsewhere / "addresses.txt")

    neardup = bin_dir / "neardup"
    port, data = free_port(), elsewhere / "solr"
    url = f"http://127.0.0.1:{port}/solr/neardup"
    run(neardup, "solr", "start", "--port", port, "--data-dir", data, "--exit-with", os.getpid(), cwd=elsewhere,
        env=env)
    try:
        run(neardup, "index", "addresses.txt", "--solr-url", url, "--quiet", cwd=elsewhere, env=env)
        run(neardup, "report", "pairs.tsv", "--solr-url", url, "--quiet", cwd=elsewhere, env=env)
        scored = run(neardup, "evaluate", "pairs.tsv", "--gold", restaurants_dir / "gold_pairs.tsv", "--no-plot",
                     cwd=elsewhere, env=env)
        assert scored.stdout.strip().splitlines()[-1] == documented("default")
        found = run(neardup, "query", "Art's Deli 12224 Ventura Blvd. Studio City", "--solr-url", url, cwd=elsewhere,
                    env=env)
        assert [line.split("\t")[2] for line in found.stdout.splitlines()][:2] == ["220", "535"]
    finally:
        run(neardup, "solr", "stop", "--data-dir", data, cwd=elsewhere, env=env)
