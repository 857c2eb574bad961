"""A fault-injecting proxy in front of the real Solr, for retry tests.

It forwards every request to Solr unchanged, except the first ``failures``:
those get a 503 answer, a dropped connection, or a late answer, as chosen.
It never answers for Solr itself.
"""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests


class FaultyProxy:
    def __init__(self, target: str, fault: str = "503", failures: int = 0, delay: float = 0.0):
        self.target, self.fault, self.failures, self.delay = target.rstrip("/"), fault, failures, delay
        self.requests: list[str] = []
        self._lock = threading.Lock()
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
                    proxy.requests.append(self.path)
                    failing = len(proxy.requests) <= proxy.failures
                if failing and proxy.fault == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    self.connection.close()
                    self.close_connection = True
                    return
                if failing and proxy.fault == "503":
                    self._answer(503, b'{"error":{"msg":"injected"}}', "application/json")
                    return
                if failing and proxy.fault == "slow":
                    time.sleep(proxy.delay)
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization")}
                answer = requests.request(self.command, proxy.target + self.path, data=body, headers=headers)
                self._answer(answer.status_code, answer.content, answer.headers.get("Content-Type", "text/plain"))

            def _answer(self, status: int, content: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FaultyProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
