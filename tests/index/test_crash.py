"""Solr killed mid-run: a re-run gives exactly the index of a clean run, and a
report never leaves a file that looks finished. A command interrupted
(Ctrl-C) says so in one line and exits 130."""

import os
import signal
import subprocess
import sys
import time

import pytest
import requests

from conftest import POLL, adds_so_far, child_env, free_port, metric, run_cli, tlog_state

from neardup_solr.index import local_solr
from neardup_solr.index.solr import Solr

pytestmark = pytest.mark.solr  # it starts a Solr of its own

# Enough for indexing to take seconds, so Solr is killed a quarter of the way in, not after the end.
RECORDS = 20_000
# The index an interrupted index must leave as it was: any will do, a small one is made quickly.
KEPT = 1000
FIELDS = ["id", "content", "md5_hash", "first_word", "num_words", "word_shingles", "minhash_values", "tokens", "content_lsh"]



def reads_so_far(url: str) -> int:
    """Searches and reads of buckets and records (the local Solr's /buckets handler)."""
    return metric(url, "QUERY./select.requests") + metric(url, "QUERY./buckets.requests")


def cli_process(*args: str) -> subprocess.Popen:
    """The command line as a terminal starts it: with Ctrl-C's default
    action even when this suite runs in the background, where a shell
    without job control starts it with SIGINT ignored (and the tests that
    interrupt the command would see it finish instead)."""
    return subprocess.Popen([sys.executable, "-m", "neardup_solr", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=child_env(),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def snapshot(solr: Solr) -> list[dict]:
    return [{k: (sorted(v) if isinstance(v, list) else v) for k, v in doc.items()} for doc in solr.iter_docs(FIELDS)]


@pytest.fixture
def records_file(tmp_path):
    path = tmp_path / "records.txt"
    path.write_text("".join(f"{i} Shop {i % 997} number {i} on {i % 89} Main Street City {i % 31}\n"
                            for i in range(1, RECORDS + 1)))
    return path


def kill_solr(data_dir):
    os.kill(local_solr.running_node(data_dir).pid, signal.SIGKILL)


def test_killing_solr_while_indexing_then_rerunning_gives_a_clean_index(tmp_path, records_file, core):
    # Killed after two of the eight batches of 1,000: it is polled every POLL seconds, far less than six batches take.
    records_file.write_text("".join(records_file.read_text().splitlines(keepends=True)[:8000]))
    data_dir = tmp_path / "node"
    node = local_solr.start(data_dir, free_port(), exit_with=os.getpid(), echo=lambda _: None)
    try:
        run = cli_process("index", str(records_file), "--solr-url", node.url, "--retries", "1")
        while adds_so_far(node.url) < 2000:
            assert run.poll() is None, "indexing ended before Solr could be killed"
            time.sleep(POLL)
        kill_solr(data_dir)
        _, stderr = run.communicate(timeout=120)
        assert run.returncode == 3
        assert stderr.strip().splitlines()[-1].startswith(f"neardup: error: Solr is not reachable at {node.url}")

        local_solr.start(data_dir, node.port, exit_with=os.getpid(), echo=lambda _: None)
        # Started means done replaying the killed run's log (Solr's UpdateLog.State ACTIVE, ordinal 3): the log's
        # delete of everything, replayed later, would land on the re-run's adds.
        # The command returned after the replay (ACTIVE), so nothing of the old log lands after its updates.
        assert tlog_state(node.url) == 3
        again = run_cli("index", str(records_file), "--solr-url", node.url)
        assert again.returncode == 0, again.stderr

        clean = run_cli("index", str(records_file), "--solr-url", core.url)
        assert clean.returncode == 0, clean.stderr
        rerun = snapshot(Solr(node.url))
        assert len(rerun) == 8000 == len({d["id"] for d in rerun})
        assert rerun == snapshot(core)
    finally:
        local_solr.stop(data_dir)


def test_indexing_a_solr_started_by_someone_else_waits_for_its_log_replay(tmp_path, records_file, core):
    # A Solr we did not start (a service manager restarting it after a crash) answers pings while it still
    # replays its log, for seconds. Indexing must wait: on a loaded machine the log's delete of everything was
    # replayed after a re-run's adds (13,851 of 20,000 records kept, exit 0).
    data_dir = tmp_path / "node"
    node = local_solr.start(data_dir, free_port(), exit_with=os.getpid(), echo=lambda _: None)
    try:
        run = cli_process("index", str(records_file), "--solr-url", node.url, "--retries", "1")
        while adds_so_far(node.url) < RECORDS * 3 // 4:
            assert run.poll() is None, "indexing ended before Solr could be killed"
            time.sleep(POLL)
        kill_solr(data_dir)
        run.communicate(timeout=120)
        assert run.returncode == 3
    finally:
        local_solr.stop(data_dir)
    others = tmp_path / "others.txt"
    others.write_text("".join(f"other-{i} Cafe {i} on {i % 13} Oak Avenue\n" for i in range(1, 1001)))

    # Started as a plain process, waited for only until it answers.
    solr = local_solr.launch(["--home", str(local_solr.prepare_home(data_dir)), "--port", str(node.port)], data_dir,
                             "restarted.log", heap="1g", exit_with=os.getpid(), echo=lambda _: None)
    try:
        local_solr.wait_until(lambda: local_solr.answers(node.url), solr, "Solr", data_dir / "logs" / "restarted.log",
                              local_solr.START_WAIT)
        again = run_cli("index", str(others), "--solr-url", node.url)
        assert again.returncode == 0, again.stderr
        # The command returned after the replay (ACTIVE), so nothing of the old log lands after its updates.
        assert tlog_state(node.url) == 3

        clean = run_cli("index", str(others), "--solr-url", core.url)
        assert clean.returncode == 0, clean.stderr
        assert snapshot(Solr(node.url)) == snapshot(core)
    finally:
        solr.kill()
        solr.wait(timeout=60)


def test_killing_solr_during_a_report_leaves_no_finished_looking_file(tmp_path, records_file):
    # The first 8,000 records: a report of them is still running after its third query to Solr.
    records_file.write_text("".join(records_file.read_text().splitlines(keepends=True)[:8000]))
    data_dir = tmp_path / "node"
    node = local_solr.start(data_dir, free_port(), exit_with=os.getpid(), echo=lambda _: None)
    out = tmp_path / "pairs.tsv"
    try:
        assert run_cli("index", str(records_file), "--solr-url", node.url).returncode == 0
        before = reads_so_far(node.url)
        run = cli_process("report", str(out), "--solr-url", node.url, "--retries", "1")
        while reads_so_far(node.url) < before + 3:
            assert run.poll() is None, "the report ended before Solr could be killed"
            time.sleep(0.01)
        kill_solr(data_dir)
        _, stderr = run.communicate(timeout=120)
    finally:
        local_solr.stop(data_dir)
    assert run.returncode == 3, stderr
    assert "Solr is not reachable" in stderr and "Traceback" not in stderr
    assert not out.exists()
    assert list(tmp_path.glob("*.partial")) == []


def interrupted(run: subprocess.Popen) -> str:
    """SIGINT, as Ctrl-C sends it; the command's stderr once it has ended."""
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=120)
    return stderr


def test_an_interrupted_index_exits_130_with_one_line(core, records_file):
    run = cli_process("index", str(records_file), "--solr-url", core.url)
    while adds_so_far(core.url) < RECORDS // 10:
        assert run.poll() is None, "indexing ended before it could be interrupted"
        time.sleep(POLL)
    stderr = interrupted(run)
    assert run.returncode == 130, stderr  # what it said instead, should it ever end otherwise
    assert stderr.strip().splitlines()[-1] == "neardup: interrupted" and "Traceback" not in stderr


@pytest.mark.parametrize("mode", ["--shingles", "--lsh"])
def test_an_interrupted_report_exits_130_and_leaves_no_file(core, tmp_path, mode):
    path = tmp_path / "records.txt"
    path.write_text("".join(f"{i} Shop {i % 97} number {i} on {i % 89} Main Street City {i % 31}\n"
                            for i in range(1, 5001)))
    # 42 bands: a report of many band requests, long enough to be caught
    # in the middle whatever banding the data would choose.
    assert run_cli("index", str(path), "--bands", "42", "--band-rows", "3", "--reference", "--solr-url", core.url).returncode == 0
    before = reads_so_far(core.url)
    out = tmp_path / "pairs.tsv"
    run = cli_process("report", mode, str(out), "--solr-url", core.url)
    while reads_so_far(core.url) < before + 20:
        assert run.poll() is None, "the report ended before it could be interrupted"
        time.sleep(0.01)
    stderr = interrupted(run)
    assert run.returncode == 130
    assert stderr.strip().splitlines()[-1] == "neardup: interrupted" and "Traceback" not in stderr
    assert not out.exists() and list(tmp_path.glob(".pairs.tsv*")) == []


class _Loading:
    """A compiled function on its first call (no overloads yet), during which
    Ctrl-C arrives, as it may while numba loads the function from its cache
    through LLVM's callbacks (where a KeyboardInterrupt is lost)."""

    overloads: dict = {}

    def __init__(self):
        self.finished = False

    def py_func(self):  # pragma: no cover - the plain twin is not what is tested
        raise AssertionError("the compiled function was asked for")

    def __call__(self, value):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # bytecode, where Python would raise a KeyboardInterrupt at once
            pass
        self.finished = True
        return value * 2


def test_ctrl_c_while_a_compiled_function_loads_is_raised_once_it_has_loaded():
    from neardup_solr.compiled import chosen

    # Ctrl-C's default action, as a terminal starts Python (the suite may run where SIGINT is ignored).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        loading = _Loading()
        with pytest.raises(KeyboardInterrupt):
            chosen(loading)(21)
        assert loading.finished  # the interrupt waited for the load, and was not lost
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        loading.overloads = {"(int64,)": object()}  # loaded: called as it is, nothing held
        assert chosen(loading) is loading
    finally:
        signal.signal(signal.SIGINT, previous)


def _loaded(pid: int, library: str) -> bool:
    """Whether the process has mapped a shared library whose path names ``library``."""
    try:
        with open(f"/proc/{pid}/maps") as maps:
            return library in maps.read()
    except OSError:
        return False


@pytest.mark.parametrize("after", [0.0, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0])
def test_ctrl_c_in_the_first_second_of_index_is_one_line(core, records_file, tmp_path, after):
    # The moments after numpy's libraries are mapped, which the commands' imports load first: from there on
    # come numba's and LLVM's imports, where an interrupt was a traceback of 12-34 lines.
    kept = tmp_path / "kept.txt"
    kept.write_text("".join(records_file.read_text().splitlines(keepends=True)[:KEPT]))
    assert run_cli("index", str(kept), "--solr-url", core.url, "-q", "--bands", "8").returncode == 0
    run = cli_process("index", str(records_file), "--solr-url", core.url, "-q")
    while not _loaded(run.pid, "numpy"):
        assert run.poll() is None, run.communicate()
        time.sleep(0.002)
    time.sleep(after)
    stderr = interrupted(run)
    assert run.returncode == 130, stderr
    # One line; click puts a line break before it, past the ^C a terminal shows. On a quick machine the
    # banding may have been chosen and said by then: that line, and nothing else, may come before it.
    said = stderr.lstrip("\n").splitlines()
    assert said[-1] == "neardup: interrupted" and stderr.endswith("\n"), stderr
    assert all(line.startswith("bands: ") or not line for line in said[:-1]), stderr
    assert Solr(core.url).count() == KEPT and leftovers(core) == set()


def leftovers(core: Solr) -> set[str]:
    """Cores a replacement of ``core`` built and left behind."""
    found = requests.get(f"{core.base_url}/admin/cores", params={"action": "STATUS", "wt": "json"}, timeout=30).json()
    return {name for name in found["status"] if name.startswith(f"{core.name}__")}


def test_a_failed_append_says_what_may_stay_and_a_rerun_converges_across_a_restart(tmp_path, records_file, core):
    # Solr takes the append's first batches, then refuses the rest (as it does once its disk is full): the batches
    # it took are in its transaction log, uncommitted, and a restart adds them (9,096 records appeared so).
    from faults import FaultyProxy

    lines = records_file.read_text().splitlines(keepends=True)
    first, more = tmp_path / "first.txt", tmp_path / "more.txt"
    first.write_text("".join(lines[:1000]))
    more.write_text("".join(lines[1000:8000]))  # batches of 1,000: four taken, three refused
    data_dir = tmp_path / "node"
    node = local_solr.start(data_dir, free_port(), exit_with=os.getpid(), echo=lambda _: None)
    try:
        assert run_cli("index", str(first), "--solr-url", node.url, "-q").returncode == 0
        is_add = lambda method, path, body: "/update" in path and body.lstrip().startswith(b"[")  # noqa: E731
        with FaultyProxy(node.base_url.rsplit("/solr", 1)[0], failures=10_000, match=is_add, after=4) as proxy:
            done = run_cli("index", "--append", str(more), "--no-pairs", "--retries", "0", "-q",
                           "--solr-url", f"{proxy.base}/solr/neardup")
        assert done.returncode == 5, done.stderr
        line = done.stderr.strip().splitlines()[-1]
        assert "Traceback" not in done.stderr and line.startswith("neardup: error: Solr update failed"), line
        assert "; the add stopped after reading " in line and "but may still add any of them" in line, line
        assert line.endswith("(hint: add the same records again once Solr is well: those it has are replaced)"), line
        assert Solr(node.url).count() == 1000  # nothing of it committed
        local_solr.stop(data_dir)
        node = local_solr.start(data_dir, node.port, exit_with=os.getpid(), echo=lambda _: None)
        assert 1000 <= Solr(node.url).count() <= 8000  # some may stay, as it said
        again = run_cli("index", "--append", str(more), "--no-pairs", "--solr-url", node.url, "-q")
        assert again.returncode == 0, again.stderr
        # As after one clean append, whatever stayed.
        assert run_cli("index", str(first), "--solr-url", core.url, "-q").returncode == 0
        assert run_cli("index", "--append", str(more), "--no-pairs", "--solr-url", core.url, "-q").returncode == 0
        assert snapshot(Solr(node.url)) == snapshot(core)
    finally:
        local_solr.stop(data_dir)
