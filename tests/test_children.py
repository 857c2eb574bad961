"""The command lines the suite runs are the checkout under test: forked
from the warm interpreter, started afresh, or left to run, each imports
the package from this repository, whatever else the interpreter has
installed (an editable install of another checkout, say) and whatever
PYTHONPATH the suite was started with."""

from __future__ import annotations

import subprocess
import sys

import conftest
from conftest import ROOT, WarmCli, child_env, run_cli


def running_package(version_line: str) -> str:
    """The package folder `neardup --version` names (`neardup 0.1.0 from FOLDER (Python ...)`)."""
    assert " from " in version_line and " (Python " in version_line, version_line
    return version_line.split(" from ", 1)[1].rsplit(" (Python ", 1)[0]


def test_every_child_imports_the_checkout_under_test(tmp_path, monkeypatch):
    # As a suite started without this checkout on PYTHONPATH runs, in a folder other than the checkout.
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.chdir(tmp_path)
    ours = str(ROOT / "neardup_solr")
    warm = WarmCli()
    try:
        assert warm.lock.acquire(blocking=False)
        try:
            done = warm.run([sys.executable, "-m", "neardup_solr", "--version"], child_env(), None, tmp_path, None,
                            None, timeout=conftest.COMMAND_TIMEOUT)
        finally:
            warm.lock.release()
    finally:
        warm.close()
    assert done.returncode == 0, done.stderr
    assert running_package(done.stdout.strip()) == ours
    monkeypatch.setenv("NEARDUP_TEST_COLD", "1")
    done = run_cli("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert running_package(done.stdout.strip()) == ours
    done = subprocess.run([sys.executable, "-c", "import neardup_solr; print(neardup_solr.__file__)"],
                          capture_output=True, text=True, env=child_env(), cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(ROOT / "neardup_solr" / "__init__.py")
