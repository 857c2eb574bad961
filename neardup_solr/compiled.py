"""The switch for compiled loops: numba's ``njit`` when numba is installed,
else a decorator that leaves the function plain Python.

Every compiled function keeps its plain twin as ``fn.py_func`` (numba's own
name for it), so tests run both and a broken install still works, about a
hundred times slower, with the same results (:func:`chosen`).
"""

from __future__ import annotations

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
    return fn if compiled and COMPILED else fn.py_func
