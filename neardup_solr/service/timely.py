"""uvicorn's HTTP protocol with a limit on a request's headers (408 when
they are late): a module of its own, light to import, because a worker of
``neardup serve --workers`` imports it first thing. The worker is a fresh
interpreter that unpickles its configuration, this protocol among it,
before it answers its supervisor's health checks; importing the app's
module there (the web framework, the package) kept it silent long enough,
on a loaded machine, to be taken for dead and started again, over and over.
"""

from __future__ import annotations

import json
from typing import Any

from .defaults import CLIENT_TIMEOUT


def _h11_protocol():
    """uvicorn's h11 protocol (what it runs without httptools), imported
    when a service starts."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return H11Protocol


class TimelyProtocol:
    """Made as uvicorn's h11 protocol is (:func:`_h11_protocol`), with one
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
    base = _h11_protocol()

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


HEADERS_LATE = json.dumps({"error": "the request's headers did not all come in time",
                           "hint": "send a request's line and headers at once"}).encode()
