"""A fault-injecting proxy in front of the real Solr, for retry tests.

It forwards every request to Solr unchanged, except the first ``failures``
of those that ``match`` (all by default), once ``after`` of them went
through unharmed: those get a 503 answer, a dropped
connection, a late answer (``slow``), no answer at all until the client
gives up (``hang``), or Solr's own answer marked as partial
(``partial``), as chosen. It never answers for Solr itself.

Every request is logged with the proxy's own clock: when it arrived and
when the proxy answered it (or dropped it, or saw the client hang up), so
a test reads the client's waits between tries from the proxy's side.
"""

from __future__ import annotations

import hashlib
import json
import select
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

# How long a hanging request is held at most when the client never hangs up.
HANG_AT_MOST = 60.0


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        """A client that went away mid-answer (after its timeout) is expected here."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


@dataclass
class Exchange:
    method: str
    path: str
    body: bytes
    arrived: float
    faulted: bool
    done: float = 0.0  # answered, dropped, or (hang) the client gone

    @property
    def fingerprint(self) -> str:
        """The request itself: a retry of it has the same fingerprint."""
        return hashlib.sha256(f"{self.method} {self.path}\n".encode() + self.body).hexdigest()


class FaultyProxy:
    def __init__(self, target: str, fault: str = "503", failures: int = 0, delay: float = 0.0,
                 match: Callable[[str, str, bytes], bool] = lambda method, path, body: True, after: int = 0):
        self.target, self.fault, self.failures, self.delay = target.rstrip("/"), fault, failures, delay
        self.match, self.after = match, after
        self._matched = 0
        self.log: list[Exchange] = []
        self._lock = threading.Lock()
        self._faulted = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self._relay()

            def do_POST(self):
                self._relay()

            def _relay(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy._lock:
                    matching = proxy.match(self.command, self.path, body)
                    proxy._matched += matching
                    failing = matching and proxy._matched > proxy.after and proxy._faulted < proxy.failures
                    proxy._faulted += failing
                    exchange = Exchange(self.command, self.path, body, time.monotonic(), failing)
                    proxy.log.append(exchange)
                try:
                    self._answer_for(exchange)
                finally:
                    exchange.done = time.monotonic()

            def _answer_for(self, exchange: Exchange) -> None:
                fault = proxy.fault if exchange.faulted else None
                if fault == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    self.connection.close()
                    self.close_connection = True
                    return
                if fault == "hang":
                    self._wait_for_hang_up()
                    self.close_connection = True
                    return
                if fault == "503":
                    self._answer(503, b'{"error":{"msg":"injected"}}', "application/json")
                    return
                if fault == "slow":
                    time.sleep(proxy.delay)
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization")}
                answer = requests.request(self.command, proxy.target + self.path, data=exchange.body, headers=headers)
                content = answer.content
                if fault == "partial":
                    found = json.loads(content)
                    found.setdefault("responseHeader", {})["partialResults"] = True
                    content = json.dumps(found).encode()
                self._answer(answer.status_code, content, answer.headers.get("Content-Type", "text/plain"))

            def _wait_for_hang_up(self) -> None:
                """Hold the request, unanswered, until the client closes its end."""
                deadline = time.monotonic() + HANG_AT_MOST
                while time.monotonic() < deadline:
                    readable, _, _ = select.select([self.connection], [], [], 0.01)
                    if readable and not self.connection.recv(1, socket.MSG_PEEK):
                        return

            def _answer(self, status: int, content: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def requests(self) -> list[str]:
        """The paths asked for, in order of arrival."""
        return [exchange.path for exchange in self.log]

    def tries(self) -> list[Exchange]:
        """The faulted requests and the try after the last of them, in order."""
        faulted = [i for i, exchange in enumerate(self.log) if exchange.faulted]
        if not faulted:
            return []
        after = next((e for e in self.log[faulted[-1] + 1:] if self.match(e.method, e.path, e.body)), None)
        return [self.log[i] for i in faulted] + ([after] if after else [])

    def waits(self, timeout: float | None = None) -> list[float]:
        """Seconds from the end of each faulted try to the arrival of the next
        try, by the proxy's clock: how long the client waited before retrying.

        A hanging try ends when the client's ``timeout`` runs out, counted from
        its arrival (the client closes the connection only when it retries).
        """
        if self.fault == "hang" and timeout is None:
            raise ValueError("the waits after hanging tries need the client's timeout")
        tries = self.tries()
        return [later.arrived - (earlier.arrived + timeout if self.fault == "hang" else earlier.done)
                for earlier, later in zip(tries, tries[1:])]

    def __enter__(self) -> FaultyProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
