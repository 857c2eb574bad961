"""Load: concurrent clients asking for the near duplicates of single records.

``python -m bench.load --solr-url URL --records bench/data/100000/records.txt``
runs ``--clients`` processes (8 by default) for ``--seconds`` (30), each
asking, one request after another, for the near duplicates of random
records of the file. Two modes:

- ``--mode in-process`` (the default): the ``neardup query`` path in each
  client (``OnlineSearch.find``, two Solr requests and the verification);
- ``--mode http``: the duplicate-check service over real HTTP. The run
  starts ``neardup serve`` against the core (on ``--port``, default a free
  one; ``--workers`` service processes, default 1) and stops it afterwards,
  or uses a running one (``--service-url``);
  each client, with a keep-alive HTTP session of its own, sends ``GET
  /records/{id}/duplicates``.

With ``--writers N`` (http mode) N more processes write beside them: each
posts ``WRITE_BATCH`` new records at a time (``POST /records``, texts of
the file's records with a word added, ids of their own), timing each
acknowledgement, then asks the service at once for the first one's near
duplicates: an acknowledged record its next lookup does not find is an
error. With ``--kill-solr`` (a Solr started by ``neardup solr start`` on
this machine) the run then kills Solr with SIGKILL, starts it again on its
data and counts the acknowledged records it holds: one lost is an error.
The written records are deleted at the end.

With ``--text-share`` that share of the requests asks by text instead (``GET
/duplicates?text=`` with a record's text; in process, ``find`` without
leaving the record out). Processes, not threads, so the clients' own Python
work does not queue on one interpreter lock and the latencies are those a
client sees. Every failure counts as an error (an exception, an answer other
than 200, an answer for another query); the run exits 1 if there was any.
The clock starts once every client is ready (its first answer came) and has
warmed up, so a slow start on a busy machine shortens no client's window;
a client that the machine starves still sends ``MIN_REQUESTS`` timed
requests, past the window if need be, and the rate is over the time the
clock actually ran.
Given the records' known pairs (``--truth``, by default ``true_pairs.tsv``
beside the records), it also counts the answers that hold every known
duplicate of their record. It adds a section to ``bench/out/RESULTS.md``
(``--out``) as ``bench.run`` does. Index the records first (``neardup index
FILE --solr-url URL``, or ``python -m bench.run`` which leaves its index).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

import numpy as np
import requests

from neardup_solr.index.state import MODEL_PROPERTY
from neardup_solr.errors import NeardupError
from neardup_solr.results.evaluate import read_gold
from neardup_solr.records.readers import RecordReader
from neardup_solr.modes.text_search import OnlineSearch
from neardup_solr.index.local_solr import data_dir_on, free_port, is_launcher, port_in_use, running_node
from neardup_solr.index.local_solr import start as start_solr
from neardup_solr.index.solr import Solr

from .cpu import PROC, cpu_seconds
from .results import RESULTS, add_section, machine

HERE = Path(__file__).resolve().parent
MODES = ("in-process", "http")
# What a client asks: by a record (the record itself left out of the answer), or by its text.
KINDS = ("record", "text")
WRITE = "write"
# Records a writer posts at a time.
WRITE_BATCH = 5
LABELS = {"http": {"record": "GET /records/{id}/duplicates", "text": "GET /duplicates?text={its text}",
                   WRITE: f"POST /records ({WRITE_BATCH} new records)"},
          "in-process": {"record": "find(text, exclude=id)", "text": "find(text)"}}
# Seconds a client waits for one answer: far above any latency measured, so
# only a service or Solr that hangs runs into it (and that is an error).
TIMEOUT = 30
# Seconds the started service gets to answer /health: it imports the web
# framework and asks Solr, on a machine the run may be sharing.
SERVICE_START = 120
FIRST_ERRORS = 5  # error messages each client keeps; all are counted
# Timed requests each client sends however slow the machine: every client's
# latencies are a sample of its own, not one lucky request.
MIN_REQUESTS = 2


class Failed(Exception):
    """An answer that counts as an error."""


@dataclass(frozen=True)
class Plan:
    """What every client is given: whom to ask, about which records, when."""

    mode: str
    target: str  # the core's URL (in process) or the service's
    records: list[tuple[str, str]]
    known: dict[str, frozenset[str]]  # a record's id -> the ids of its known duplicates
    text_share: float
    warm_up: float  # seconds of untimed requests once every client is ready
    seconds: float
    writers: int = 0


Ask = Callable[[str, str, str], list[str]]  # (kind, id, text) -> the ids found


def in_process(solr_url: str) -> Ask:
    search = OnlineSearch(Solr(solr_url, timeout=TIMEOUT, retries=0))

    def ask(kind: str, record_id: str, text: str) -> list[str]:
        return [m.id for m in search.find(text, exclude=record_id if kind == "record" else None)]
    return ask


def over_http(service_url: str) -> Ask:
    session = requests.Session()
    # Proxies and CA bundles from the environment, read once instead of on every request.
    session.trust_env = False

    def ask(kind: str, record_id: str, text: str) -> list[str]:
        if kind == "record":
            answer = session.get(f"{service_url}/records/{quote(record_id, safe='')}/duplicates", timeout=TIMEOUT)
        else:
            answer = session.get(f"{service_url}/duplicates", params={"text": text}, timeout=TIMEOUT)
        if answer.status_code != 200:
            raise Failed(f"HTTP {answer.status_code}: {answer.text}")
        body = answer.json()
        if body["query"].get("id" if kind == "record" else "text") != (record_id if kind == "record" else text):
            raise Failed(f"an answer for another query: {body['query']}")
        return [m["id"] for m in body["matches"]]
    return ask


ASKERS: dict[str, Callable[[str], Ask]] = {"in-process": in_process, "http": over_http}


def client(plan: Plan, seed: int, ready) -> dict:
    """One client's latencies (ms) by kind, its errors, and how many of its
    answers for records with known duplicates held all of them. ``ready``
    is the barrier every client and the driver meet at once each client
    has had one answer; the warm-up, then the clock, start there."""
    pick = random.Random(seed)
    took: dict[str, list[float]] = {kind: [] for kind in KINDS}
    done = {"took": took, "errors": 0, "first_errors": [], "checked": 0, "complete": 0}
    asking: list[Ask] = []

    def first() -> None:
        asking.append(ASKERS[plan.mode](plan.target))
        asking[0]("record", *plan.records[0])

    window = meet(plan, ready, first, done)
    if isinstance(window, dict):
        return window
    (start, end), ask = window, asking[0]
    timed_requests = 0
    while (now := time.time()) < end or (timed_requests < MIN_REQUESTS and not done["errors"]):
        timed = now >= start
        kind = "text" if pick.random() < plan.text_share else "record"
        record_id, text = pick.choice(plan.records)
        started = time.perf_counter()
        try:
            found = ask(kind, record_id, text)
        except Exception as error:  # every failure is the measurement
            if timed:
                done["errors"] += 1
                if len(done["first_errors"]) < FIRST_ERRORS:
                    done["first_errors"].append(f"{type(error).__name__}: {error}"[:200])
            continue
        if timed:
            timed_requests += 1
            took[kind].append((time.perf_counter() - started) * 1000)
            if wanted := plan.known.get(record_id):
                done["checked"] += 1
                done["complete"] += wanted <= set(found)
    return done


def meet(plan: Plan, ready, first: Callable[[], object], done: dict) -> tuple[float, float] | dict:
    """A client's start: its ``first`` request (connections made and the
    first answer come before the clock), then the others met at ``ready``;
    the timed window (start, end), or ``done`` with the error that stopped
    it (a client that cannot even start is an error too)."""
    try:
        first()
    except Exception as error:
        ready.abort()
        return done | {"errors": 1, "first_errors": [f"{type(error).__name__}: {error}"[:200]]}
    try:
        ready.wait(SERVICE_START)
    except threading.BrokenBarrierError:
        return done | {"errors": 1, "first_errors": ["another client could not start"]}
    start = time.time() + plan.warm_up
    return start, start + plan.seconds


def writer(plan: Plan, seed: int, ready) -> dict:
    """One writer's acknowledgement latencies (ms), its errors (an
    acknowledged record its next lookup did not find among them), and the
    ids it had acknowledged; it meets the clients at ``ready``."""
    pick = random.Random(seed)
    took: list[float] = []
    done = {"took": {WRITE: took}, "errors": 0, "first_errors": [], "written": [], "looked_up": 0, "found_next": 0}
    session = requests.Session()
    session.trust_env = False
    batches = iter(range(1 << 62))

    def post() -> list[str]:
        number = next(batches)
        records = [{"id": f"load-w{seed}-{number}-{i}", "text": f"{pick.choice(plan.records)[1]} w{seed}x{number}"}
                   for i in range(WRITE_BATCH)]
        answer = session.post(f"{plan.target}/records", json=records, timeout=TIMEOUT)
        if answer.status_code != 200 or answer.json().get("added") != len(records):
            raise Failed(f"HTTP {answer.status_code}: {answer.text[:200]}")
        return [r["id"] for r in records]

    def failed(error: Exception) -> None:
        done["errors"] += 1
        if len(done["first_errors"]) < FIRST_ERRORS:
            done["first_errors"].append(f"{type(error).__name__}: {error}"[:200])

    window = meet(plan, ready, lambda: done["written"].extend(post()), done)
    if isinstance(window, dict):
        return window
    start, end = window
    while (now := time.time()) < end or (len(took) < MIN_REQUESTS and not done["errors"]):
        started = time.perf_counter()
        try:
            ids = post()
        except Exception as error:  # a write that may or may not have been kept: not counted as acknowledged
            if now >= start:
                failed(error)
            continue
        if now >= start:
            took.append((time.perf_counter() - started) * 1000)
        done["written"] += ids
        lookup = session.get(f"{plan.target}/records/{quote(ids[0], safe='')}/duplicates", timeout=TIMEOUT)
        done["looked_up"] += 1
        if lookup.status_code == 200:
            done["found_next"] += 1
        else:
            failed(Failed(f"acknowledged record {ids[0]} not found by the next lookup: HTTP {lookup.status_code}"))
    return done


def known_duplicates(truth: Path | None, ids: set[str]) -> dict[str, frozenset[str]]:
    """For each of ``ids`` in a known pair of ``truth``, the ids it pairs with."""
    found: dict[str, set[str]] = {}
    for pair in read_gold(truth) if truth else ():
        for one in pair & ids:
            found.setdefault(one, set()).update(pair - {one})
    return {record_id: frozenset(others) for record_id, others in found.items()}


def spread(took: list[float]) -> dict[str, float]:
    """How many requests, and their latency percentiles (ms)."""
    if not took:
        return {"requests": 0}
    ms = np.array(took)
    return {"requests": int(ms.size), **{f"p{q}": float(np.percentile(ms, q)) for q in (50, 95, 99)},
            "max": float(ms.max())}


def drive(plan: Plan, clients: int, seed: int, service_pid: int | None) -> dict:
    """Run the clients; their figures together, and the service's CPU share
    of one core (its worker processes' included) while the clock ran."""
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, context.Pool(clients + plan.writers) as pool:
        ready = manager.Barrier(clients + plan.writers + 1)
        writing = pool.starmap_async(writer, [(plan, seed + clients + i, ready) for i in range(plan.writers)])
        waiting = pool.starmap_async(client, [(plan, seed + i, ready) for i in range(clients)])
        try:
            ready.wait(SERVICE_START)
            time.sleep(plan.warm_up)
        except threading.BrokenBarrierError:
            pass  # a client could not start: its error is in the results
        cpu_start, started = None if service_pid is None else service_cpu(service_pid), time.time()
        results = waiting.get()
        wrote = writing.get()
        cpu_end, ended = None if service_pid is None else service_cpu(service_pid), time.time()
    took = {kind: [t for r in results for t in r["took"][kind]] for kind in KINDS}
    requests_done = sum(map(len, took.values()))
    writes = [t for w in wrote for t in w["took"][WRITE]]
    figures = {
        "requests": requests_done, "requests_per_client": [sum(map(len, r["took"].values())) for r in results],
        "requests_per_second": requests_done / max(ended - started, plan.seconds),
        "errors": sum(r["errors"] for r in results + wrote),
        "first_errors": [e for r in results + wrote for e in r["first_errors"]][:FIRST_ERRORS],
        "latency_ms": {"all": spread([t for kind in KINDS for t in took[kind]]),
                       **{kind: spread(took[kind]) for kind in KINDS if took[kind]},
                       **({WRITE: spread(writes)} if writes else {})},
        "known": {"checked": sum(r["checked"] for r in results), "complete": sum(r["complete"] for r in results)},
        "written": {"writers": plan.writers, "acknowledged": [i for w in wrote for i in w["written"]],
                    "looked_up": sum(w["looked_up"] for w in wrote), "found_next": sum(w["found_next"] for w in wrote)},
        "service_cpu": None,
    }
    if cpu_start is not None and cpu_end is not None:
        figures["service_cpu"] = (cpu_end - cpu_start) / (ended - started)
    return figures


def service_cpu(pid: int) -> float | None:
    """The CPU seconds of the service ``pid`` and of its worker processes so far."""
    own = cpu_seconds(pid)
    try:
        children = (PROC / str(pid) / "task" / str(pid) / "children").read_text().split()
    except OSError:
        children = []
    return None if own is None else own + sum(cpu_seconds(int(child)) or 0.0 for child in children)


@contextmanager
def service(solr_url: str, port: int | None, workers: int = 1) -> Iterator[tuple[str, int]]:
    """``neardup serve`` against ``solr_url`` in a child process: its URL and
    pid once ``/health`` answers 200; stopped afterwards."""
    url = f"http://127.0.0.1:{port or free_port()}"
    with tempfile.TemporaryFile("w+") as log:  # a file, not a pipe: a pipe nobody reads can fill and stall it
        process = subprocess.Popen([sys.executable, "-m", "neardup_solr", "serve", "--port", url.rsplit(":", 1)[1],
                                    "--solr-url", solr_url, "--log-level", "warning", "--workers", str(workers)],
                                   stdout=subprocess.DEVNULL, stderr=log)
        try:
            wait_for(url, process, log)
            yield url, process.pid
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_for(url: str, process: subprocess.Popen, log) -> None:
    """Until the service at ``url`` answers /health with 200 (a Solr slow to
    answer, on a busy machine, is asked again); ends the run if it cannot."""
    deadline = time.monotonic() + SERVICE_START
    last = ""
    while time.monotonic() < deadline and process.poll() is None:
        try:
            health = requests.get(f"{url}/health", timeout=TIMEOUT)
            if health.status_code == 200:
                return
            last = health.text
        except requests.ConnectionError:
            pass
        time.sleep(0.2)
    log.seek(0)
    raise SystemExit(f"the service did not become healthy on {url}: {last or log.read().strip()[-500:]}")


def healthy(url: str) -> dict:
    """What the service at ``url`` says on /health; ends the run unless it answers 200."""
    health = requests.get(f"{url}/health", timeout=TIMEOUT)
    if health.status_code != 200:
        raise SystemExit(f"the service at {url} is not healthy: {health.text}")
    return health.json()


@contextmanager
def target(args: argparse.Namespace) -> Iterator[tuple[str, str, int | None]]:
    """Whom the clients ask (the core or the service), the core's URL, and
    the pid of the service when this run started it."""
    if args.mode == "in-process":
        yield args.solr_url, args.solr_url, None
    elif args.service_url:
        url = args.service_url.rstrip("/")
        yield url, args.solr_url or healthy(url)["url"], None
    else:
        with service(args.solr_url, args.port, args.workers) as (url, pid):
            yield url, args.solr_url, pid


def run(args: argparse.Namespace, command: str) -> dict:
    records = [(r.id, r.text) for _, r in zip(range(args.sample), RecordReader(args.records))]
    truth = args.truth or (args.records.parent / "true_pairs.tsv")
    known = known_duplicates(truth if truth.is_file() else None, {record_id for record_id, _ in records})
    with target(args) as (asked, solr_url, service_pid):
        about = {"command": command, "mode": args.mode, "clients": args.clients, "seconds": args.seconds,
                 "workers": args.workers if args.mode == "http" and not args.service_url else None,
                 "warm_up": args.warm_up, "text_share": args.text_share, "sampled": len(records),
                 "started_service": service_pid is not None, "truth": truth.name if known else None,
                 "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "revision": revision(),
                 **index_facts(Solr(solr_url, timeout=TIMEOUT)), "load_before": os.getloadavg()}
        # Time for every client to start and warm up (connections, Solr's caches) before the clock runs.
        plan = Plan(args.mode, asked, records, known, args.text_share, args.warm_up, args.seconds, args.writers)
        figures = drive(plan, args.clients, args.seed, service_pid)
        load_after = os.getloadavg()
    written = figures["written"]
    if written["acknowledged"]:
        solr = Solr(solr_url, timeout=TIMEOUT)
        if args.kill_solr:
            written["after_kill"] = kill_and_count(solr, written["acknowledged"])
            figures["errors"] += len(written["acknowledged"]) - written["after_kill"]
        solr.delete_ids(written["acknowledged"])
        solr.commit()
    written["acknowledged"] = len(written["acknowledged"])
    return about | figures | {"load_after": load_after}


# Seconds after Solr is up without a replay of its log before none is taken to be coming.
QUIET_AFTER_START = 5.0


def kill_and_count(solr: Solr, ids: list[str]) -> int:
    """Kill the Solr serving ``solr`` (one ``neardup solr start`` started
    here) with SIGKILL, start it again on its data, and count how many of
    ``ids`` it holds once it has replayed its update log."""
    port = int(solr.url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    data_dir = data_dir_on(port)
    node = running_node(data_dir) if data_dir else None
    if node is None:
        raise SystemExit(f"--kill-solr: no Solr started by `neardup solr start` serves port {port} here")
    os.kill(node.pid, signal.SIGKILL)
    deadline = time.monotonic() + SERVICE_START
    while (is_launcher(node.pid) or port_in_use(port)) and time.monotonic() < deadline:
        time.sleep(0.2)  # the killed node's port is free again a moment after it died
    start_solr(data_dir, port, echo=lambda line: print(line, file=sys.stderr))
    # The core answers a moment before its log's replay starts (a standalone
    # Solr starts it after the core is up): counted then, every record it will
    # bring back would look lost. So wait until the replay was seen to run and
    # end, or until none has run for QUIET_AFTER_START seconds.
    seen, started = False, time.monotonic()
    while time.monotonic() - started < QUIET_AFTER_START:
        if solr.replaying():
            seen = True
            solr.wait_until_replayed()
            break
        time.sleep(0.05)
    print(f"--kill-solr: the log's replay {'ran' if seen else 'was not seen to run'}", file=sys.stderr)
    return sum(len(solr.texts(ids[at:at + 1000])) for at in range(0, len(ids), 1000))


def index_facts(solr: Solr) -> dict:
    """How many records the core holds, whether a match model is kept with
    it, and the machine; ``None`` each when Solr cannot tell (the clients'
    errors will say why)."""
    try:
        return {"records_indexed": solr.count(), "model_kept": bool(solr.user_properties().get(MODEL_PROPERTY)),
                "machine": machine(solr, packages=("numpy", "requests", "fastapi", "uvicorn", "pysolr",
                                                   "neardup-solr"))}
    except NeardupError:
        return {"records_indexed": None, "model_kept": None, "machine": None}


def revision() -> str | None:
    """The checkout's commit, and whether its code (anything but the results
    files, which runs write) had changes; None outside a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE)
        changed = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", ".", ":(exclude)*.md"], cwd=HERE.parent)
    except OSError:  # no git on this machine
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + (" with uncommitted changes" if changed.returncode else "")


def summary(result: dict) -> str:
    """The run in one line, as it is printed."""
    lat = result["latency_ms"]["all"]
    line = (f"{result['clients']} clients, {result['seconds']:g} s, {result['mode']}: {result['requests']:,} "
            f"requests ({result['requests_per_second']:.0f}/s), {result['errors']} errors")
    if lat["requests"]:
        line += f", p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms, p99 {lat['p99']:.1f} ms, max {lat['max']:.1f} ms"
    known = result["known"]
    if known["checked"]:
        line += f"; {known['complete']:,} of {known['checked']:,} answers held every known duplicate"
    if written := writes_line(result):
        line += "; " + written
    return line + f"; load average {' '.join(f'{v:.2f}' for v in result['load_after'])} at the end"


def writes_line(result: dict) -> str:
    """What the writers did, in a sentence ("" when there were none)."""
    written, took = result.get("written") or {}, result["latency_ms"].get(WRITE)
    if not written.get("writers") or not took:
        return ""
    line = (f"{written['writers']} writers: {took['requests']:,} writes acknowledged, p50 {took['p50']:.1f} ms, "
            f"p95 {took['p95']:.1f} ms; {written['found_next']:,} of {written['looked_up']:,} found by the next lookup")
    if "after_kill" in written:
        line += f"; {written['after_kill']:,} of {written['acknowledged']:,} acknowledged records kept after Solr's SIGKILL"
    return line


def markdown(result: dict) -> str:
    n, m = result["records_indexed"], result["machine"]
    title = "Service load over HTTP" if result["mode"] == "http" else "Online query load in process"
    labels = LABELS[result["mode"]]
    # The kinds of request, and all of them together when there are two.
    rows = [(labels.get(kind, "all lookups"), figures) for kind, figures in result["latency_ms"].items()
            if kind != "all" or sum(k in KINDS for k in result["latency_ms"]) > 1]
    known = result["known"]
    lines = [
        f"## {title}, n = {n:,} ({result['date']})",
        "",
        f"`{result['command']}`: {what_ran(result)}",
        "",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in m.items()) + ". Load average (1, 5, 15 min): "
        f"{' / '.join(f'{v:.2f}' for v in result['load_before'])} before the clients started (the machine's other "
        f"work), {' / '.join(f'{v:.2f}' for v in result['load_after'])} when they ended. Every figure below is one "
        "measurement under that load.",
        "",
        "| requests | count | per second | p50 ms | p95 ms | p99 ms | max ms |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *(f"| {name} | {f['requests']:,} | {f['requests'] / result['seconds']:.0f} | "
          + " | ".join(f"{f[k]:.1f}" for k in ("p50", "p95", "p99", "max")) + " |" for name, f in rows),
        "",
        f"Errors: {result['errors']:,} (every exception, answer other than 200 and answer for another query counts)."
        + (f" Answers holding every known duplicate of their record (`{result['truth']}`): {known['complete']:,} of "
           f"{known['checked']:,}." if known["checked"] else "")
        + (f" Writes: {writes_line(result)}." if writes_line(result) else ""),
        "",
        f"neardup-solr at commit {result['revision']}." if result["revision"] else "",
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def what_ran(result: dict) -> str:
    """What the clients did, against what, in a few sentences."""
    labels, share = LABELS[result["mode"]], result["text_share"]
    index = (f"a Solr core of {result['records_indexed']:,} records ({'a' if result['model_kept'] else 'no'} match "
             "model kept with the index)")
    if result["mode"] == "http":
        cpu = result["service_cpu"]
        workers = result.get("workers") or 1
        processes = "one process" if workers == 1 else f"`--workers {workers}`"
        server = (f"`neardup serve`, {processes}, started by the run" + ("" if cpu is None else
                  f" (its CPU time while the clock ran: {cpu:.0%} of one core)") if result["started_service"]
                  else "a running `neardup serve`")
        asked = f"over a keep-alive HTTP session of its own to {server} serving {index}: `{labels['record']}`"
    else:
        asked = (f"in its own process, through `OnlineSearch.find` (the `neardup query` path) on {index}: "
                 f"`{labels['record']}`")
    if share:
        asked += f", or for {share:.0%} of the requests `{labels['text']}`"
    one = result["clients"] == 1
    clients = "1 client process" if one else f"{result['clients']} client processes"
    return (f"{clients} for {result['seconds']:g} s, {'' if one else 'each '}sending one request after another "
            f"{asked}, for random records among the first {result['sampled']:,} of the file. A latency is a "
            "request's wall time in its client, from sending it to the decoded answer; each client sent untimed "
            f"requests for the first {result['warm_up']:g} s.")


def command_of(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    """The command that makes this run again, as the results file shows it:
    where Solr and the service live left as placeholders."""
    shown = ["python -m bench.load", "--mode", args.mode]
    if args.mode == "in-process" or not args.service_url:
        shown += ["--solr-url", "URL"]
    if args.service_url:
        shown += ["--service-url", "URL"]
    shown += ["--records", shown_path(args.records)]
    if args.kill_solr:
        shown += ["--kill-solr"]
    for name in ("workers", "writers", "clients", "seconds", "warm_up", "text_share", "sample", "seed"):
        value = getattr(args, name)
        if value != parser.get_default(name):
            shown += [f"--{name.replace('_', '-')}", f"{value:g}" if isinstance(value, float) else str(value)]
    return " ".join(shown)


def shown_path(path: Path) -> str:
    """``path`` as the results file shows it: within the checkout, relative to it; else ``FILE``."""
    try:
        return str(path.resolve().relative_to(HERE.parent))
    except ValueError:
        return "FILE"


def options() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.split("\n\n")[0],
                                     epilog="example: python -m bench.load --mode http --solr-url "
                                     "http://127.0.0.1:8983/solr/neardup --records bench/data/1000000/records.txt")
    parser.add_argument("--mode", choices=MODES, default="in-process",
                        help="ask OnlineSearch in each client, or the service over HTTP (default in-process)")
    parser.add_argument("--solr-url", help="the indexed core or collection (with --mode http, the one the started "
                        "service serves)")
    parser.add_argument("--service-url", help="with --mode http: a running service to ask, instead of starting one")
    parser.add_argument("--port", type=int, help="with --mode http: the started service's port (default: a free one)")
    parser.add_argument("--workers", type=int, default=1, help="with --mode http: the started service's processes "
                        "(`neardup serve --workers`, default 1)")
    parser.add_argument("--writers", type=int, default=0, help="with --mode http: processes posting new records "
                        f"({WRITE_BATCH} at a time) beside the clients (default 0)")
    parser.add_argument("--kill-solr", action="store_true", help="with --writers: kill Solr (SIGKILL) after the "
                        "run, start it again and count the acknowledged records it kept")
    parser.add_argument("--records", type=Path, help="the indexed records, asked for at random")
    parser.add_argument("--truth", type=Path, help="their known pairs [true_pairs.tsv beside the records, if there]")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warm-up", type=float, default=5.0, help="seconds of untimed requests first")
    parser.add_argument("--text-share", type=float, default=0.0, help="share of the requests that ask by text")
    parser.add_argument("--sample", type=int, default=100_000, help="records read from the file to pick from")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS, help="results file a section is added to")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("--render", type=Path, metavar="JSON", help="only add the section of an earlier --json")
    return parser


def main() -> None:
    parser = options()
    args = parser.parse_args()
    if args.render:
        add_section(args.out, markdown(json.loads(args.render.read_text())))
        return
    if not args.records:
        parser.error("--records is needed")
    if args.writers and args.mode != "http":
        parser.error("--writers needs --mode http")
    if args.kill_solr and not (args.writers and args.solr_url):
        parser.error("--kill-solr needs --writers and --solr-url")
    if not args.solr_url and not (args.mode == "http" and args.service_url):
        parser.error("--solr-url is needed (or, with --mode http, --service-url)")
    result = run(args, command_of(args, parser))
    print(summary(result))
    for error in result["first_errors"]:
        print(f"error: {error}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    if result["requests"] and result["records_indexed"] is not None:
        add_section(args.out, markdown(result))
        print(f"wrote {args.out}", file=sys.stderr)
    sys.exit(1 if result["errors"] or not result["requests"] else 0)


if __name__ == "__main__":
    main()
