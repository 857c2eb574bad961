"""The duplicate-check service (``service.py``) from the command line."""

from __future__ import annotations

from pathlib import Path

import click

from ..api import NearDuplicates
from ..solr import Solr
from .common import say, solr_connection

# As service.py's; not imported from there, so that other commands need not load the web framework.
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080


@click.command("serve")
@click.option("--host", default=DEFAULT_HOST, show_default=True,
              help="Address to listen on; any but 127.0.0.1, localhost or ::1 needs --token-file.")
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True)
@click.option("--token-file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="File holding the token writes (POST, DELETE) must send as `Authorization: Bearer <token>`.")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info",
              show_default=True, help="What the server logs (each request at info).")
# Solr may be down when the service starts: /health says so, and every call answers 503 until it is back.
@solr_connection(ping=False)
def serve(host: str, port: int, token_file: Path | None, log_level: str, solr: Solr) -> None:
    """Serve the index over HTTP: add records and get their near duplicates in one call.

    \b
    POST   /records                  one {"id", "text"} object or a list: indexed, and
                                     each one's near duplicates answered
    GET    /duplicates?text=...      near duplicates of any text
    GET    /records/ID/duplicates    near duplicates of an indexed record
    DELETE /records/ID               delete a record
    GET    /health                   Solr reachable, record count, index settings
    GET    /docs                     the API, described (OpenAPI at /openapi.json)
    GET    /                         a review page: a search box showing a text's near
                                     duplicates

    The index must have been built (`neardup index`) before records are
    posted. Errors are JSON {"error", "hint"}: 400 bad JSON or a bad
    record, 401 a write without the token, 404 no such record, 409 index
    never built, 503 Solr unreachable. It listens on 127.0.0.1 unless told
    otherwise, and refuses any other address without --token-file; with a
    token, POST and DELETE need it. Ctrl-C stops it.

    \b
    Examples:
      neardup serve
      neardup serve --port 9000 --solr-url http://127.0.0.1:8983/solr/products
      neardup serve --host 0.0.0.0 --token-file token.txt
    """
    from .. import service

    token = service.read_token(token_file.read_text(encoding="utf-8"), str(token_file)) if token_file else None
    service.check_bind(host, token)

    shown = f"[{host}]" if ":" in host else host
    say(f"serving {solr.url} on http://{shown}:{port} (API described at /docs)"
        + ("; writes need the token" if token else ""))
    service.serve(NearDuplicates(solr), host=host, port=port, token=token, log_level=log_level)
