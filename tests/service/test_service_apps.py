"""Apps made by `service.create_app` in one process, each over its own
Solr core and served over real HTTP: the routes are the module's, but what
they share (the index, the token, the labels) is each app's own."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import requests
import uvicorn

from conftest import free_port
from test_service import NEAR_COPY, RECORDS, TOKEN

from neardup_solr import NearDuplicates
from neardup_solr.results.labels import LabelStore
from neardup_solr.service.app import create_app

# Seconds to wait for a server to listen or stop: far beyond what it takes, only a hang reaches it.
PATIENCE = 120


@contextmanager
def served(app) -> Iterator[str]:
    """``app`` served by uvicorn in a thread of this process; its URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + PATIENCE
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(PATIENCE)


def test_two_apps_in_one_process_share_nothing_but_their_code(new_core, tmp_path):
    guarded, open_ = new_core(), new_core()
    for core in (guarded, open_):
        NearDuplicates(core).index(RECORDS)
    labels = LabelStore(tmp_path / "labels.tsv")
    with (served(create_app(NearDuplicates(guarded), token=TOKEN)) as a,
          served(create_app(NearDuplicates(open_), labels=labels)) as b):
        record = {"id": "6", "text": NEAR_COPY}
        # The token is the first app's alone.
        assert requests.post(f"{a}/records", json=record, timeout=60).status_code == 401
        assert requests.post(f"{b}/records", json=record, timeout=60).status_code == 200
        # Each answers from its own index.
        found_b = requests.get(f"{b}/records/1/duplicates", timeout=60).json()["matches"]
        assert [m["id"] for m in found_b] == ["6"]
        assert requests.get(f"{a}/records/6/duplicates", timeout=60).status_code == 404
        # The labels are the second app's alone.
        assert requests.post(f"{b}/labels", json={"a": "1", "b": "6", "label": "same"}, timeout=60).status_code == 200
        assert requests.get(f"{b}/labels", timeout=60).json() == [{"a": "1", "b": "6", "label": "same"}]
        assert requests.get(f"{a}/labels", timeout=60).status_code == 409
