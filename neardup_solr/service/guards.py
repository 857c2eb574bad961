"""Who the service answers: the addresses it binds (any other than a
loopback one needs a token), the host names it serves (a name made to
point here, DNS rebinding, is refused), the bearer token for writes, and
the review page's key and same-origin check for its forms (another site's
post, cross-site request forgery, is refused)."""

from __future__ import annotations

import hashlib
import hmac
import socket
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ..errors import NeardupError
from .defaults import DEFAULT_HOST
from .models import ServiceError, failure
from .shared import Shared


LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
# Addresses that bind every interface: the service may be reached by any of the machine's names.
ANY_ADDRESS = ("0.0.0.0", "::", "")
# The cookie that opens the page's forms after /sign-in, and what its key is derived with.
PAGE_COOKIE = "neardup_review"
PAGE_KEY_PURPOSE = b"neardup review page forms"


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


def page_key(token: str) -> str:
    """What the sign-in cookie holds: a key derived from the token, so the
    cookie opens the page's forms and never tells the token itself."""
    return hmac.new(token.encode(), PAGE_KEY_PURPOSE, hashlib.sha256).hexdigest()


def same_secret(given: str, secret: str) -> bool:
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


class HostCheck:
    """Answers 400 to a request whose Host names none of ``hosts``, before
    any route runs."""

    def __init__(self, app: Any, hosts: frozenset[str]):
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if _host_name(given) not in self.hosts:
                answer = failure(400, f"this service does not answer to the host {given[:100]!r}",
                                  hint="ask it by the name or address it was started on (e.g. 127.0.0.1)")
                await answer(scope, receive, send)
                return
        await self.app(scope, receive, send)


BEARER = HTTPBearer(auto_error=False, description="The token the service was started with (--token-file).")


def _bearer_given(credentials: HTTPAuthorizationCredentials | None, token: str) -> bool:
    return credentials is not None and same_secret(credentials.credentials, token)


# Async, as the error handlers: checked at once, not after a wait for a worker thread.
async def authorized(service: Shared, credentials: HTTPAuthorizationCredentials | None = Depends(BEARER)) -> None:
    """Refuse (401) a write without the service's token, when it has one."""
    if service.token is not None and not _bearer_given(credentials, service.token):
        raise ServiceError(401, "this service takes writes only with its token",
                           hint="send `Authorization: Bearer <token>`")


async def may_read(service: Shared, credentials: HTTPAuthorizationCredentials | None = Depends(BEARER)) -> None:
    """Refuse (401) a read of the index or the labels without the service's
    token, when it takes reads only with it (``token_for_reads``)."""
    if service.token_for_reads and not _bearer_given(credentials, service.token):
        raise ServiceError(401, "this service answers reads only with its token",
                           hint="send `Authorization: Bearer <token>`")


def page_open(request: Request, token: str | None, credentials: HTTPAuthorizationCredentials | None) -> bool:
    """Whether the review page may show the index to this client when reads
    need the token: it signed in on the page (its cookie), or sent the token."""
    return token is None or signed_in(request, token) or _bearer_given(credentials, token)


def signed_in(request: Request, token: str | None) -> bool:
    """Whether this browser may use the page's forms: no token is set, or it signed in."""
    return token is None or same_secret(request.cookies.get(PAGE_COOKIE, ""), page_key(token))


def check_origin(request: Request, hosts: frozenset[str]) -> None:
    if not _from_this_page(request, hosts):
        raise ServiceError(403, "this form was posted from another site's page",
                           hint="use the service's own review page")
