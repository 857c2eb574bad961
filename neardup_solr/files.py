"""Files in and out: reading one whole or failing with an input error, and
writing one so that it appears only when complete.

An output named ``-`` is standard output, as an input named ``-`` is
standard input: written as it goes (a pipe cannot be renamed into place).
"""

from __future__ import annotations

import errno
import gzip
import io
import os
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from .errors import InputError, NeardupError

STDOUT = "-"
# What reading a gzip file that is cut short or not gzip raises.
GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)
READ_HINT = "check the path, and that the file is readable by you"
# What a write that cannot go on raises: a full disk or quota, a file-size
# limit, a disk error, a file system turned read-only. Raised inside a block
# that writes an output, they are the output's, whatever wrote to it.
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS})


def is_write_error(err: BaseException) -> bool:
    """Whether ``err`` says a write could not go on (:data:`WRITE_ERRNOS`)."""
    return isinstance(err, OSError) and err.errno in WRITE_ERRNOS


def lock_exclusive(handle: IO) -> None:
    """Take an exclusive lock on the open file ``handle``, waiting while
    another process holds it; closing the file releases it. POSIX's
    ``flock``, or on Windows ``msvcrt``'s lock of the file's first byte
    (each imported here, so the package imports on either)."""
    if os.name == "nt":
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
    else:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)


def is_stdout(path: Path | str) -> bool:
    """Whether ``path`` names standard output (``-``)."""
    return str(path) == STDOUT


def check_output(path: Path | str) -> None:
    """Fail now if ``path`` could not be written by :func:`atomic_output`:
    it is a directory, or something other than a regular file (a device, a
    pipe: renaming a finished file onto it would replace it), or its folder
    (or the nearest one that exists, the rest being made) is not a directory
    or not writable. ``-`` always passes. Costs a few ``stat`` calls and
    making and removing an empty file beside ``path``, so a command can
    check its outputs before its work rather than lose the work.

    Raises:
        NeardupError: ``cannot write PATH: why``, with a hint.
    """
    if is_stdout(path):
        return
    path = Path(path)
    problem, hint = "", ""
    try:
        mode = path.stat().st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        problem, hint = "it is a directory", "give a file name (in that directory, say)"
    elif mode is not None and not stat.S_ISREG(mode):
        problem, hint = "it is not a regular file", f"give a file name, or {STDOUT} for standard output"
    else:
        folder = path.parent
        while not os.path.lexists(folder) and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            problem, hint = f"{folder} is not a directory", "give a path whose folders are directories"
        elif folder != path.parent:  # the folders would be made: can they be?
            if not os.access(folder, os.W_OK | os.X_OK):
                problem, hint = f"no permission to write in {folder}", "choose a directory you can write to"
        else:  # the folder is there: a file made and removed again says it all (root, read-only mounts, ACLs)
            try:
                fd, probe = _partial(path)
                os.close(fd)
                os.unlink(probe)
            except OSError as err:
                problem, hint = f"{err.strerror or err} in {folder}", "choose a directory you can write to"
    if problem:
        raise NeardupError(f"cannot write {path}: {problem}", hint=hint)


@contextmanager
def reading(path: Path | str, what: str | None = None) -> Iterator[None]:
    """A block that reads ``path``: a file that is missing, unreadable, not
    UTF-8 or damaged gzip ends it with one :class:`InputError`, ``cannot
    read WHAT from PATH`` (``cannot read PATH`` without ``what``)."""
    try:
        yield
    except (OSError, UnicodeDecodeError, *GZIP_ERRORS) as err:
        source = f"{what} from {path}" if what else str(path)
        hint = READ_HINT if isinstance(err, OSError) else "give it as UTF-8 text (gzipped or not)"
        raise InputError(f"cannot read {source}: {err}", hint=hint) from None


def read_text(path: Path | str, what: str | None = None) -> str:
    """The whole of a UTF-8 file (see :func:`reading` for the error)."""
    with reading(path, what):
        return Path(path).read_text(encoding="utf-8")


@contextmanager
def atomic_output(path: Path | str, binary: bool = False) -> Iterator[IO]:
    """A text file (with ``binary``, a binary one) that appears at ``path``
    only if the block completes; gzip-compressed when the name ends in
    ``.gz``; standard output, written as it goes, for ``-``.

    Raises:
        NeardupError: the file could not be made, written to the end or
            finished (``cannot write PATH: why``: a full disk, say;
            :func:`check_output` finds most other causes first), or standard
            output could not be written. Any other error of the block passes
            through unchanged.
    """
    if is_stdout(path):
        with _stdout_errors():
            yield sys.stdout.buffer if binary else sys.stdout
        flush_stdout()
        return
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _partial(path)
    except OSError as err:
        raise _cannot_write(path, err) from None
    umask = os.umask(0)
    os.umask(umask)
    # mkstemp makes the file readable by its owner only; a finished file
    # gets the permissions any new file of the user would.
    os.chmod(tmp, 0o666 & ~umask)
    written = False
    try:
        if path.suffix == ".gz":
            with os.fdopen(fd, "wb") as raw:
                # mtime 0 and no name in the header: the same data, the same bytes.
                compressed = gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0)
                with compressed if binary else io.TextIOWrapper(compressed, encoding="utf-8",
                                                                newline="\n") as handle:
                    yield handle
                    written = True
                raw.flush()
                os.fsync(raw.fileno())
        else:
            with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="\n")) as handle:
                yield handle
                written = True
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        # Finishing the file failed, or a write on the way: a full disk, say.
        if (written and isinstance(err, OSError)) or is_write_error(err):
            raise _cannot_write(path, err) from None
        raise


def _partial(path: Path) -> tuple[int, str]:
    """A new hidden file beside ``path`` (its descriptor and name), for
    what becomes ``path`` when complete."""
    return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")


def _cannot_write(path: Path, err: OSError) -> NeardupError:
    return NeardupError(f"cannot write {path}: {err.strerror or err}",
                        hint="check that the directory is writable and the disk has room")


def cannot_write_stdout(err: OSError) -> NeardupError:
    """The error for standard output that could not be written (where it
    was sent to is full, say)."""
    return NeardupError(f"cannot write standard output: {err.strerror or err}",
                        hint="check where standard output goes (a full disk?), or write to a file")


def flush_stdout() -> None:
    """Standard output flushed now, where a full disk is one error
    (:func:`cannot_write_stdout`), not at the interpreter's exit."""
    with _stdout_errors():
        sys.stdout.flush()


@contextmanager
def _stdout_errors() -> Iterator[None]:
    """A failed write to standard output (a full disk, say) as
    :func:`cannot_write_stdout`'s error."""
    try:
        yield
    except OSError as err:
        if is_write_error(err):
            raise cannot_write_stdout(err) from None
        raise
