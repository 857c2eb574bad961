"""The ids a reader or a writer has seen: where each was first seen, in
bounded memory whatever the number of records."""

from __future__ import annotations

import sqlite3


class SeenIds:
    """Where each id of a file was first seen.

    The first ``IN_MEMORY`` ids are kept in a dict; past that, all move to a
    temporary SQLite table on disk (SQLite keeps a 2 MB page cache), so a
    file of any length is read in bounded memory.
    """

    # Ids in a dict before all move to disk: memory stays bounded, and a lookup on disk is still cheap (docs/scale.md).
    IN_MEMORY = 1_000_000

    def __init__(self) -> None:
        self._memory: dict[str, int] = {}
        self._db: sqlite3.Connection | None = None

    def first(self, record_id: str, where: int) -> int | None:
        """Where ``record_id`` was seen before, or ``None`` (and it is now
        seen at ``where``)."""
        if self._db is None:
            first = self._memory.setdefault(record_id, where)
            if first != where:
                return first
            if len(self._memory) > self.IN_MEMORY:
                self._spill()
            return None
        if self._db.execute("INSERT OR IGNORE INTO seen VALUES (?, ?)", (record_id, where)).rowcount:
            return None
        return self._db.execute("SELECT place FROM seen WHERE id = ?", (record_id,)).fetchone()[0]

    def _spill(self) -> None:
        # An empty name opens a private database on disk, deleted on close.
        self._db = sqlite3.connect("")
        self._db.execute("CREATE TABLE seen (id TEXT PRIMARY KEY, place INTEGER) WITHOUT ROWID")
        self._db.executemany("INSERT INTO seen VALUES (?, ?)", self._memory.items())
        self._memory = {}

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
