"""The local Solr's lifecycle and its one-line errors."""

import json
import os
import shutil
import signal
import socket
import time
from pathlib import Path

import pytest

from conftest import free_port, one_line_error, run_cli

from neardup_solr.index import local_solr
from neardup_solr.index.launcher import build_launcher, cache_dir, find_java

pytestmark = pytest.mark.solr  # it starts a Solr of its own


def java_processes_of(data_dir: Path) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if b"neardup.SolrLauncher" in cmdline and str(data_dir).encode() in cmdline:
                found.append(int(proc.name))
    return found


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket listening on ``port``, from the kernel's tables."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port_hex = local.split(":")
            if state == "0A" and int(port_hex, 16) == port:  # 0A = LISTEN
                raw = bytes.fromhex(address)
                words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
                found.add(socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, words))
    return found



def test_start_twice_status_and_stop_leave_nothing_behind(tmp_path):
    port = str(free_port())
    data = tmp_path / "node"
    first = run_cli("solr", "start", "--port", port, "--data-dir", str(data), "--exit-with", str(os.getpid()))
    assert first.returncode == 0, first.stderr
    pid = json.loads((data / "solr.json").read_text())["pid"]
    try:
        again = run_cli("solr", "start", "--port", port, "--data-dir", str(data))
        assert again.returncode == 0, again.stderr
        assert "already running" in again.stderr
        assert java_processes_of(data) == [pid]
        assert listening_addresses(int(port)) <= {"127.0.0.1", "::ffff:127.0.0.1"}
        assert listening_addresses(int(port))
        status = run_cli("solr", "status", "--data-dir", str(data))
        assert status.returncode == 0 and f"127.0.0.1:{port}/solr/neardup" in status.stdout
    finally:
        stopped = run_cli("solr", "stop", "--data-dir", str(data))
    assert stopped.returncode == 0, stopped.stderr
    assert java_processes_of(data) == []
    assert not Path(f"/proc/{pid}").exists() or b"SolrLauncher" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert run_cli("solr", "status", "--data-dir", str(data)).returncode == 3


def test_a_taken_port_is_a_one_line_error_with_a_hint(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli("solr", "start", "--port", str(port), "--data-dir", str(tmp_path))
    assert done.returncode == 1
    assert one_line_error(done) == (
        f"neardup: error: port {port} on 127.0.0.1 is already in use (hint: choose another with --port)"
    )


def test_missing_java_is_a_one_line_error_with_a_hint(tmp_path):
    env = {"PATH": str(tmp_path), "JAVA_HOME": ""}
    done = run_cli("solr", "start", "--port", str(free_port()), "--data-dir", str(tmp_path / "d"), env=env)
    assert done.returncode == 1
    line = one_line_error(done)
    assert "Java was not found" in line and "hint: install Java 17" in line


def test_missing_javac_on_first_use_is_a_one_line_error_with_a_hint(tmp_path):
    # A Java runtime alone: the launcher is compiled on first use, so a JDK is needed.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "java").symlink_to(shutil.which("java"))
    env = {"PATH": str(bin_dir), "JAVA_HOME": "", "NEARDUP_CACHE_DIR": str(tmp_path / "empty-cache")}
    done = run_cli("solr", "start", "--port", str(free_port()), "--data-dir", str(tmp_path / "d"), env=env)
    assert done.returncode == 1
    line = one_line_error(done)
    assert "javac was not found" in line and "hint: install a Java 17 JDK" in line
    assert not (tmp_path / "empty-cache").exists() or not any((tmp_path / "empty-cache").rglob("*.jar"))


@pytest.mark.parametrize("command", [["index", "{records}"], ["report", "--shingles", "{out}"]])
def test_unreachable_solr_says_where_it_looked_and_how_to_start_it(tmp_path, command):
    records = tmp_path / "r.txt"
    records.write_text("1 some text\n")
    port = free_port()
    url = f"http://127.0.0.1:{port}/solr/neardup"
    args = [a.format(records=records, out=tmp_path / "out.tsv") for a in command]
    done = run_cli(*args, "--solr-url", url)
    assert done.returncode == 3
    assert one_line_error(done) == (
        f"neardup: error: Solr is not reachable at {url} "
        f"(hint: start the local Solr with `neardup solr start --port {port}`)"
    )
    assert not (tmp_path / "out.tsv").exists()


def test_start_brings_a_killed_solr_back_with_its_data_in_neardup_data_dir(tmp_path):
    """NEARDUP_DATA_DIR names the data folder when --data-dir is not given;
    after the JVM is killed, `solr start` serves the same index again."""
    data, home = tmp_path / "node", tmp_path / "home"
    # A home of its own, so a default that ignored NEARDUP_DATA_DIR would show (and stay in tmp_path).
    env = {"NEARDUP_DATA_DIR": str(data), "HOME": str(home), "XDG_DATA_HOME": None,
           "NEARDUP_CACHE_DIR": str(cache_dir())}
    port = free_port()
    url = f"http://127.0.0.1:{port}/solr/neardup"
    records = tmp_path / "records.txt"
    records.write_text("1 Art's Deli 12224 Ventura Blvd. Studio City\n2 Art's Deli 12224 Ventura Blvd Studio City\n"
                       "3 Hotel Bel-Air 701 Stone Canyon Rd. Bel Air\n")
    started = run_cli("solr", "start", "--port", str(port), "--exit-with", str(os.getpid()), env=env)
    assert started.returncode == 0, started.stderr
    try:
        assert (data / "solr.json").is_file() and not (home / ".local").exists()
        assert run_cli("index", str(records), "--solr-url", url).returncode == 0
        pid = json.loads((data / "solr.json").read_text())["pid"]
        os.kill(pid, signal.SIGKILL)
        # Killed is done when its port is let go too: the JVM's main thread ends (its /proc entry empty) before
        # the threads that hold the listening socket, longer so on a busy machine.
        while local_solr.is_launcher(pid) or local_solr.port_in_use(port):
            time.sleep(0.05)
        status = run_cli("solr", "status", env=env)
        assert status.returncode == 3 and status.stdout.strip() == f"not running (data folder {data})"

        again = run_cli("solr", "start", "--port", str(port), "--exit-with", str(os.getpid()), env=env)
        assert again.returncode == 0, again.stderr
        assert "already running" not in again.stderr
        assert json.loads((data / "solr.json").read_text())["pid"] != pid
        status = run_cli("solr", "status", env=env)
        assert status.returncode == 0 and status.stdout.startswith(f"running at {url} ")
        assert " records=3 " in status.stdout
        done = run_cli("query", "Hotel Bel-Air 701 Stone Canyon Road Bel Air", "--solr-url", url)
        assert [line.split("\t")[2] for line in done.stdout.splitlines()] == ["3"]
    finally:
        stopped = run_cli("solr", "stop", env=env)
    assert stopped.returncode == 0, stopped.stderr
    assert java_processes_of(data) == [] and not (home / ".local").exists()


def test_status_and_stop_find_a_node_by_its_port_or_solr_url_s(tmp_path):
    port, data = free_port(), tmp_path / "node"
    done = run_cli("solr", "start", "--port", str(port), "--data-dir", str(data), "--exit-with", str(os.getpid()))
    assert done.returncode == 0, done.stderr
    pid = json.loads((data / "solr.json").read_text())["pid"]
    status = run_cli("solr", "status", "--port", str(port))
    assert status.returncode == 0, status.stdout + status.stderr
    assert status.stdout.strip() == (f"running at http://127.0.0.1:{port}/solr/neardup pid={pid} records=0 "
                                     f"data={data.resolve()}")
    # Without --port or --data-dir, the node stopped is the one SOLR_URL names, as the other commands reach it.
    stopped = run_cli("solr", "stop", env={"SOLR_URL": f"http://127.0.0.1:{port}/solr/neardup",
                                           "NEARDUP_DATA_DIR": str(tmp_path / "elsewhere")})
    assert stopped.returncode == 0 and f"stopped Solr (pid {pid})" in stopped.stderr, stopped.stderr
    assert java_processes_of(data) == []
    status = run_cli("solr", "status", "--port", str(port))
    assert status.returncode == 3 and status.stdout.strip() == f"not running (no local Solr answers on port {port})"
    done = run_cli("solr", "stop", "--port", str(port))
    assert one_line_error(done) == (f"neardup: error: no local Solr that `neardup solr start` started answers on port "
                                    f"{port} (hint: check the port, or name the node's folder with --data-dir)")


def launcher_of_its_own(cache: Path) -> Path:
    """The built launcher in a cache folder of the test's own (its jars linked), with no class archive yet."""
    built = build_launcher(lambda _: None)
    launcher = cache / built.name
    (launcher / "lib").mkdir(parents=True)
    shutil.copyfile(built / "solr-launcher.jar", launcher / "solr-launcher.jar")
    for jar in (built / "lib").iterdir():
        os.link(jar, launcher / "lib" / jar.name)
    return launcher


def maps(pid: int, path: Path) -> bool:
    """Whether the process has mapped the file at ``path`` into its memory."""
    return str(path) in Path(f"/proc/{pid}/maps").read_text()


def test_the_first_start_archives_solrs_classes_and_later_starts_map_them(tmp_path, monkeypatch):
    launcher = launcher_of_its_own(tmp_path / "cache")
    env = {"NEARDUP_CACHE_DIR": str(tmp_path / "cache")}
    port, data = str(free_port()), tmp_path / "node"
    start = ("solr", "start", "--port", port, "--data-dir", str(data), "--exit-with", str(os.getpid()))
    first = run_cli(*start, env=env)
    assert first.returncode == 0, first.stderr
    assert "archiving the classes Solr starts with, once" in first.stderr
    archive, = launcher.glob("classes-*.jsa")
    # Nothing of the making is left beside it.
    assert sorted(p.name for p in launcher.iterdir()) == sorted([archive.name, "classes.lock", "lib",
                                                                 "solr-launcher.jar"])
    try:
        assert maps(json.loads((data / "solr.json").read_text())["pid"], archive)
    finally:
        assert run_cli("solr", "stop", "--data-dir", str(data)).returncode == 0
    # An archive the JVM cannot use (this one is not an archive at all) is not made again, and the JVM runs
    # without it: here the launcher, asked for nothing it knows, says how to use it.
    archive.chmod(0o644)
    archive.write_bytes(b"not a class archive\n" * 10_000)
    told = []
    with monkeypatch.context() as patched:
        patched.setenv("NEARDUP_CACHE_DIR", str(tmp_path / "cache"))
        run = local_solr.launch(["--nothing", "asked"], tmp_path / "other", "console.log", heap="256m",
                                exit_with=None, echo=told.append)
    assert run.wait(timeout=120) == 2 and told == []
    assert "usage: SolrLauncher" in (tmp_path / "other" / "logs" / "console.log").read_text()
    assert f"-XX:SharedArchiveFile={archive}" in run.args


def test_a_java_that_cannot_archive_classes_is_asked_once(tmp_path, monkeypatch):
    launcher = launcher_of_its_own(tmp_path / "cache")
    # Without Java's own class archive, a JVM cannot make one of an application's classes, and says so as it starts.
    monkeypatch.setenv("JDK_JAVA_OPTIONS", "-Xshare:off")
    java, told = find_java(), []
    assert local_solr.class_archive(java, launcher, told.append) is None
    assert told == ["archiving the classes Solr starts with, once, so that it starts sooner..."]
    assert list(launcher.glob("classes-*.jsa")) == [] and len(list(launcher.glob("classes-*.refused"))) == 1
    assert [p for p in launcher.iterdir() if p.name.startswith(".")] == []  # nothing of the attempt is left
    # Remembered: the next start does not try again (it would start and fail a JVM each time).
    assert local_solr.class_archive(java, launcher, told.append) is None
    assert len(told) == 1


def test_status_asks_the_node_on_solr_url_s_port_unless_told_otherwise(solr_node, tmp_path):
    url = f"http://127.0.0.1:{solr_node.port}/solr/neardup"
    elsewhere = str(tmp_path / "elsewhere")  # the data folder otherwise asked about: none runs there
    status = run_cli("solr", "status", env={"SOLR_URL": url, "NEARDUP_DATA_DIR": elsewhere})
    assert status.returncode == 0, status.stdout + status.stderr
    assert status.stdout.startswith(f"running at {url} pid={solr_node.pid} records=")
    # Given on the command line, the data folder and the port are what is asked about.
    status = run_cli("solr", "status", "--data-dir", elsewhere, env={"SOLR_URL": url})
    assert status.returncode == 3 and status.stdout.strip() == f"not running (data folder {elsewhere})"
    other = free_port()
    status = run_cli("solr", "status", "--port", str(other), env={"SOLR_URL": url})
    assert status.returncode == 3 and status.stdout.strip() == f"not running (no local Solr answers on port {other})"


def test_a_free_port_is_below_the_ports_outgoing_connections_take():
    """A port chosen for a server is not one the system could give an
    outgoing connection before the server binds it (a cloud node failed to
    start once in a suite run on a port chosen from that range)."""
    low = int(local_solr.EPHEMERAL.read_text().split()[0])
    for _ in range(20):
        port = local_solr.free_port()
        assert local_solr.LOWEST_FREE <= port and port + 1000 < low
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
            server.bind(("127.0.0.1", port))
