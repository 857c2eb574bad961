"""Bounded concurrency: threads for I/O-bound steps (Solr requests), forked
processes for CPU-bound Python (building long documents, verification)."""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from .errors import NeardupError

T = TypeVar("T")
R = TypeVar("R")


def _in_order(pool: Executor, fn: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """Results in input order, at most ``2 * workers`` items in flight, so a
    million-item input is never all in memory."""
    window: deque = deque()
    for item in items:
        if len(window) >= 2 * workers:
            yield window.popleft().result()
        window.append(pool.submit(fn, item))
    while window:
        yield window.popleft().result()


def bounded_map(fn: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """Like ``map`` on ``workers`` threads, in input order."""
    with ThreadPoolExecutor(workers) as pool:
        yield from _in_order(pool, fn, items, workers)


def unordered_map(fn: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """Like ``map`` on ``workers`` threads, each result as soon as it is
    done, whatever the input order: a slow item holds up only itself.
    At most ``2 * workers`` items are in flight, as with :func:`bounded_map`,
    so a thread that is done starts the next at once."""
    with ThreadPoolExecutor(workers) as pool:
        running: set = set()
        for item in items:
            if len(running) >= 2 * workers:
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    yield future.result()
            running.add(pool.submit(fn, item))
        while running:
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()


class Grouped:
    """One action, run for many threads at once: a caller of :meth:`run`
    returns once a run that started after its call has ended, and callers
    that arrive while one runs share the next run. Solr's soft commits:
    each makes visible everything sent before it started, so eight writers
    that each need one wait for one or two, not for eight in a row.

    A run's error is raised to every caller that waited for it.

    Example:
        >>> commits = Grouped(lambda: None)
        >>> commits.run()
    """

    def __init__(self, action: Callable[[], object]):
        self._action = action
        self._turn = threading.Condition()
        self._started = 0  # runs started, numbered in order: one at a time
        self._ended = 0  # the number of the last run that ended
        self._error: BaseException | None = None  # what that run raised
        self._running = False

    def run(self) -> None:
        """Wait for a run that starts after this call, running it if none is
        running. Costs one run of the action for all callers waiting
        together, and the wait for the run in progress."""
        with self._turn:
            wanted = self._started + 1
            while self._ended < wanted:
                if self._running:
                    self._turn.wait()
                    continue
                self._running = True
                self._started += 1
                number, error = self._started, None
                self._turn.release()
                try:
                    self._action()
                except BaseException as err:  # every waiter hears of it, Ctrl-C included
                    error = err
                finally:
                    self._turn.acquire()
                    self._running = False
                    self._ended, self._error = number, error
                    self._turn.notify_all()
            if self._error is not None:
                raise self._error


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


_task: Callable | None = None


def _run_task(item):
    return _task(item)


def forked_map(fn: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """Like ``map``, in input order, on ``workers`` forked processes.

    ``fn`` and everything it reads are inherited by the forked processes,
    never pickled: only the items and the results cross. A worker that dies
    is an error, never a hang. Forking is done on Linux only (on macOS a
    forked process that has loaded system frameworks can crash); elsewhere,
    or for one worker, it is plain ``map``.
    """
    global _task
    if workers <= 1 or not sys.platform.startswith("linux"):
        yield from map(fn, items)
        return
    _task = fn
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            # Every worker is forked now, before ``items`` is read: an input that
            # starts threads of its own (Solr requests) is then never forked mid-request.
            pool.submit(int).result()
            yield from _in_order(pool, _run_task, items, workers)
    except BrokenProcessPool:
        raise NeardupError("a worker process died before its work was done",
                           hint="if memory ran out, the kernel log says so; run the command again") from None
    finally:
        _task = None
