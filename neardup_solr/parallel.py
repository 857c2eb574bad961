"""Ordered, bounded concurrency for I/O-bound steps (Solr requests)."""

from __future__ import annotations

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
