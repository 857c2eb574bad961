"""The record routes: ``POST /records``, ``GET /duplicates``,
``GET /records/{id}/duplicates``, ``DELETE /records/{id}`` and
``GET /health``."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import anyio
from fastapi import APIRouter, Depends, Query, Request
from starlette.concurrency import run_in_threadpool

from .. import __version__
from ..api import NearDuplicates
from ..errors import InputError, SolrUnavailable
from ..records.record import in_source
from ..index.state import built_settings
from ..text.normalize import is_blank
from .bodies import capped_body, checked_sources, json_only, records_of
from .guards import authorized, may_read
from .models import (AGAINST_HELP, Added, CUT_HELP, DEFAULT_LIMIT, Deleted, FAILURES, Failure, Found, Health,
                     OLD_CUT_HELP, READ_FAILURES, RECORDS_BODY, SOURCE_HELP, ServiceError, WRITE_FAILURES, answer_of)
from .shared import HEALTH_WAIT, ServiceState, Shared, ensure_built, indexed_record


# The records, their near duplicates and /health.
record_routes = APIRouter()


@record_routes.post("/records", response_model=Added, dependencies=[Depends(authorized)],
                    openapi_extra={"requestBody": RECORDS_BODY},
                    responses=WRITE_FAILURES | {409: {"model": Failure, "description": "the index was never built"},
                                                413: {"model": Failure, "description": "the body is too large"},
                                                415: {"model": Failure, "description": "the body is not JSON"}})
async def post_records(request: Request, service: Shared,
                       limit: int = Query(DEFAULT_LIMIT, ge=1, le=1000, description="most duplicates per record"),
                       source: str = Query("", description=SOURCE_HELP),
                       against: str = Query("", description=AGAINST_HELP)):
    """Index one record or a list (an id indexed already is replaced) and
    answer each one's near duplicates among everything indexed (or the
    records of the source ``against``), these records included, best
    first. Records of a ``source`` are answered as ``source/id``."""
    json_only(request, "records")
    checked_sources(source, against)
    body = await capped_body(request, service.max_body, "send the records in parts")
    # The body is read here, asynchronously, up to the cap; parsing it and
    # Solr's calls block, so they run in a worker thread.
    return await run_in_threadpool(_add_and_find, service, body, limit, source, against)


def _add_and_find(service: ServiceState, body: bytes, limit: int, source: str, against: str) -> dict[str, Any]:
    """POST /records's work: index the body's records with a NearDuplicates
    of its own, then ask the reads' reader for each one's near duplicates.
    Costs a parse of the body, Solr's add and soft commit (the update log
    keeps what it made visible), and the lookups of its records (two
    requests for them all, when they are texts)."""
    given = records_of(body)
    records = list(in_source(given, source))
    ensure_built(service)
    writer = service.writer()
    # Which of them replace a record indexed already (one lookup per 1000 ids), so the answer says so.
    indexed = writer.texts([r.id for r in records])
    added = writer.add(given, source=source, replan=False, soft_commit=True)
    reader = service.current()
    reader.refresh_words(r.text for r in records)  # the words they hold are now more frequent
    found = reader.query_each([(r if r.fields else r.text, r.id) for r in records], source=against, limit=limit)
    answers = [{"id": r.id, "duplicates": [answer_of(m) for m in matches]} for r, matches in zip(records, found)]
    return {"added": added, "replaced": [r.id for r in records if r.id in indexed], "records": answers}


@record_routes.get("/duplicates", response_model=Found, dependencies=[Depends(may_read)], responses=READ_FAILURES)
def duplicates(service: Shared, text: str = Query(..., description="any text, indexed or not"),
               limit: int = Query(DEFAULT_LIMIT, ge=1, le=1000, description="most matches"),
               cut: float | None = Query(None, ge=0, le=1, description=CUT_HELP),
               against: str = Query("", description=AGAINST_HELP),
               threshold: float | None = Query(None, ge=0, le=1, deprecated=True, description=OLD_CUT_HELP)):
    """The indexed records most like ``text``, best first."""
    checked_sources(against)
    if is_blank(text):
        raise InputError("the text has no letters or digits", hint="give some text to look up")
    matches = service.current().query(text, source=against, cut=cut, threshold=threshold, limit=limit)
    return {"query": {"text": text}, "matches": [answer_of(m) for m in matches]}


# A record of a source is source/id: the path's id may hold a slash.
@record_routes.get("/records/{record_id:path}/duplicates", response_model=Found, dependencies=[Depends(may_read)],
                   responses=READ_FAILURES | {404: {"model": Failure, "description": "no record has that id"}})
def record_duplicates(service: Shared, record_id: str, limit: int = Query(DEFAULT_LIMIT, ge=1, le=1000),
                      cut: float | None = Query(None, ge=0, le=1, description=CUT_HELP),
                      against: str = Query("", description=AGAINST_HELP),
                      threshold: float | None = Query(None, ge=0, le=1, deprecated=True, description=OLD_CUT_HELP)):
    """The near duplicates of an indexed record, best first."""
    checked_sources(against)
    reader = service.current()
    record = indexed_record(reader, record_id)
    matches = reader.query(record if record.fields and cut is None and threshold is None else record.text,
                           exclude=record_id, source=against, cut=cut, threshold=threshold, limit=limit)
    return {"query": {"id": record_id, "text": record.text}, "matches": [answer_of(m) for m in matches]}


@record_routes.delete("/records/{record_id:path}", response_model=Deleted, dependencies=[Depends(authorized)],
                      responses=WRITE_FAILURES | {404: {"model": Failure, "description": "no record has that id"}})
def delete_record(service: Shared, record_id: str):
    """Delete a record and commit (softly, as a POST does)."""
    present = service.writer().delete([record_id], soft_commit=True)
    if not present:
        raise ServiceError(404, f"no record with id {record_id!r} in {service.nd.solr.url}")
    return {"deleted": present}


@record_routes.get("/health", response_model=Health, responses={503: FAILURES[503], 502: FAILURES[502]})
async def health(service: Shared):
    """Whether Solr answers, how many records the index holds and how it
    was built. Answers within a second, whatever else the service is
    doing: 503 when Solr has not answered by then."""
    with anyio.move_on_after(HEALTH_WAIT):
        return await anyio.to_thread.run_sync(_solr_health, service.nd, limiter=service.health_threads,
                                              abandon_on_cancel=True)
    raise SolrUnavailable(f"Solr at {service.nd.solr.url} did not answer within {HEALTH_WAIT:g} s",
                          hint="it is down or too busy to answer; /health says so until it answers again")


def _solr_health(nd: NearDuplicates) -> dict[str, Any]:
    """/health's answer: three Solr requests (ping, count, user properties)."""
    nd.solr.ping()
    count = nd.solr.count()
    settings = built_settings(nd.solr)
    return {"solr": "ok", "url": nd.solr.url, "records": count, "built": settings is not None,
            "settings": None if settings is None else asdict(settings), "version": __version__}
