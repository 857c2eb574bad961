"""Pair files: ``id<TAB>neighbour_id<TAB>edit_distance[<TAB>similarity[<TAB>probability]]``.

One pair per line; the default mode adds the similarity it verified with
and, where a match model was fitted, the pair's probability of being a
true match.
Each pair is written once, smaller id first, lines in id order, so two runs
that find the same pairs write the same bytes. Files are written to a
temporary name and renamed when complete: a crash never leaves a file that
looks finished.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, NamedTuple

from .errors import InputError
from .records import id_key


class Pair(NamedTuple):
    a: str
    b: str
    distance: int
    similarity: float | None = None
    probability: float | None = None

    @property
    def key(self) -> frozenset[str]:
        return frozenset((self.a, self.b))


def ordered(a: str, b: str, distance: int, similarity: float | None = None,
            probability: float | None = None) -> Pair:
    return Pair(*((a, b) if id_key(a) <= id_key(b) else (b, a)), distance, similarity, probability)


@contextmanager
def atomic_output(path: Path | str) -> Iterator[IO[str]]:
    """A text file that appears at ``path`` only if the block completes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def pair_lines(pairs: Iterable[Pair]) -> list[str]:
    """The file's lines, in id order."""
    rows = sorted(pairs, key=lambda p: (id_key(p.a), id_key(p.b)))
    return [f"{p.a}\t{p.b}\t{p.distance}" + ("" if p.similarity is None else f"\t{p.similarity:.4f}")
            + ("" if p.probability is None else f"\t{p.probability:.4f}") + "\n"
            for p in rows]


def write_pairs(path: Path | str, pairs: Iterable[Pair]) -> int:
    lines = pair_lines(pairs)
    with atomic_output(path) as out:
        out.writelines(lines)
    return len(lines)


def read_pairs(path: Path | str) -> list[Pair]:
    pairs = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read pairs from {path}: {err}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 2:
            raise InputError(f"{path}:{number}: expected id<TAB>neighbour_id<TAB>distance")
        distance = fields[2] if len(fields) > 2 else "0"
        if not distance.strip().isdigit():
            raise InputError(f"{path}:{number}: distance {distance!r} is not a whole number")
        try:
            similarity, probability = (float(f) if f.strip() else None for f in (fields[3:5] + ["", ""])[:2])
        except ValueError:
            raise InputError(f"{path}:{number}: similarity or probability {fields[3:5]!r} is not a number") from None
        pairs.append(ordered(fields[0].strip(), fields[1].strip(), int(distance), similarity, probability))
    return pairs
