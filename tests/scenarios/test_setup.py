"""scripts/setup says what it installs outside the project's .venv before it
does it, and the README's quick start says it too. The script runs from a
copy (its folder the copy's), with a PATH where apt-get and sudo record
that they were called and change nothing, and no Python to make a venv
with: it stops where the venv would be made."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from conftest import ROOT

STUB = """#!/bin/sh
echo "CALLED $(basename "$0") $*" >&2
{action}
"""


def setup_in_a_copy(tmp_path: Path, env: dict[str, str], apt_works: bool) -> subprocess.CompletedProcess:
    copy = tmp_path / "project"
    (copy / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup", copy / "scripts" / "setup")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dirname", "id", "basename", "sh", "false"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    (bin_dir / "apt-get").write_text(STUB.format(action="exit 0" if apt_works else "exit 100"))
    (bin_dir / "sudo").write_text(STUB.format(action='exec "$@"'))
    for stub in ("apt-get", "sudo"):
        (bin_dir / stub).chmod(0o755)
    return subprocess.run([shutil.which("bash"), str(copy / "scripts" / "setup"), "test"], capture_output=True,
                          text=True, timeout=120,
                          env={"PATH": str(bin_dir), "HOME": str(tmp_path), "PYTHON": str(bin_dir / "false"), **env})


def test_setup_says_it_installs_chromium_with_apt_get_before_it_does(tmp_path):
    done = setup_in_a_copy(tmp_path, {}, apt_works=True)
    lines = done.stderr.splitlines()
    said = next(n for n, line in enumerate(lines) if "installing Debian's chromium" in line)
    called = [n for n, line in enumerate(lines) if line.startswith("CALLED apt-get")]
    assert called and said < called[0], done.stderr
    assert "NEARDUP_CHROMIUM" in lines[said]  # how to do without it
    assert lines[called[-1]] == "CALLED apt-get install -y -qq chromium"
    assert done.returncode != 0 and not (tmp_path / "project" / ".venv").exists()  # stopped at the venv: no Python


def test_setup_stops_in_one_line_when_chromium_cannot_be_installed(tmp_path):
    done = setup_in_a_copy(tmp_path, {}, apt_works=False)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == ("scripts/setup: could not install chromium: install a Chromium yourself, "
                                            "or set NEARDUP_CHROMIUM to one")


def test_setup_installs_nothing_outside_the_venv_given_a_chromium(tmp_path):
    done = setup_in_a_copy(tmp_path, {"NEARDUP_CHROMIUM": "/opt/my-chromium"}, apt_works=True)
    assert "CALLED" not in done.stderr and "installing Debian's chromium" not in done.stderr
    assert "the browser tests use /opt/my-chromium" in done.stderr


def test_the_quick_start_says_what_the_test_setup_installs_and_how_to_skip_it():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme[readme.index("## Quick start"):readme.index("## Your own data")]
    assert "apt-get" in start and "chromium" in start and "sudo" in start and "NEARDUP_CHROMIUM" in start
    assert os.access(ROOT / "scripts" / "setup", os.X_OK)
