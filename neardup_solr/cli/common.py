"""What the commands share: status output, progress bars, options, the Solr connection."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import click
from tqdm import tqdm

from .. import cloud, server
from ..errors import NeardupError
from ..server import CORE
from ..solr import DEFAULT_URL, Solr

EXIT_SKIPPED_LINES = 6


def say(message: str) -> None:
    """Status for people, on stderr, so stdout stays data."""
    tqdm.write(message, file=sys.stderr)


def progress(total: int | None, unit: str, quiet: bool, desc: str) -> tqdm:
    # disable=None hides the bar when stderr is not a terminal.
    return tqdm(total=total, unit=unit, unit_scale=True, desc=desc, disable=True if quiet else None, file=sys.stderr)


quiet_option = click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=server.default_data_dir,
    show_default="$NEARDUP_DATA_DIR or ~/.local/share/neardup-solr",
    help="Where the local Solr keeps its index and logs.",
)
port_option = click.option("--port", type=click.IntRange(1, 65535), default=server.DEFAULT_PORT, show_default=True)


def solr_connection(command=None, *, lazy: bool = False, ping: bool = True):
    """Adds the options that say where Solr is and how to reach it, and
    passes the command a ``solr`` that has answered a ping (with
    ``lazy=True``: a function that connects when first called; with
    ``ping=False``: one that may not exist yet)."""
    if command is None:
        return functools.partial(solr_connection, lazy=lazy, ping=ping)

    @click.option("--solr-url", envvar="SOLR_URL", default=DEFAULT_URL, show_default=True,
                  help="Solr core or collection URL (env SOLR_URL).")
    @click.option("--zk-host", envvar="ZK_HOST", metavar="HOST:PORT[/CHROOT]",
                  help="SolrCloud's ZooKeeper, instead of --solr-url: a live node serves --collection (env ZK_HOST).")
    @click.option("--collection", default=CORE, show_default=True, help="The collection, with --zk-host.")
    @click.option("--user", envvar="SOLR_USER", help="User for basic authentication (env SOLR_USER).")
    @click.option("--password-file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
                  help="File holding the password (else env SOLR_PASSWORD).")
    @click.option("--ca-cert", envvar="SOLR_CA_CERT", type=click.Path(dir_okay=False, exists=True),
                  help="CA certificate (PEM) to verify Solr's TLS certificate with (env SOLR_CA_CERT).")
    @click.option("--timeout", envvar="NEARDUP_TIMEOUT", type=click.FloatRange(0, min_open=True), default=120.0,
                  show_default=True, help="Seconds to wait for one Solr answer (env NEARDUP_TIMEOUT).")
    @click.option("--retries", envvar="NEARDUP_RETRIES", type=click.IntRange(0, 10), default=3, show_default=True,
                  help="Retries after connection errors and 5xx answers, with exponential backoff.")
    @functools.wraps(command)
    def wrapper(*args, solr_url, zk_host, collection, user, password_file, ca_cert, timeout, retries, **kwargs):
        def connect() -> Solr:
            url = cloud.collection_url(zk_host, collection) if zk_host else solr_url
            auth = None
            if user:
                password = (password_file.read_text().rstrip("\r\n") if password_file
                            else os.environ.get("SOLR_PASSWORD"))
                if password is None:
                    raise NeardupError(f"no password for user {user!r}",
                                       hint="set SOLR_PASSWORD or use --password-file")
                auth = (user, password)
            solr = Solr(url, timeout=timeout, retries=retries, auth=auth, verify=ca_cert or True)
            if ping:
                solr.ping()
            return solr

        return command(*args, solr=connect if lazy else connect(), **kwargs)

    return wrapper
