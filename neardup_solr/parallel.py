"""Bounded concurrency: threads for I/O-bound steps (Solr requests), forked
processes for CPU-bound Python (verification)."""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def bounded_map(fn: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """Like ``map`` on ``workers`` threads, in input order, holding at most
    ``2 * workers`` items in flight, so a million-item input is never all in memory."""
    with ThreadPoolExecutor(workers) as pool:
        window: deque = deque()
        for item in items:
            if len(window) >= 2 * workers:
                yield window.popleft().result()
            window.append(pool.submit(fn, item))
        while window:
            yield window.popleft().result()


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


_task: Callable | None = None


def _run_task(item):
    return _task(item)


def forked_map(fn: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """Like ``map``, in input order, on ``workers`` processes forked now.

    ``fn`` and everything it reads are inherited by the forked processes,
    never pickled: only the items and the results cross. Where fork is not
    available, or one worker is asked for, it is plain ``map``.
    """
    global _task
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(fn, items)
        return
    _task = fn
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            _task = None  # the workers have their copy
            yield from pool.imap(_run_task, items)
    finally:
        _task = None
