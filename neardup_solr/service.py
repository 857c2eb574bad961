"""The duplicate-check service: the public API (:class:`NearDuplicates`)
over HTTP, as a FastAPI app served by uvicorn.

::

    POST   /records                  index one record or a list; each one's near duplicates
    GET    /duplicates?text=...      near duplicates of any text
    GET    /records/{id}/duplicates  near duplicates of an indexed record
    DELETE /records/{id}             delete a record
    GET    /health                   Solr reachable, record count, index settings
    GET    /docs, /openapi.json      the API described
    GET    /?text=...                the review page: a search box and a text's near duplicates

Errors are JSON ``{"error": ..., "hint": ...}``, one line each, never a
traceback: 400 bad JSON or a bad record (the reason the command line
gives), 401 a write without the token, 404 no such record, 409 the index
was never built, 502 Solr answered with an error, 503 Solr unreachable.

It binds 127.0.0.1 unless told otherwise, and refuses any other address
without a token; with a token, writes (POST, DELETE) need
``Authorization: Bearer <token>``. Calls into the API take one lock, so
requests reach Solr one at a time. Nothing here prints: uvicorn logs.
"""

from __future__ import annotations

import hmac
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any, TypeVar

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from . import __version__
from .api import NearDuplicates, as_record
from .errors import InputError, NeardupError, SolrFailure, SolrUnavailable
from .records import Record
from .review import CSP, render_review
from .search import Match
from .text import is_blank

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_LIMIT = 10
# A record is at most 1 MiB of text; a request holds many, but not without end.
MAX_BODY = 32 * 1024 * 1024
# A property `index` keeps with the index, and only it: whether the index was ever built.
BUILT_PROPERTY = "neardup.bands"

T = TypeVar("T")


class ServiceError(Exception):
    """An answer other than 200, with the one line and hint it carries."""

    def __init__(self, status: int, message: str, hint: str | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint


class Duplicate(BaseModel):
    id: str
    similarity: float
    probability: float | None = None
    distance: int
    text: str


class RecordDuplicates(BaseModel):
    id: str
    duplicates: list[Duplicate]


class Added(BaseModel):
    added: int
    records: list[RecordDuplicates]


class Asked(BaseModel):
    id: str | None = None
    text: str


class Found(BaseModel):
    query: Asked
    matches: list[Duplicate]


class Deleted(BaseModel):
    deleted: list[str]


class Health(BaseModel):
    solr: str
    url: str
    records: int
    built: bool
    settings: dict[str, Any] | None
    version: str


class Failure(BaseModel):
    error: str
    hint: str | None = None


RECORDS_BODY = {
    "required": True,
    "content": {"application/json": {"schema": {
        "oneOf": [{"$ref": "#/components/schemas/NewRecord"},
                  {"type": "array", "items": {"$ref": "#/components/schemas/NewRecord"}}]},
        "example": [{"id": "1", "text": "Art's Deli 12224 Ventura Blvd. Studio City"},
                    {"id": "2", "text": "Arts Deli, 12224 Ventura Boulevard, Studio City"}]}},
}
NEW_RECORD_SCHEMA = {
    "type": "object",
    "required": ["id", "text"],
    "properties": {"id": {"type": "string", "description": "1-128 of A-Z a-z 0-9 . _ : -, starting with a letter or digit"},
                   "text": {"type": "string", "description": "the record's text: some letters or digits"}},
}
FAILURES = {status: {"model": Failure, "description": what} for status, what in (
    (400, "bad JSON, a bad record or a bad parameter"), (502, "Solr answered with an error"),
    (503, "Solr could not be reached"))}
WRITE_FAILURES = FAILURES | {401: {"model": Failure, "description": "a token is configured and was not given"}}


def is_local(host: str) -> bool:
    """Whether ``host`` is this machine's loopback only."""
    return host.strip("[]") in LOCAL_HOSTS


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond this machine without a token.

    Raises:
        NeardupError: ``host`` is not loopback and there is no token.
    """
    if not is_local(host) and not token:
        raise NeardupError(f"refusing to serve on {host} without a token: anyone who reaches it could change the index",
                           hint="give a token (clients send `Authorization: Bearer <token>`), "
                           f"or bind {DEFAULT_HOST}", remedy="token", local=DEFAULT_HOST)


def read_token(text: str, source: str) -> str:
    """The token in ``text`` (a file's content), without surrounding white space.

    Raises:
        NeardupError: the file holds no token.
    """
    token = text.strip()
    if not token or any(c.isspace() for c in token):
        raise NeardupError(f"{source} holds no token (one line without spaces)",
                           hint="write a long random token into it, e.g. `python -c \"import secrets; "
                           "print(secrets.token_urlsafe(32))\" > FILE`")
    return token


def _match(match: Match) -> dict[str, Any]:
    return {"id": match.id, "similarity": round(match.similarity, 4),
            "probability": None if match.probability is None else round(match.probability, 4),
            "distance": match.distance, "text": match.text}


def _failure(status: int, message: str, hint: str | None = None) -> JSONResponse:
    return JSONResponse({"error": message} | ({"hint": hint} if hint else {}), status_code=status,
                        headers={"WWW-Authenticate": "Bearer"} if status == 401 else None)


def _records_of(body: bytes) -> list[Record]:
    """The records of a request body: a JSON object or a list of them, each
    checked as the API checks records (the reasons are the API's).

    Raises:
        InputError: the body is not JSON, holds no record, or a record is bad.
    """
    try:
        data = json.loads(body)
    except UnicodeDecodeError:
        raise InputError("the body is not UTF-8", hint="send JSON in UTF-8") from None
    except ValueError as err:
        raise InputError(f"the body is not JSON: {err}",
                         hint='send {"id": ..., "text": ...} or a list of them') from None
    items = data if isinstance(data, list) else [data]
    if not items:
        raise InputError("the body holds no records", hint='send {"id": ..., "text": ...} or a list of them')
    records = []
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise InputError(f"record {number}: a record is a JSON object with id and text, not {item!r:.60}")
        try:
            records.append(as_record(item))
        except InputError as err:
            raise InputError(f"record {number}: {err.message}", hint=err.hint) from None
    return records


def create_app(nd: NearDuplicates, *, token: str | None = None) -> FastAPI:
    """The service's app for ``nd``'s index; with ``token``, writes need it."""
    app = FastAPI(title="neardup-solr", version=__version__,
                  description="Near duplicates of records, backed by Apache Solr: index records and get each one's "
                  "near duplicates with similarity and match probability in one call.")
    lock = threading.Lock()
    built = threading.Event()
    bearer = HTTPBearer(auto_error=False, description="The token the service was started with (--token-file).")

    def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with lock:
            return fn(*args, **kwargs)

    def authorized(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if token is None:
            return
        if credentials is None or not hmac.compare_digest(credentials.credentials.encode(), token.encode()):
            raise ServiceError(401, "this service takes writes only with its token",
                               hint="send `Authorization: Bearer <token>`")

    def ensure_built() -> None:
        if built.is_set():
            return
        if BUILT_PROPERTY not in call(nd.solr.user_properties):
            raise ServiceError(409, f"the index at {nd.solr.url} has never been built",
                               hint="build it first: `neardup index FILE` on this Solr URL")
        built.set()

    @app.exception_handler(ServiceError)
    def service_error(request: Request, err: ServiceError) -> JSONResponse:
        return _failure(err.status, err.message, err.hint)

    @app.exception_handler(NeardupError)
    def neardup_error(request: Request, err: NeardupError) -> JSONResponse:
        return _failure(_status(err), err.message, err.hint)

    @app.exception_handler(RequestValidationError)
    def bad_request(request: Request, err: RequestValidationError) -> JSONResponse:
        first = err.errors()[0] if err.errors() else {}
        where = ".".join(str(part) for part in first.get("loc", ()) if part not in ("query", "path", "body"))
        return _failure(400, f"{where or 'request'}: {first.get('msg', 'invalid')}".lower(), hint="see /docs")

    original_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = original_openapi()
            schema.setdefault("components", {}).setdefault("schemas", {})["NewRecord"] = NEW_RECORD_SCHEMA
        return app.openapi_schema

    app.openapi = openapi

    @app.post("/records", response_model=Added, dependencies=[Depends(authorized)],
              openapi_extra={"requestBody": RECORDS_BODY},
              responses=WRITE_FAILURES | {409: {"model": Failure, "description": "the index was never built"},
                                          413: {"model": Failure, "description": "the body is too large"}})
    async def post_records(request: Request, limit: int = Query(DEFAULT_LIMIT, ge=1, le=1000,
                                                                description="most duplicates per record")):
        """Index one record or a list (an id indexed already is replaced) and
        answer each one's near duplicates among everything indexed, these
        records included, best first."""
        if int(request.headers.get("content-length") or 0) > MAX_BODY:
            raise ServiceError(413, f"the body is over {MAX_BODY // 2**20} MiB", hint="send the records in parts")
        body = await request.body()
        if len(body) > MAX_BODY:
            raise ServiceError(413, f"the body is over {MAX_BODY // 2**20} MiB", hint="send the records in parts")
        records = _records_of(body)
        # The body is read here, asynchronously; Solr's calls block, so they run in a worker thread.
        return await run_in_threadpool(add_and_find, records, limit)

    def add_and_find(records: list[Record], limit: int) -> dict[str, Any]:
        ensure_built()
        with lock:
            added = nd.add(records)
            answers = [{"id": r.id, "duplicates": [_match(m) for m in nd.query(r.text, exclude=r.id, limit=limit)]}
                       for r in records]
        return {"added": added, "records": answers}

    @app.get("/duplicates", response_model=Found, responses=FAILURES)
    def duplicates(text: str = Query(..., description="any text, indexed or not"),
                   limit: int = Query(DEFAULT_LIMIT, ge=1, le=1000, description="most matches"),
                   threshold: float | None = Query(None, ge=0, le=1, description="smallest similarity "
                                                   "(default: the match model's cut)")):
        """The indexed records most like ``text``, best first."""
        if is_blank(text):
            raise InputError("the text has no letters or digits", hint="give some text to look up")
        matches = call(nd.query, text, threshold=threshold, limit=limit)
        return {"query": {"text": text}, "matches": [_match(m) for m in matches]}

    @app.get("/records/{record_id}/duplicates", response_model=Found,
             responses=FAILURES | {404: {"model": Failure, "description": "no record has that id"}})
    def record_duplicates(record_id: str, limit: int = Query(DEFAULT_LIMIT, ge=1, le=1000),
                          threshold: float | None = Query(None, ge=0, le=1)):
        """The near duplicates of an indexed record, best first."""
        with lock:
            text = _text(nd, record_id)
            matches = nd.query(text, exclude=record_id, threshold=threshold, limit=limit)
        return {"query": {"id": record_id, "text": text}, "matches": [_match(m) for m in matches]}

    @app.delete("/records/{record_id}", response_model=Deleted, dependencies=[Depends(authorized)],
                responses=WRITE_FAILURES | {404: {"model": Failure, "description": "no record has that id"}})
    def delete_record(record_id: str):
        """Delete a record and commit."""
        present = call(nd.delete, [record_id])
        if not present:
            raise ServiceError(404, f"no record with id {record_id!r} in {nd.solr.url}")
        return {"deleted": present}

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def review(text: str = "", limit: int = Query(DEFAULT_LIMIT, ge=1, le=1000)):
        """The review page; with ``text``, its near duplicates."""
        status, shown = 200, {}
        try:
            with lock:
                shown["records"] = nd.solr.count()
                if text.strip():
                    if is_blank(text):
                        raise InputError("the text has no letters or digits", hint="give some text to look up")
                    shown["matches"] = nd.query(text, limit=limit)
        except NeardupError as err:
            status = _status(err)
            shown.update(error=err.message, hint=err.hint)
        return HTMLResponse(render_review(text, **shown), status_code=status,
                            headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"})

    @app.get("/health", response_model=Health, responses={503: FAILURES[503], 502: FAILURES[502]})
    def health():
        """Whether Solr answers, how many records the index holds and how it was built."""
        with lock:
            nd.solr.ping()
            count = nd.solr.count()
            stored = nd.solr.user_properties()
            settings = nd.settings if BUILT_PROPERTY in stored else None
        return {"solr": "ok", "url": nd.solr.url, "records": count, "built": settings is not None,
                "settings": None if settings is None else asdict(settings), "version": __version__}

    return app


def _status(err: NeardupError) -> int:
    """The HTTP status of a typed error."""
    if isinstance(err, SolrUnavailable):
        return 503
    if isinstance(err, SolrFailure):
        return 502
    return 400 if isinstance(err, InputError) else 500


def _text(nd: NearDuplicates, record_id: str) -> str:
    """The indexed text of ``record_id``; no such record is a 404."""
    try:
        return nd.text(record_id)
    except (SolrUnavailable, SolrFailure):
        raise
    except NeardupError as err:
        raise ServiceError(404, err.message, hint="index it first (POST /records)") from None


def serve(nd: NearDuplicates, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, token: str | None = None,
          log_level: str = "info") -> None:
    """Serve ``nd`` on ``host``:``port`` until interrupted.

    Raises:
        NeardupError: a non-loopback ``host`` without a token, or the port taken.
    """
    import uvicorn

    check_bind(host, token)
    config = uvicorn.Config(create_app(nd, token=token), host=host, port=port, log_level=log_level,
                            server_header=False)
    server = uvicorn.Server(config)
    with _port_errors(host, port):
        server.run()
    if not server.started:
        raise NeardupError(f"could not serve on {host}:{port}", hint="is the port taken? choose another",
                           remedy="serve_port")


@contextmanager
def _port_errors(host: str, port: int) -> Iterator[None]:
    try:
        yield
    except OSError as err:
        raise NeardupError(f"could not serve on {host}:{port}: {err.strerror or err}",
                           hint="is the port taken? choose another", remedy="serve_port") from None
    except SystemExit:
        # uvicorn exits when it cannot bind, after logging why.
        raise NeardupError(f"could not serve on {host}:{port}",
                           hint="is the port taken? choose another", remedy="serve_port") from None
