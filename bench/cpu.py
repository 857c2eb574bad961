"""Where the time goes: how busy each core was in each phase of a run, and whose work it was.

A thread reads ``/proc`` once a second (and at every phase boundary): the
busy and idle ticks of each core (``/proc/stat``), the CPU time of Solr's
JVM (``/proc/<pid>/stat`` utime + stime) and of our Python processes: the
benchmark's own process and every process below it but the JVM (``neardup
index``, ``neardup report`` and the workers they fork, the peers), the live
ones read directly and the ended ones through their parent's cutime + cstime
(the kernel adds a child's CPU time to its parent's when it is reaped, and
each of our commands reaps its workers before it ends). Whatever else ran on
the machine is "other".

The same samples keep each Python process's peak resident memory (VmHWM
of ``/proc/<pid>/status``, the high-water mark of its own image, read while
it lives): ``getrusage``'s figure for a child is no use here, as a child
started from a large process reports at least that process's memory.
Growth in a process's last second before it ends is not seen.

Linux only; elsewhere :class:`CpuSampler` measures nothing and says so.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

PROC = Path("/proc")
INTERVAL = 1.0  # seconds between samples of the thread
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Sample:
    at: float  # time.monotonic()
    cores: tuple[tuple[int, int], ...]  # (busy, all) ticks of each core since boot
    jvm: int  # ticks of Solr's JVM
    python: int  # ticks of our Python processes, ended ones included


def _core_ticks() -> tuple[tuple[int, int], ...]:
    found = []
    for line in (PROC / "stat").read_text().splitlines():
        if line.startswith("cpu") and line[3].isdigit():
            user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in line.split()[1:9])
            busy = user + nice + system + irq + softirq + steal
            found.append((busy, busy + idle + iowait))
    return tuple(found)


def _processes() -> dict[int, tuple[int, int, int]]:
    """pid -> (parent pid, own ticks, reaped children's ticks) of every process."""
    found = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # ended while we looked
        fields = _fields(stat)
        found[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]))
    return found


def _fields(stat: str) -> list[str]:
    """The fields of a /proc/<pid>/stat after the command name, which may
    hold spaces and brackets: [0] is field 3 of proc(5), the state; the
    parent's pid is 4, utime..cstime are 14..17."""
    return stat[stat.rindex(")") + 2 :].split()


def cpu_seconds(pid: int) -> float | None:
    """A live process's own CPU time so far, all its threads, user and
    system, in seconds; None once it has ended, or without /proc."""
    try:
        fields = _fields((PROC / str(pid) / "stat").read_text())
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


def _peak_kb(pid: int) -> tuple[str, int] | None:
    """A process's command line and its peak resident memory in kB."""
    try:
        command = (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return command, int(line.split()[1])
    except OSError:
        pass
    return None


def sample(root: int, jvm: int | None, peaks: dict[int, tuple[str, int]] | None = None) -> Sample:
    processes = _processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in processes.items():
        children.setdefault(parent, []).append(pid)
    python = jvm_ticks = 0
    stack = [root]
    while stack:
        pid = stack.pop()
        if pid not in processes:
            continue
        _, own, reaped = processes[pid]
        if pid == jvm:
            jvm_ticks = own + reaped
            continue  # the JVM's own children (none) would be Solr's too
        python += own + reaped
        stack.extend(children.get(pid, ()))
        if peaks is not None and pid != root and (peak := _peak_kb(pid)) is not None:
            peaks[pid] = (peak[0], max(peak[1], peaks.get(pid, ("", 0))[1]))
    if jvm is not None and jvm not in processes:
        jvm_ticks = 0
    return Sample(time.monotonic(), _core_ticks(), jvm_ticks, python)


@dataclass
class Phase:
    name: str
    start: Sample
    end: Sample

    def summary(self) -> dict:
        wall = self.end.at - self.start.at
        cores = [(eb - sb) / max(1, ea - sa) for (sb, sa), (eb, ea) in zip(self.start.cores, self.end.cores)]
        capacity = max(wall, 1e-9) * len(cores)  # core-seconds the machine had
        busy = sum((eb - sb) for (sb, _), (eb, _) in zip(self.start.cores, self.end.cores)) / TICK
        jvm = max(0, self.end.jvm - self.start.jvm) / TICK
        python = max(0, self.end.python - self.start.python) / TICK
        return {"phase": self.name, "seconds": wall, "cores_busy": cores,
                "jvm": jvm / capacity, "python": python / capacity,
                "other": max(0.0, busy - jvm - python) / capacity}


@dataclass
class CpuSampler:
    """Samples in a thread while running; ``phase(name)`` marks a phase."""

    jvm: int | None = None
    root: int = field(default_factory=os.getpid)
    samples: list[Sample] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)
    peaks: dict[int, tuple[str, int]] = field(default_factory=dict)  # pid -> (command line, peak kB)
    works: bool = (PROC / "stat").is_file()

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def take(self) -> Sample:
        taken = sample(self.root, self.jvm, self.peaks)
        self.samples.append(taken)
        return taken

    def __enter__(self) -> CpuSampler:
        if self.works:
            self.take()
            self._thread = threading.Thread(target=self._loop, name="cpu-sampler", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(INTERVAL):
            self.take()

    @contextmanager
    def phase(self, name: str):
        if not self.works:
            yield
            return
        start = self.take()
        try:
            yield
        finally:
            self.phases.append(Phase(name, start, self.take()))

    def summaries(self) -> list[dict]:
        return [p.summary() for p in self.phases]

    def peak_rss_mb(self, *words: str) -> float | None:
        """The largest peak memory of the processes whose command line holds all ``words``, in MB."""
        found = [kb for command, kb in self.peaks.values() if all(w in command for w in words)]
        return max(found) / 1024 if found else None
