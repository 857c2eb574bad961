"""`neardup serve --workers` on a loaded machine, and services the suite
starts that end whatever happens: real HTTP, the service in a child
process, its workers in processes of their own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

from conftest import Service, child_env

from neardup_solr.parallel import cores

PATIENCE = 60
# Processes spinning a core: a machine loaded by others, as when two more
# test suites share it.
SPINNERS_A_CORE = 4


def running(pid: int) -> tuple[int, int] | None:
    """The process group and session of a running process, from /proc;
    ``None`` when it has ended (gone, or a zombie not yet reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, _, group, session = stat[stat.rindex(")") + 2:].split()[:4]
    return None if state in "ZX" else (int(group), int(session))


def group_members(group: int) -> list[int]:
    """The running processes of a process group."""
    return [int(proc.name) for proc in Path("/proc").iterdir()
            if proc.name.isdigit() and (running(int(proc.name)) or (None,))[0] == group]


def ended(pids: list[int]) -> bool:
    """Whether all of ``pids`` have ended, within PATIENCE seconds (a killed one takes a moment)."""
    deadline = time.monotonic() + PATIENCE
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not any(running(pid) for pid in pids)


def children(pid: int) -> list[int]:
    """A process's children, from /proc."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


@contextmanager
def busy_cores() -> Iterator[None]:
    """Every core kept busy by processes that only spin, as on a machine
    that other work loads; they end afterwards. Each is a session of its
    own, as other people's work is: the scheduler shares the cores among
    sessions first (autogroups), and spinners of the test's own session
    would take only its share."""
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"], env=child_env(), start_new_session=True)
                for _ in range(SPINNERS_A_CORE * cores())]
    try:
        yield
    finally:
        for process in spinning:
            process.kill()
            process.wait()


def test_workers_that_start_slowly_on_a_loaded_machine_are_waited_for(core, serve):
    with busy_cores():
        service = serve("--solr-url", core.url, "--workers", "2", "--log-level", "info")
        for _ in range(6):  # fresh connections: either worker answers
            answer = requests.get(f"{service.url}/health", timeout=PATIENCE, headers={"Connection": "close"})
            assert answer.status_code == 200, answer.text
    told = service.stop()
    # None was taken for dead and started again while it was starting.
    assert "died" not in told and "was not ready" not in told, told


def test_a_service_that_does_not_answer_in_time_is_ended_with_all_it_started(core):
    service = Service("--solr-url", core.url, "--workers", "2")
    try:
        with pytest.raises(AssertionError, match="did not answer within 0 s"):
            service.answering(within=0)
        assert ended([service.process.pid, *group_members(service.process.pid)])
        with pytest.raises(requests.ConnectionError):
            requests.get(f"{service.url}/health", timeout=PATIENCE)
    finally:
        service.stop()


def test_a_service_whose_supervisor_died_is_ended_with_its_workers(core, serve):
    service = serve("--solr-url", core.url, "--workers", "2")
    workers = children(service.process.pid)
    assert len(workers) >= 2  # the workers (and multiprocessing's resource tracker)
    os.kill(service.process.pid, signal.SIGKILL)
    service.stop()
    assert ended(workers) and group_members(service.process.pid) == []
