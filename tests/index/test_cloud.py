"""SolrCloud: a local 2-node, 2-shard cluster gives the same pairs as one core.

The cluster is ZooKeeper and two nodes, each its own JVM, started by
``neardup solr start --cloud`` as users start it, once for the module. A
test that stops a node leaves it stopped; the next test, whichever it is,
gets the whole cluster back first.
"""

import os
import subprocess
import sys
import time

import pytest
import requests

from conftest import POLL, ROOT, child_env, documented, free_port, one_line_error, run_cli
from test_local_solr import java_processes_of, listening_addresses
from test_replace import (indexed, interrupted_half_way, killed_half_way, new_records, only_bad_json_lines, served,
                          wrong_id_column)

from neardup_solr.index import cloud
from neardup_solr.index.solr import Solr

pytestmark = pytest.mark.solr  # it starts a Solr of its own

MODES = ("--lsh", "--shingles", "--minhash")


def free_base_port() -> int:
    """A port P with P + 1 (second node) and P + 1000 (ZooKeeper) free too."""
    while True:
        port = free_port()
        if port + cloud.ZK_OFFSET < 65536 and not any(
                cloud.local_solr.port_in_use(p) for p in (port + 1, port + cloud.ZK_OFFSET)):
            return port


def start_cluster(port: int, data) -> None:
    started = run_cli("solr", "start", "--cloud", "--nodes", "2", "--shards", "2", "--port", str(port),
                      "--data-dir", str(data), "--heap", "768m", "--exit-with", str(os.getpid()))
    assert started.returncode == 0, started.stderr


@pytest.fixture(scope="module")
def started_cluster(tmp_path_factory):
    data = tmp_path_factory.mktemp("cloud")
    start_cluster(free_base_port(), data)
    yield data
    run_cli("solr", "stop", "--data-dir", str(data))
    assert java_processes_of(data) == []


@pytest.fixture
def cluster(started_cluster):
    """The whole cluster, running: started again if a test stopped a node,
    on ports free now (its own, left a moment ago, are in the range the
    system hands the other workers' listeners and connections)."""
    data = started_cluster
    state = cloud.recorded(data)
    if not all(cloud.alive(part) for part in (state.zookeeper, *state.nodes)):
        start_cluster(free_base_port(), data)
        state = cloud.recorded(data)
    return state, data


def select_requests(state: cloud.LocalCloud) -> int:
    """Search requests the cluster's cores have served so far, from Solr's own metrics."""
    total = 0
    for node in state.nodes:
        found = requests.get(f"{node.base_url}/admin/metrics", timeout=10,
                             params={"group": "core", "prefix": "QUERY./select.requests", "wt": "json"}).json()
        total += sum(core.get("QUERY./select.requests", 0) for core in found["metrics"].values())
    return total


@pytest.fixture(scope="module")
def records(restaurant_records):
    return restaurant_records


def index_and_report(url: str, records, out_dir, *connection: str, modes: tuple[str, ...] = MODES) -> dict[str, bytes]:
    where = connection or ("--solr-url", url)
    done = run_cli("index", str(records), "--reference", *where, "--quiet")
    assert done.returncode == 0, done.stderr
    files = {}
    for mode in modes:
        out = out_dir / f"pairs{mode}.tsv"
        done = run_cli("report", mode, str(out), *where, "--quiet")
        assert done.returncode == 0, done.stderr
        files[mode] = out.read_bytes()
    return files


def test_the_cluster_has_two_nodes_two_active_shards_and_listens_on_loopback_only(cluster):
    state, data = cluster
    assert len(state.nodes) == 2 and len({n.port for n in state.nodes}) == 2
    assert cloud.shard_states(Solr(state.url)) == {"shard1": "active", "shard2": "active"}
    for port in (state.zookeeper.port, *(n.port for n in state.nodes)):
        assert listening_addresses(port) and listening_addresses(port) <= {"127.0.0.1", "::ffff:127.0.0.1"}
    status = run_cli("solr", "status", "--data-dir", str(data))
    assert status.returncode == 0, status.stdout
    assert "neardup/shard1 active" in status.stdout and "neardup/shard2 active" in status.stdout


def test_starting_the_cluster_again_is_harmless(cluster):
    state, data = cluster
    again = run_cli("solr", "start", "--cloud", "--port", str(state.nodes[0].port), "--data-dir", str(data))
    assert again.returncode == 0, again.stderr
    assert "already running" in again.stderr
    assert cloud.recorded(data) == state
    assert sorted(java_processes_of(data)) == sorted([state.zookeeper.pid, *(n.pid for n in state.nodes)])


def test_every_mode_gives_identical_pair_files_on_a_core_and_on_two_shards(cluster, core, records, restaurants_dir,
                                                                             tmp_path):
    state, _ = cluster
    (tmp_path / "core").mkdir(), (tmp_path / "cloud").mkdir()
    on_core = index_and_report(core.url, records, tmp_path / "core")
    on_cloud = index_and_report(state.url, records, tmp_path / "cloud")
    solr = Solr(state.url)
    # The core read its buckets from the postings, the collection by queries (a shard holds part of a bucket).
    pinned = core.pin()
    assert pinned is not None and solr.pin() is None
    core.unpin(pinned)
    # Both shards hold records, so the answers really were gathered from two.
    shard_counts = [solr.search("*:*", rows=0, shards=shard).hits for shard in ("shard1", "shard2")]
    assert sum(shard_counts) == 864 and min(shard_counts) > 100
    for mode in MODES:
        assert on_cloud[mode] == on_core[mode], mode
    # The documented figure, on both.
    lines = on_core["--shingles"].count(b"\n")
    assert documented("shingles").startswith(f"found={lines} ")
    evaluated = [run_cli("evaluate", str(tmp_path / side / "pairs--lsh.tsv"), "--gold",
                         str(restaurants_dir / "gold_pairs.tsv"), "--no-plot")
                 for side in ("core", "cloud")]
    assert evaluated[0].returncode == 0 and evaluated[0].stdout == evaluated[1].stdout


def test_zookeeper_address_and_collection_name_reach_the_same_collection(cluster, records, tmp_path):
    state, _ = cluster
    # One mode: that every mode answers alike on a cluster is the test above's.
    via_url = index_and_report(state.url, records, tmp_path, modes=MODES[:1])
    (tmp_path / "zk").mkdir()
    via_zk = index_and_report("", records, tmp_path / "zk", "--zk-host", state.zk_host, "--collection", "neardup",
                              modes=MODES[:1])
    assert via_zk == via_url and via_url[MODES[0]].count(b"\n") > 50
    missing = run_cli("report", str(tmp_path / "x.tsv"), "--zk-host", state.zk_host, "--collection", "nope")
    assert missing.returncode == 5 and "knows no collection 'nope'" in one_line_error(missing)


def test_create_collection_on_an_existing_cluster_uploads_the_configset_once(cluster, records, tmp_path):
    state, _ = cluster
    url = state.url.rsplit("/", 1)[0] + "/three"
    made = run_cli("solr", "create-collection", "--solr-url", url, "--shards", "3")
    assert made.returncode == 0, made.stderr
    assert list(cloud.shard_states(Solr(url))) == ["shard1", "shard2", "shard3"]
    again = run_cli("solr", "create-collection", "--solr-url", url, "--shards", "3")
    assert again.returncode == 5 and "already exists" in one_line_error(again)
    done = run_cli("index", str(records), "--solr-url", url, "--quiet")
    assert done.returncode == 0 and Solr(url).count() == 864


def test_stopping_a_node_during_a_report_is_a_clear_error_and_leaves_no_output(cluster, tmp_path):
    state, data = cluster
    subprocess.run([sys.executable, "-m", "bench.generate", "--n", "20000", "--seed", "5", "--out-dir", str(tmp_path)],
                   check=True, capture_output=True, cwd=ROOT)
    done = run_cli("index", str(tmp_path / "records.txt"), "--reference", "--solr-url", state.url, "--quiet")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "pairs.tsv"
    before = select_requests(state)
    # The reference mode asks once per record: 20000 searches, a node is stopped after the first 200.
    report = subprocess.Popen([sys.executable, "-m", "neardup_solr", "report", "--shingles", str(out),
                               "--solr-url", state.url, "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
    while select_requests(state) < before + 200:
        assert report.poll() is None, "the report ended before a node could be stopped"
        time.sleep(POLL)
    stopped = run_cli("solr", "stop", "--node", "2", "--data-dir", str(data))
    assert stopped.returncode == 0, stopped.stderr
    _, stderr = report.communicate(timeout=300)
    assert report.returncode == 5
    line = stderr.strip().splitlines()[-1]
    assert "Traceback" not in stderr
    assert "a shard did not answer" in line and "bring the node back" in line
    assert not out.exists() and not list(tmp_path.glob("pairs.tsv*"))
    status = run_cli("solr", "status", "--data-dir", str(data))
    assert status.returncode == 3 and "degraded" in status.stdout and "node2" in status.stdout


def unserved_collections(url: str, name: str = "neardup") -> set[str]:
    """Collections and configsets a replacement of ``name`` made that are not served."""
    solr = Solr(url)
    state = cloud.cluster_status(solr)
    serving = cloud.resolved(state, name)
    made = set(state["collections"]) | cloud.configsets(solr)
    return {c for c in made if c.startswith(f"{name}__") and c != serving}


def test_a_replacement_killed_interrupted_or_given_only_bad_records_leaves_the_collection_as_it_was(
        cluster, records, tmp_path):
    state, data = cluster
    nodes = [n.base_url for n in state.nodes]
    indexed(state.url, records)
    before = served(state.url, tmp_path, "before.tsv")
    assert before[0] == 864
    big = new_records(tmp_path / "new.txt")

    killed_half_way(state.url, nodes, big, "neardup")
    assert served(state.url, tmp_path, "killed.tsv") == before

    interrupted_half_way(state.url, nodes, big, "neardup")
    assert served(state.url, tmp_path, "interrupted.tsv") == before
    assert unserved_collections(state.url) == set()  # the killed run's, removed by this one; its own on Ctrl-C

    for bad in (only_bad_json_lines(tmp_path / "bad.jsonl"), wrong_id_column(tmp_path / "bad.csv")):
        done = run_cli("index", str(bad), "--solr-url", state.url, "--quiet")
        assert done.returncode == 4, done.stderr
        assert served(state.url, tmp_path, f"{bad.name}.tsv") == before
    assert unserved_collections(state.url) == set()


def test_a_replaced_collection_keeps_its_url_zookeeper_name_and_status(cluster, tmp_path):
    state, data = cluster
    for run in range(2):
        records = tmp_path / f"run{run}.txt"
        records.write_text("".join(f"r{run}-{i} Cafe {i} on {i % 13} Oak Avenue\n" for i in range(101 + run)))
        indexed(state.url, records)
        solr = Solr(state.url)
        assert solr.count() == 101 + run and solr.texts([f"r{run}-1"]) == {f"r{run}-1": "Cafe 1 on 1 Oak Avenue"}
        assert unserved_collections(state.url) == set()  # the old collection is gone, with its configset
        assert cloud.collection_url(state.zk_host, "neardup").endswith("/solr/neardup")
        status = run_cli("solr", "status", "--data-dir", str(data))
        assert status.returncode == 0, status.stdout
        assert "neardup/shard1 active" in status.stdout and f"records={101 + run}" in status.stdout
