"""What the routes share: the app's :class:`ServiceState` (the index and a
reader of its current generation, the labels, the review page's
clusters), handed to each route as ``service: Shared``; an indexed record
or a 404."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Annotated

import anyio
from fastapi import Depends, Request

from ..api import NearDuplicates
from ..errors import NeardupError, SolrFailure, SolrUnavailable
from ..index.replacement import Heartbeats
from ..results.labels import LabelStore
from ..records.record import Record
from .review import PairClusters
from ..index.state import built_settings, stamp
from .defaults import CLIENT_TIMEOUT
from .models import ServiceError


# Seconds /health waits for its four Solr requests (a few milliseconds each)
# before it answers 503: it says whether Solr answers now, so it never waits
# behind a Solr that is slow or gone (with retries, a refused connection takes 3.5 s).
HEALTH_WAIT = 1.0
# Threads /health's Solr requests may use, apart from the other requests'
# (which may all be waiting on Solr): requests it stopped waiting for hold
# theirs until Solr answers or times out, and /health then answers 503 at once.
HEALTH_THREADS = 4


@dataclass
class ServiceState:
    """What the routes of one app share, kept as ``app.state.service``; a
    route takes it as its parameter ``service: Shared``.

    ``nd`` is the :class:`NearDuplicates` the app was made for: its Solr
    connection serves every request, and /health reports its settings.
    ``reader`` is the one reads share (:meth:`current`), made at the
    index's ``generation`` and replaced in one assignment when that
    changes, so no read sees half of it; writes answer from it too
    (:func:`create_app` says why). ``heartbeats`` is what the writes have
    seen of replacements of the index. ``built`` is set once the index is known to have been built
    (:func:`ensure_built`); ``health_threads`` are /health's own threads
    (``HEALTH_THREADS``). With ``token_for_reads`` (and a ``token``) the
    index and the labels are read only with the token too."""

    nd: NearDuplicates
    token: str | None
    labels: LabelStore | None
    pairs: PairClusters | None
    hosts: frozenset[str]
    max_body: int
    client_timeout: float = CLIENT_TIMEOUT
    token_for_reads: bool = False
    reader: NearDuplicates = field(init=False)
    generation: str | None = None
    heartbeats: Heartbeats = field(default_factory=Heartbeats)
    built: threading.Event = field(default_factory=threading.Event)
    health_threads: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(HEALTH_THREADS))

    def __post_init__(self) -> None:
        self.reader = self.nd

    def current(self) -> NearDuplicates:
        """The reader, made anew when the index changed since it was made
        (a new build, a new model: its generation, ``state.stamp``), so what
        it keeps (the settings, the model, word frequencies) is the index's,
        in every worker of the service. One request."""
        generation = stamp(self.nd.solr).generation
        if generation != self.generation:
            self.reader, self.generation = NearDuplicates(self.nd.solr), generation
        return self.reader

    def writer(self) -> NearDuplicates:
        """A NearDuplicates for one write, judging replacements by what the
        service has seen of them (no wait)."""
        writer = NearDuplicates(self.nd.solr)
        writer.heartbeats = self.heartbeats
        return writer

    def label_store(self) -> LabelStore:
        """The labels; a service that keeps none answers 409."""
        if self.labels is None:
            raise ServiceError(409, "this service keeps no labels", hint="start it with a labels file")
        return self.labels


# Async, as every dependency here: a plain one would wait for a worker thread
# first, and the auth check and /health must answer at once.
async def state_of(request: Request) -> ServiceState:
    """The :class:`ServiceState` of the app a request came to."""
    return request.app.state.service


Shared = Annotated[ServiceState, Depends(state_of)]


def ensure_built(service: ServiceState) -> None:
    """Refuse (409) a write to an index that was never built
    (:func:`neardup_solr.index.state.built_settings`). Costs a Solr request until
    the index is first found built, nothing after."""
    if service.built.is_set():
        return
    if built_settings(service.nd.solr) is None:
        raise ServiceError(409, f"the index at {service.nd.solr.url} has never been built",
                           hint="build it first: `neardup index FILE` on this Solr URL")
    service.built.set()


def indexed_record(nd: NearDuplicates, record_id: str) -> Record:
    """The indexed record ``record_id``; no such record is a 404."""
    try:
        return nd.record(record_id)
    except (SolrUnavailable, SolrFailure):
        raise
    except NeardupError as err:
        raise ServiceError(404, err.message, hint="index it first (POST /records)") from None
