"""The switch for compiled loops: numba's ``njit`` when numba is installed,
else a decorator that leaves the function plain Python.

Every compiled function keeps its plain twin as ``fn.py_func`` (numba's own
name for it), so tests run both and a broken install still works, about a
hundred times slower, with the same results (:func:`chosen`).
"""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Callable

try:
    from numba import njit
except ImportError:  # pragma: no cover - numba installs with the package; this keeps a broken install working
    def njit(*_args, **_kwargs):
        def plain(fn):
            fn.py_func = fn
            return fn
        return plain

    COMPILED = False
else:
    COMPILED = True


def chosen(fn: Callable, compiled: bool = True) -> Callable:
    """``fn`` compiled, or its plain Python twin when ``compiled`` is False or numba is missing."""
    if not (compiled and COMPILED):
        return fn.py_func
    return fn if fn.overloads else functools.partial(_loaded, fn)


def _loaded(fn: Callable, *args):
    """``fn(*args)`` on its first call, when numba compiles it or loads it
    from its cache, with Ctrl-C held until the call returns.

    Loading runs Python callbacks from inside LLVM (a ctypes callback), and
    a KeyboardInterrupt raised in one is printed as "ignored" and lost: a
    report interrupted then went on to the end (3 of 15 interruptions of a
    5,000-record report). Python runs signal handlers in the main thread
    only, so only there is the interrupt held; it is raised once the call
    returns (a first call's data is one block or piece of its step).
    """
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return fn(*args)
    held: list[int] = []
    signal.signal(signal.SIGINT, lambda number, _frame: held.append(number))
    try:
        return fn(*args)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if held:
            raise KeyboardInterrupt
