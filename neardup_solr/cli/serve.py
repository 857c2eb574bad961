"""The duplicate-check service (:mod:`neardup_solr.service`) from the command line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from ..api import NearDuplicates
from ..extras import require
from ..results.labels import LabelStore
from ..service.defaults import CLIENT_TIMEOUT, DEFAULT_HOST, DEFAULT_PORT, MAX_BODY
from ..service.review import PairClusters
from ..index.solr import Solr
from .common import open_solr, say, solr_connection, warn_of_token

DEFAULT_MAX_BODY_MIB = MAX_BODY // (1 << 20)
# Where `--workers` hands each worker process the options it was started with
# (file names, not what they hold: each worker reads the token and password itself).
WORKER_OPTIONS = "NEARDUP_SERVE_WORKER"
# Labels are kept where the service is started unless told otherwise, beside the pair files a report writes there.
DEFAULT_LABELS = Path("labels.tsv")


@click.command("serve")
@click.option("--host", default=DEFAULT_HOST, show_default=True,
              help="Address to listen on; any but 127.0.0.1, localhost or ::1 needs --token-file.")
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True)
@click.option("--token-file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="File holding the token writes (POST, DELETE) must send as `Authorization: Bearer <token>`.")
@click.option("--token-for-reads", is_flag=True,
              help="With --token-file: reads of the index and the labels need the token too (the review page asks "
              "for it once); /health and /docs stay open.")
@click.option("--labels", "labels_file", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_LABELS,
              show_default=True, help="The labels file: one label a line, `id_a<TAB>id_b<TAB>same|different`, "
              "appended and synced to the disk as each is given, the latest for a pair winning; made at the first "
              "label, read when the service starts (bad lines are reported and skipped).")
@click.option("--pairs", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="The last report's pair file: the review page lists its clusters, largest or least certain "
              "first, to label (read again when the report writes it anew).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Another host name or address clients reach the service by (repeatable). It answers only to "
              "--host (and every loopback name when that is loopback) and these; any other Host is a 400, so a "
              "page whose name was made to point here cannot use it.")
@click.option("--max-body", type=click.IntRange(1, 1024), default=DEFAULT_MAX_BODY_MIB, show_default=True,
              metavar="MIB", help="The most MiB a POST /records body may hold; a larger one is refused (413) "
              "without being read.")
@click.option("--client-timeout", type=click.FloatRange(0, min_open=True), default=CLIENT_TIMEOUT, show_default=True,
              metavar="SECONDS", help="How long a client may leave a request half sent (its headers not all there, "
              "or its body paused) before it gets 408 and its connection is closed.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Service processes answering requests side by side (each about 100 MB); more serve more "
              "clients at once, up to about the machine's cores.")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info",
              show_default=True, help="What the server logs (each request at info).")
# Solr may be down when the service starts: /health says so, and every call answers 503 until it is back.
@solr_connection(ping=False)
def serve(host: str, port: int, token_file: Path | None, token_for_reads: bool, labels_file: Path, pairs: Path | None,
          allow_hosts: tuple[str, ...], max_body: int, client_timeout: float, workers: int, log_level: str,
          solr: Solr) -> None:
    """Serve the index over HTTP: add records and get their near duplicates in one call.

    \b
    POST   /records                  one {"id", "text"} object or a list: indexed, and
                                     each one's near duplicates answered
    GET    /duplicates?text=...      near duplicates of any text
    GET    /records/ID/duplicates    near duplicates of an indexed record
    DELETE /records/ID               delete a record
    GET    /health                   Solr reachable, record count, index settings
    POST   /labels                   label a pair: {"a": ID, "b": ID, "label": "same"
                                     or "different"}, kept in the --labels file
    GET    /labels                   every pair's latest label, as JSON
    GET    /labels/gold              the pairs labeled same, as a gold-pairs file for
                                     `neardup evaluate --gold`
    GET    /docs                     the API, described (OpenAPI at /openapi.json)
    GET    /                         a review page: a search box showing a text's near
                                     duplicates (?id=ID: an indexed record's, to label),
                                     and with --pairs the clusters, each pair with
                                     same / different buttons

    The index must have been built (`neardup index`) before records are
    posted. Errors are JSON {"error", "hint"}: 400 bad JSON, a bad record
    (the reason `neardup index` gives) or a bad label, or a Host it does not
    answer to, 401 a write without the token, 404 no such record, 409 index
    never built, 408 a request left half sent for --client-timeout, 413 a
    body over --max-body, 503 Solr unreachable (/health says so within a
    second) or, for a write, the index being replaced by `neardup index`
    (retry when it is done; every write answered 200 is kept). Each request
    reads the index's generation first, so after `neardup index` or
    `neardup report` every worker answers from the new index and model. It listens on 127.0.0.1 unless
    told otherwise, and refuses any other address without --token-file;
    with a token, POST and DELETE need it, and the review page asks for it
    once (a sign-in form; a same-site cookie then opens the page's label
    buttons, and only those). With --token-for-reads every other request
    needs the token too (401 without), but /health and the API's
    description; the review page then shows nothing but its sign-in form
    until the token is given, and the cookie opens the page itself. The
    page's buttons take posts from the page itself only, never from
    another site's. `neardup evaluate PAIRS
    --labels FILE` scores a report against the labels. Ctrl-C stops it.

    \b
    Examples:
      neardup serve
      neardup serve --pairs pairs.tsv --labels labels.tsv
      neardup serve --port 9000 --solr-url http://127.0.0.1:8983/solr/products
      neardup serve --workers 2 --port 9000
      neardup serve --host 0.0.0.0 --allow-host dedup.example.org --token-file token.txt
      neardup serve --host 0.0.0.0 --token-file token.txt --token-for-reads
    """
    for package in ("fastapi", "uvicorn"):
        require(package, "neardup serve")
    from ..service import app as service, guards

    if token_for_reads and token_file is None:
        raise click.UsageError("--token-for-reads needs the token: give --token-file")
    token = guards.read_token(token_file.read_text(encoding="utf-8"), str(token_file)) if token_file else None
    if token:
        warn_of_token(token_file, token)
    guards.check_bind(host, token)

    labels = LabelStore(labels_file, on_bad=lambda bad: say(f"skipped {bad}"))
    clusters = PairClusters(pairs) if pairs is not None else None

    shown = f"[{host}]" if ":" in host else host
    say(f"serving {solr.url} on http://{shown}:{port} (API described at /docs)"
        + ("; reads and writes need the token" if token_for_reads else "; writes need the token" if token else "") + (f"; {workers} workers" if workers > 1 else ""))
    say(f"labels in {labels_file} ({len(labels.labels())} so far)"
        + ("" if clusters is None else f"; the review page lists the {len(clusters.current()[0])} clusters of {pairs}"))
    hosts = guards.served_hosts(host, allow_hosts)
    if workers == 1:
        service.serve(NearDuplicates(solr), host=host, port=port, token=token, labels=labels, pairs=clusters,
                      log_level=log_level, hosts=hosts, max_body=max_body * 2**20, client_timeout=client_timeout,
                      token_for_reads=token_for_reads)
        return
    # Each worker makes its app anew from these (worker_app); the Solr options are the command's own.
    given = click.get_current_context().params
    solr_options = {name: given[name] for name in ("user", "password_file", "ca_cert", "timeout", "retries")}
    os.environ[WORKER_OPTIONS] = json.dumps({
        # The URL as given (with any credentials it holds), or the one ZooKeeper named.
        "solr_url": solr.url if given["zk_host"] else given["solr_url"], **{k: str(v) if isinstance(v, Path) else v for k, v in solr_options.items()},
        "token_file": str(token_file) if token_file else None, "token_for_reads": token_for_reads,
        "labels": str(labels_file),
        "pairs": str(pairs) if pairs else None, "hosts": sorted(hosts), "max_body": max_body * 2**20,
        "client_timeout": client_timeout})
    service.serve_workers(f"{__name__}:worker_app", workers, host=host, port=port, token=token, log_level=log_level,
                          client_timeout=client_timeout)


def worker_app():
    """The app of one `--workers` process, made from the options the command
    left in ``WORKER_OPTIONS``: its own Solr connection, token, labels
    (bad lines were reported once, by the command) and pair file."""
    from ..service import app as service, guards

    options = json.loads(os.environ[WORKER_OPTIONS])
    password_file = options["password_file"]
    solr = open_solr(options["solr_url"], user=options["user"], ca_cert=options["ca_cert"],
                     password_file=Path(password_file) if password_file else None,
                     timeout=options["timeout"], retries=options["retries"])
    token_file = options["token_file"]
    token = guards.read_token(Path(token_file).read_text(encoding="utf-8"), token_file) if token_file else None
    return service.create_app(
        NearDuplicates(solr), token=token, labels=LabelStore(options["labels"], on_bad=lambda _: None),
        pairs=PairClusters(Path(options["pairs"])) if options["pairs"] else None, hosts=options["hosts"],
        max_body=options["max_body"], client_timeout=options["client_timeout"],
        token_for_reads=options["token_for_reads"])
