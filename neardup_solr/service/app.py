"""The duplicate-check service: the public API (:class:`NearDuplicates`)
over HTTP, as a FastAPI app served by uvicorn.

::

    POST   /records                  index one record or a list; each one's near duplicates
    GET    /duplicates?text=...      near duplicates of any text
    GET    /records/{id}/duplicates  near duplicates of an indexed record
    DELETE /records/{id}             delete a record
    GET    /health                   Solr reachable, record count, index settings
    POST   /labels                   label a pair: {"a": id, "b": id, "label": "same"|"different"}
    GET    /labels                   every label, the latest for each pair
    GET    /labels/gold              the pairs labeled same, as a gold-pairs file
    GET    /docs, /openapi.json      the API described
    GET    /?text=...                the review page: a search box and a text's near duplicates,
                                     an indexed record's (?id=...), the clusters of a pair file
    POST   /labels/form, /sign-in    the review page's forms

Each route is a plain function on one of three routers (``record_routes``,
``label_routes``, ``page_routes``), and takes what the routes share, the
app's :class:`ServiceState`, as its parameter ``service: Shared``;
:func:`create_app` makes the app and includes them.

Errors are JSON ``{"error": ..., "hint": ...}``, one line each, never a
traceback: 400 bad JSON, a bad record (the reason the command line gives,
by its own rules: the id rule, control characters, lone surrogates, a text
over 1 MiB), a bad label or a Host it does not answer to, 401 a write
without the token, 404 no such record, 408 a request left half sent
(``CLIENT_TIMEOUT``; the connection closed), 409 the index was never built, 413 a
body over its cap (refused as soon as that is known, the rest unread), 415
records or a label not sent as JSON, 502 Solr answered with an error, 503
Solr unreachable (``/health``: Solr did not answer within a second) or, for
a write, the index being replaced (the write would be lost with it).

It binds 127.0.0.1 unless told otherwise, and refuses any other address
without a token; with a token, writes (POST, DELETE) need
``Authorization: Bearer <token>``. It answers only to the host names and
addresses it was bound to (every loopback name for a loopback address)
and those it is given, so a page elsewhere whose name was made to point
here (DNS rebinding) is refused. Nothing is locked: every request that asks
Solr runs in a worker thread of its own, reads and writes side by side, and Solr orders
the writes; a read sees what Solr's latest commit holds (some of a
write's records may show before it is answered, when another write's commit
comes first). ``/health`` has threads of its own and
waits a second at most. :func:`serve_workers` runs several processes, each
with the app a factory makes. Nothing here prints: uvicorn logs.

Labels (:mod:`neardup_solr.results.labels`) are kept in a labels file, each one
synced to the disk before it is answered. The review page (:mod:`review`)
labels through plain forms, since its policy allows no script; a form
cannot send a bearer header, so with a token the page first asks for it
(``/sign-in``) and keeps, in a same-site, script-proof cookie, a key
derived from it that opens the page's forms and nothing else. Every form
post must come from the service's own page: a browser says where a post
comes from (``Sec-Fetch-Site``, ``Origin``), and another site's page
posting here (cross-site request forgery) is refused.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import re
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Annotated, Any, Literal
from urllib.parse import parse_qs, urlsplit

import anyio
from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from .. import __version__
from ..api import NearDuplicates, as_record
from ..errors import IndexBeingReplaced, InputError, NeardupError, SolrFailure, SolrUnavailable
from ..index.writer import Heartbeats
from ..results.labels import LabelStore, gold_text, label_problem, label_rows
from ..records.record import MAX_LINE_BYTES, Record, checked_source, field_problem, in_source, size_problem
from .review import CSP, LABEL_ACTION, SIGN_IN_ACTION, Labeling, PairClusters, State, render_review
from ..modes.search import Match
from ..index.state import built_settings, stamp
from ..text.normalize import is_blank

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
# Addresses that bind every interface: the service may be reached by any of the machine's names.
ANY_ADDRESS = ("0.0.0.0", "::", "")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_LIMIT = 10
# The most a POST /records body may hold unless told otherwise: a record is at most
# 1 MiB of text (MAX_LINE_BYTES, as a line of a records file), which JSON's
# escapes can make 3 MiB (an emoji, 4 bytes, sent as two \uXXXX, 12); a
# batch of ordinary records (about 100 bytes each) fits 40,000. Reading stops
# at the cap: a larger body is refused (413) without being held. A 20 MB text
# took 5 minutes and 874 MB in the service before there was a cap this low.
MAX_BODY = 4 * 1024 * 1024
# Seconds /health waits for its four Solr requests (a few milliseconds each)
# before it answers 503: it says whether Solr answers now, so it never waits
# behind a Solr that is slow or gone (with retries, a refused connection takes 3.5 s).
HEALTH_WAIT = 1.0
# Threads /health's Solr requests may use, apart from the other requests'
# (which may all be waiting on Solr): requests it stopped waiting for hold
# theirs until Solr answers or times out, and /health then answers 503 at once.
HEALTH_THREADS = 4
# Seconds a client may leave a request half sent: its line and headers not
# all there since it connected (or since its last answer), or its body
# paused. Then it gets 408 and the connection is closed, so clients that
# stall (or a slow-sending attack) cannot hold sockets and tasks forever.
CLIENT_TIMEOUT = 30.0
# A label is small; its body has no reason to be larger than this.
MAX_LABEL_BODY = 64 * 1024
# A page's form carries the page's state, whose text may be a whole record
# (1 MiB), percent-encoded in up to three bytes a byte.
MAX_FORM_BODY = 4 * 1024 * 1024
# The cookie that opens the page's forms after /sign-in, and what its key is derived with.
PAGE_COOKIE = "neardup_review"
PAGE_KEY_PURPOSE = b"neardup review page forms"
# Where a label's redirect may return on the page: an element id the page gives a row.
ANCHOR = re.compile(r"(?:pair|match)-[A-Za-z0-9._:/~!-]{1,1600}")
LABEL_HINT = '{"a": id, "b": id, "label": "same" or "different"}'
RECORDS_HINT = '{"id": ..., "text": ...} or a list of them'

class ServiceError(Exception):
    """An answer other than 200, with the one line and hint it carries."""

    def __init__(self, status: int, message: str, hint: str | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint


class Duplicate(BaseModel):
    id: str
    similarity: float | None = None  # None for records of fields, compared field by field
    probability: float | None = None
    distance: int
    text: str


class RecordDuplicates(BaseModel):
    id: str
    duplicates: list[Duplicate]


class Added(BaseModel):
    added: int
    # The posted ids that were indexed already: their new text replaced the old.
    replaced: list[str] = []
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


class Label(BaseModel):
    a: str
    b: str
    label: Literal["same", "different"]


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
LABEL_BODY = {
    "required": True,
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Label"},
                                     "example": {"a": "1", "b": "534", "label": "same"}}},
}


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
    return {"id": match.id, "similarity": None if match.similarity is None else round(match.similarity, 4),
            "probability": None if match.probability is None else round(match.probability, 4),
            "distance": match.distance, "text": match.text}


SOURCE_HELP = "the source the records belong to (answered as source/id; default: none)"
AGAINST_HELP = "only duplicates of this source (default: every record)"
CUT_HELP = "smallest similarity (default: the match model's cut)"
OLD_CUT_HELP = "the old name of cut, kept for a release"


def _checked_sources(*sources: str) -> None:
    """Each of ``sources`` keeps the source rule, or the request is a 400."""
    for source in sources:
        try:
            checked_source(source)
        except NeardupError as err:
            raise ServiceError(400, err.message, err.hint) from None


def _failure(status: int, message: str, hint: str | None = None) -> JSONResponse:
    headers = {401: {"WWW-Authenticate": "Bearer"}, 408: {"Connection": "close"}}.get(status)
    return JSONResponse({"error": message} | ({"hint": hint} if hint else {}), status_code=status, headers=headers)


def _json_of(body: bytes, shape: str) -> Any:
    """A request body's JSON; ``shape`` says in the hint what to send.

    Raises:
        InputError: the body is not UTF-8, or not JSON.
    """
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        raise InputError("the body is not UTF-8", hint="send JSON in UTF-8") from None
    except ValueError as err:
        raise InputError(f"the body is not JSON: {err}", hint=f"send {shape}") from None


def _records_of(body: bytes) -> list[Record]:
    """The records of a request body: a JSON object or a list of them, each
    checked by the rules a records file's are, with the command line's
    reasons: the text as a JSON Lines field's (no NUL or other control
    characters, no lone surrogates: ``record.field_problem``), at most
    ``MAX_LINE_BYTES`` of it, then the id rule and some letters or digits
    (:func:`~neardup_solr.api.as_record`). Costs a JSON parse of the body.

    Raises:
        InputError: the body is not JSON, holds no record, or a record is bad.
    """
    data = _json_of(body, RECORDS_HINT)
    items = data if isinstance(data, list) else [data]
    if not items:
        raise InputError("the body holds no records", hint=f"send {RECORDS_HINT}")
    records = []
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise InputError(f"record {number}: a record is a JSON object with id and text, not {item!r:.60}")
        try:
            records.append(as_record(_checked_text(item)))
        except InputError as err:
            raise InputError(f"record {number}: {err.message}", hint=err.hint) from None
    return records


def _checked_text(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` when its text (if it is a string) keeps the rules a records
    file's text field does, which :func:`as_record` does not check.

    Raises:
        InputError: a control character, a lone surrogate, or more than ``MAX_LINE_BYTES``.
    """
    text = item.get("text")
    if not isinstance(text, str):
        return item
    if problem := field_problem("field", "text", text):
        raise InputError(problem, hint="send text without control characters, in UTF-8")
    if problem := size_problem(text):
        raise InputError(problem, hint=f"a record's text is at most {MAX_LINE_BYTES} bytes, as a line of a records file")
    return item


def _label_of(body: bytes) -> tuple[str, str, str]:
    """The ``(a, b, label)`` of a request body ``{"a", "b", "label"}``; ids
    may be strings or whole numbers, as a record's.

    Raises:
        InputError: the body is not JSON, not one such object, or breaks the rules of a label.
    """
    data = _json_of(body, LABEL_HINT)
    if not isinstance(data, dict):
        raise InputError(f"a label is a JSON object with a, b and label, not {data!r:.60}", hint=f"send {LABEL_HINT}")
    if missing := [name for name in ("a", "b", "label") if name not in data]:
        raise InputError(f"the label lacks {' and '.join(missing)}", hint=f"send {LABEL_HINT}")
    values = []
    for name in ("a", "b", "label"):
        value = data[name]
        if name != "label" and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise InputError(f"{name} is {type(value).__name__}, not a string", hint=f"send {LABEL_HINT}")
        values.append(value)
    if problem := label_problem(*values):
        raise InputError(problem, hint=f"send {LABEL_HINT}")
    return values[0], values[1], values[2]


def page_key(token: str) -> str:
    """What the sign-in cookie holds: a key derived from the token, so the
    cookie opens the page's forms and never tells the token itself."""
    return hmac.new(token.encode(), PAGE_KEY_PURPOSE, hashlib.sha256).hexdigest()


def _same_secret(given: str, secret: str) -> bool:
    """``given == secret`` in time that does not tell how much of it matched."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), secret.encode())


def _from_this_page(request: Request, hosts: frozenset[str]) -> bool:
    """Whether a form post comes from this service's own page. Browsers
    send Sec-Fetch-Site and Origin with every form post, so a post another
    site's page makes is told apart; a client that is no browser sends
    neither (and could write anything there: it needs no forgery). The
    origin must name one of ``hosts`` (the names the service answers to)
    and the port it listens on: a page whose name was made to point here
    (DNS rebinding) names its own."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site != "same-origin":
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return True
    try:
        parts = urlsplit(origin)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return False
    listening = request.scope.get("server")
    return (parts.scheme in ("http", "https") and _host_name(parts.netloc) in hosts
            and (not listening or port == listening[1]))


def _host_name(host: str) -> str:
    """The name or address of a Host header or an origin's ``host:port``,
    lower case, without brackets, port or a final dot ("" when there is none)."""
    try:
        name = urlsplit("//" + host).hostname or ""
    except ValueError:
        return ""
    return name.rstrip(".")


def served_hosts(host: str, also: Iterable[str] = ()) -> frozenset[str]:
    """The host names and addresses a service bound to ``host`` answers to:
    ``host`` itself, every loopback name when it is loopback, also this
    machine's name when it binds every interface, and ``also``. A request
    naming any other (a page on another site whose name was made to point
    here, DNS rebinding) is refused."""
    names = {_host_name(host if ":" not in host or host.startswith("[") else f"[{host}]"), *map(_host_name, also)}
    if is_local(host) or host.strip("[]") in ANY_ADDRESS:
        names.update(LOCAL_HOSTS)
    if host.strip("[]") in ANY_ADDRESS:
        names.add(socket.gethostname().lower())
    return frozenset(name for name in names if name not in ANY_ADDRESS)


class _HostCheck:
    """Answers 400 to a request whose Host names none of ``hosts``, before
    any route runs."""

    def __init__(self, app: Any, hosts: frozenset[str]):
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if _host_name(given) not in self.hosts:
                answer = _failure(400, f"this service does not answer to the host {given[:100]!r}",
                                  hint="ask it by the name or address it was started on (e.g. 127.0.0.1)")
                await answer(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _media_type(request: Request) -> str:
    """The type of the request's body, without its parameters ("" when it has none)."""
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def _json_only(request: Request, what: str) -> None:
    """Refuse (415) a write whose body is not declared JSON: another site's
    page can post text or a form here unasked, but not JSON (the browser asks
    first), so without a token this is what keeps such a page from writing."""
    kind = _media_type(request)
    if kind != "application/json":
        raise ServiceError(415, f"{what} must come as JSON, not {kind or 'a body without a type'}",
                           hint="send it with `Content-Type: application/json`")


def _form_fields(request: Request, body: bytes) -> dict[str, str]:
    """The fields of a form post (URL-encoded, as the page's forms send
    them), the first value of each.

    Raises:
        InputError: not a URL-encoded form in UTF-8, or too many fields.
    """
    kind = _media_type(request)
    if kind != "application/x-www-form-urlencoded":
        raise InputError(f"this takes the review page's forms, not {kind or 'a body without a type'}",
                         hint=f"send labels as JSON to POST /labels: {LABEL_HINT}")
    try:
        # The page's forms send at most eight fields; a few more are allowed for what browsers add.
        parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=16)
    except (UnicodeDecodeError, ValueError) as err:
        raise InputError(f"the form is not one the review page sends: {err}", hint="reload the page") from None
    return {name: values[0] for name, values in parsed.items()}


@dataclass
class ServiceState:
    """What the routes of one app share, kept as ``app.state.service``; a
    route takes it as its parameter ``service: Shared``.

    ``nd`` is the :class:`NearDuplicates` the app was made for: its Solr
    connection serves every request, and /health reports its settings.
    ``reader`` is the one reads share (:meth:`current`), made at the
    index's ``generation``; a write replaces it with the one it used, in
    one assignment, so no read sees half of it (:func:`create_app` says
    why). ``heartbeats`` is what the writes have seen of replacements of
    the index. ``built`` is set once the index is known to have been built
    (:func:`ensure_built`); ``health_threads`` are /health's own threads
    (``HEALTH_THREADS``)."""

    nd: NearDuplicates
    token: str | None
    labels: LabelStore | None
    pairs: PairClusters | None
    hosts: frozenset[str]
    max_body: int
    client_timeout: float = CLIENT_TIMEOUT
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
BEARER = HTTPBearer(auto_error=False, description="The token the service was started with (--token-file).")


# Async, as the error handlers: checked at once, not after a wait for a worker thread.
async def authorized(service: Shared, credentials: HTTPAuthorizationCredentials | None = Depends(BEARER)) -> None:
    """Refuse (401) a write without the service's token, when it has one."""
    if service.token is None:
        return
    if credentials is None or not hmac.compare_digest(credentials.credentials.encode(), service.token.encode()):
        raise ServiceError(401, "this service takes writes only with its token",
                           hint="send `Authorization: Bearer <token>`")


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


# Handlers are async: a plain one would run in a worker thread, and wait
# for one when every thread waits on Solr (a 503 or 413 held for minutes).
async def service_error(request: Request, err: ServiceError) -> JSONResponse:
    return _failure(err.status, err.message, err.hint)


async def neardup_error(request: Request, err: NeardupError) -> JSONResponse:
    return _failure(_status(err), err.message, err.hint)


async def client_gone(request: Request, err: ClientDisconnect) -> Response:
    """A client that hung up in the middle of its request: the answer goes
    to no one, and nothing is logged (a traceback each, before)."""
    return Response(status_code=400)


async def bad_request(request: Request, err: RequestValidationError) -> JSONResponse:
    first = err.errors()[0] if err.errors() else {}
    where = ".".join(str(part) for part in first.get("loc", ()) if part not in ("query", "path", "body"))
    return _failure(400, f"{where or 'request'}: {first.get('msg', 'invalid')}".lower(), hint="see /docs")


class _ServiceApp(FastAPI):
    """The app, whose API description also holds ``NEW_RECORD_SCHEMA``:
    POST /records's body (``RECORDS_BODY``) refers to it, and no model declares it."""

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            schema = super().openapi()
            schema.setdefault("components", {}).setdefault("schemas", {})["NewRecord"] = NEW_RECORD_SCHEMA
        return self.openapi_schema


def create_app(nd: NearDuplicates, *, token: str | None = None, labels: LabelStore | None = None,
               pairs: PairClusters | None = None, hosts: Iterable[str] = LOCAL_HOSTS,
               max_body: int = MAX_BODY, client_timeout: float = CLIENT_TIMEOUT) -> FastAPI:
    """The service's app for ``nd``'s index; with ``token``, writes need it.
    ``labels`` keeps the labels (without it, labeling answers 409);
    ``pairs`` gives the review page its clusters; ``hosts`` are the host
    names and addresses it answers to (:func:`served_hosts`), any other
    Host is a 400; ``max_body`` is the most bytes a POST /records body may
    hold; a body that pauses for ``client_timeout`` seconds is a 408.

    Nothing is locked: reads and writes run side by side, each in a worker
    thread, and Solr orders the writes; a read sees Solr's latest commit, as
    any other process would (a lock here would hold nothing across workers,
    and held 8 writers' stream of writes against every read). Reads share one
    :class:`NearDuplicates`, whose searches keep the settings, the model and
    recent word frequencies; a write uses one of its own and then becomes
    the one reads share, so they see the frequencies it changed
    (:class:`ServiceState`, which the routes share)."""
    app = _ServiceApp(title="neardup-solr", version=__version__,
                      description="Near duplicates of records, backed by Apache Solr: index records and get each "
                      "one's near duplicates with similarity and match probability in one call.",
                      exception_handlers={ServiceError: service_error, NeardupError: neardup_error,
                                          RequestValidationError: bad_request, ClientDisconnect: client_gone})
    hosts = frozenset(hosts)
    app.add_middleware(_HostCheck, hosts=hosts)
    app.state.service = ServiceState(nd, token=token, labels=labels, pairs=pairs, hosts=hosts, max_body=max_body,
                                     client_timeout=client_timeout)
    for router in (record_routes, label_routes, page_routes):
        app.include_router(router)
    return app


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
    _json_only(request, "records")
    _checked_sources(source, against)
    body = await _capped_body(request, service.max_body, "send the records in parts")
    # The body is read here, asynchronously, up to the cap; parsing it and
    # Solr's calls block, so they run in a worker thread.
    return await run_in_threadpool(_add_and_find, service, body, limit, source, against)


def _add_and_find(service: ServiceState, body: bytes, limit: int, source: str, against: str) -> dict[str, Any]:
    """POST /records's work: index the body's records with a NearDuplicates
    of its own, ask for each one's near duplicates, then make it the reader.
    Costs a parse of the body, Solr's add and commit, and a query a record."""
    given = _records_of(body)
    records = list(in_source(given, source))
    ensure_built(service)
    writer = service.writer()
    # Which of them replace a record indexed already (one lookup per 1000 ids), so the answer says so.
    indexed = writer.texts([r.id for r in records])
    added = writer.add(given, source=source, replan=False)
    answers = [{"id": r.id, "duplicates": [_match(m) for m in writer.query(r if r.fields else r.text, exclude=r.id,
                                                                           source=against, limit=limit)]}
               for r in records]
    service.reader = writer
    return {"added": added, "replaced": [r.id for r in records if r.id in indexed], "records": answers}


@record_routes.get("/duplicates", response_model=Found, responses=FAILURES)
def duplicates(service: Shared, text: str = Query(..., description="any text, indexed or not"),
               limit: int = Query(DEFAULT_LIMIT, ge=1, le=1000, description="most matches"),
               cut: float | None = Query(None, ge=0, le=1, description=CUT_HELP),
               against: str = Query("", description=AGAINST_HELP),
               threshold: float | None = Query(None, ge=0, le=1, deprecated=True, description=OLD_CUT_HELP)):
    """The indexed records most like ``text``, best first."""
    _checked_sources(against)
    if is_blank(text):
        raise InputError("the text has no letters or digits", hint="give some text to look up")
    matches = service.current().query(text, source=against, cut=cut, threshold=threshold, limit=limit)
    return {"query": {"text": text}, "matches": [_match(m) for m in matches]}


# A record of a source is source/id: the path's id may hold a slash.
@record_routes.get("/records/{record_id:path}/duplicates", response_model=Found,
                   responses=FAILURES | {404: {"model": Failure, "description": "no record has that id"}})
def record_duplicates(service: Shared, record_id: str, limit: int = Query(DEFAULT_LIMIT, ge=1, le=1000),
                      cut: float | None = Query(None, ge=0, le=1, description=CUT_HELP),
                      against: str = Query("", description=AGAINST_HELP),
                      threshold: float | None = Query(None, ge=0, le=1, deprecated=True, description=OLD_CUT_HELP)):
    """The near duplicates of an indexed record, best first."""
    _checked_sources(against)
    reader = service.current()
    record = _record(reader, record_id)
    matches = reader.query(record if record.fields and cut is None and threshold is None else record.text,
                           exclude=record_id, source=against, cut=cut, threshold=threshold, limit=limit)
    return {"query": {"id": record_id, "text": record.text}, "matches": [_match(m) for m in matches]}


@record_routes.delete("/records/{record_id:path}", response_model=Deleted, dependencies=[Depends(authorized)],
                      responses=WRITE_FAILURES | {404: {"model": Failure, "description": "no record has that id"}})
def delete_record(service: Shared, record_id: str):
    """Delete a record and commit."""
    writer = service.writer()
    present = writer.delete([record_id])
    service.reader = writer
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


async def _capped_body(request: Request, limit: int, hint: str) -> bytes:
    """The request's body, read as it arrives; refused (413, with ``hint``)
    as soon as it is known to be over ``limit`` bytes, by its declared
    length or by what came, without reading the rest; and refused (408,
    the connection closed) when the client pauses in it for longer than
    the service's client timeout. A client that hangs up in the middle
    ends the request (:class:`ClientDisconnect`, answered to no one)."""
    size = f"{limit / 2**20:g} MiB" if limit >= 2**20 else f"{limit / 2**10:g} KiB"
    too_large = ServiceError(413, f"the body is over {size}", hint=hint)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    wait = request.app.state.service.client_timeout
    chunks, length = [], 0
    stream = request.stream().__aiter__()
    while True:
        with anyio.move_on_after(wait) as waited:
            try:
                chunk = await stream.__anext__()
            except StopAsyncIteration:
                break
        if waited.cancelled_caught:
            raise ServiceError(408, f"the body stopped coming for {wait:g} s", hint="send the whole body at once")
        length += len(chunk)
        if length > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


# The labels over the API: POST /labels, GET /labels, GET /labels/gold.
label_routes = APIRouter()
NO_LABELS = {409: {"model": Failure, "description": "the service keeps no labels"}}


@label_routes.post("/labels", response_model=Label, dependencies=[Depends(authorized)],
                   openapi_extra={"requestBody": LABEL_BODY},
                   responses=WRITE_FAILURES | NO_LABELS | {
                       413: {"model": Failure, "description": "the body is too large"},
                       415: {"model": Failure, "description": "the body is not JSON"}})
async def post_label(request: Request, service: Shared):
    """Label a pair of records same or different; labeling a pair again
    replaces its label. The label is in the labels file, synced to the
    disk, before this answers. Ids follow the id rule; they are not looked up."""
    _json_only(request, "a label")
    a, b, label = _label_of(await _capped_body(request, MAX_LABEL_BODY, f"send {LABEL_HINT}"))
    first, second, label = await run_in_threadpool(service.label_store().add, a, b, label)
    return {"a": first, "b": second, "label": label}


@label_routes.get("/labels", response_model=list[Label], responses=NO_LABELS)
def get_labels(service: Shared):
    """Every labeled pair's latest label, smaller id first, in id order."""
    return [{"a": a, "b": b, "label": label} for a, b, label in label_rows(service.label_store().labels())]


@label_routes.get("/labels/gold", response_class=PlainTextResponse, responses=NO_LABELS)
def gold_pairs(service: Shared):
    """The pairs labeled same as a gold-pairs file, `id_a<TAB>id_b` a line
    in id order: what `neardup evaluate --gold` reads."""
    return PlainTextResponse(gold_text(service.label_store().labels()))


def _html(page: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(page, status_code=status,
                        headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"})


def _error_status(err: Exception) -> int:
    return err.status if isinstance(err, ServiceError) else _status(err)


def _looked_up(nd: NearDuplicates, state: State, limit: int) -> dict[str, Any]:
    """What the page shows of its search: the index's size, and the near
    duplicates of the record ``state.id`` or of the text ``state.text``."""
    shown: dict[str, Any] = {"records": nd.solr.count()}
    if state.id:
        record = _record(nd, state.id)
        shown["asked"] = record.text
        shown["matches"] = nd.query(record if record.fields else record.text, exclude=state.id, limit=limit)
    elif state.text.strip():
        if is_blank(state.text):
            raise InputError("the text has no letters or digits", hint="give some text to look up")
        shown["matches"] = nd.query(state.text, limit=limit)
    return shown


# Pairs the page explains at most: each costs Solr two or three requests.
MAX_EXPLAINED = 100


def _why(nd: NearDuplicates, state: State, shown: dict[str, Any]) -> dict[frozenset[str], str]:
    """Why each pair the page shows has its probability, in brief (a
    record's matches, and the clusters' pairs: the pair file's own
    explanations where it has them), at most ``MAX_EXPLAINED`` asked of Solr."""
    wanted: list[tuple[str, str]] = [(state.id, m.id) for m in shown.get("matches") or () if state.id]
    why: dict[frozenset[str], str] = {}
    page = shown.get("clusters")
    for pairs in (page.pairs.values() if page is not None else ()):
        for pair in pairs:
            if pair.explanation:
                why[pair.key] = pair.explanation
            elif pair.probability is not None:
                wanted.append((pair.a, pair.b))
    for a, b in wanted[:MAX_EXPLAINED]:
        try:
            found = nd.explain(a, b)
        except NeardupError:
            continue  # a record gone from the index: its pair is shown without
        if found.probability is not None:
            why[frozenset((a, b))] = found.brief()
    return why


def _signed_in(request: Request, token: str | None) -> bool:
    """Whether this browser may use the page's forms: no token is set, or it signed in."""
    return token is None or _same_secret(request.cookies.get(PAGE_COOKIE, ""), page_key(token))


def _check_origin(request: Request, hosts: frozenset[str]) -> None:
    if not _from_this_page(request, hosts):
        raise ServiceError(403, "this form was posted from another site's page",
                           hint="use the service's own review page")


# The review page (GET /), then its forms: a label (POST /labels/form) and
# the token (POST /sign-in), each answered by a redirect back to the page.
page_routes = APIRouter()


@page_routes.get("/", response_class=HTMLResponse, include_in_schema=False)
def review(request: Request, service: Shared, limit: int = Query(DEFAULT_LIMIT, ge=1, le=1000)):
    """The review page for the state its address holds; what cannot be
    shown (Solr down, no such record) is said on it."""
    state = State.of(request.query_params)
    shown: dict[str, Any] = {}
    failures: list[Exception] = []
    pairs = service.pairs
    parts = [lambda: _looked_up(service.current(), state, limit)]
    if pairs is not None:
        parts.append(lambda: {"clusters": pairs.page(state, service.reader.texts)})
    for part in parts:
        try:
            shown.update(part())
        except (ServiceError, NeardupError) as err:
            failures.append(err)
    if failures:
        shown.update(error=failures[0].message, hint=failures[0].hint)
    else:
        shown["why"] = _why(service.reader, state, shown)  # the reader current() just checked
    writable = _signed_in(request, service.token)
    labeling = None if service.labels is None else Labeling(service.labels.labels(), writable=writable,
                                                             sign_in=not writable)
    return _html(render_review(state, labeling=labeling, **shown), _error_status(failures[0]) if failures else 200)


@page_routes.post(LABEL_ACTION, include_in_schema=False)
async def label_form(request: Request, service: Shared):
    """A label from the page's buttons; back to where it was given."""
    fields: dict[str, str] = {}
    try:
        fields = _form_fields(request, await _capped_body(request, MAX_FORM_BODY, "reload the page"))
        _check_origin(request, service.hosts)
        if not _signed_in(request, service.token):
            raise ServiceError(401, "labels on the page need the service's token", hint="sign in on the page")
        store = service.label_store()
        await run_in_threadpool(store.add, fields.get("a", ""), fields.get("b", ""), fields.get("label", ""))
    except (ServiceError, NeardupError) as err:
        return _form_failure(State.of(fields), err)
    anchor = fields.get("anchor", "")
    return RedirectResponse(State.of(fields).url(anchor if ANCHOR.fullmatch(anchor) else ""), status_code=303)


@page_routes.post(SIGN_IN_ACTION, include_in_schema=False)
async def sign_in(request: Request, service: Shared):
    """The token from the page's sign-in form: a cookie that opens its forms."""
    fields: dict[str, str] = {}
    token = service.token
    try:
        fields = _form_fields(request, await _capped_body(request, MAX_FORM_BODY, "reload the page"))
        _check_origin(request, service.hosts)
        if token is not None and not _same_secret(fields.get("token", ""), token):
            raise ServiceError(401, "that is not the service's token", hint="give the token it was started with")
    except (ServiceError, NeardupError) as err:
        return _form_failure(State.of(fields), err)
    answer = RedirectResponse(State.of(fields).url(), status_code=303)
    if token is not None:
        answer.set_cookie(PAGE_COOKIE, page_key(token), httponly=True, samesite="strict", path="/")
    return answer


def _form_failure(state: State, err: Exception) -> HTMLResponse:
    """A page saying why a form's post failed, with the way back."""
    return _html(render_review(state, error=err.message, hint=err.hint, back=state.url()), _error_status(err))


def _status(err: NeardupError) -> int:
    """The HTTP status of a typed error."""
    if isinstance(err, (SolrUnavailable, IndexBeingReplaced)):
        return 503
    if isinstance(err, SolrFailure):
        return 502
    return 400 if isinstance(err, InputError) else 500


def _text(nd: NearDuplicates, record_id: str) -> str:
    """The indexed text of ``record_id``; no such record is a 404."""
    return _record(nd, record_id).text


def _record(nd: NearDuplicates, record_id: str) -> Record:
    """The indexed record ``record_id``; no such record is a 404."""
    try:
        return nd.record(record_id)
    except (SolrUnavailable, SolrFailure):
        raise
    except NeardupError as err:
        raise ServiceError(404, err.message, hint="index it first (POST /records)") from None


def serve(nd: NearDuplicates, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, token: str | None = None,
          labels: LabelStore | None = None, pairs: PairClusters | None = None, log_level: str = "info",
          hosts: Iterable[str] | None = None, max_body: int = MAX_BODY,
          client_timeout: float = CLIENT_TIMEOUT) -> None:
    """Serve ``nd`` on ``host``:``port`` until interrupted, in this process
    (``labels``, ``pairs``, ``hosts``, ``max_body`` and ``client_timeout``
    as :func:`create_app` takes them; ``hosts`` by default
    :func:`served_hosts` of ``host``; a request whose line and headers are
    not all there ``client_timeout`` seconds after the connection was made,
    or its last answer sent, gets 408 and the connection is closed).

    Raises:
        NeardupError: a non-loopback ``host`` without a token, or the port taken.
    """
    import uvicorn

    check_bind(host, token)
    app = create_app(nd, token=token, labels=labels, pairs=pairs,
                     hosts=served_hosts(host) if hosts is None else hosts, max_body=max_body,
                     client_timeout=client_timeout)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, server_header=False,
                            http=functools.partial(_TimelyProtocol, client_timeout=client_timeout))
    server = uvicorn.Server(config)
    with _port_errors(host, port):
        server.run()
    if not server.started:
        raise NeardupError(f"could not serve on {host}:{port}", hint="is the port taken? choose another",
                           remedy="serve_port")


def serve_workers(factory: str, workers: int, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                  token: str | None = None, log_level: str = "info", client_timeout: float = CLIENT_TIMEOUT) -> None:
    """Serve on ``host``:``port`` from ``workers`` processes until
    interrupted: each imports ``factory`` ("module:function") and calls it
    for its app (:func:`create_app`, made in that process with its own Solr
    connection), and the system hands each new connection to one of them.
    Each worker answers requests as :func:`serve` does (``client_timeout``
    is its limit on headers; the app's own is the one on bodies); they share nothing
    but Solr and the labels file (:class:`~neardup_solr.results.labels.LabelStore`
    appends to it under a lock and reads what the others appended). A
    worker costs about 100 MB and the time to import the web framework.

    Raises:
        NeardupError: a non-loopback ``host`` without a token, or the port taken.
    """
    import inspect

    import uvicorn
    from uvicorn.supervisors import Multiprocess

    check_bind(host, token)
    config = uvicorn.Config(factory, factory=True, workers=workers, host=host, port=port, log_level=log_level,
                            server_header=False, http=functools.partial(_TimelyProtocol, client_timeout=client_timeout))
    with _port_errors(host, port):
        sock = _listening_socket(host, port)
        # What uvicorn.run does for workers, with a socket of our own; uvicorn 0.30's supervisor takes the target.
        if "target" in inspect.signature(Multiprocess).parameters:
            Multiprocess(config, target=uvicorn.Server(config).run, sockets=[sock]).run()
        else:
            Multiprocess(config, sockets=[sock]).run()


def _timely_protocol():
    """uvicorn's h11 protocol (what it runs without httptools), imported
    when a service starts."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return H11Protocol


class _TimelyProtocol:
    """Made as uvicorn's h11 protocol is (:func:`_timely_protocol`), with one
    more limit: a request's line and headers must all be there
    ``client_timeout`` seconds after the connection was made or its last
    answer sent, or the client gets 408 and the connection is closed.
    uvicorn itself waits for them forever (its keep-alive timeout ends at
    the first byte), so half-sent headers held a socket for good."""

    def __new__(cls, *args: Any, client_timeout: float = CLIENT_TIMEOUT, **kwargs: Any):
        protocol = _timely_class()(*args, **kwargs)
        protocol.client_timeout = client_timeout
        return protocol


_TIMELY: list[type] = []


def _timely_class() -> type:
    if _TIMELY:
        return _TIMELY[0]
    base = _timely_protocol()

    class Timely(base):  # type: ignore[misc, valid-type]
        client_timeout = CLIENT_TIMEOUT
        _headers_due: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._await_headers()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._await_headers()

        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not cycle:  # a request's headers arrived
                self._stop_waiting()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

        def _await_headers(self) -> None:
            self._stop_waiting()
            if not self.transport.is_closing():
                self._headers_due = self.loop.call_later(self.client_timeout, self._headers_late)

        def _stop_waiting(self) -> None:
            if self._headers_due is not None:
                self._headers_due.cancel()
                self._headers_due = None

        def _headers_late(self) -> None:
            self._headers_due = None
            if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
                self.transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
                                     b"connection: close\r\ncontent-length: %d\r\n\r\n%s"
                                     % (len(HEADERS_LATE), HEADERS_LATE))
                self.transport.close()

    _TIMELY.append(Timely)
    return Timely


HEADERS_LATE = json.dumps({"error": f"the request's headers did not all come in time",
                           "hint": "send a request's line and headers at once"}).encode()


def _listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` for workers to share. It says
    it is TCP (uvicorn's own does not), so the connections accepted from it
    get TCP_NODELAY from asyncio: without it, each answer waited 40 ms for
    the client's delayed acknowledgement (one client in turn: p50 48.0 ms
    against 5.1 ms in one process)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.set_inheritable(True)
    return sock


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
