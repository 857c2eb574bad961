"""The switch for compiled loops: numba's ``njit`` when numba is installed,
else a decorator that leaves the function plain Python.

Every compiled function keeps its plain twin as ``fn.py_func`` (numba's own
name for it), so tests run both and a broken install still works, about a
hundred times slower, with the same results (:func:`chosen`).

numba keeps what it compiled in a cache beside the modules (``cache=True``),
so a function is compiled once after an install (or after numba or its
module changed) and loaded afterwards; compiling the report's kernels
takes a while, and whoever is waiting may be told (:func:`when_compiling`).
Importing this module does not import numba: the functions that use it do.
"""

from __future__ import annotations

import functools
import signal
import sys
import threading
from collections.abc import Callable
from types import ModuleType


@functools.cache
def _numba() -> ModuleType | None:
    try:
        import numba
    except ImportError:  # pragma: no cover - numba installs with the package; this keeps a broken install working
        return None
    return numba


def available() -> bool:
    """Whether numba is installed (imports it)."""
    return _numba() is not None


def loaded() -> bool:
    """Whether numba is imported in this process already (imports nothing)."""
    return "numba" in sys.modules


def njit(*args, **kwargs):
    """numba's ``njit``, or, without numba, a decorator that keeps the function plain."""
    numba = _numba()
    if numba is not None:
        return numba.njit(*args, **kwargs)

    def plain(fn):
        fn.py_func = fn
        return fn

    return plain


def chosen(fn: Callable, compiled: bool = True) -> Callable:
    """``fn`` compiled, or its plain Python twin when ``compiled`` is False or numba is missing."""
    if not (compiled and _numba() is not None):
        return fn.py_func
    return fn if fn.overloads else functools.partial(_loaded, fn)


# Who is told, once a process, that numba is about to compile (``_tell[0]``),
# and whether that was done; under a lock, as threads call the kernels.
_tell: list[Callable[[], None] | None] = [None]
_told = threading.Event()
_telling = threading.Lock()


def when_compiling(tell: Callable[[], None] | None) -> None:
    """Have ``tell`` called, once in this process, just before numba first
    compiles a function anew (its cache holds no code for the arguments
    given: the first call after an install, or after numba or the module
    changed), which takes a while; ``None``: tell nobody."""
    _tell[0] = tell


def _cold(fn: Callable, args: tuple) -> bool:
    """Whether numba will compile ``fn`` for ``args`` rather than load it
    from its cache: its cache's index, read as numba reads it, holds no
    entry for their types on this machine. Where that cannot be told (a
    numba whose cache works otherwise), False: nobody is told then."""
    try:
        cache = fn._cache
        key = cache._index_key(tuple(fn.typeof_pyval(arg) for arg in args), fn.targetctx.codegen())
        return key not in cache._cache_file._load_index()
    except Exception:  # numba's cache is its own inside, and may change: telling is a courtesy
        return False


def _tell_if_cold(fn: Callable, args: tuple) -> None:
    tell = _tell[0]
    if tell is None or _told.is_set():
        return
    with _telling:
        if not _told.is_set() and _cold(fn, args):
            _told.set()
            tell()


def _loaded(fn: Callable, *args):
    """``fn(*args)`` on its first call, when numba compiles it or loads it
    from its cache (whoever asked is told before it compiles:
    :func:`when_compiling`), with Ctrl-C held until the call returns.

    Loading runs Python callbacks from inside LLVM (a ctypes callback), and
    a KeyboardInterrupt raised in one is printed as "ignored" and lost: a
    report interrupted then went on to the end (3 of 15 interruptions of a
    5,000-record report). Python runs signal handlers in the main thread
    only, so only there is the interrupt held; it is raised once the call
    returns (a first call's data is one block or piece of its step).
    """
    _tell_if_cold(fn, args)
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
