"""Fixtures: a real Solr 9 started by the project's own launcher, once per run.

Each test that writes to Solr gets a fresh core of its own (from the
``neardup`` configset), so tests never see each other's records.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import locale
import os
import re
import resource
import selectors
import signal
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import requests

from neardup_solr.records import datasets
from neardup_solr.index import launcher, local_solr
from neardup_solr.index.solr import Solr

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


# The suite's JVMs (its Solrs, SolrCloud's, the launcher's build) run short
# jobs on a small machine, where the optimizing compiler's and G1's threads
# cost more than they save (docs/layout.md); a caller's own choice is kept.
os.environ.setdefault("JDK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")


free_port = local_solr.free_port


# Settings a caller's environment may hold that would change what a command
# does (where Solr is, as whom, how patiently): no child inherits them, so
# each test says what it sets.
CALLER_SETTINGS = ("SOLR_URL", "ZK_HOST", "SOLR_USER", "SOLR_PASSWORD", "SOLR_CA_CERT", "NEARDUP_TIMEOUT",
                   "NEARDUP_RETRIES", "NEARDUP_DATA_DIR", "NEARDUP_KEYSTORE_PASSWORD")


def without(packages: tuple[str, ...], code: str) -> subprocess.CompletedProcess:
    """``code`` run in a new Python where importing ``packages`` fails, as
    where they are not installed (the optional extras)."""
    blocker = "import sys\n" + "".join(f"sys.modules[{p!r}] = None\n" for p in packages)
    return subprocess.run([sys.executable, "-c", blocker + textwrap.dedent(code)], capture_output=True, text=True,
                          env=child_env(), cwd=ROOT, timeout=300)


def child_env(env: dict[str, str | None] | None = None) -> dict[str, str]:
    """This process's environment without CALLER_SETTINGS, this checkout
    first on the import path, plus ``env`` (None removes a variable)."""
    merged = {k: v for k, v in os.environ.items() if k not in CALLER_SETTINGS} | {"PYTHONPATH": checkout_path()} \
        | (env or {})
    return {k: v for k, v in merged.items() if v is not None}


def checkout_path() -> str:
    """PYTHONPATH with this checkout first: a child imports the package under
    test, not one installed in the interpreter (an editable install of
    another checkout, say), which it would import otherwise from anywhere
    but this folder."""
    given = [part for part in os.environ.get("PYTHONPATH", "").split(os.pathsep)
             if part and Path(part).resolve() != ROOT]
    return os.pathsep.join([str(ROOT), *given])


def run_cli(*args: str, env: dict[str, str | None] | None = None, input: str | None = None,
            cwd: Path | None = None, stdout: int | None = None,
            file_size_limit: int | None = None) -> subprocess.CompletedProcess:
    """The command line as users run it, in a child process: forked from
    a warm interpreter (tests/warm_cli.py) that has imported the package,
    which saves a second or more a command; in a new interpreter when the
    command's environment changes what the interpreter reads as it starts,
    when another thread's command holds the warm one, or when
    NEARDUP_TEST_COLD is set (to check that both ways agree). Its standard
    output is captured, or goes to the file descriptor ``stdout``; with
    ``file_size_limit`` the files it writes may not grow past that many
    bytes (RLIMIT_FSIZE, as a full disk stops writes)."""
    command, merged = [sys.executable, "-m", "neardup_solr", *args], child_env(env)
    warm = _warm_cli(merged)
    if warm is not None:
        try:
            return warm.run(command, merged, input, cwd, stdout, file_size_limit, timeout=COMMAND_TIMEOUT)
        finally:
            warm.lock.release()

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, resource.RLIM_INFINITY))

    return subprocess.run(command, stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE,
                          text=True, env=merged, input=input, timeout=COMMAND_TIMEOUT, cwd=cwd,
                          preexec_fn=None if file_size_limit is None else limit)


def start_cli(*args: str) -> Started:
    """The command line left to run (a service), in a child process of a
    session (and process group) of its own, so that stopping it ends every
    process it started: forked from the warm interpreter, or a new
    interpreter as :func:`run_cli` says."""
    command, env = [sys.executable, "-m", "neardup_solr", *args], child_env()
    warm = _warm_cli(env)
    if warm is not None:
        try:
            return warm.start(command, env)
        finally:
            warm.lock.release()
    return Started(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                    start_new_session=True))


COMMAND_TIMEOUT = 600  # seconds a command of run_cli may take


# What the interpreter reads from the environment as it starts (the
# encoding of its streams, its paths and flags), and what numba reads as it
# is imported (where its cache is), which the warm interpreter has done.
_STARTUP = ("PYTHON", "LC_", "LANG", "NUMBA")
_warm: WarmCli | None = None


def _warm_cli(env: dict[str, str]) -> WarmCli | None:
    """The warm interpreter, held for this command, if it can run it."""
    global _warm
    if os.environ.get("NEARDUP_TEST_COLD"):
        return None
    if _warm is None or _warm.broken:
        _warm = WarmCli()
    startup = {name for name in (*env, *_warm.env) if name.startswith(_STARTUP)}
    if any(env.get(name) != _warm.env.get(name) for name in startup):
        return None
    return _warm if _warm.lock.acquire(blocking=False) else None


class WarmCli:
    """tests/warm_cli.py in a child process, and commands run by it."""

    def __init__(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.env = child_env()
        self.process = subprocess.Popen([sys.executable, str(ROOT / "tests" / "warm_cli.py"), str(theirs.fileno())],
                                        pass_fds=[theirs.fileno()], env=self.env, cwd=ROOT)
        theirs.close()
        self.channel = ours
        self.lock = threading.Lock()
        self.broken = False
        ours.settimeout(300)
        if ours.recv(16) != b"ready":
            raise AssertionError(f"the warm command line did not start (exit {self.process.wait()})")
        atexit.register(self.close)

    def _fork(self, command: list[str], env: dict[str, str], cwd: Path | None, given: list[int],
              file_size_limit: int | None, left_to_run: bool) -> int:
        """The pid of ``command`` forked with the file descriptors ``given``
        (its standard output, error and, if given, input), which are closed here."""
        request = {"args": command[3:], "env": env, "cwd": str(cwd or os.getcwd()), "stdin": len(given) == 3,
                   "file_size_limit": file_size_limit, "left_to_run": left_to_run}
        try:
            socket.send_fds(self.channel, [json.dumps(request).encode()], given)
        finally:
            for fd in given:
                os.close(fd)
        self.channel.settimeout(60)
        return int(self.channel.recv(32))

    def start(self, command: list[str], env: dict[str, str]) -> Started:
        """``command`` forked from the warm interpreter and left to run, its output piped here."""
        out, err = os.pipe(), os.pipe()
        try:
            pid = self._fork(command, env, None, [out[1], err[1]], None, left_to_run=True)
        except BaseException:
            self.broken = True
            self.close()
            for fd in (out[0], err[0]):
                os.close(fd)
            raise
        return Started(Forked(pid, out[0], err[0]))

    def run(self, command: list[str], env: dict[str, str], input: str | None, cwd: Path | None,
            stdout: int | None, file_size_limit: int | None, timeout: float) -> subprocess.CompletedProcess:
        """``command`` (``python -m neardup_solr ARGS``) as subprocess.run runs it, forked from the warm interpreter."""
        deadline = time.monotonic() + timeout
        out, err = os.pipe() if stdout is None else (None, os.dup(stdout)), os.pipe()
        given = [out[1], err[1]]
        feed = None
        if input is not None:
            feed = os.pipe()
            given.append(feed[0])
        pid = None
        try:
            pid = self._fork(command, env, cwd, given, file_size_limit, left_to_run=False)
            data = input.encode(locale.getpreferredencoding(False)) if input is not None else b""
            printed, told = _communicate(out[0], err[0], feed and feed[1], data, deadline,
                                         subprocess.TimeoutExpired(command, timeout))
            self.channel.settimeout(max(1.0, deadline - time.monotonic()))
            code = int(self.channel.recv(32))
        except BaseException:
            # A timeout, or the test interrupted: the command is killed and
            # the warm interpreter, out of step now, replaced for the next.
            self.broken = True
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self.close()
            raise
        finally:
            for fd in (out[0], err[0], *(feed or ())):
                if fd is not None:
                    with contextlib.suppress(OSError):
                        os.close(fd)
        return subprocess.CompletedProcess(command, code, _text(printed) if out[0] is not None else None, _text(told))

    def close(self) -> None:
        self.channel.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _communicate(out: int | None, err: int, feed: int | None, data: bytes, deadline: float,
                 late: subprocess.TimeoutExpired) -> tuple[bytes, bytes]:
    """What subprocess's communicate does, on pipes of a process that is not
    ours (``out`` None: its standard output is not piped here); ``late`` is
    raised, with what was read, if ``deadline`` passes."""
    read = {fd: [] for fd in (out, err) if fd is not None}
    selector = selectors.DefaultSelector()
    for fd in read:
        selector.register(fd, selectors.EVENT_READ)
    sent = 0
    if feed is not None:
        if data:
            os.set_blocking(feed, False)
            selector.register(feed, selectors.EVENT_WRITE)
        else:
            os.close(feed)
    with selector:
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                late.output, late.stderr = b"".join(read.get(out, ())), b"".join(read[err])
                raise late
            for key, _ in selector.select(left):
                if key.fd == feed:
                    try:
                        sent += os.write(feed, data[sent:sent + 65536])
                    except BrokenPipeError:
                        sent = len(data)
                    if sent >= len(data):
                        selector.unregister(feed)
                        os.close(feed)
                    continue
                chunk = os.read(key.fd, 65536)
                if chunk:
                    read[key.fd].append(chunk)
                else:
                    selector.unregister(key.fd)
    return b"".join(read.get(out, ())), b"".join(read[err])


class Forked:
    """A command the warm interpreter forked and left to run: its pid and
    the read ends of its standard output and error."""

    def __init__(self, pid: int, out: int, err: int):
        self.pid, self.out, self.err = pid, out, err

    def ended(self) -> bool:
        """Whether it has ended (gone, or a zombie its parent has not reaped yet)."""
        try:
            stat = Path(f"/proc/{self.pid}/stat").read_text()
        except OSError:
            return True
        return stat[stat.rindex(")") + 2] in "ZX"

    def send_signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, sig)

    def communicate(self, timeout: float) -> tuple[bytes, bytes]:
        """Its standard output and error once it has ended, as Popen's communicate."""
        done = _communicate(self.out, self.err, None, b"", time.monotonic() + timeout,
                            subprocess.TimeoutExpired(str(self.pid), timeout))
        os.close(self.out)
        os.close(self.err)
        return done


class Started:
    """A command left to run, forked (:class:`Forked`) or a Popen of its
    own, the leader of a process group of its own (its workers in it too)."""

    def __init__(self, process: Forked | subprocess.Popen):
        self.process = process
        self.told: str | None = None  # its standard error, once stopped
        _left_running.add(self)

    @property
    def pid(self) -> int:
        return self.process.pid

    def ended(self) -> bool:
        if isinstance(self.process, Forked):
            return self.process.ended()
        return self.process.poll() is not None

    def stop(self, timeout: float = 30) -> str:
        """Its standard error, once SIGTERM has ended its process group (SIGKILL
        after ``timeout`` seconds); any process of the group still there
        then (a worker whose supervisor died) is killed."""
        if self.told is None:
            self.told = self._stopped(timeout)
            _left_running.discard(self)
        return self.told

    def _stopped(self, timeout: float) -> str:
        # The group, not the command alone: a service's workers are there too,
        # and would keep its pipes (and its port) open if it had died.
        self.signal_group(signal.SIGTERM)
        try:
            _, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.signal_group(signal.SIGKILL)
            _, err = self.process.communicate(timeout=timeout)
        self.signal_group(signal.SIGKILL)
        return _text(err)

    def signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            if not self.ended():  # forked a moment ago, before it made its group
                self.process.send_signal(sig)


# Commands left to run that no test has stopped yet: killed, with their
# process groups, when the suite ends, whatever failed on the way.
_left_running: set[Started] = set()


@atexit.register
def _end_what_was_left_running() -> None:
    for started in list(_left_running):
        started.signal_group(signal.SIGKILL)


def _text(data: bytes) -> str:
    """Output decoded as subprocess decodes it in text mode."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


# Seconds a service may take to answer its first request: far beyond what it
# takes (its workers import the web framework and the package, slowly on a
# loaded machine), only a service that never answers reaches it.
START_PATIENCE = 300


class Service:
    """`neardup serve` in a child process on a free port (started, not yet
    waited for: :meth:`answering`)."""

    def __init__(self, *args: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = start_cli("serve", "--port", str(self.port), "--log-level", "warning", *args)

    def answering(self, within: float = START_PATIENCE) -> Service:
        """This service, once it answers a request; if it ends first or does
        not answer ``within`` seconds, it is stopped, with every process it
        started, and AssertionError says what it printed."""
        deadline = time.monotonic() + within
        while not self.process.ended():
            try:
                requests.get(f"{self.url}/openapi.json", timeout=max(0.1, min(30.0, deadline - time.monotonic())))
                return self
            except (requests.ConnectionError, requests.Timeout):
                # Refused, or taken by the listening socket with no worker yet to answer.
                if time.monotonic() >= deadline:
                    raise AssertionError(f"the service did not answer within {within:g} s: {self.stop()}") from None
                time.sleep(0.2)
        raise AssertionError(f"the service ended: {self.stop()}")

    def get(self, path: str, **kwargs) -> requests.Response:
        return requests.get(self.url + path, timeout=60, **kwargs)

    def post(self, path: str, **kwargs) -> requests.Response:
        return requests.post(self.url + path, timeout=60, **kwargs)

    def delete(self, path: str, **kwargs) -> requests.Response:
        return requests.delete(self.url + path, timeout=60, **kwargs)

    def stop(self) -> str:
        return self.process.stop()


@pytest.fixture
def serve():
    """A starter of services (:class:`Service`) that answer; each is stopped
    afterwards, with every process it started, whether it answered or not."""
    started: list[Service] = []

    def start(*args: str) -> Service:
        started.append(Service(*args))
        return started[-1].answering()

    yield start
    for service in started:
        service.stop()


# Each node's Solr home, by port: cores get configsets of their own there.
_homes: dict[int, Path] = {}


@pytest.fixture(scope="session")
def solr_node(tmp_path_factory) -> local_solr.Node:
    data_dir = tmp_path_factory.mktemp("solr")
    node = local_solr.start(data_dir, free_port(), exit_with=os.getpid(), echo=lambda _: None)
    _homes[node.port] = data_dir / "home"
    yield node
    local_solr.stop(data_dir)


_cores = itertools.count()


def create_core(node: local_solr.Node) -> Solr:
    """A core with a configset of its own: index settings and the match
    model live in the configset's overlay, which cores sharing one would share."""
    name = f"t{os.getpid()}_{next(_cores)}"
    shutil.copytree(local_solr.CONFIGSET, _homes[node.port] / "configsets" / name / "conf")
    answer = requests.get(f"{node.base_url}/admin/cores", params={"action": "CREATE", "name": name, "configSet": name})
    assert answer.status_code == 200, answer.text
    return Solr(f"{node.base_url}/{name}")


def drop_core(solr: Solr) -> None:
    base = solr.url.rsplit("/", 1)[0]
    requests.get(f"{base}/admin/cores", params={"action": "UNLOAD", "core": solr.name, "deleteInstanceDir": "true"})


@pytest.fixture
def new_core(solr_node):
    """A factory of empty cores on the shared node; all are removed afterwards."""
    made: list[Solr] = []

    def make() -> Solr:
        made.append(create_core(solr_node))
        return made[-1]

    yield make
    for solr in made:
        drop_core(solr)


@pytest.fixture
def core(new_core) -> Solr:
    return new_core()


def write_records(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def write_table(path: Path, rows: list[dict]) -> Path:
    """``rows`` as a CSV table, its header the first row's keys."""
    import csv

    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.fixture(scope="session")
def restaurants_dir(tmp_path_factory) -> Path:
    """The restaurant data the demo uses: the py_entitymatching 0.4.2 copy,
    fetched from the package index and checked by SHA-256 (kept in the
    cache folder between runs), written out as `neardup datasets
    restaurants` writes it: addresses.txt, gold_pairs.tsv, fodors.csv,
    zagats.csv, gold_links.tsv."""
    out = tmp_path_factory.mktemp("restaurants")
    datasets.fetch_restaurants(out, cache=launcher.cache_dir() / "datasets")
    return out


@pytest.fixture(scope="session")
def restaurant_records(restaurants_dir) -> Path:
    """The restaurant records as `ID TEXT` lines (864, the copy's own ids)."""
    return restaurants_dir / "addresses.txt"


def chromium_path() -> str:
    path = os.environ.get("NEARDUP_CHROMIUM") or shutil.which("chromium")
    if not path and Path("/usr/bin/chromium").is_file():
        path = "/usr/bin/chromium"
    if not path:
        pytest.fail("Chromium is missing: the report test needs a system Chromium. "
                    "Install it with `apt-get install -y chromium` (Debian), or set NEARDUP_CHROMIUM to its path.")
    return path


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright for Python is missing: `pip install -e '.[test]'` (or `pip install playwright`); "
                    "it drives the system Chromium, so `playwright install` is not needed.")
    executable = chromium_path()
    with sync_playwright() as driver:
        # launch() starts Chromium with a fresh temporary profile (--user-data-dir) of its own.
        browser = driver.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


def pytest_collection_modifyitems(items) -> None:
    """Mark every test that needs the Solr the suite starts (it asks for
    ``solr_node``, itself or through a core) as ``solr``; tests that start
    a Solr of their own are marked in their module."""
    for item in items:
        if "solr_node" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.solr)


# Helpers that tests in several folders use.


def one_line_error(done) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


DEMO_COPY = "The py_entitymatching CSV copy"


def documented(mode: str) -> str:
    """The figures docs/quality.md shows for ``mode`` on the copy the demo fetches."""
    return results_table(DEMO_COPY)[mode]


def results_table(heading: str) -> dict[str, str]:
    """The results table of docs/quality.md after ``heading``: each mode's
    figures as `neardup evaluate` prints them."""
    text = (ROOT / "docs" / "quality.md").read_text(encoding="utf-8")
    rows = text[text.index(heading):].split("\n\n", 2)[1].splitlines()[2:]
    figures = {}
    for row in rows:
        mode, found, true, precision, recall, f1, _ = [cell.strip() for cell in row.strip("|").split("|")]
        name = "default" if mode == "default" else re.match(r"`--(\w+)", mode)[1]
        figures[name] = f"found={found} true={true} precision={precision} recall={recall} f1={f1}"
    return figures


# Seconds between a waiting test's looks at Solr's metrics (how far a command
# has got): a look costs Solr and the test about 13 ms of CPU, which looks
# every 20 ms took from the command being waited for.
POLL = 0.1


def metric(url: str, prefix: str) -> int:
    """A counter of the core at ``url`` and of the cores a replacement builds
    for it (``name__...``), from Solr's own metrics. (Not the mbeans
    handler's statistics: a core swapped in by CoreAdmin's SWAP has none there.)"""
    base, core = url.rsplit("/", 1)
    found = requests.get(f"{base}/admin/metrics", params={"group": "core", "prefix": prefix, "wt": "json"},
                         timeout=5).json()
    return sum(value[prefix] if isinstance(value[prefix], int) else value[prefix]["count"]
               for name, value in found["metrics"].items()
               if name == f"solr.core.{core}" or name.startswith(f"solr.core.{core}__"))


def tlog_state(url: str) -> int:
    """The core's transaction log state, from Solr's metrics."""
    base, core = url.rsplit("/", 1)
    found = requests.get(f"{base}/admin/metrics", params={"group": "core", "prefix": "TLOG.state", "wt": "json"},
                         timeout=5).json()
    return found["metrics"][f"solr.core.{core}"]["TLOG.state"]


def adds_so_far(url: str) -> int:
    return metric(url, "UPDATE.updateHandler.cumulativeAdds")
