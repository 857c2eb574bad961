"""The service holds (`neardup serve`): a huge body, a stream of writes, a
name that is not its own, several worker processes. Real Solr, real HTTP,
the command in a child process. Nothing here asserts a duration: what is
asserted is what answered while something else was still under way."""

from __future__ import annotations

import importlib
import json
import os
import signal
import socket
import threading
import time

import requests

from conftest import run_cli
from test_service import RECORDS, TOKEN, built, one_line_error  # noqa: F401 (built is a fixture)

from neardup_solr.records.record import MAX_LINE_BYTES

BIG = 20 * 2**20
CHUNK = 2**20
# Seconds a client waits for an answer before it counts as none: far beyond any answer, only a hang reaches it.
PATIENCE = 60


def _answer_of(sock: socket.socket) -> str:
    """The status line and headers the service sent on ``sock`` (blocking)."""
    sock.settimeout(PATIENCE)
    data = b""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        if not more:
            break
        data += more
    return data.decode("latin-1")


def _answered(sock: socket.socket) -> bool:
    """Whether the service has sent something (or closed) on ``sock``, without waiting."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) is not None
    except BlockingIOError:
        return False
    except ConnectionError:
        return True
    finally:
        sock.setblocking(True)


def test_a_20_mb_body_is_refused_with_413_unread_while_health_answers(built, serve):
    service = serve("--solr-url", built.url)
    host = f"127.0.0.1:{service.port}"
    # Declared: refused on its headers alone, the body never sent.
    with socket.create_connection(("127.0.0.1", service.port)) as sock:
        sock.sendall(f"POST /records HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {BIG}\r\n\r\n".encode())
        answer = _answer_of(sock)
    assert answer.startswith("HTTP/1.1 413"), answer
    # Not declared (chunked): read as it comes, refused once past the cap, and /health answers meanwhile.
    body = b'{"id": "big", "text": "' + b"Ventura Boulevard " * (BIG // 18) + b'"}'
    healths, sent = [], 0
    with socket.create_connection(("127.0.0.1", service.port)) as sock:
        sock.sendall(f"POST /records HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n".encode())
        while sent < len(body) and not _answered(sock):
            chunk = body[sent:sent + CHUNK]
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            except (BrokenPipeError, ConnectionResetError):
                break  # it stopped reading: its answer is waiting
            sent += len(chunk)
            # It answers (503 would say Solr was slower than /health waits, on a busy machine: still an answer).
            health = requests.get(f"{service.url}/health", timeout=PATIENCE)
            healths.append(health.status_code if "records" in health.json() or "error" in health.json() else None)
            time.sleep(0.05)  # the service's turn to read what was sent
        answer = _answer_of(sock)
    assert answer.startswith("HTTP/1.1 413"), answer[:300]
    assert sent < len(body)  # refused before the rest was sent
    assert healths and set(healths) <= {200, 503}
    assert built.texts(["big"]) == {} and built.count() == len(RECORDS)


def _closed(sock: socket.socket) -> bool:
    """Whether the service closed ``sock`` (after anything it sent), waiting at most PATIENCE."""
    sock.settimeout(PATIENCE)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return True


def test_clients_that_leave_a_request_half_sent_cost_no_traceback_and_no_socket(built, serve):
    service = serve("--solr-url", built.url, "--client-timeout", "2")
    host = f"127.0.0.1:{service.port}"
    head = (f"POST /records HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            "Content-Length: 1000\r\n\r\n").encode()
    # Clients that send half a body and hang up.
    for _ in range(100):
        with socket.create_connection(("127.0.0.1", service.port)) as sock:
            sock.sendall(head + b'[{"id": "9", "text": "' + b"x" * 480)
    # Clients that send half a body, or half their headers, and then nothing.
    stalled = []
    for number in range(40):
        sock = socket.create_connection(("127.0.0.1", service.port))
        sock.sendall(head + b"[" if number % 2 else head[:40])
        stalled.append(sock)
    try:
        assert service.get("/health").status_code == 200  # answered meanwhile
        for number, sock in enumerate(stalled):
            answer = _answer_of(sock)
            assert answer.startswith("HTTP/1.1 408"), (number, answer[:200])
            assert _closed(sock)  # the socket is given back, not held
    finally:
        for sock in stalled:
            sock.close()
    assert service.get("/health").json()["records"] == len(RECORDS)
    log = service.stop()
    assert "Traceback" not in log and "ClientDisconnect" not in log and len(log.splitlines()) <= 4, log[:2000]


def test_texts_the_command_line_skips_get_400_with_its_reasons(built, serve, new_core, tmp_path):
    service = serve("--solr-url", built.url)
    bad = {"nul": "Art's Deli\x00 12224 Ventura Blvd.", "lone": "Art's Deli \ud800 12224 Ventura Blvd.",
           "huge": "Ventura Boulevard " * (2 * MAX_LINE_BYTES // 18)}
    # What `neardup index` says of the same records in a JSON Lines file (each alone on its line).
    records = tmp_path / "bad.jsonl"
    records.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in bad.items()), encoding="utf-8")
    told = run_cli("index", str(records), "--solr-url", new_core().url, "--quiet").stderr
    for record_id, text in bad.items():
        answer = service.post("/records", data=json.dumps({"id": record_id, "text": text}),
                              headers={"Content-Type": "application/json"})
        error = one_line_error(answer, 400)["error"]
        reason = error.removeprefix("record 1: ")
        if record_id == "huge":
            assert f"longer than {MAX_LINE_BYTES} bytes" in reason and f"longer than {MAX_LINE_BYTES} bytes" in told
        else:
            assert f"bad.jsonl:{list(bad).index(record_id) + 1}: {reason}" in told, (reason, told)
    assert sorted(built.texts(list(bad))) == []  # none was indexed


def test_reads_and_writes_both_progress_and_no_acknowledged_write_is_lost(built, serve):
    service = serve("--solr-url", built.url)
    writing = threading.Event()
    writing.set()
    acknowledged: list[str] = []
    reads_while_writing = [0] * 8
    writes = [0] * 8
    failures: list[str] = []

    def writer(number: int) -> None:
        session, batch = requests.Session(), 0
        while writing.is_set():
            ids = [f"w{number}-{batch}-{i}" for i in range(5)]
            try:
                answer = session.post(f"{service.url}/records", timeout=PATIENCE, json=[
                    {"id": record_id, "text": f"{RECORDS[i][1]} suite {number}{batch}"}
                    for i, record_id in enumerate(ids)])
            except requests.RequestException as err:
                failures.append(f"write: {err}")
                return
            if answer.status_code != 200:
                failures.append(f"write: {answer.status_code} {answer.text[:200]}")
                return
            acknowledged.extend(ids)
            writes[number] += 1
            batch += 1

    def reader(number: int) -> None:
        session = requests.Session()
        while writing.is_set():
            path = "/records/1/duplicates" if number % 2 else "/duplicates"
            try:
                answer = session.get(service.url + path, params=None if number % 2 else {"text": RECORDS[1][1]},
                                     timeout=PATIENCE)
            except requests.RequestException as err:
                failures.append(f"read: {err}")
                return
            if answer.status_code != 200:
                failures.append(f"read: {answer.status_code} {answer.text[:200]}")
                return
            if writing.is_set():  # answered while the writers were still writing
                reads_while_writing[number] += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    threads += [threading.Thread(target=reader, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    # Ten seconds of both, and until every writer and every reader has been answered at least once.
    deadline = time.monotonic() + 10
    while (time.monotonic() < deadline or not all(writes)) and not failures and all(t.is_alive() for t in threads):
        time.sleep(0.2)
    for _ in range(int(PATIENCE / 0.2)):
        if all(reads_while_writing) or failures:
            break
        time.sleep(0.2)
    writing.clear()
    for thread in threads:
        thread.join()
    assert not failures, failures[:3]
    assert all(writes), writes
    assert all(reads_while_writing), reads_while_writing  # every reader was answered while writes went on
    assert sorted(built.texts(acknowledged)) == sorted(acknowledged)


def test_a_foreign_host_gets_400_and_the_label_form_refuses_it(built, serve, tmp_path):
    labels = tmp_path / "labels.tsv"
    service = serve("--solr-url", built.url, "--labels", str(labels), "--allow-host", "dedup.example")
    evil = {"Host": f"evil.example:{service.port}", "Origin": f"http://evil.example:{service.port}"}
    answer = service.post("/records", json={"id": "9", "text": RECORDS[0][1]}, headers=evil)
    assert "evil.example" in one_line_error(answer, 400)["error"]
    answer = service.post("/labels/form", data={"a": "1", "b": "2", "label": "same"}, headers=evil,
                          allow_redirects=False)
    assert answer.status_code == 400
    assert one_line_error(service.get("/health", headers={"Host": "evil.example"}), 400)
    assert not labels.exists() and sorted(built.texts(["9"])) == []
    # Its own names are served, the one allowed too; an origin must name one of them and its port.
    for name in ("localhost", "127.0.0.1", "dedup.example"):
        assert service.get("/health", headers={"Host": f"{name}:{service.port}"}).status_code == 200
    own = {"Host": f"localhost:{service.port}", "Origin": f"http://evil.example:{service.port}"}
    answer = service.post("/labels/form", data={"a": "1", "b": "2", "label": "same"}, headers=own,
                          allow_redirects=False)
    assert answer.status_code == 403 and not labels.exists()
    other_port = {"Origin": f"http://localhost:{service.port + 1}"}
    answer = service.post("/labels/form", data={"a": "1", "b": "2", "label": "same"}, headers=other_port,
                          allow_redirects=False)
    assert answer.status_code == 403 and not labels.exists()
    own["Origin"] = f"http://localhost:{service.port}"
    answer = service.post("/labels/form", data={"a": "1", "b": "2", "label": "same"}, headers=own,
                          allow_redirects=False)
    assert answer.status_code == 303 and labels.read_text() == "1\t2\tsame\n"


def test_several_workers_share_the_token_and_the_labels_file(built, serve, tmp_path):
    token_file, labels = tmp_path / "token.txt", tmp_path / "labels.tsv"
    token_file.write_text(TOKEN + "\n")
    service = serve("--solr-url", built.url, "--workers", "2", "--token-file", str(token_file),
                    "--labels", str(labels))
    assert service.post("/records", json={"id": "9", "text": RECORDS[0][1]}).status_code == 401
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    answer = service.post("/records", json={"id": "9", "text": RECORDS[0][1]}, headers=bearer)
    assert answer.status_code == 200 and [d["id"] for d in answer.json()["records"][0]["duplicates"]] == ["1"]
    # Labels given at once over fresh connections land with either worker; each then lists them all.
    pairs = [(str(a), str(a + 100)) for a in range(1, 25)]
    with_errors: list[int] = []

    def label(a: str, b: str) -> None:
        answer = requests.post(f"{service.url}/labels", json={"a": a, "b": b, "label": "same"}, headers=bearer,
                               timeout=PATIENCE)
        if answer.status_code != 200:
            with_errors.append(answer.status_code)

    threads = [threading.Thread(target=label, args=pair) for pair in pairs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not with_errors
    lines = labels.read_text().splitlines()
    assert sorted(lines) == sorted(f"{a}\t{b}\tsame" for a, b in pairs)  # whole lines, none joined or torn
    for _ in range(6):  # fresh connections: both workers are asked
        listed = requests.get(f"{service.url}/labels", timeout=PATIENCE).json()
        assert len(listed) == len(pairs)
    assert service.get("/health", headers={"Host": "evil.example"}).status_code == 400


def test_health_answers_while_solr_hangs_and_every_worker_thread_waits_on_it(built, serve, solr_node):
    service = serve("--solr-url", built.url)
    assert service.get("/health").status_code == 200
    answers: list[int] = []

    def read() -> None:
        answer = requests.get(f"{service.url}/records/1/duplicates", timeout=PATIENCE * 3)
        answers.append(answer.status_code)

    # More reads than the service has worker threads (40), all waiting on a Solr that does not answer.
    readers = [threading.Thread(target=read) for _ in range(48)]
    os.kill(solr_node.pid, signal.SIGSTOP)
    try:
        for reader in readers:
            reader.start()
        time.sleep(0.5)
        health = requests.get(f"{service.url}/health", timeout=PATIENCE)
        waiting = sum(reader.is_alive() for reader in readers)
    finally:
        os.kill(solr_node.pid, signal.SIGCONT)
    assert "did not answer" in one_line_error(health, 503)["error"]
    assert waiting == len(readers) and not answers  # /health answered while every read still waited
    for reader in readers:
        reader.join()
    assert answers == [200] * len(readers)


def test_the_command_lines_default_cap_is_the_services():
    from neardup_solr.service import defaults

    command_line = importlib.import_module("neardup_solr.cli.serve")  # the package's `serve` is the command
    assert command_line.DEFAULT_MAX_BODY_MIB * 2**20 == defaults.MAX_BODY
