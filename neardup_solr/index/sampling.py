"""The LSH banding chosen from a sample of the data.

A sample of the records gives the similarity of random pairs, the pairs
that become candidates by chance; :func:`neardup_solr.lsh.bands.choose` turns
it into the banding that catches the lowest similarity within the budget
of chance candidates (the math is in :mod:`neardup_solr.lsh.bands`).

This is the one place a banding is chosen from data, and :func:`sample`
the one way records are drawn for it: ``NearDuplicates.index`` chooses
with them (the command line's ``index`` goes through it), and ``neardup
tune --records`` shows what it would choose.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..lsh.bands import SIGNATURE_VALUES, Choice, agreements, choose
from ..lsh.signatures import TextSignatures
from .documents import record_of
from ..fields.kinds import FieldProfile, profile
from ..records.record import MAX_LINE_BYTES, Record
from ..records.readers import RecordReader, text_record
from ..text.repair import repair
from .schema import ID, RANK, RECORD_FIELDS, TEXT
from .solr import Solr
from ..records.sources import GZIP_MAGIC, RecordFile

# Records sampled: 2000 give ~2 million random pairs, enough to see a
# chance-candidate rate of 1 in 100,000 pairs (the budget at a million
# records) about 20 times.
SAMPLE_RECORDS = 2000

Sampled = RecordReader | RecordFile | Path | str | Sequence[Record]


@dataclass(frozen=True)
class Sample:
    """Records drawn from the data, and the number of records it holds
    (counted, or estimated from a file's size)."""

    records: list[Record]
    total: int


def sample(records: Sampled, size: int = SAMPLE_RECORDS, seed: int = 0) -> Sample:
    """About ``size`` valid records of ``records``, drawn at random where it can be.

    A list (any sequence) of records gives ``size`` of them at random, or all
    of a shorter one. A file (a path, a :class:`RecordFile`, or a
    :class:`RecordReader`'s file, which is left unread) is sampled without a
    pass where it can be: an uncompressed ``ID TEXT`` file larger than about
    ``2 * size`` lines at random byte offsets (each offset's next whole
    line), ``size`` seeks even for ten million lines, its record count its
    size over the sampled lines' average length. Any other file (smaller,
    compressed, CSV, JSON Lines, standard input made replayable) gives its
    first ``size`` records, and its count is estimated from the share of
    its bytes they took. A file's bad entries are left out silently:
    reading it for indexing reports them.
    """
    if isinstance(records, RecordReader):
        records = records.source
    if isinstance(records, (RecordFile, Path, str)):
        return _file_sample(RecordFile.of(records), size, seed)
    if len(records) <= size:
        return Sample(list(records), len(records))
    return Sample(random.Random(seed).sample(list(records), size), len(records))


def _file_sample(source: RecordFile, size: int, seed: int) -> Sample:
    file_size = source.size
    if source.format == "text" and source.path is not None and file_size:
        with open(source.path, "rb") as handle:
            head = handle.read(1 << 16)
            average = len(head) / max(head.count(b"\n"), 1)
            if not head.startswith(GZIP_MAGIC) and file_size / average > 2 * size:
                return _seek_sample(handle, file_size, size, seed)
    reader = RecordReader(source)
    records: list[Record] = []
    for record in reader:
        records.append(record)
        if len(records) >= size:
            break
    share = reader.bytes_read / file_size if file_size and reader.bytes_read else 1.0
    return Sample(records, max(len(records), round(len(records) / min(share, 1.0))))


def _seek_sample(handle: BinaryIO, file_size: int, size: int, seed: int) -> Sample:
    rng = random.Random(seed)
    records, lengths = {}, []
    for offset in sorted(rng.randrange(file_size) for _ in range(size)):
        handle.seek(offset)
        handle.readline()  # the rest of the line the offset fell in
        raw = handle.readline(MAX_LINE_BYTES + 2)
        if not raw:
            continue
        lengths.append(len(raw))
        record = text_record(raw.rstrip(b"\n").removesuffix(b"\r"))
        if record is not None:
            records[record.id] = record
    total = round(file_size / (sum(lengths) / len(lengths))) if lengths else 0
    return Sample(list(records.values()), total)


def agreements_of(texts: Sequence[str], lsh_shingles: str = "chars") -> np.ndarray:
    """Pairs of ``texts`` by how many of ``SIGNATURE_VALUES`` LSH MinHash
    values they share (see :func:`neardup_solr.lsh.bands.agreements`). Costs a
    signature per text and a comparison of every pair (2000 texts: about a
    second)."""
    return agreements(TextSignatures(SIGNATURE_VALUES, lsh_shingles)([repair(t) for t in texts]))


def choose_banding(records: Sampled, lsh_shingles: str = "chars", total: int | None = None) -> Choice:
    """The LSH banding for data like ``records``: drawn by :func:`sample`,
    their random pairs' agreements chosen from by
    :func:`neardup_solr.lsh.bands.choose` for ``total`` records (default: as many
    as the data holds).

    Costs the sample (``SAMPLE_RECORDS`` seeks or records read) and a
    comparison of every pair of it (about a second).
    """
    drawn = sample(records)
    return choose(agreements_of([r.text for r in drawn.records], lsh_shingles), total or drawn.total)


def field_profiles(records: Sequence[Record]) -> tuple[FieldProfile, ...]:
    """The profiles of sampled ``records``' fields (``fields.profile``),
    named in the order they first appear; none when a record has fewer
    than two fields (it is compared as one text, and so are all)."""
    if not records or any(len(r.fields) < 2 for r in records):
        return ()
    names = list(dict.fromkeys(name for r in records for name, _ in r.fields))
    return profile(names, (dict(r.fields) for r in records))


@dataclass(frozen=True)
class Plan:
    """What an index is built with, read off one sample of its records: the
    LSH banding (``None`` when it was given) and the fields' profiles."""

    choice: Choice | None
    fields: tuple[FieldProfile, ...]


def choose_plan(records: Sampled, lsh_shingles: str = "chars", total: int | None = None,
                banding: bool = True) -> Plan:
    """The banding (:func:`choose_banding`, unless ``banding`` is false) and
    the fields' profiles (:func:`field_profiles`) for data like ``records``,
    from one sample of them.

    Costs the sample, a comparison of every pair of it when the banding is
    chosen (about a second), and a cleaning of its fields' values.
    """
    drawn = sample(records)
    choice = choose(agreements_of([r.text for r in drawn.records], lsh_shingles), total or drawn.total) \
        if banding else None
    return Plan(choice, field_profiles(drawn.records))


def index_sample(solr: Solr, size: int = SAMPLE_RECORDS) -> list[Record]:
    """The ``size`` records of ``solr``'s index with the smallest ``rank`` (a
    hash of their key): a sample drawn at random that depends only on which
    records the index holds, not on the order they were indexed in. One
    request."""
    docs = solr.search("*:*", fl=f"{ID},{TEXT},{RECORD_FIELDS}", sort=f"{RANK} asc,{ID} asc", rows=size).docs
    return [record_of(doc) for doc in docs]
