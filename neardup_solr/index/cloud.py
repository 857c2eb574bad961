"""SolrCloud: a local cluster from the same jars, and collections on any cluster.

A local cluster is ZooKeeper and ``nodes`` Solr nodes, each a JVM of its own
(so one can be stopped alone), all on 127.0.0.1: ZooKeeper on ``port +
1000`` (Solr's own convention), the nodes on ``port``, ``port + 1``, ...
The data folder holds ``zookeeper/``, ``node1/``, ``node2/``, ... and
``cloud.json`` with their pids and ports. The ``neardup`` collection is
made once, with one replica per shard; later starts find it in ZooKeeper.

Collections are made through Solr's HTTP APIs (Configsets ``UPLOAD``,
Collections ``CREATE``), so the same call serves a local cluster and an
existing one. Each collection gets a configset of its own name because the
index settings live in the configset's overlay.
"""

from __future__ import annotations

import io
import json
import logging
import socket
import subprocess
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from . import launcher, local_solr
from ..errors import NeardupError, SolrFailure, SolrUnavailable
from ..extras import require
from .solr import Solr

ZK_OFFSET = 1000  # ZooKeeper on Solr's port + 1000, as Solr's own scripts place it

CLOUD_SOLR_XML = """<?xml version="1.0" encoding="UTF-8"?>
<solr>
  <int name="maxBooleanClauses">${solr.max.booleanClauses:1048576}</int>
  <solrcloud>
    <str name="host">127.0.0.1</str>
    <int name="hostPort">${hostPort:8983}</int>
    <str name="hostContext">solr</str>
    <int name="zkClientTimeout">30000</int>
    <bool name="genericCoreNodeNames">true</bool>
    <int name="distribUpdateSoTimeout">600000</int>
    <int name="distribUpdateConnTimeout">60000</int>
  </solrcloud>
</solr>
"""


@dataclass(frozen=True)
class LocalCloud:
    """A local SolrCloud as a data folder recorded it: ZooKeeper, the nodes
    (each a launcher process and its port) and the collection they serve."""

    zookeeper: local_solr.Node
    nodes: tuple[local_solr.Node, ...]
    collection: str

    @property
    def zk_host(self) -> str:
        return f"127.0.0.1:{self.zookeeper.port}"

    @property
    def url(self) -> str:
        return local_solr.local_url(self.nodes[0].port, self.collection)


def _state_file(data_dir: Path) -> Path:
    return data_dir / "cloud.json"


def _save(data_dir: Path, cluster: LocalCloud) -> None:
    state = {"zookeeper": [cluster.zookeeper.pid, cluster.zookeeper.port],
             "nodes": [[n.pid, n.port] for n in cluster.nodes], "collection": cluster.collection}
    _state_file(data_dir).write_text(json.dumps(state))


def recorded(data_dir: Path) -> LocalCloud | None:
    """The cluster this data folder started last, running or not."""
    try:
        state = json.loads(_state_file(data_dir.resolve()).read_text())
        return LocalCloud(local_solr.Node(*state["zookeeper"]), tuple(local_solr.Node(*n) for n in state["nodes"]),
                       state["collection"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def alive(node: local_solr.Node) -> bool:
    return local_solr.is_launcher(node.pid)


def _zk_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as probe:
            probe.sendall(b"srvr")
            return b"Zookeeper version" in probe.recv(1024)  # the answer's first line is enough
    except OSError:
        return False


def _node_answers(port: int) -> bool:
    return local_solr.answers(f"http://127.0.0.1:{port}/solr", "admin/info/system")


def start(
    data_dir: Path,
    port: int = local_solr.DEFAULT_PORT,
    *,
    nodes: int = 2,
    shards: int = 2,
    collection: str = local_solr.CORE,
    heap: str = "1g",
    exit_with: int | None = None,
    wait: float = local_solr.START_WAIT,
    echo: Callable[[str], None] = print,
) -> LocalCloud:
    """Start ZooKeeper and the nodes, and make the collection if ZooKeeper has
    none of that name. Starting a running cluster again is harmless."""
    data_dir = data_dir.resolve()
    running = _running(data_dir, port, nodes)
    if running is not None:
        echo(f"SolrCloud is already running: {running.url} (ZooKeeper {running.zk_host})")
        return running
    _check_ports_free(port, nodes)
    starting = _Starting(data_dir, collection, exit_with, echo)
    try:
        zk_port = starting.zookeeper(port + ZK_OFFSET, wait)
        cluster = starting.nodes(range(port, port + nodes), zk_port, heap, wait)
        _make_collection(Solr(cluster.url, timeout=wait, retries=0), nodes, shards, wait, echo)
    except BaseException:
        stop(data_dir)
        raise
    echo(f"SolrCloud is running: {cluster.url} (ZooKeeper {cluster.zk_host}, nodes on ports "
         f"{', '.join(str(n.port) for n in cluster.nodes)}, data in {data_dir})")
    return cluster


def _running(data_dir: Path, port: int, nodes: int) -> LocalCloud | None:
    """The cluster of this data folder if all of it runs as asked; a cluster
    of which only a part runs is stopped. Refuses a folder whose standalone
    Solr runs, or whose cluster runs on other ports."""
    if local_solr.running_node(data_dir) is not None:
        raise NeardupError(f"a standalone Solr of {data_dir} is running", hint="`neardup solr stop` it first")
    before = recorded(data_dir)
    if before is None:
        return None
    if not all(alive(n) for n in (before.zookeeper, *before.nodes)):
        stop(data_dir)
        return None
    if (before.nodes[0].port, len(before.nodes)) != (port, nodes):
        raise NeardupError(f"the cluster of {data_dir} is already running with {len(before.nodes)} nodes from "
                           f"port {before.nodes[0].port}", hint="use that, or `neardup solr stop` first")
    return before


def _check_ports_free(port: int, nodes: int) -> None:
    for taken in (port + ZK_OFFSET, *range(port, port + nodes)):
        if local_solr.port_in_use(taken):
            raise NeardupError(f"port {taken} on 127.0.0.1 is already in use",
                               hint=f"choose another base port (ZooKeeper takes port + {ZK_OFFSET})", remedy="base_port",
                               zk_offset=ZK_OFFSET)


class _Starting:
    """The processes of a cluster being started, recorded in the data folder
    as each is launched, so a failed start can stop every one of them."""

    def __init__(self, data_dir: Path, collection: str, exit_with: int | None, echo: Callable[[str], None]):
        self.data_dir, self.collection, self.exit_with, self.echo = data_dir, collection, exit_with, echo
        self.started: list[local_solr.Node] = []

    def record(self, process: subprocess.Popen, port: int) -> LocalCloud:
        self.started.append(local_solr.Node(process.pid, port))
        cluster = LocalCloud(self.started[0], tuple(self.started[1:]), self.collection)
        _save(self.data_dir, cluster)
        return cluster

    def launch(self, args: list[str], console: str, heap: str) -> subprocess.Popen:
        return local_solr.launch(args, self.data_dir, console, heap=heap, exit_with=self.exit_with, echo=self.echo)

    def zookeeper(self, zk_port: int, wait: float) -> int:
        """Launch ZooKeeper and wait until it answers; returns its port."""
        folder = self.data_dir / "zookeeper"
        folder.mkdir(parents=True, exist_ok=True)
        process = self.launch(["--zookeeper", str(folder), "--port", str(zk_port)], "zookeeper.log", "256m")
        self.record(process, zk_port)
        local_solr.wait_until(lambda: _zk_answers(zk_port), process, "ZooKeeper",
                              self.data_dir / "logs" / "zookeeper.log", wait)
        return zk_port

    def nodes(self, ports: range, zk_port: int, heap: str, wait: float) -> LocalCloud:
        """Launch a node on each port (all at once), then wait until each answers."""
        launched = []
        for number, node_port in enumerate(ports, start=1):
            home = self.data_dir / f"node{number}"
            home.mkdir(parents=True, exist_ok=True)
            (home / "solr.xml").write_text(CLOUD_SOLR_XML, encoding="utf-8")
            args = ["--home", str(home), "--port", str(node_port), "--zk-host", f"127.0.0.1:{zk_port}"]
            process = self.launch(args, f"node{number}.log", heap)
            cluster = self.record(process, node_port)
            launched.append((process, node_port, number))
        for process, node_port, number in launched:
            local_solr.wait_until(lambda p=node_port: _node_answers(p), process, f"Solr node {number}",
                                  self.data_dir / "logs" / f"node{number}.log", wait)
        return cluster


def _make_collection(solr: Solr, nodes: int, shards: int, wait: float, echo: Callable[[str], None]) -> None:
    """Once all nodes are live: the collection, unless ZooKeeper has it
    already, and a wait until every shard is served."""
    _wait_live(solr, nodes, wait)
    if solr.name not in collections(solr):
        echo(f"creating collection {solr.name!r}: {shards} shards over {nodes} nodes")
        create_collection(solr, shards=shards)
    _wait_active(solr, wait)


def stop(data_dir: Path, node: int | None = None) -> LocalCloud | None:
    """Stop the whole cluster (nodes first, then ZooKeeper), or only node
    number ``node`` (from 1). Returns the cluster, or None if none was recorded."""
    data_dir = data_dir.resolve()
    cluster = recorded(data_dir)
    if cluster is None:
        return None
    if node is not None:
        if not 1 <= node <= len(cluster.nodes):
            raise NeardupError(f"the cluster has nodes 1 to {len(cluster.nodes)}, not {node}")
        local_solr.stop_process(cluster.nodes[node - 1].pid)
        return cluster
    for part in (*cluster.nodes, cluster.zookeeper):
        local_solr.stop_process(part.pid)
    _state_file(data_dir).unlink(missing_ok=True)
    return cluster


def cluster_status(solr: Solr) -> dict:
    return solr.get(solr.admin_url("collections"), action="CLUSTERSTATUS")["cluster"]


def collections(solr: Solr) -> set[str]:
    """The cluster's collections and aliases: the names a URL can use."""
    state = cluster_status(solr)
    return set(state.get("collections", {})) | set(state.get("aliases", {}))


def resolved(state: dict, name: str) -> str:
    """The collection ``name`` serves in a CLUSTERSTATUS answer: the one its
    alias points at (a replaced index, see :func:`neardup_solr.index.replacement.replace_index`),
    else ``name`` itself."""
    return state.get("aliases", {}).get(name, name)


def shard_states(solr: Solr) -> dict[str, str]:
    """Each shard of the collection (or of the one its alias points at), and
    whether a live replica serves it."""
    state = cluster_status(solr)
    live = set(state.get("live_nodes", []))
    shards = state.get("collections", {}).get(resolved(state, solr.name), {}).get("shards", {})
    return {name: "active" if any(r.get("state") == "active" and r.get("node_name") in live
                                  for r in shard.get("replicas", {}).values()) else "down"
            for name, shard in sorted(shards.items())}


def _wait_live(solr: Solr, nodes: int, wait: float) -> None:
    deadline = time.monotonic() + wait
    while len(cluster_status(solr).get("live_nodes", [])) < nodes:
        if time.monotonic() > deadline:
            raise NeardupError(f"not all {nodes} Solr nodes joined the cluster within {wait:.0f} s")
        time.sleep(local_solr.START_POLL)


def _wait_active(solr: Solr, wait: float) -> None:
    deadline = time.monotonic() + wait
    while not (states := shard_states(solr)) or "down" in states.values():
        if time.monotonic() > deadline:
            raise NeardupError(f"collection {solr.name!r} is not active within {wait:.0f} s: {states}")
        time.sleep(local_solr.START_POLL)


# Seconds to reach ZooKeeper: it answers a live client at once; longer means
# a wrong address or a down ensemble.
ZK_CONNECT_TIMEOUT = 10.0


def collection_url(zk_host: str, collection: str, timeout: float = ZK_CONNECT_TIMEOUT) -> str:
    """The collection's URL on a live node, as ZooKeeper knows them
    (``zk_host`` is ``host:port[,host:port...][/chroot]``). A node holding a
    replica of the collection is preferred; any live node can serve it."""
    KazooClient = require("kazoo.client", "finding a collection by ZooKeeper", "cloud").KazooClient
    from kazoo.handlers.threading import KazooTimeoutError

    logging.getLogger("kazoo").setLevel(logging.CRITICAL)  # it logs each failed connection attempt
    zk = KazooClient(hosts=zk_host, timeout=timeout, read_only=True)
    try:
        zk.start(timeout=timeout)
    except KazooTimeoutError:
        zk.close()
        raise SolrUnavailable(f"ZooKeeper is not reachable at {zk_host}",
                              hint="check the ZooKeeper address (host:port[/chroot])", remedy="zk_host") from None
    try:
        live = sorted(zk.get_children("/live_nodes")) if zk.exists("/live_nodes") else []
        props = zk.get("/clusterprops.json")[0] if zk.exists("/clusterprops.json") else b""
        aliases = json.loads((zk.get("/aliases.json")[0] if zk.exists("/aliases.json") else b"") or b"{}")
        serving = aliases.get("collection", {}).get(collection, collection)
        state = zk.get(f"/collections/{serving}/state.json")[0] if zk.exists(f"/collections/{serving}") else None
    finally:
        zk.stop()
        zk.close()
    if not live:
        raise SolrUnavailable(f"no live Solr node is registered in ZooKeeper at {zk_host}",
                              hint="start the cluster's nodes, or check the ZooKeeper address's chroot",
                              remedy="zk_chroot")
    if state is None:
        raise SolrFailure(f"ZooKeeper at {zk_host} knows no collection {collection!r}",
                          hint="create it with `neardup solr create-collection`")
    hosting = {r.get("node_name") for shard in json.loads(state).get(serving, {}).get("shards", {}).values()
               for r in shard.get("replicas", {}).values()}
    node = next((n for n in live if n in hosting), live[0])
    scheme = json.loads(props or b"{}").get("urlScheme", "http")
    address, _, context = node.partition("_")
    return f"{scheme}://{address}/{unquote(context)}/{collection}"


def configset_zip(conf: Path) -> bytes:
    """The configset folder as the zip the Configsets API takes (files at its root)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in conf.rglob("*") if p.is_file()):
            archive.write(path, path.relative_to(conf).as_posix())
    return buffer.getvalue()


def create_collection(solr: Solr, *, shards: int, replicas: int = 1) -> None:
    """Upload our configset under the collection's name and create the
    collection ``solr`` points at, on whichever cluster it is."""
    if solr.name in collections(solr):
        raise SolrFailure(f"collection {solr.name!r} already exists at {solr.url}",
                          hint="index into it, or delete it with Solr's Collections API first")
    solr.post(solr.admin_url("configs"), configset_zip(launcher.resource(local_solr.CONFIGSET)), "application/octet-stream",
              action="UPLOAD", name=solr.name, overwrite="true", cleanup="true")
    solr.get(solr.admin_url("collections"), action="CREATE", name=solr.name, numShards=shards,
             replicationFactor=replicas, **{"collection.configName": solr.name})


def copy_collection(solr: Solr, name: str) -> Solr:
    """A new, empty collection ``name`` shaped as the one ``solr`` serves
    (its shards and replicas), with a configset of its own copied from that
    one's (the index settings live in the configset's overlay). Costs a
    configset copy and a collection creation: a core per replica, a few
    seconds."""
    state = cluster_status(solr)
    serving = state.get("collections", {}).get(resolved(state, solr.name), {})
    replicas = max(1, int(serving.get("replicationFactor") or 1))
    solr.get(solr.admin_url("configs"), action="CREATE", name=name, baseConfigSet=serving.get("configName", solr.name))
    solr.get(solr.admin_url("collections"), action="CREATE", name=name, numShards=len(serving.get("shards", {})) or 1,
             replicationFactor=replicas, **{"collection.configName": name})
    return solr.at(name)


def point_alias(solr: Solr, alias: str, collection: str) -> None:
    """Make ``alias`` name ``collection``: one atomic change in ZooKeeper, so
    a request through the alias reaches the old collection or the new one,
    never neither. An alias may share a collection's name; it wins."""
    solr.get(solr.admin_url("collections"), action="CREATEALIAS", name=alias, collections=collection)


def drop_collection(solr: Solr, name: str) -> None:
    """Delete collection ``name`` with its data, and its configset when that
    is named like it (ours are) and no other collection uses it. A
    collection already gone is no error."""
    state = cluster_status(solr)
    found = state.get("collections", {}).get(name)
    if found is not None:
        solr.get(solr.admin_url("collections"), action="DELETE", name=name)
        config = found.get("configName")
        if config == name and all(c.get("configName") != name for n, c in state["collections"].items() if n != name):
            drop_configset(solr, name)


def drop_configset(solr: Solr, name: str) -> None:
    solr.get(solr.admin_url("configs"), action="DELETE", name=name)


def configsets(solr: Solr) -> set[str]:
    return set(solr.get(solr.admin_url("configs"), action="LIST").get("configSets", []))
