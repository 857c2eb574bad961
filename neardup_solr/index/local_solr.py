"""The local Solr: a real Solr 9 in a background JVM, on Solr's own jars,
started by the launcher :mod:`~neardup_solr.index.launcher` builds.

The launcher's first start makes a class archive beside it
(:func:`class_archive`) that later JVMs start from. Each data folder holds
one node: its solr home (the ``neardup`` configset, copied from the
package's ``solr_config/`` at every start, and the ``neardup`` core), its
logs, and ``solr.json`` with the running node's pid and port.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import requests
import urllib3

from ..errors import NeardupError
from ..files import lock_exclusive
from .launcher import build_launcher, find_java, resource
from .solr import log_replaying

CORE = "neardup"
DEFAULT_PORT = 8983  # Solr's own default
# Seconds a starting JVM has to answer. The first start of a data folder
# creates its core; on a loaded machine that is far longer than the usual
# few seconds.
START_WAIT = 180.0
# Seconds a stopping launcher has to shut Solr down cleanly (commit and
# close the index) before it is killed.
STOP_WAIT = 60.0
# How often a start looks whether the JVM answers (each look is an HTTP
# request to it), and a stop whether the process is gone (a look at /proc).
START_POLL = 0.25
STOP_POLL = 0.1
LAUNCHER_CLASS = "neardup.SolrLauncher"
# The configset the package carries for the local Solr.
CONFIGSET = Path(__file__).resolve().parent.parent / "solr_config" / "conf"

SOLR_XML = """<?xml version="1.0" encoding="UTF-8"?>
<solr>
  <!-- A long record queries one clause per shingle. -->
  <int name="maxBooleanClauses">${solr.max.booleanClauses:1048576}</int>
</solr>
"""


def default_data_dir() -> Path:
    if "NEARDUP_DATA_DIR" in os.environ:
        return Path(os.environ["NEARDUP_DATA_DIR"])
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "neardup-solr"


def local_url(port: int, core: str = CORE, scheme: str = "http") -> str:
    return f"{scheme}://127.0.0.1:{port}/solr/{core}"


def prepare_home(data_dir: Path) -> Path:
    """Solr home with the ``neardup`` configset, fresh from ``solr_config/``
    but for its overlay (the index settings and match model), and
    the ``neardup`` core using it, made unless a folder holds it already
    (more cores can use it too, via CoreAdmin)."""
    home = data_dir / "home"
    conf = home / "configsets" / CORE / "conf"
    # The overlay holds what the index was built with (index settings, the
    # match model): a restart must not forget it, or queries would make
    # band keys of another banding than the indexed ones.
    overlay = conf / "configoverlay.json"
    kept = overlay.read_bytes() if overlay.is_file() else None
    shutil.rmtree(conf, ignore_errors=True)
    shutil.copytree(resource(CONFIGSET), conf)
    if kept is not None:
        overlay.write_bytes(kept)
    (home / "solr.xml").write_text(SOLR_XML, encoding="utf-8")
    if not any(core_name(found) == CORE for found in home.glob("*/core.properties")):
        (home / CORE).mkdir(exist_ok=True)
        (home / CORE / "core.properties").write_text(f"name={CORE}\nconfigSet={CORE}\n", encoding="utf-8")
    return home


def core_name(properties: Path) -> str | None:
    """The core a ``core.properties`` file names. After ``neardup index``
    has replaced the index, the ``neardup`` core lives in the folder of the
    core it was built in (CoreAdmin's SWAP swaps names, not folders)."""
    try:
        lines = properties.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return next((line.partition("=")[2].strip() for line in lines if line.partition("=")[0].strip() == "name"), None)


@dataclass(frozen=True)
class Node:
    pid: int
    port: int
    scheme: str = "http"

    @property
    def url(self) -> str:
        return local_url(self.port, scheme=self.scheme)

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/solr"


def _state_file(data_dir: Path) -> Path:
    return data_dir / "solr.json"


def running_node(data_dir: Path) -> Node | None:
    """The node this data folder started, if its process is still alive."""
    try:
        state = json.loads(_state_file(data_dir).read_text())
        node = Node(int(state["pid"]), int(state["port"]), state.get("scheme", "http"))
    except (OSError, ValueError, KeyError):
        return None
    return node if is_launcher(node.pid) else None


def is_launcher(pid: int) -> bool:
    try:
        if hasattr(os, "WNOHANG"):  # POSIX only
            os.waitpid(pid, os.WNOHANG)  # reap it if it is our own exited child
    except ChildProcessError:
        pass
    if Path("/proc/self").exists():
        try:
            return LAUNCHER_CLASS.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def _probe(url: str, **params: str) -> requests.Response:
    """A GET of our own node on loopback: no credentials, certificates not
    checked (its warning silenced), a short timeout."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
        return requests.get(url, params={"wt": "json", **params}, timeout=2, verify=False)


def answers(url: str, probe: str = "admin/ping") -> bool:
    """Whether the core at ``url`` is up: it answers a ping (or ``probe``), or
    refuses it for want of credentials. Only a liveness probe of our own node
    on loopback, so it sends no credentials and does not check certificates."""
    try:
        answer = _probe(f"{url}/{probe}")
    except requests.RequestException:
        return False
    return answer.status_code in (200, 401, 403)  # up, or up and asking for credentials


def data_dir_on(port: int) -> Path | None:
    """The data folder of the local Solr that answers on ``port`` (a node
    ``start`` launched: Solr tells its JVM's arguments, which name the logs
    folder inside it), or ``None`` when none does."""
    try:
        answer = _probe(f"http://127.0.0.1:{port}/solr/admin/info/system")
        arguments = answer.json()["jvm"]["jmx"]["commandLineArgs"] if answer.status_code == 200 else []
    except (requests.RequestException, ValueError, KeyError, TypeError):
        return None
    logs = next((a.partition("=")[2] for a in arguments if a.startswith("-Dsolr.log.dir=")), None)
    return Path(logs).parent if logs else None


def replaying(url: str) -> bool:
    """Whether the core at ``url`` is still replaying its transaction log, as
    it does for a while after answering its first ping when it was stopped
    uncleanly (``Solr.replaying`` for any Solr). No credentials, as
    :func:`answers`; a node that asks for them is taken as done."""
    base, core = url.rsplit("/", 1)
    try:
        answer = _probe(f"{base}/admin/metrics", group="core", prefix="TLOG.state")
        return answer.status_code == 200 and log_replaying(answer.json(), core)
    except (requests.RequestException, ValueError):
        return False


# Ports chosen for a server start here: below the system's ephemeral ports,
# 1,000 more kept below them for a local cloud's ZooKeeper (port + 1000).
LOWEST_FREE = 10_000
EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")


def free_port() -> int:
    """A port on 127.0.0.1 that nothing uses now, below the system's range
    of ephemeral ports: the system gives those to outgoing connections (a
    Solr node's to ZooKeeper, say), which could take a port from there
    between its choice and the server's bind. The system's choice where no
    port below that range is free."""
    try:
        ephemeral = int(EPHEMERAL.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = 32768
    chooser = random.SystemRandom()
    for _ in range(100):
        port = chooser.randrange(LOWEST_FREE, max(ephemeral - 1000, LOWEST_FREE + 1))
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def start(
    data_dir: Path,
    port: int = DEFAULT_PORT,
    *,
    heap: str = "2g",
    keystore: Path | None = None,
    exit_with: int | None = None,
    wait: float = START_WAIT,
    echo: Callable[[str], None] = print,
) -> Node:
    """Start a node on 127.0.0.1:``port`` and wait until its core answers a ping
    and has replayed what its transaction log held (after an unclean stop).

    With ``keystore`` (PKCS12; its password in NEARDUP_KEYSTORE_PASSWORD)
    the node serves HTTPS only. Starting again is harmless: a node already
    serving this data folder, or any neardup core already answering on the
    port, is reported and reused.
    """
    scheme = "https" if keystore else "http"
    data_dir = data_dir.resolve()
    node = running_node(data_dir)
    if node is not None:
        if node.port != port:
            raise NeardupError(
                f"the Solr of {data_dir} is already running on port {node.port}",
                hint="use that port, or `neardup solr stop` first",
            )
        if answers(node.url):
            echo(f"Solr is already running at {node.url} (pid {node.pid})")
            return node
    elif port_in_use(port):
        if answers(local_url(port, scheme=scheme)):
            echo(f"a neardup Solr already answers at {local_url(port, scheme=scheme)}")
            return Node(pid=0, port=port, scheme=scheme)
        raise NeardupError(f"port {port} on 127.0.0.1 is already in use", hint="choose another port", remedy="port")
    home = prepare_home(data_dir)
    args = ["--home", str(home), "--port", str(port)]
    if keystore is not None:
        args += ["--keystore", str(Path(keystore).resolve())]
    process = launch(args, data_dir, "launcher.log", heap=heap, exit_with=exit_with, echo=echo)
    node = Node(process.pid, port, scheme)
    _state_file(data_dir).write_text(json.dumps({"pid": node.pid, "port": port, "scheme": scheme}))
    try:
        wait_until(lambda: answers(node.url) and not replaying(node.url), process, "Solr",
                   data_dir / "logs" / "launcher.log", wait)
    except NeardupError:
        stop(data_dir)
        raise
    echo(f"Solr is running at {node.url} (pid {node.pid}, data in {data_dir})")
    return node


def wait_until(ready: Callable[[], bool], process: subprocess.Popen, what: str, console: Path, wait: float) -> None:
    """Wait for ``ready()``; a one-line error if the process exits first or time runs out."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise NeardupError(f"{what} exited while starting: {last_lines(console, 1)}", hint=f"see {console}")
        if ready():
            return
        time.sleep(START_POLL)
    raise NeardupError(f"{what} did not answer within {wait:.0f} s",
                       hint=f"see {console} and {console.parent / 'solr.log'}")


def launch(
    args: list[str],
    data_dir: Path,
    console: str,
    *,
    heap: str,
    exit_with: int | None,
    echo: Callable[[str], None],
) -> subprocess.Popen:
    """The launcher in a background JVM of its own session, its output in
    ``data_dir/logs/console``; Solr's logs go beside it."""
    java = find_java()
    launcher = build_launcher(echo)
    archive = class_archive(java, launcher, echo)
    return _spawn(java, launcher, [f"-XX:SharedArchiveFile={archive}"] if archive else [], args, data_dir, console,
                  heap=heap, exit_with=exit_with)


def _spawn(java: str, launcher: Path, options: list[str], args: list[str], data_dir: Path, console: str, *,
           heap: str, exit_with: int | None) -> subprocess.Popen:
    """The launcher's JVM with ``options``, as :func:`launch` describes it."""
    logs = data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    command = [
        java,
        f"-Xmx{heap}",
        *options,
        f"-Dsolr.log.dir={logs}",
        "-cp",
        os.pathsep.join([str(launcher / "solr-launcher.jar"), str(launcher / "lib" / "*")]),
        LAUNCHER_CLASS,
        *args,
    ]
    if exit_with is not None:
        command += ["--exit-with", str(exit_with)]
    with open(logs / console, "ab") as out:
        return subprocess.Popen(
            command, cwd=data_dir, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def class_archive(java: str, launcher: Path, echo: Callable[[str], None] = print) -> Path | None:
    """The launcher's class archive for this ``java`` (Java's application
    class data sharing), made if needed: a JVM that maps it loads the
    classes Solr starts with from it, and starts sooner (docs/cloud.md has
    the figures). Made once per launcher and Java, by starting Solr on
    an empty home with ``-XX:ArchiveClassesAtExit`` and stopping it, which
    costs one start of Solr; None where it cannot be made (a JVM without
    the option, a cache folder that cannot be written), and that is
    remembered, so a start tries once. A JVM given an archive it cannot
    use (another Java at the same path) starts without it.
    """
    resolved = Path(java).resolve()
    try:
        stat = resolved.stat()
        key = hashlib.sha256(f"{resolved}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
        archive = launcher / f"classes-{key}.jsa"
        refused = launcher / f"classes-{key}.refused"
        if archive.is_file() or refused.exists():
            return archive if archive.is_file() else None
        with open(launcher / "classes.lock", "a+b") as lock:
            lock_exclusive(lock)  # one start makes it; another waits and uses it
            if not archive.is_file() and not refused.exists():
                echo("archiving the classes Solr starts with, once, so that it starts sooner...")
                if not _archive_classes(java, launcher, archive):
                    refused.touch()
    except OSError:
        return None
    return archive if archive.is_file() else None


def _archive_classes(java: str, launcher: Path, archive: Path) -> bool:
    """Start Solr on an empty home with ``-XX:ArchiveClassesAtExit``, wait
    until its core answers, stop it (the JVM writes the archive as it
    exits) and move the archive to ``archive``; whether it was made."""
    work = Path(tempfile.mkdtemp(prefix=".classes-", dir=launcher))
    try:
        port = free_port()
        made = work / "classes.jsa"
        process = _spawn(java, launcher, [f"-XX:ArchiveClassesAtExit={made}"],
                         ["--home", str(prepare_home(work)), "--port", str(port)], work, "archive.log", heap="1g",
                         exit_with=os.getpid())
        try:
            wait_until(lambda: answers(local_url(port)), process, "Solr", work / "logs" / "archive.log", START_WAIT)
        except NeardupError:
            return False
        finally:
            process.terminate()
            try:
                process.wait(STOP_WAIT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.returncode not in (0, -signal.SIGTERM, 128 + signal.SIGTERM) or not made.is_file():
            return False
        os.replace(made, archive)
        return True
    finally:
        shutil.rmtree(work, ignore_errors=True)


def stop_process(pid: int, wait: float = STOP_WAIT) -> None:
    """Stop one launcher process: TERM (Solr shuts down cleanly), then KILL."""
    if not is_launcher(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while is_launcher(pid) and time.monotonic() < deadline:
        time.sleep(STOP_POLL)
    if is_launcher(pid):
        os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))  # Windows has no SIGKILL: TERM kills there
        while is_launcher(pid):
            time.sleep(STOP_POLL)


def stop(data_dir: Path, wait: float = STOP_WAIT) -> Node | None:
    """Stop this data folder's node; returns it, or None if none ran."""
    data_dir = data_dir.resolve()
    node = running_node(data_dir)
    if node is not None:
        stop_process(node.pid, wait)
    _state_file(data_dir).unlink(missing_ok=True)
    return node


def last_lines(path: Path, count: int) -> str:
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "(no output)"
    return " | ".join(lines[-count:]) or "(no output)"
