"""Progress of the long calls: a plain callable, never a bar.

A call that takes ``progress`` calls it as ``progress(stage, done, total)``,
always from the caller's thread: ``stage`` names the step under way (a
call may go through several, such as "colliding bands" and then "verifying
candidates"), ``done`` counts that step's units so far and ``total`` is how
many it will take (``None`` when unknown). The library prints nothing; a
command line draws its own bars from these calls.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str, int, "int | None"], None]


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
