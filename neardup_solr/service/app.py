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
``Authorization: Bearer <token>``, and with ``token_for_reads`` so do the
reads of the index and the labels (the review page asks for it once;
``/health`` and the API's description stay open). It answers only to the host names and
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
import socket
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.requests import ClientDisconnect

from .. import __version__
from ..api import NearDuplicates
from ..errors import NeardupError
from ..results.labels import LabelStore
from .review import PairClusters
from .defaults import CLIENT_TIMEOUT, DEFAULT_HOST, DEFAULT_PORT, MAX_BODY, WORKER_PATIENCE
from .guards import HostCheck, LOCAL_HOSTS, check_bind, served_hosts
from .label_routes import label_routes
from .models import NEW_RECORD_SCHEMA, ServiceError, failure, status_of
from .page_routes import page_routes
from .record_routes import record_routes
from .shared import ServiceState
from .timely import TimelyProtocol



# Handlers are async: a plain one would run in a worker thread, and wait
# for one when every thread waits on Solr (a 503 or 413 held for minutes).
async def service_error(request: Request, err: ServiceError) -> JSONResponse:
    return failure(err.status, err.message, err.hint)


async def neardup_error(request: Request, err: NeardupError) -> JSONResponse:
    return failure(status_of(err), err.message, err.hint)


async def client_gone(request: Request, err: ClientDisconnect) -> Response:
    """A client that hung up in the middle of its request: the answer goes
    to no one, and nothing is logged (a traceback each, before)."""
    return Response(status_code=400)


async def bad_request(request: Request, err: RequestValidationError) -> JSONResponse:
    first = err.errors()[0] if err.errors() else {}
    where = ".".join(str(part) for part in first.get("loc", ()) if part not in ("query", "path", "body"))
    return failure(400, f"{where or 'request'}: {first.get('msg', 'invalid')}".lower(), hint="see /docs")


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
               max_body: int = MAX_BODY, client_timeout: float = CLIENT_TIMEOUT,
               token_for_reads: bool = False) -> FastAPI:
    """The service's app for ``nd``'s index; with ``token``, writes need it,
    and with ``token_for_reads`` too, reads (but ``/health`` and the API's
    description) need it as well.
    ``labels`` keeps the labels (without it, labeling answers 409);
    ``pairs`` gives the review page its clusters; ``hosts`` are the host
    names and addresses it answers to (:func:`served_hosts`), any other
    Host is a 400; ``max_body`` is the most bytes a POST /records body may
    hold; a body that pauses for ``client_timeout`` seconds is a 408.

    Raises:
        ValueError: ``token_for_reads`` without a ``token``.

    Nothing is locked: reads and writes run side by side, each in a worker
    thread, and Solr orders the writes; a read sees Solr's latest commit, as
    any other process would (a lock here would hold nothing across workers,
    and held 8 writers' stream of writes against every read). Reads share one
    :class:`NearDuplicates`, whose searches keep the settings, the model and
    word frequencies up to a minute old; a write adds with one of its own,
    has the shared one read its records' words' frequencies again, and
    answers from it (:class:`ServiceState`, which the routes share)."""
    if token_for_reads and token is None:
        raise ValueError("token_for_reads needs a token")
    app = _ServiceApp(title="neardup-solr", version=__version__,
                      description="Near duplicates of records, backed by Apache Solr: index records and get each "
                      "one's near duplicates with similarity and match probability in one call.",
                      exception_handlers={ServiceError: service_error, NeardupError: neardup_error,
                                          RequestValidationError: bad_request, ClientDisconnect: client_gone})
    hosts = frozenset(hosts)
    app.add_middleware(HostCheck, hosts=hosts)
    app.state.service = ServiceState(nd, token=token, labels=labels, pairs=pairs, hosts=hosts, max_body=max_body,
                                     client_timeout=client_timeout, token_for_reads=token_for_reads)
    for router in (record_routes, label_routes, page_routes):
        app.include_router(router)
    return app


def serve(nd: NearDuplicates, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, token: str | None = None,
          labels: LabelStore | None = None, pairs: PairClusters | None = None, log_level: str = "info",
          hosts: Iterable[str] | None = None, max_body: int = MAX_BODY,
          client_timeout: float = CLIENT_TIMEOUT, token_for_reads: bool = False) -> None:
    """Serve ``nd`` on ``host``:``port`` until interrupted, in this process
    (``labels``, ``pairs``, ``hosts``, ``max_body``, ``client_timeout`` and
    ``token_for_reads`` as :func:`create_app` takes them; ``hosts`` by default
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
                     client_timeout=client_timeout, token_for_reads=token_for_reads)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, server_header=False,
                            http=functools.partial(TimelyProtocol, client_timeout=client_timeout))
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

    A worker is taken for hung, and replaced, only when it has not answered
    its supervisor's health check for ``WORKER_PATIENCE`` seconds, starting
    or not; what a worker imports before it can answer is kept small
    (:mod:`.timely`).

    Raises:
        NeardupError: a non-loopback ``host`` without a token, or the port taken.
    """
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    check_bind(host, token)
    config = uvicorn.Config(factory, factory=True, workers=workers, host=host, port=port, log_level=log_level,
                            server_header=False, http=functools.partial(TimelyProtocol, client_timeout=client_timeout),
                            timeout_worker_healthcheck=WORKER_PATIENCE)
    with _port_errors(host, port):
        # What uvicorn.run does for workers, with a socket of our own.
        Multiprocess(config, sockets=[_listening_socket(host, port)]).run()


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
