"""Files in and out: reading one whole or failing with an input error, and
writing one so that it appears only when complete."""

from __future__ import annotations

import gzip
import io
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from .errors import InputError
from .sources import GZIP_ERRORS


@contextmanager
def reading(path: Path | str, what: str | None = None) -> Iterator[None]:
    """A block that reads ``path``: a file that is missing, unreadable, not
    UTF-8 or damaged gzip ends it with one :class:`InputError`, ``cannot
    read WHAT from PATH`` (``cannot read PATH`` without ``what``)."""
    try:
        yield
    except (OSError, UnicodeDecodeError, *GZIP_ERRORS) as err:
        source = f"{what} from {path}" if what else str(path)
        raise InputError(f"cannot read {source}: {err}") from None


def read_text(path: Path | str, what: str | None = None) -> str:
    """The whole of a UTF-8 file (see :func:`reading` for the error)."""
    with reading(path, what):
        return Path(path).read_text(encoding="utf-8")


@contextmanager
def atomic_output(path: Path | str) -> Iterator[IO[str]]:
    """A text file that appears at ``path`` only if the block completes;
    gzip-compressed when the name ends in ``.gz``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    umask = os.umask(0)
    os.umask(umask)
    # mkstemp makes the file readable by its owner only; a finished file
    # gets the permissions any new file of the user would.
    os.chmod(tmp, 0o666 & ~umask)
    try:
        if path.suffix == ".gz":
            with os.fdopen(fd, "wb") as raw:
                # mtime 0 and no name in the header: the same data, the same bytes.
                compressed = gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0)
                with io.TextIOWrapper(compressed, encoding="utf-8", newline="\n") as handle:
                    yield handle
                raw.flush()
                os.fsync(raw.fileno())
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
