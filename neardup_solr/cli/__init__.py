"""The ``neardup`` command line.

Exit codes: 0 done; 1 other failure; 2 wrong usage; 3 Solr unreachable;
4 unusable input (or a bad line under ``--strict``); 5 Solr answered with an
error; 6 done, but bad input lines were skipped; 7 an optional package is
not installed (the hint names the extra); 130 interrupted.

This module is what starts the command, and imports nothing heavy itself:
the commands (``group``) and what they use (numba, numpy, the Solr client)
take the first second of a run to import, and Ctrl-C then ends it with one
line and exit code 130 (:func:`_loading`), as at any later moment, instead
of a traceback from inside an import.
"""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from typing import Any

INTERRUPTED = 130


def main() -> None:
    _start("cli", "neardup")


def index_main() -> None:
    _start("index", "index-restaurants")


def report_main() -> None:
    _start("report", "report-near-dups")


# Allocations between two collections of the youngest objects (Python's default: 700).
YOUNG_OBJECTS = 50_000


def _start(command: str, prog: str) -> None:
    # The commands make millions of small lists and dicts (a record's words,
    # a document to send) beside many held ones: collected every 700
    # allocations they cost an index a seventh of its CPU (docs/scale.md).
    # Cycles are still collected, less often.
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])
    with _loading(prog):
        group = import_module(f"{__name__}.group")
    group.run(getattr(group, command), prog)


@contextmanager
def _loading(prog: str) -> Iterator[None]:
    """While the commands are imported, Ctrl-C ends the process at once with
    one line: nothing has been done yet, and an interrupt raised inside an
    import (numba's, LLVM's callbacks among them) would be a traceback, or
    be printed as ignored and lost. Afterwards Ctrl-C raises
    KeyboardInterrupt again, which the command turns into the same line.
    Only the main thread's handler is touched, and only when it is Python's
    default (a caller that set its own keeps it)."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return

    def interrupted(_number: int, _frame: Any) -> None:
        os.write(2, f"\n{prog}: interrupted\n".encode())  # as click says it, past the ^C a terminal shows
        os._exit(INTERRUPTED)

    signal.signal(signal.SIGINT, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def __getattr__(name: str) -> Any:
    """The command group and its parts (``cli``, ``run``, ``OPTION_HINTS``,
    the commands), imported when first asked for."""
    try:
        return getattr(import_module(f"{__name__}.group"), name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
