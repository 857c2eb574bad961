"""Labels: a person's verdict on a pair of records, "same" or "different".

A labels file is TSV, one label a line, ``id_a<TAB>id_b<TAB>same|different``,
the smaller id first (:func:`neardup_solr.records.record.id_key`). Labeling a pair
again appends a new line and the latest line for a pair wins, so the file is
a history that is only ever appended to: nothing a person wrote into it is
rewritten or lost. Each label is one write of one whole line, flushed and
synced to the disk before it counts (the folder too when the file is new),
so a label once confirmed survives a crash. A crash during that write can
leave at most a torn last line without its line break; reading reports it
as a bad line, and the next label starts on a line of its own instead of
joining it. Appending holds a lock on the file (``flock``), so processes
appending at once never join or tear each other's lines.

Reading keeps every valid line whatever its neighbours hold. A bad line
(not three fields, an id the id rule rejects, one id twice, a label other
than same or different; a record of a source is ``source/id``, its source
kept to the source rule) is handed to ``on_bad`` and skipped, the rule for
bad input everywhere in the project; without ``on_bad`` it raises
:class:`~neardup_solr.errors.InputError` naming the file and line. Fields
are separated by a tab or spaces, as in a gold-pairs file; empty lines are
ignored.

The pairs labeled same are gold pairs: :func:`gold_text` gives them in the
format :func:`neardup_solr.results.evaluate.read_gold` reads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from ..errors import InputError, NeardupError
from ..files import lock_exclusive, read_text
from ..records.record import BadLine, id_key, key_problem, keyed, source_problem

SAME = "same"
DIFFERENT = "different"
# A label's word in the file -> whether it says the two records are the same.
VERDICTS = {SAME: True, DIFFERENT: False}
LINE_FORMAT = "id_a<TAB>id_b<TAB>same|different"

# A pair (its two ids) -> True when labeled same, False when labeled different.
Labels = dict[frozenset[str], bool]


def label_problem(a: str, b: str, label: str) -> str:
    """Why ``a``, ``b`` and ``label`` make no label, or "" when they do."""
    for record_id in (a, b):
        if problem := key_problem(record_id):
            return problem
    if a == b:
        return f"a pair needs two ids, not {a!r} twice"
    if label not in VERDICTS:
        return f"label {label[:40]!r} is neither {SAME} nor {DIFFERENT}"
    return ""


def read_labels(path: Path | str, on_bad: Callable[[BadLine], None] | None = None) -> Labels:
    """The labels of a labels file, the latest line for a pair winning: a
    line is ``id_a id_b label`` (ids as keys: ``source/id`` for a record
    of a source), or ``source_a id_a source_b id_b label``.

    Args:
        path: the labels file.
        on_bad: told of each bad line, which is then skipped; without it the
            first bad line raises.

    Raises:
        InputError: the file cannot be read, or (without ``on_bad``) a line
            is bad; the message names the file and line.
    """
    labels: Labels = {}
    for number, line in enumerate(read_text(path, "labels").split("\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) == 5 and not (source_problem(fields[0]) or source_problem(fields[2])):
            # Records of sources, as gold pairs name them: source_a id_a source_b id_b label.
            fields = [keyed(fields[0], fields[1]), keyed(fields[2], fields[3]), fields[4]]
        reason = (f"expected {LINE_FORMAT} (or source_a, id_a, source_b, id_b, label), found {len(fields)} fields"
                  if len(fields) != 3 else label_problem(*fields))
        if reason:
            bad = BadLine(str(path), number, reason)
            if on_bad is None:
                raise InputError(str(bad), hint=f"write each label as {LINE_FORMAT}")
            on_bad(bad)
            continue
        key = frozenset(fields[:2])
        labels.pop(key, None)  # the latest label of a pair comes last, as in the file
        labels[key] = VERDICTS[fields[2]]
    return labels


def ordered_pair(key: frozenset[str]) -> tuple[str, str]:
    """A pair's two ids, the smaller first."""
    first, second = sorted(key, key=id_key)
    return first, second


def label_rows(labels: Mapping[frozenset[str], bool]) -> list[tuple[str, str, str]]:
    """``(id_a, id_b, label)`` of every label, in id order."""
    rows = [(*ordered_pair(key), SAME if same else DIFFERENT) for key, same in labels.items()]
    return sorted(rows, key=lambda row: (id_key(row[0]), id_key(row[1])))


def gold_text(labels: Mapping[frozenset[str], bool]) -> str:
    """The pairs labeled same as a gold-pairs file: ``id_a<TAB>id_b`` lines, in id order."""
    return "".join(f"{a}\t{b}\n" for a, b, label in label_rows(labels) if label == SAME)


def append_label(path: Path | str, a: str, b: str, label: str) -> tuple[str, str, str]:
    """Append one label to the file ``path`` (made if missing) and sync it to
    the disk; returns it as written, ``(id_a, id_b, label)``.

    Raises:
        InputError: the ids or the label break the rules above.
        NeardupError: the file cannot be written.
    """
    if problem := label_problem(a, b, label):
        raise InputError(problem, hint=f"a label is two record ids and {SAME} or {DIFFERENT}")
    first, second = ordered_pair(frozenset((a, b)))
    line = f"{first}\t{second}\t{label}\n"
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        new = not path.exists()
        # "a+b" appends every write at the end and lets the last byte be read.
        with open(path, "a+b") as handle:
            # Another process appending waits: its last byte and ours are read and written in turn.
            lock_exclusive(handle)
            if handle.seek(0, os.SEEK_END) > 0:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    line = "\n" + line  # a torn last line stays a line of its own
            handle.write(line.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        if new:
            _sync_folder(path.parent)
    except OSError as err:
        raise NeardupError(f"cannot write the label to {path}: {err.strerror or err}",
                           hint="check that the labels file's folder exists and can be written") from None
    return first, second, label


def _sync_folder(folder: Path) -> None:
    """Sync a folder's entries, so a file just made in it survives a crash."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class LabelStore:
    """The labels of one file, held in memory for a service: read when made
    (a missing file holds none yet), each new label appended to the file
    (:func:`append_label`) before it counts, and the file read again when
    it changed since (another process appended to it: a service's other
    workers). Safe to use from many threads and processes; bad lines are
    told to ``on_bad`` at the first reading only."""

    def __init__(self, path: Path | str, on_bad: Callable[[BadLine], None] | None = None):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._seen = self._stamp()
        self._labels = read_labels(self.path, on_bad) if self._seen else {}

    def _stamp(self) -> tuple[int, int, int] | None:
        """What tells the file changed: its inode, size and modification time (``None``: no file)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return stat.st_ino, stat.st_size, stat.st_mtime_ns

    def add(self, a: str, b: str, label: str) -> tuple[str, str, str]:
        """Label the pair ``a``, ``b``; returns ``(id_a, id_b, label)``, smaller id first.

        Raises:
            InputError, NeardupError: as :func:`append_label`.
        """
        with self._lock:
            written = append_label(self.path, a, b, label)
            key = frozenset((a, b))
            self._labels.pop(key, None)
            self._labels[key] = VERDICTS[label]
        return written

    def labels(self) -> Labels:
        """A copy of the labels, pair -> same. Costs a ``stat`` of the file,
        and a reading of it when it changed."""
        with self._lock:
            stamp = self._stamp()
            if stamp != self._seen:
                # Lines are only ever appended, so the labels read now hold every one this store added.
                self._labels = read_labels(self.path, on_bad=lambda _: None) if stamp else {}
                self._seen = stamp
            return dict(self._labels)


def labeled_pairs(ids: Sequence[str], left: np.ndarray, right: np.ndarray, labels: Mapping[frozenset[str], bool],
                  warn: Callable[[str], None]) -> tuple[np.ndarray, np.ndarray]:
    """Which of the pairs ``(left[i], right[i])`` (numbers of ``ids``) a
    person labeled (their positions), and which of those were labeled the
    same; ``warn`` is told of labeled pairs that are none of them. Costs a
    lookup of every pair."""
    position = {record_id: i for i, record_id in enumerate(ids)}
    width = max(len(ids), 1)
    keys = left.astype(np.int64) * width + right.astype(np.int64)
    wanted: dict[int, bool] = {}
    for pair, is_same in labels.items():
        ends = [position.get(record_id) for record_id in pair]
        if len(ends) == 2 and None not in ends:
            wanted[ends[0] * width + ends[1]] = is_same
            wanted[ends[1] * width + ends[0]] = is_same
    hits = np.flatnonzero(np.isin(keys, np.fromiter(wanted, np.int64, len(wanted))))
    if len(hits) < len(labels):
        warn(f"{len(labels) - len(hits)} of {len(labels)} labeled pairs are not candidate pairs of this index "
             "and do not count")
    return hits, np.array([wanted[int(key)] for key in keys[hits]], bool)
