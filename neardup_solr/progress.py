"""Progress of the long calls: a plain callable, or a bar when asked for.

A call that takes ``progress`` calls it as ``progress(stage, done, total)``,
always from the caller's thread: ``stage`` names the step under way (a
call may go through several, such as "colliding bands" and then "verifying
candidates"), ``done`` counts that step's units so far and ``total`` is how
many it will take (``None`` when unknown). The library prints nothing
unless asked: ``progress=True`` draws a bar a step with ``tqdm.auto`` (a
widget in a notebook, text on standard error elsewhere); a command line
draws its own bars from the calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

Progress = Callable[[str, int, "int | None"], None]


class Bars:
    """``progress=True``: one tqdm bar a step, each closed when the next
    step starts or the call ends (:meth:`close`)."""

    def __init__(self) -> None:
        self.bar = None
        self.stage: str | None = None

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if stage != self.stage:
            self.close()
            from tqdm.auto import tqdm  # a notebook's widget where there is one

            self.bar, self.stage = tqdm(total=total, desc=stage), stage
        if total is not None and self.bar.total != total:
            self.bar.total = total
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.bar, self.stage = None, None


@contextmanager
def told(progress: Progress | bool | None) -> Iterator[Progress | None]:
    """``progress`` as a call passes it on: ``True`` gives :class:`Bars`,
    closed when the call ends; ``None`` or ``False`` nobody."""
    if progress is True:
        bars = Bars()
        try:
            yield bars
        finally:
            bars.close()
    else:
        yield progress or None


def stream_told(make: Callable[[Progress | None], Iterator], progress: Progress | bool | None) -> Iterator:
    """What ``make(progress)`` yields, as it comes, ``progress`` passed on as
    :func:`told` does for a call, its bars closed when the items end."""
    with told(progress) as tell:
        yield from make(tell)


class Tally:
    """Counts one step's units and passes each advance on to ``progress``
    (which may be ``None``: then nobody is told)."""

    def __init__(self, progress: Progress | None, stage: str, total: int | None):
        self.progress = progress
        self.stage = stage
        self.total = total
        self.done = 0

    def __call__(self, count: int = 1) -> None:
        self.done += count
        if self.progress is not None:
            self.progress(self.stage, self.done, self.total)
