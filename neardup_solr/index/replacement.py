"""Replacing an index by building the new one beside it and swapping it
in, never leaving it empty or half built (:func:`replace_index`); what a
write checks so that it is not lost with an index being replaced
(:func:`writable`, :func:`kept_since`); and an index planned again from
all it holds, rebuilt when the plan changed (:func:`replan_index`).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import replace

from . import cloud, local_solr
from .documents import record_of
from ..errors import IndexBeingReplaced, InputError, NeardupError, SolrFailure
from ..progress import Progress
from ..records.record import Record
from .sampling import choose_plan, index_sample
from .schema import ID, RECORD_FIELDS, TEXT
from .solr import Solr
from .state import (MODEL_PROPERTY, IndexSettings, Stamp, forget_previous, index_properties, mark_replacing,
                    restoring, save_built, stamp)
from .writer import BATCH_SIZE, index_records

log = logging.getLogger("neardup_solr")

# What a replacement builds into is named after the index it replaces, this
# and the time in milliseconds: ``neardup__1764050000123``. A core or
# collection so named that is not served is a replacement that never
# finished (its process was killed) or an old index not yet removed; the
# next replacement removes it.
BUILDING = "__"
# A replacement shows it is alive: every HEARTBEAT seconds it sends its new
# core deletes of ids no record has (one per shard, whatever the shards),
# each a new entry in the core's update log, and its records change the log
# too. A replacement whose log has not changed for STALE seconds (or whose
# core is gone) is taken for dead: killed, or its Solr restarted. STALE
# allows for a Solr that pauses (a collection of its heap) on a busy machine.
HEARTBEAT = 0.5
STALE = 10.0
_HEARTBEAT_IDS = [f"\x01neardup heartbeat {n}" for n in range(16)]


def building_name(name: str) -> str:
    return f"{name}{BUILDING}{time.time_ns() // 1_000_000}"


def is_building(candidate: str, name: str) -> bool:
    """Whether ``candidate`` is a core or collection a replacement of ``name`` made."""
    suffix = candidate[len(name) + len(BUILDING):]
    return candidate.startswith(name + BUILDING) and suffix.isdigit()


def _started(building: str) -> int:
    """When the replacement building in ``building`` started (milliseconds)."""
    return int(building.rsplit(BUILDING, 1)[1])


def _log_version(solr: Solr, building: str) -> str | None:
    """The latest entries of the update log of the core or collection
    ``building`` on ``solr``'s node, as text; ``None`` when it is not there
    (or fails). One request."""
    try:
        return json.dumps(solr.at(building).get("get", getVersions=1).get("versions"))
    except SolrFailure:
        return None


def alive(solr: Solr, buildings: Iterable[str], wait: float = STALE) -> set[str]:
    """Those of ``buildings`` (cores or collections replacements build in)
    whose replacement is alive: their update log changes (or they appear)
    within ``wait`` seconds. Returns as soon as all have shown life; a dead
    one costs the whole wait. Costs a request per building every half
    HEARTBEAT."""
    buildings = set(buildings)
    first = {b: _log_version(solr, b) for b in buildings}
    living: set[str] = set()
    deadline = time.monotonic() + wait
    while living != buildings and time.monotonic() < deadline:
        time.sleep(HEARTBEAT / 2)
        for building in buildings - living:
            now = _log_version(solr, building)
            if now is not None and now != first[building]:
                living.add(building)
    return living


class Heartbeats:
    """What one long-lived client (a service's worker) has seen of the
    replacements marked on an index, so it judges one alive or dead without
    waiting: alive until its log has been seen unchanged for STALE seconds.
    Safe to use from many threads."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[str | None, float]] = {}
        self._lock = threading.Lock()

    def alive(self, solr: Solr, building: str) -> bool:
        """Whether the replacement building in ``building`` is alive, as far
        as this client has seen. One request."""
        version, now = _log_version(solr, building), time.monotonic()
        with self._lock:
            seen = self._seen.get(building)
            if seen is None or seen[0] != version:
                self._seen[building] = seen = (version, now)
            return now - seen[1] < STALE


class _Heartbeat:
    """While its block runs, the new core's sign of life (see HEARTBEAT),
    sent from a thread of its own; a failed beat is let go (the next one, or
    the build's own requests, say what is wrong)."""

    def __init__(self, solr: Solr):
        self.solr = solr
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._beat, name="neardup-heartbeat", daemon=True)

    def _beat(self) -> None:
        while not self.stopped.wait(HEARTBEAT):
            try:
                self.solr.delete_ids(_HEARTBEAT_IDS)
            except NeardupError:
                pass

    def __enter__(self) -> _Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopped.set()
        self.thread.join()


def replace_index(
    solr: Solr,
    records: Iterable[Record],
    settings: IndexSettings,
    *,
    batch_size: int = BATCH_SIZE,
    progress: Progress | None = None,
    distinct: bool = False,
    keep_model: bool = False,
) -> int:
    """Replace the index ``solr`` serves with ``records``, never leaving it
    empty or half built: the records go into a new core (a new collection on
    SolrCloud), which takes the old one's place only once they are all
    committed with their settings. Until then the old index serves, as it
    was, marked as being replaced (``state.REPLACING_PROPERTY``), so writes
    to it, which would be lost, are refused meanwhile; a run that fails, is
    interrupted or holds no record at all removes the new core and the
    mark, and one killed outright leaves them for the next run to remove
    (the mark counts for nothing once its replacement has shown no life for
    STALE seconds). Returns how many records were indexed.

    One replacement at a time: a run that finds another alive (marked on
    the index, or a newer core of one started at the same moment) stops
    before changing anything, and the older of two started together goes
    on. The new core shows it is alive (HEARTBEAT) until it is swapped in.

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
    index's removal, a listing of cores or collections, the mark (a reload
    of the served core, and of the new one with its settings, again after
    the swap), and a request every HEARTBEAT seconds; STALE seconds of
    waiting when a killed run left its mark or its core; the disk holds
    both indexes until the swap (docs/scale.md has what a run measured). Needs Solr's admin
    rights: core-admin-edit on a standalone Solr, collection-admin-edit and
    config-edit on SolrCloud.

    Raises:
        InputError: ``records`` held no record (the index is left as it was).
        IndexBeingReplaced: another replacement of the index is alive (the
            index is left as it was).
        SolrFailure: Solr refused the admin requests (or failed them).
        SolrUnavailable: Solr could not be reached.
    """
    kept = index_properties(solr).get(MODEL_PROPERTY, "") if keep_model else ""
    place = _admin(solr, lambda: (_NewCollection if solr.cloud() else _NewCore)(solr))
    _admin(solr, place.claim)
    try:
        new = _admin(solr, place.build)
        with _Heartbeat(new):
            _admin(solr, place.clean)
            count = index_records(new, records, settings, batch_size=batch_size, progress=progress,
                                  distinct=distinct)
            if not count:
                raise InputError(f"there were no records to index; the index at {solr.url} was left as it was",
                                 hint="check the file's format and its id field or column")
            place.save(new, settings, kept)
        _admin(solr, place.swap)
    except SolrFailure:
        gone = place.built and _log_version(solr, place.name) is None  # its core removed under it
        place.discard()
        if gone:
            raise SolrFailure(f"the core {place.name} this replacement of {solr.url} built in was removed while it "
                              "ran; the index was left as it was",
                              hint="run it again (another replacement that took this one for dead removes it)") from None
        raise
    except BaseException:
        place.discard()
        raise
    _quietly(place.swapped)
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


class _Replacement:
    """What a replacement of the index at ``solr`` does whatever Solr runs
    it: claim the index (one replacement at a time, writes refused), find
    the other replacements' cores and leave, remove or yield to them, and
    give the claim back. A mode's class makes, swaps and removes cores or
    collections (:meth:`_others`, :meth:`_remove`, and the rest)."""

    def __init__(self, solr: Solr):
        self.solr, self.name = solr, building_name(solr.name)
        self.marked = self.built = False
        self.dead: set[str] = set()  # other replacements found dead
        self.yielded_to = ""  # the older replacement this one gives way to
        self.written: dict[str, str] = {}  # the new index's properties, once saved

    def save(self, new: Solr, settings: IndexSettings, model: str) -> None:
        """Keep the new index's settings and ``model`` with it (:func:`~.state.save_built`)."""
        self.written = save_built(new, settings, self.name, model)

    def swapped(self) -> None:
        """What the served index keeps once swapped in: as saved, where
        its overlay is its own."""

    def claim(self) -> None:
        """Refuse when another replacement marked on the index is alive;
        else mark the index as replaced by this one.

        Raises:
            IndexBeingReplaced: another replacement is alive.
        """
        other = stamp(self.solr).replacing
        if other and other != self.name:
            if alive(self.solr, [other]):
                raise self._busy(other)
            self.dead.add(other)
        mark_replacing(self.solr, self.name)
        self.marked = True

    def clean(self) -> set[str]:
        """Remove the cores of dead replacements; a living one older than
        this one (both started at once) makes this one give way. Returns
        the living ones (younger: they give way to this one).

        Raises:
            IndexBeingReplaced: an older replacement is alive.
        """
        others = {name for name in self._others() if name != self.name}
        living = alive(self.solr, others - self.dead) if others - self.dead else set()
        older = sorted((name for name in living if _started(name) <= _started(self.name)), key=_started)
        if older:
            self.yielded_to = older[0]
            raise self._busy(older[0])
        for name in others - living:
            self._remove(name)
        return living

    def _busy(self, other: str) -> IndexBeingReplaced:
        return IndexBeingReplaced(f"another replacement of the index at {self.solr.url} is under way (building "
                                  f"{other}); the index was left to it", other,
                                  hint="run this again when it is done")

    def release(self) -> None:
        """Give the claim back: the mark is cleared (or given back to the
        replacement this one gave way to), if it is still this one's."""
        if self.marked and stamp(self.solr).replacing == self.name:
            mark_replacing(self.solr, self.yielded_to)

    def _others(self) -> set[str]:
        raise NotImplementedError

    def _remove(self, name: str) -> None:
        raise NotImplementedError


class _NewCore(_Replacement):
    """A standalone core built beside the served one and swapped in.

    Cores made from one configset share its overlay, where the index
    settings live, and Solr's config API reads the overlay from the file
    each time it writes: saving the new settings through the new core
    reloads only that core (the served one keeps what it loaded), so the
    served core answers with its own settings until the swap; a run that
    fails after saving them puts the served core's back. A Solr that stops
    before the swap loads the file into both cores when it starts again:
    the served core's properties are saved beside the new ones
    (``state.PREVIOUS_PROPERTY``) until the swap is done, and readers tell
    which are the served core's by the folder it lives in
    (:func:`~.state.index_properties`).
    """

    def __init__(self, solr: Solr):
        super().__init__(solr)
        self.kept: dict[str, str] = {}

    def _others(self) -> set[str]:
        return {core for core in self.solr.core_admin("STATUS", indexInfo="false").get("status", {})
                if is_building(core, self.solr.name)}

    def build(self) -> Solr:
        """The new core, from the configset named like the served core (as
        the local Solr makes it), else from the one the local Solr installs
        the project's configuration as (``neardup``), which cores made
        beside its own may share."""
        self.kept = index_properties(self.solr)
        configsets = list(dict.fromkeys([self.solr.name, local_solr.CORE]))
        for configset in configsets:
            try:
                self.solr.core_admin("CREATE", name=self.name, instanceDir=self.name, configSet=configset)
                self.built = True
                return self.solr.at(self.name)
            except SolrFailure as err:
                if err.remedy == "credentials":
                    raise
                failure = err
        raise SolrFailure(f"could not make core {self.name!r} to build the new index in: {failure.message}",
                          hint=f"it is made from the configset {' or '.join(map(repr, configsets))}, "
                          "which the Solr node must have")

    def save(self, new: Solr, settings: IndexSettings, model: str) -> None:
        """As a collection's, with the served core's properties beside them
        (the overlay is shared) until the swap."""
        self.written = save_built(new, settings, self.name, model, served=self.kept)

    def swap(self) -> None:
        self.solr.core_admin("SWAP", core=self.solr.name, other=self.name)

    def swapped(self) -> None:
        """The new core's properties saved again without the old core's."""
        forget_previous(self.solr, self.written)

    def discard(self) -> None:
        if self.kept:
            # What this build wrote to the shared overlay, back as it was (what the served core did not keep: none).
            restored = restoring(self.kept, self.written)
            _quietly(lambda: self.solr.at(self.name).set_user_properties(restored))
        _quietly(lambda: self._remove(self.name))
        _quietly(self.release)

    def retire(self) -> None:
        """The old core, named as the new one was before the swap: unloaded with its data."""
        _quietly(lambda: self._remove(self.name))

    def _remove(self, core: str) -> None:
        self.solr.core_admin("UNLOAD", core=core, deleteIndex="true", deleteDataDir="true", deleteInstanceDir="true")


class _NewCollection(_Replacement):
    """A SolrCloud collection built beside the served one; the URL's name
    becomes (or stays) an alias, pointed at it."""

    def __init__(self, solr: Solr):
        super().__init__(solr)
        state = cloud.cluster_status(solr)
        self.serving = cloud.resolved(state, solr.name)
        self.existing = set(state.get("collections", {}))

    def _others(self) -> set[str]:
        return {name for name in self.existing if is_building(name, self.solr.name) and name != self.serving}

    def clean(self) -> set[str]:
        living = super().clean()
        for configset in cloud.configsets(self.solr):
            if is_building(configset, self.solr.name) and configset not in self.existing | living | {self.name}:
                cloud.drop_configset(self.solr, configset)
        return living

    def build(self) -> Solr:
        made = cloud.copy_collection(self.solr, self.name)
        self.built = True
        return made

    def swap(self) -> None:
        cloud.point_alias(self.solr, self.solr.name, self.name)

    def discard(self) -> None:
        if self.built:
            _quietly(lambda: self._remove(self.name))
        _quietly(self.release)

    def retire(self) -> None:
        _quietly(lambda: self._remove(self.serving))

    def _remove(self, name: str) -> None:
        cloud.drop_collection(self.solr, name)


def writable(solr: Solr, heartbeats: Heartbeats | None = None) -> Stamp:
    """The stamp of ``solr``'s index, when a write to it now would be kept:
    no replacement of it is alive (one marked that shows no life is
    forgotten). One request; up to STALE seconds of watching a replacement
    that shows no life (none with ``heartbeats``, what a long-lived client
    has seen of the replacements).

    Raises:
        IndexBeingReplaced: a replacement is under way.
    """
    found = stamp(solr)
    building = found.replacing
    if not building:
        return found
    if heartbeats is not None:
        living = heartbeats.alive(solr, building)
    else:
        living = bool(alive(solr, [building]))
        if not living and stamp(solr).replacing == building:
            mark_replacing(solr, "")  # a killed run's mark, forgotten (its core is left to the next run)
    if living:
        raise IndexBeingReplaced(f"the index at {solr.url} is being replaced (a new build of it is under "
                                 f"way in {building}): a write now would be lost with it", building)
    return found


def kept_since(solr: Solr, before: Stamp, what: str) -> None:
    """Refuse to call a write done when the index was replaced, or began
    to be, while it was written (a :func:`writable` ``before`` it): what
    it wrote may be lost with the old index. One request.

    Raises:
        IndexBeingReplaced: so it was.
    """
    after = stamp(solr)
    if after.build != before.build or (after.replacing and after.replacing != before.replacing):
        raise IndexBeingReplaced(f"the index at {solr.url} was replaced, or began to be, while {what}: "
                                 "they may be lost with the old index", after.replacing or after.build,
                                 hint="write them again (when the replacement is done)")


def replan_index(solr: Solr, settings: IndexSettings, progress: Progress | None = None) -> bool:
    """The plan of ``solr``'s index (its banding, when chosen from the
    records, and its fields' profiles) made again from a sample of all it
    holds (:func:`~neardup_solr.index.sampling.index_sample`, which does not
    depend on the order records came in), and the index rebuilt with it when
    it differs from ``settings`` (its records and match model as they
    were): so two sources give one index whichever was indexed first.
    Returns whether it was rebuilt. Costs a request and a comparison of the
    sample's pairs; a rebuild costs what :func:`replace_index` of every
    record does."""
    plan = choose_plan(index_sample(solr), settings.lsh_shingles, total=solr.count(), banding=settings.chosen)
    planned = replace(settings, fields=plan.fields)
    if plan.choice is not None:
        planned = replace(planned, bands=plan.choice.banding.bands, band_rows=plan.choice.banding.band_rows)
    if planned == settings:
        return False
    log.info("planned %s again from all it holds: rebuilt", solr.url)
    replace_index(solr, stored_records(solr), planned, progress=progress, keep_model=True)
    return True


def stored_records(solr: Solr) -> Iterator[Record]:
    """Every record of ``solr``'s index as it was given (its key, text and
    fields), in id order: what a rebuild of the index indexes again. One
    request per 1000 records."""
    for doc in solr.iter_docs([ID, TEXT, RECORD_FIELDS]):
        yield record_of(doc)
