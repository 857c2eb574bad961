"""``neardup solr``: the local Solr (a node or a SolrCloud), and collections."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from click.core import ParameterSource

from ..index import cloud, launcher, local_solr
from ..errors import NeardupError
from ..index.solr import Solr, local_port
from .common import access_options, data_dir_option, open_solr, port_option, say, solr_connection


@click.group()
def solr() -> None:
    """Start, stop and inspect the local Solr (a real Solr 9 on 127.0.0.1).

    \b
    Examples:
      neardup solr start
      neardup solr status
      neardup solr stop
    """


@solr.command("start")
@port_option
@data_dir_option
@click.option("--heap", default="2g", show_default=True, help="Java heap of the Solr JVM.")
@click.option("--tls-keystore", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Serve HTTPS with this PKCS12 keystore; its password in env NEARDUP_KEYSTORE_PASSWORD.")
@click.option("--cloud", "cloud_mode", is_flag=True, help="A local SolrCloud: ZooKeeper on port + 1000 and --nodes nodes.")
@click.option("--nodes", type=click.IntRange(1, 16), default=2, show_default=True, help="With --cloud: Solr nodes.")
@click.option("--shards", type=click.IntRange(1, 64), default=2, show_default=True,
              help="With --cloud: shards of the neardup collection, when it is made.")
@click.option("--exit-with", type=int, hidden=True, help="Stop when this process ends (tests).")
def solr_start(port: int, data_dir: Path, heap: str, tls_keystore: Path | None, cloud_mode: bool, nodes: int,
               shards: int, exit_with: int | None) -> None:
    """Start Solr in the background and wait until the core answers.

    The first start builds the launcher: it fetches Solr's jars from Maven
    Central (each checked by SHA-256) and compiles the launcher with javac.
    Starting a running Solr again is harmless.
    With --cloud it starts ZooKeeper and --nodes nodes on ports PORT,
    PORT+1, ..., and the collection neardup at the same URL a single
    node would have, so every other command works unchanged.

    \b
    Examples:
      neardup solr start --port 8983
      neardup solr start --cloud --nodes 2 --shards 2
    """
    if cloud_mode:
        if tls_keystore is not None:
            raise click.UsageError("--tls-keystore is for a single node; a local cluster serves HTTP on 127.0.0.1")
        cloud.start(data_dir, port, nodes=nodes, shards=shards, heap=heap, exit_with=exit_with, echo=say)
    else:
        if cloud.recorded(data_dir) is not None:
            raise NeardupError(f"{data_dir} holds a SolrCloud", hint="add --cloud, or use another --data-dir")
        local_solr.start(data_dir, port, heap=heap, keystore=tls_keystore, exit_with=exit_with, echo=say)


@solr.command("build")
def solr_build() -> None:
    """Build the Solr launcher now (start does it on first use): fetch
    Solr's jars from Maven Central (or NEARDUP_MAVEN_URL), each checked by
    its SHA-256, and compile the launcher with the JDK's javac.

    \b
    Example:
      neardup solr build
    """
    say(f"launcher ready in {launcher.build_launcher(say)}")


def _asked_port(port: int | None) -> int | None:
    """The port of the node asked about: --port, else SOLR_URL's when it
    names this machine and --data-dir is not on the command line (the node
    the other commands reach), else none: the data folder's node."""
    if port is None and click.get_current_context().get_parameter_source("data_dir") != ParameterSource.COMMANDLINE:
        return local_port(os.environ.get("SOLR_URL") or "")
    return port


def _on_port(data_dir: Path, port: int | None) -> Path:
    """The data folder to act on: the one of the Solr answering on ``port``, when given."""
    if port is None:
        return data_dir
    found = local_solr.data_dir_on(port)
    if found is None:
        raise NeardupError(f"no local Solr that `neardup solr start` started answers on port {port}",
                           hint="check the port, or name the node's folder with --data-dir")
    return found


by_port = click.option("--port", type=click.IntRange(1, 65535),
                       help="The node on this port (its data folder found from it) instead of --data-dir's.")


@solr.command("stop")
@data_dir_option
@by_port
@click.option("--node", type=click.IntRange(1), help="Stop only this node (1, 2, ...) of a local SolrCloud.")
def solr_stop(data_dir: Path, port: int | None, node: int | None) -> None:
    """Stop the local Solr (or SolrCloud) started from this data folder (or
    answering on --port).

    The node stopped is the one on --port, else the one --data-dir names on
    the command line, else the one on the port of SOLR_URL (when that names
    this machine), else the one of the data folder (NEARDUP_DATA_DIR or its
    default), as `solr status` asks.

    \b
    Examples:
      neardup solr stop
      neardup solr stop --port 8984
      SOLR_URL=http://127.0.0.1:8984/solr/neardup neardup solr stop
      neardup solr stop --data-dir /srv/neardup --node 2
    """
    data_dir = _on_port(data_dir, _asked_port(port))
    if (cluster := cloud.stop(data_dir, node)) is not None:
        say(f"stopped node {node} (port {cluster.nodes[node - 1].port})" if node
            else f"stopped SolrCloud ({len(cluster.nodes)} nodes and ZooKeeper)")
        return
    if node is not None:
        raise NeardupError(f"no SolrCloud was started from {data_dir}")
    stopped = local_solr.stop(data_dir)
    say(f"stopped Solr (pid {stopped.pid})" if stopped else "no Solr was running for " + str(data_dir))


@solr.command("status")
@data_dir_option
@by_port
@access_options
def solr_status(data_dir: Path, port: int | None, user: str | None, password_file: Path | None,
                ca_cert: str | None) -> None:
    """Say whether the local Solr runs, where, and how many records it holds.

    The node asked about is the one on --port, else the one --data-dir
    names on the command line, else the one on the port of SOLR_URL (when
    that names this machine, as the other commands read it), else the one
    of the data folder (NEARDUP_DATA_DIR or its default). Exits 0 when it
    runs and answers, 3 otherwise. Counting the records of a node that asks
    for credentials or serves HTTPS (--tls-keystore) takes the same --user
    and --ca-cert as the other commands.

    \b
    Examples:
      neardup solr status
      neardup solr status --port 8984
      SOLR_URL=http://127.0.0.1:8984/solr/neardup neardup solr status
      neardup solr status --data-dir /srv/neardup --ca-cert ca.pem
    """
    port = _asked_port(port)
    if port is not None and (found := local_solr.data_dir_on(port)) is None:
        click.echo(f"not running (no local Solr answers on port {port})")
        sys.exit(3)
    data_dir = found if port is not None else data_dir
    if (cluster := cloud.recorded(data_dir)) is not None:
        _cloud_status(cluster, data_dir)
        return
    node = local_solr.running_node(data_dir)
    if node is None or not local_solr.answers(node.url):
        click.echo(f"not running (data folder {data_dir})")
        sys.exit(3)
    records = open_solr(node.url, user=user, password_file=password_file, ca_cert=ca_cert).count()
    click.echo(f"running at {node.url} pid={node.pid} records={records} data={data_dir}")


def _cloud_status(cluster: cloud.LocalCloud, data_dir: Path) -> None:
    """One line for ZooKeeper, each node and each shard; exit 3 unless all serve."""
    healthy = cloud.alive(cluster.zookeeper)
    click.echo(f"zookeeper 127.0.0.1:{cluster.zookeeper.port} pid={cluster.zookeeper.pid} "
               f"{'running' if healthy else 'stopped'}")
    answering = None
    for number, node in enumerate(cluster.nodes, start=1):
        up = cloud.alive(node) and local_solr.answers(node.base_url, "admin/info/system")
        healthy &= up
        answering = answering or (local_solr.local_url(node.port, cluster.collection) if up else None)
        click.echo(f"node{number} 127.0.0.1:{node.port} pid={node.pid} {'running' if up else 'stopped'}")
    if answering is None:
        click.echo(f"not running (data folder {data_dir})")
        sys.exit(3)
    solr = Solr(answering, retries=0)
    states = cloud.shard_states(solr)
    for shard, state in states.items():
        click.echo(f"{cluster.collection}/{shard} {state}")
    healthy &= bool(states) and "down" not in states.values()
    records = solr.count() if healthy else "unknown"
    click.echo(f"{'running' if healthy else 'degraded'} at {answering} zk-host={cluster.zk_host} records={records} "
               f"data={data_dir}")
    sys.exit(0 if healthy else 3)


@solr.command("create-collection")
@solr_connection(ping=False)
@click.option("--shards", type=click.IntRange(1, 1024), default=2, show_default=True)
@click.option("--replicas", type=click.IntRange(1, 16), default=1, show_default=True, help="Replicas of each shard.")
def create_collection(solr: Solr, shards: int, replicas: int) -> None:
    """Make a collection for neardup on an existing SolrCloud.

    Uploads the configset (schema and solrconfig of neardup-solr) under the
    collection's name, then creates the collection the --solr-url names.

    \b
    Example:
      neardup solr create-collection --solr-url http://solr1:8983/solr/products --shards 4 --replicas 2
    """
    cloud.create_collection(solr, shards=shards, replicas=replicas)
    say(f"created collection {solr.name!r} ({shards} shards x {replicas} replicas) at {solr.url}")
