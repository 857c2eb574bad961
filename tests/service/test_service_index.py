"""The service and the index agree (`neardup serve` beside the command
line): what a service keeps of the index (its banding, its match model) is
the index's in every worker after `neardup index` or `neardup report`
changed it, and a write the service acknowledges is found by the next
lookup and never lost, to a replacement of the index or to Solr killed. Real Solr, real HTTP, the commands in child
processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
import requests

from conftest import POLL, adds_so_far, child_env, free_port, run_cli, write_records

from neardup_solr.index import local_solr
from neardup_solr.index.solr import Solr

PATIENCE = 60
PHILIPPE = "Philippe the Original 1001 N. Alameda St. Los Angeles"
COPIES = [PHILIPPE, "Philippe The Original 1001 North Alameda Street Los Angeles",
          "Philippe the Original, 1001 N Alameda St, Los Angeles", "Philippes Original 1001 N. Alameda St. Los Angeles",
          "Philippe the Original 1001 N. Alameda Street, Los Angeles CA"]
STREETS = ["Ventura Blvd.", "Stone Canyon Rd.", "Horn Ave.", "Robertson Blvd.", "La Brea Ave.", "Main St."]


def others(count: int, start: int = 0) -> list[str]:
    return [f"o{n} Cafe {n} number {n * 7} on {100 + n} {STREETS[n % 6]} Santa Monica" for n in range(start, start + count)]


def found(service_url: str, text: str) -> list[tuple[str, float | None]]:
    """The service's matches of ``text`` (ids and probabilities), asked over a fresh connection, so any worker may answer."""
    answer = requests.get(f"{service_url}/duplicates", params={"text": text}, timeout=PATIENCE,
                          headers={"Connection": "close"})
    assert answer.status_code == 200, answer.text
    return [(m["id"], m["probability"]) for m in answer.json()["matches"]]


def queried(url: str, text: str) -> list[tuple[str, float | None]]:
    """What `neardup query` finds of ``text``, ids and probabilities as the service rounds them."""
    done = run_cli("query", text, "--json", "--solr-url", url)
    assert done.returncode == 0, done.stderr
    return [(m["id"], m.get("probability")) for m in json.loads(done.stdout)["matches"]]


def test_every_worker_answers_from_the_index_the_command_line_changed(core, serve, tmp_path):
    before = write_records(tmp_path / "before.txt", [f"{n} {text}" for n, text in enumerate(COPIES[:2])] + others(40))
    done = run_cli("index", str(before), "--bands", "42", "--band-rows", "3", "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    service = serve("--solr-url", core.url, "--workers", "2")
    for _ in range(8):  # each worker keeps the index's banding, model and word frequencies
        assert [m for m, _ in found(service.url, PHILIPPE)] == ["0", "1"]
    # Replaced from the command line with other records and another banding.
    after = write_records(tmp_path / "after.txt", [f"p{n} {text}" for n, text in enumerate(COPIES)] + others(60, 40))
    done = run_cli("index", str(after), "--bands", "30", "--band-rows", "2", "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    expected = queried(core.url, PHILIPPE)
    assert {m for m, _ in expected} == {f"p{n}" for n in range(len(COPIES))}, expected
    assert all(probability is None for _, probability in expected)  # no report yet: no model
    for _ in range(12):
        assert found(service.url, PHILIPPE) == expected
    # A report keeps a model with the index: every answer then has its probabilities.
    done = run_cli("report", str(tmp_path / "pairs.tsv"), "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    expected = queried(core.url, PHILIPPE)
    assert expected and all(probability is not None for _, probability in expected)
    for _ in range(12):
        assert found(service.url, PHILIPPE) == expected


def test_writes_while_the_index_is_replaced_are_refused_and_none_acknowledged_is_lost(core, serve, tmp_path):
    first = write_records(tmp_path / "first.txt", others(50))
    assert run_cli("index", str(first), "--solr-url", core.url, "-q").returncode == 0
    service = serve("--solr-url", core.url)
    lines = [f"n{n} Shop {n % 997} number {n} on {n % 89} Main Street City {n % 31}\n" for n in range(1, 4001)]
    # A replacement fed from a pipe the test holds open: it is under way for as long as the test says.
    replacing = subprocess.Popen([sys.executable, "-m", "neardup_solr", "index", "-", "--bands", "20",
                                  "--band-rows", "5", "--solr-url", core.url, "-q"], stdin=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=child_env())
    writing = threading.Event()
    writing.set()
    acknowledged: list[str] = []
    refused: list[dict] = []
    failures: list[str] = []

    def writer(number: int) -> None:
        session, batch = requests.Session(), 0
        while writing.is_set():
            ids = [f"w{number}-{batch}-{i}" for i in range(3)]
            batch += 1
            try:
                answer = session.post(f"{service.url}/records", timeout=PATIENCE, json=[
                    {"id": record_id, "text": f"Spago {number}{batch} Horn Ave. West Hollywood {i}"}
                    for i, record_id in enumerate(ids)])
            except requests.RequestException as err:
                failures.append(f"write: {err}")
                return
            if answer.status_code == 200:
                acknowledged.extend(ids)
            elif answer.status_code == 503:
                refused.append(answer.json())
            else:
                failures.append(f"write: {answer.status_code} {answer.text[:200]}")
                return

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    try:
        before = adds_so_far(core.url)
        replacing.stdin.write("".join(lines[:-100]))  # read as they come, the input held open
        replacing.stdin.flush()
        while adds_so_far(core.url) < before + len(lines) // 2:  # half of them in its new core
            assert replacing.poll() is None, replacing.stderr.read()
            time.sleep(POLL)
        # The replacement is under way: from now on, what the service acknowledges must outlive it.
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while len(refused) < 5 and time.monotonic() < deadline and not failures:
            time.sleep(0.05)
        assert refused, "no write was refused while the index was being replaced"
        replacing.stdin.write("".join(lines[-100:]))
        replacing.stdin.close()
        stderr = replacing.stderr.read()
        assert replacing.wait(timeout=PATIENCE * 5) == 0, stderr
        settled = len(acknowledged)
        deadline = time.monotonic() + PATIENCE
        while len(acknowledged) < settled + 12 and time.monotonic() < deadline and not failures:
            time.sleep(0.05)  # writes are taken again once the new index serves
    finally:
        writing.clear()
        for thread in threads:
            if thread.is_alive():
                thread.join()
        if replacing.poll() is None:
            replacing.kill()
    assert not failures, failures[:3]
    assert len(acknowledged) >= settled + 12
    assert all(set(body) == {"error", "hint"} and "\n" not in body["error"] for body in refused)
    assert all("being replaced" in body["error"] or "was replaced" in body["error"] for body in refused), refused[:3]
    # Every write answered 200 is in the index that serves now, beside the replacement's records.
    solr = Solr(core.url)
    assert sorted(solr.texts(acknowledged)) == sorted(acknowledged)
    assert solr.count() == len(lines) + len(set(acknowledged))
    assert solr.texts(["o1"]) == {}  # the index of before is gone, as a replacement does


def commit_point(url: str) -> str:
    """The index's last commit point (Lucene's segments file): a hard commit makes a new one, a soft one does not."""
    return requests.get(f"{url}/admin/luke", params={"show": "index", "numTerms": 0, "wt": "json"},
                        timeout=PATIENCE).json()["index"]["segmentsFile"]


@pytest.mark.solr  # it starts a Solr of its own
def test_an_acknowledged_write_is_found_at_once_and_outlives_solr_killed(tmp_path, serve):
    data_dir = tmp_path / "node"
    node = local_solr.start(data_dir, free_port(), exit_with=os.getpid(), echo=lambda _: None)
    try:
        first = write_records(tmp_path / "first.txt", others(50))
        assert run_cli("index", str(first), "--solr-url", node.url, "-q").returncode == 0
        service = serve("--solr-url", node.url)
        before, started = commit_point(node.url), time.monotonic()
        for n, text in enumerate(COPIES):
            answer = service.post("/records", json=[{"id": f"c{n}", "text": text}])
            assert answer.status_code == 200, answer.text
            # The next lookup finds it, and the copies written before it are its duplicates.
            looked_up = service.get(f"/records/c{n}/duplicates")
            assert looked_up.status_code == 200, looked_up.text
            assert {m["id"] for m in looked_up.json()["matches"]} >= {f"c{k}" for k in range(n)}
        if time.monotonic() - started < 50:  # Solr's own hard commit comes a minute after the first add
            assert commit_point(node.url) == before, "a write waited for a hard commit"
        os.kill(local_solr.running_node(data_dir).pid, signal.SIGKILL)
        deadline = time.monotonic() + PATIENCE
        while local_solr.port_in_use(node.port) and time.monotonic() < deadline:
            time.sleep(POLL)  # the killed JVM lets go of its port as it ends, a moment after the signal
        local_solr.start(data_dir, node.port, exit_with=os.getpid(), echo=lambda _: None)
        assert sorted(Solr(node.url).texts([f"c{n}" for n in range(len(COPIES))])) == [f"c{n}" for n in range(len(COPIES))]
    finally:
        local_solr.stop(data_dir)
