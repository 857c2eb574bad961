"""Writing records into Solr in batches, committing once at the end; and
replacing an index by building the new one beside it and swapping it in.

Building a batch's documents (repair, tokens, band keys) is CPU-bound
Python, and sending it is waiting on Solr. For short records Solr's JVM is
the slower side (1M records: the JVM 55% of 2 cores, our Python 24%), so
the indexing process builds each batch itself while update requests are in
flight. For long ones our Python is (400k documents of 100-600 words: our
Python one full core, the JVM 22%): from ``FORK_WORDS`` words a record
on, forked workers on every core build the batches and the indexing process
only sends them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sized
from itertools import chain, islice

from . import cloud, local_solr
from .documents import DocumentBuilder, record_of
from .errors import InputError, NeardupError, SolrFailure
from .parallel import bounded_map, cores, forked_map
from .progress import Progress, Tally
from .record import Record
from .schema import ID, RECORD_FIELDS, TEXT
from .solr import Solr
from .state import MODEL_PROPERTY, IndexSettings

# Records per update request: large enough that a request's overhead is
# small against its documents, small enough that four in flight hold little
# memory (a long document's shingles are the largest part of it).
BATCH_SIZE = 1000
# Update requests in flight: while Solr flushes a segment inside one, the
# others keep both cores busy. On 1M records and 2 cores four took 82-99 s,
# two 87-97 s: no slower, and the flush pauses are filled.
CONCURRENT_UPDATES = 4
# Words a record, on average over the first batch, from which forked workers
# build the documents: the shortest documents the benchmark makes. Below it
# are short records, where Solr's JVM is the slower side and a worker would
# only take a core from it; documents of 100-600 words were indexed in 0.80x
# the time with workers building them (20k documents, 2 cores).
FORK_WORDS = 100


def stored_records(solr: Solr) -> Iterator[Record]:
    """Every record of ``solr``'s index as it was given (its key, text and
    fields), in id order: what a rebuild of the index indexes again. One
    request per 1000 records."""
    for doc in solr.iter_docs([ID, TEXT, RECORD_FIELDS]):
        yield record_of(doc)


def batches(records: Iterable[Record], size: int) -> Iterator[list[Record]]:
    it = iter(records)
    while batch := list(islice(it, size)):
        yield batch


def index_records(
    solr: Solr,
    records: Iterable[Record],
    settings: IndexSettings = IndexSettings(),
    *,
    batch_size: int = BATCH_SIZE,
    progress: Progress | None = None,
) -> int:
    """Index ``records`` and commit; returns how many were sent.

    One update request per ``batch_size`` records, ``CONCURRENT_UPDATES``
    in flight, and one commit; memory holds that many batches. ``progress``
    is told of the step "indexing" (one unit a record; the total when
    ``records`` has a length). The settings are not saved here.
    """
    builder = DocumentBuilder(settings)
    tick = Tally(progress, "indexing", len(records) if isinstance(records, Sized) else None)

    def send(docs: list[dict]) -> int:
        solr.add(docs)
        return len(docs)

    sent = 0
    for count in bounded_map(send, built(builder, batches(records, batch_size)), CONCURRENT_UPDATES):
        sent += count
        tick(count)
    solr.commit()
    return sent


def built(builder: DocumentBuilder, records: Iterator[list[Record]]) -> Iterator[list[dict]]:
    """Each batch's documents, in order: built by forked workers on every
    core when the records average ``FORK_WORDS`` words or more and there is
    more than one batch, else here."""
    first = list(islice(records, 2))
    words = sum(record.text.count(" ") + 1 for record in first[0]) / len(first[0]) if first else 0
    workers = cores() if len(first) > 1 and words >= FORK_WORDS else 1
    return forked_map(builder.documents, chain(first, records), workers)


# What a replacement builds into is named after the index it replaces, this
# and the time in milliseconds: ``neardup__1764050000123``. A core or
# collection so named that is not served is a replacement that never
# finished (its process was killed) or an old index not yet removed; the
# next replacement removes it.
BUILDING = "__"


def building_name(name: str) -> str:
    return f"{name}{BUILDING}{time.time_ns() // 1_000_000}"


def is_building(candidate: str, name: str) -> bool:
    """Whether ``candidate`` is a core or collection a replacement of ``name`` made."""
    suffix = candidate[len(name) + len(BUILDING):]
    return candidate.startswith(name + BUILDING) and suffix.isdigit()


def replace_index(
    solr: Solr,
    records: Iterable[Record],
    settings: IndexSettings,
    *,
    batch_size: int = BATCH_SIZE,
    progress: Progress | None = None,
    keep_model: bool = False,
) -> int:
    """Replace the index ``solr`` serves with ``records``, never leaving it
    empty or half built: the records go into a new core (a new collection on
    SolrCloud), which takes the old one's place only once they are all
    committed with their settings. Until then the old index serves, as it
    was; a run that fails, is interrupted or holds no record at all removes
    the new core, and one killed outright leaves it unserved for the next
    run to remove. Returns how many records were indexed.

    A standalone core is swapped with Solr's CoreAdmin ``SWAP`` (the new core
    is made from the configset named like the served core and takes its
    name; the old one is unloaded with its data). On SolrCloud the URL's
    name becomes an alias of the new collection (an alias may share a
    collection's name, and wins), and the old collection is deleted with
    its configset.

    The new index starts without a match model (its records are new), or
    with ``keep_model`` the served one's (the same records, indexed again).

    Costs, beyond :func:`index_records`: a core creation (a collection's:
    a core per replica, on SolrCloud) and a swap or alias change, the old
    index's removal, and a listing of cores or collections; the disk holds
    both indexes until the swap. On the 864 restaurants that made a run
    0.51 s against 0.42 s in place on one core, and 1.6-2.5 s against
    0.6-0.9 s on the local two-shard cluster. Needs Solr's admin rights:
    core-admin-edit on a standalone Solr, collection-admin-edit and
    config-edit on SolrCloud.

    Raises:
        InputError: ``records`` held no record (the index is left as it was).
        SolrFailure: Solr refused the admin requests (or failed them).
        SolrUnavailable: Solr could not be reached.
    """
    kept = solr.user_properties().get(MODEL_PROPERTY, "") if keep_model else ""
    place = _admin(solr, lambda: (_NewCollection if solr.cloud() else _NewCore)(solr))
    _admin(solr, place.clean)
    new = _admin(solr, place.build)
    try:
        count = index_records(new, records, settings, batch_size=batch_size, progress=progress)
        if not count:
            raise InputError(f"there were no records to index; the index at {solr.url} was left as it was",
                             hint="check the file's format and its id field or column")
        settings.save(new)
        new.set_user_properties({MODEL_PROPERTY: kept})
        _admin(solr, place.swap)
    except BaseException:
        place.discard()
        raise
    place.retire()
    return count


def _admin(solr: Solr, call):
    """``call()``, with Solr refusing its admin requests said as such."""
    try:
        return call()
    except NeardupError as err:
        if err.remedy != "credentials":
            raise
        status = "HTTP 403" if "(HTTP 403)" in err.message else "HTTP 401"
        raise SolrFailure(f"replacing the index at {solr.url} needs Solr's admin rights, which it refused ({status})",
                          hint="grant the user core-admin-edit (on SolrCloud collection-admin-edit and config-edit), "
                          "or add the records to the index as it is") from None


def _quietly(call) -> None:
    """``call()``, its failure ignored: cleaning up after a failure must not
    hide it, and what is left is removed by the next replacement."""
    try:
        call()
    except NeardupError:
        pass


class _NewCore:
    """A standalone core built beside the served one and swapped in.

    Cores made from one configset share its overlay, where the index
    settings live. Saving the new settings through the new core reloads only
    that core (the served one keeps what it loaded), so the served core
    answers with its own settings until the swap; a run that fails after
    saving them puts the served core's back.
    """

    def __init__(self, solr: Solr):
        self.solr, self.name = solr, building_name(solr.name)
        self.kept: dict[str, str] = {}

    def clean(self) -> None:
        for core in self.solr.core_admin("STATUS", indexInfo="false").get("status", {}):
            if is_building(core, self.solr.name):
                self._unload(core)

    def build(self) -> Solr:
        """The new core, from the configset named like the served core (as
        the local Solr makes it), else from the one the local Solr installs
        the project's configuration as (``neardup``), which cores made
        beside its own may share."""
        self.kept = self.solr.user_properties()
        configsets = list(dict.fromkeys([self.solr.name, local_solr.CORE]))
        for configset in configsets:
            try:
                self.solr.core_admin("CREATE", name=self.name, instanceDir=self.name, configSet=configset)
                return self.solr.at(self.name)
            except SolrFailure as err:
                if err.remedy == "credentials":
                    raise
                failure = err
        raise SolrFailure(f"could not make core {self.name!r} to build the new index in: {failure.message}",
                          hint=f"it is made from the configset {' or '.join(map(repr, configsets))}, "
                          "which the Solr node must have")

    def swap(self) -> None:
        self.solr.core_admin("SWAP", core=self.solr.name, other=self.name)

    def discard(self) -> None:
        if self.kept:
            _quietly(lambda: self.solr.at(self.name).set_user_properties(self.kept))
        _quietly(lambda: self._unload(self.name))

    def retire(self) -> None:
        """The old core, named as the new one was before the swap: unloaded with its data."""
        _quietly(lambda: self._unload(self.name))

    def _unload(self, core: str) -> None:
        self.solr.core_admin("UNLOAD", core=core, deleteIndex="true", deleteDataDir="true", deleteInstanceDir="true")


class _NewCollection:
    """A SolrCloud collection built beside the served one; the URL's name
    becomes (or stays) an alias, pointed at it."""

    def __init__(self, solr: Solr):
        self.solr, self.name = solr, building_name(solr.name)
        state = cloud.cluster_status(solr)
        self.serving = cloud.resolved(state, solr.name)
        self.existing = set(state.get("collections", {}))

    def clean(self) -> None:
        for collection in self.existing:
            if is_building(collection, self.solr.name) and collection != self.serving:
                cloud.drop_collection(self.solr, collection)
        for configset in cloud.configsets(self.solr):
            if is_building(configset, self.solr.name) and configset not in self.existing:
                cloud.drop_configset(self.solr, configset)

    def build(self) -> Solr:
        return cloud.copy_collection(self.solr, self.name)

    def swap(self) -> None:
        cloud.point_alias(self.solr, self.solr.name, self.name)

    def discard(self) -> None:
        _quietly(lambda: cloud.drop_collection(self.solr, self.name))

    def retire(self) -> None:
        _quietly(lambda: cloud.drop_collection(self.solr, self.serving))
