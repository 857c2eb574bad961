"""``neardup solr``: the local Solr node."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import server
from ..solr import Solr
from .common import data_dir_option, port_option, say


@click.group()
def solr() -> None:
    """Start, stop and inspect the local Solr (a real Solr 9 on 127.0.0.1)."""


@solr.command("start")
@port_option
@data_dir_option
@click.option("--heap", default="2g", show_default=True, help="Java heap of the Solr JVM.")
@click.option("--tls-keystore", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Serve HTTPS with this PKCS12 keystore; its password in env NEARDUP_KEYSTORE_PASSWORD.")
@click.option("--exit-with", type=int, hidden=True, help="Stop when this process ends (tests).")
def solr_start(port: int, data_dir: Path, heap: str, tls_keystore: Path | None, exit_with: int | None) -> None:
    """Start Solr in the background and wait until the core answers.

    The first start builds the launcher with Maven, which downloads Solr's
    jars from Maven Central. Starting a running Solr again is harmless.

    \b
    Example:
      neardup solr start --port 8983
    """
    server.start(data_dir, port, heap=heap, keystore=tls_keystore, exit_with=exit_with, echo=say)


@solr.command("build")
def solr_build() -> None:
    """Build the Solr launcher with Maven now (start does it on first use)."""
    say(f"launcher ready in {server.build_launcher(say)}")


@solr.command("stop")
@data_dir_option
def solr_stop(data_dir: Path) -> None:
    """Stop the local Solr started from this data folder."""
    node = server.stop(data_dir)
    say(f"stopped Solr (pid {node.pid})" if node else "no Solr was running for " + str(data_dir))


@solr.command("status")
@data_dir_option
def solr_status(data_dir: Path) -> None:
    """Say whether the local Solr runs, where, and how many records it holds.

    Exits 0 when it runs and answers, 3 otherwise.
    """
    node = server.running_node(data_dir)
    if node is None or not server.answers(node.url):
        click.echo(f"not running (data folder {data_dir})")
        sys.exit(3)
    click.echo(f"running at {node.url} pid={node.pid} records={Solr(node.url).count()} data={data_dir}")
