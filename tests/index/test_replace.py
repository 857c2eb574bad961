"""`neardup index` (replacing) never leaves a hole: it builds the new records
into a core of their own and swaps it in only when the run has succeeded.
A killed or interrupted run, or a file of nothing but bad records, leaves
the previous index serving exactly as it was: the same records, the same
pair file byte for byte. The cloud's versions of these are in test_cloud.py.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import requests

from conftest import POLL, _homes, child_env, free_port, run_cli, write_records
from test_crash import cli_process, interrupted
from test_security import PASSWORD, USER, security_json

from neardup_solr.index import local_solr
from neardup_solr.api import NearDuplicates
from neardup_solr.index.solr import Solr

pytestmark = pytest.mark.solr  # it starts a Solr of its own

# Enough for indexing to take seconds, so the run is stopped half way, not after the end.
NEW_RECORDS = 12_000
# Seconds a test waits for half of its records to reach Solr (a few, on a quiet machine).
HALF_WAY_WAIT = 300
# What standard input cut short holds, whole.
CUT_SHORT = 2000


def adds_by_core(node_urls: list[str], name: str) -> dict[str, int]:
    """Documents added so far to each core of ``name`` and of what a
    replacement builds for it (``name__...``), on every node, from Solr's
    own metrics."""
    counts = {}
    for base in node_urls:
        found = requests.get(f"{base}/admin/metrics", timeout=10, params={
            "group": "core", "prefix": "UPDATE.updateHandler.cumulativeAdds", "wt": "json"}).json()
        counts.update((core, metric["UPDATE.updateHandler.cumulativeAdds"]["count"])
                      for core, metric in found["metrics"].items()
                      if core.removeprefix("solr.core.").split(".")[0] == name
                      or core.startswith(f"solr.core.{name}__"))
    return counts


def adds_since(before: dict[str, int], node_urls: list[str], name: str) -> int:
    """Documents added since ``before`` (cores removed since count for nothing)."""
    return sum(count - before.get(core, 0) for core, count in adds_by_core(node_urls, name).items())


def new_records(path):
    path.write_text("".join(f"n{i} Shop {i % 997} number {i} on {i % 89} Main Street City {i % 31}\n"
                            for i in range(1, NEW_RECORDS + 1)))
    return path


def served(url: str, tmp_path, name: str) -> tuple[int, bytes]:
    """The record count and the default report's pair file of the index at ``url``."""
    out = tmp_path / name
    done = run_cli("report", str(out), "--solr-url", url, "--quiet")
    assert done.returncode == 0, done.stderr
    return Solr(url).count(), out.read_bytes()


def indexed(url: str, records) -> None:
    done = run_cli("index", str(records), "--solr-url", url, "--quiet")
    assert done.returncode == 0, done.stderr


def half_way(url: str, node_urls: list[str], records, name: str):
    """``index`` of ``records`` started, returned once half of them reached Solr."""
    before = adds_by_core(node_urls, name)
    run = cli_process("index", str(records), "--solr-url", url, "--quiet")
    until_half_added(run, before, node_urls, name)
    return run


def until_half_added(run: subprocess.Popen, before: dict[str, int], node_urls: list[str], name: str) -> None:
    """Waits until half of NEW_RECORDS have reached Solr since ``before``,
    while ``run`` (whose standard error is piped) goes on."""
    deadline = time.monotonic() + HALF_WAY_WAIT
    while adds_since(before, node_urls, name) < NEW_RECORDS // 2:
        assert run.poll() is None, f"indexing ended before it could be stopped half way: {run.stderr.read()}"
        assert time.monotonic() < deadline, f"half of the records did not reach Solr in {HALF_WAY_WAIT} s"
        time.sleep(POLL)


def killed_half_way(url, node_urls, records, name) -> None:
    run = half_way(url, node_urls, records, name)
    os.kill(run.pid, signal.SIGKILL)
    run.communicate(timeout=60)


def interrupted_half_way(url, node_urls, records, name) -> str:
    run = half_way(url, node_urls, records, name)
    stderr = interrupted(run)
    assert run.returncode == 130, stderr
    return stderr


def only_bad_json_lines(path):
    path.write_text("".join(json.dumps({"sku": f"x{i}", "text": f"Shop {i} on Main Street"}) + "\n"
                            for i in range(200)))
    return path


def wrong_id_column(path):
    path.write_text("sku,text\n" + "".join(f"x{i},Shop {i} on Main Street\n" for i in range(200)))
    return path


def is_building(core: str, name: str) -> bool:
    """Whether ``core`` is one a replacement of ``name`` builds (``name__`` and a number)."""
    return core.startswith(f"{name}__")


def cores(base_url: str, auth=None) -> set[str]:
    found = requests.get(f"{base_url}/admin/cores", params={"action": "STATUS", "wt": "json"}, timeout=30,
                         auth=auth).json()
    return set(found["status"])


def leftovers(base_url: str, name: str, auth=None) -> set[str]:
    return {core for core in cores(base_url, auth) if is_building(core, name)}


def test_an_index_killed_half_way_leaves_the_previous_index_as_it_was(core, restaurant_records, tmp_path):
    indexed(core.url, restaurant_records)
    before = served(core.url, tmp_path, "before.tsv")
    killed_half_way(core.url, [core.base_url], new_records(tmp_path / "new.txt"), core.name)
    assert served(core.url, tmp_path, "after.tsv") == before
    # The half-built core is never served, and the next run removes it.
    indexed(core.url, restaurant_records)
    assert leftovers(core.base_url, core.name) == set()
    assert served(core.url, tmp_path, "again.tsv") == before


def test_an_interrupted_index_leaves_the_previous_index_as_it_was_and_no_core_behind(core, restaurant_records,
                                                                                    tmp_path):
    indexed(core.url, restaurant_records)
    before = served(core.url, tmp_path, "before.tsv")
    stderr = interrupted_half_way(core.url, [core.base_url], new_records(tmp_path / "new.txt"), core.name)
    assert stderr.strip().splitlines()[-1] == "neardup: interrupted"
    assert leftovers(core.base_url, core.name) == set()
    assert served(core.url, tmp_path, "after.tsv") == before


def test_a_file_of_only_bad_records_leaves_the_previous_index_as_it_was(core, restaurant_records, tmp_path):
    indexed(core.url, restaurant_records)
    before = served(core.url, tmp_path, "before.tsv")
    done = run_cli("index", str(only_bad_json_lines(tmp_path / "bad.jsonl")), "--solr-url", core.url)
    assert done.returncode == 4, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("neardup: error: ") and "left as it was" in last and "hint:" in last
    assert "bad.jsonl:1: no 'id' field" in done.stderr  # each bad line still named
    assert leftovers(core.base_url, core.name) == set()
    assert served(core.url, tmp_path, "after.tsv") == before


def test_a_csv_without_its_id_column_leaves_the_previous_index_as_it_was(core, restaurant_records, tmp_path):
    indexed(core.url, restaurant_records)
    before = served(core.url, tmp_path, "before.tsv")
    done = run_cli("index", str(wrong_id_column(tmp_path / "bad.csv")), "--solr-url", core.url)
    assert done.returncode == 4, done.stderr
    assert served(core.url, tmp_path, "after.tsv") == before


def test_replacing_again_and_again_keeps_one_core_and_its_url(core, tmp_path):
    home = _homes[int(core.url.split(":")[2].split("/")[0])]
    for run in range(3):
        records = tmp_path / f"run{run}.txt"
        records.write_text("".join(f"r{run}-{i} Cafe {i} on {i % 13} Oak Avenue\n" for i in range(101 + run)))
        indexed(core.url, records)
        # The URL names the new records; the old core is gone, its data with it.
        assert Solr(core.url).count() == 101 + run
        assert Solr(core.url).texts([f"r{run}-1"]) == {f"r{run}-1": "Cafe 1 on 1 Oak Avenue"}
        assert leftovers(core.base_url, core.name) == set()
        assert len([p for p in home.iterdir() if p.name == core.name or is_building(p.name, core.name)]) == 1
    assert run_cli("index", "--append", str(tmp_path / "run0.txt"), "--solr-url", core.url,
                   "--quiet").returncode == 0
    assert Solr(core.url).count() == 103 + 101  # --append adds in place


def test_a_user_without_core_admin_rights_gets_one_line_and_the_index_as_it_was(tmp_path):
    # Two users: one may do everything, the other everything but create, swap and unload cores.
    users = json.loads(security_json(USER, PASSWORD))
    users["authentication"]["credentials"].update(json.loads(security_json("writer", PASSWORD))["authentication"]
                                                  ["credentials"])
    users["authorization"] = {"class": "solr.RuleBasedAuthorizationPlugin",
                              "user-role": {USER: "admin", "writer": "writer"},
                              "permissions": [{"name": "core-admin-edit", "role": "admin"},
                                              {"name": "all", "role": ["admin", "writer"]}]}
    data_dir = tmp_path / "node"
    (data_dir / "home").mkdir(parents=True)
    (data_dir / "home" / "security.json").write_text(json.dumps(users))
    node = local_solr.start(data_dir, free_port(), exit_with=os.getpid(), echo=lambda _: None)
    try:
        first = write_records(tmp_path / "first.txt", ["1 Art's Deli 12224 Ventura Blvd. Studio City",
                                                       "2 Art's Deli 12224 Ventura Blvd Studio City"])
        admin = {"SOLR_USER": USER, "SOLR_PASSWORD": PASSWORD}
        done = run_cli("index", str(first), "--solr-url", node.url, "--quiet", env=admin)
        assert done.returncode == 0, done.stderr
        second = write_records(tmp_path / "second.txt", ["3 Hotel Bel-Air 701 Stone Canyon Rd. Bel Air"])
        writer = {"SOLR_USER": "writer", "SOLR_PASSWORD": PASSWORD}
        done = run_cli("index", str(second), "--solr-url", node.url, "--quiet", env=writer)
        assert done.returncode == 5
        line = done.stderr.strip().splitlines()[-1]
        assert "Traceback" not in done.stderr
        assert line.startswith(f"neardup: error: replacing the index at {node.url} needs Solr's admin rights"), line
        assert "refused (HTTP 403) (hint: grant the user core-admin-edit" in line, line
        solr = Solr(node.url, auth=(USER, PASSWORD))
        assert solr.texts(["1", "2", "3"]).keys() == {"1", "2"}
        assert leftovers(node.base_url, "neardup", (USER, PASSWORD)) == set()
        done = run_cli("index", "--append", str(second), "--solr-url", node.url, "--quiet", env=writer)
        assert done.returncode == 0, done.stderr
        assert solr.count() == 3
    finally:
        local_solr.stop(data_dir)


def test_the_local_solr_restarts_with_the_replaced_index_and_its_settings(tmp_path):
    data_dir = tmp_path / "node"
    node = local_solr.start(data_dir, free_port(), exit_with=os.getpid(), echo=lambda _: None)
    try:
        for run in range(2):
            records = write_records(tmp_path / f"run{run}.txt",
                                    [f"r{run}-{i} Cafe {i} on {i % 13} Oak Avenue" for i in range(50 + run)])
            done = run_cli("index", str(records), "--solr-url", node.url, "--bands", "12", "--band-rows", "2")
            assert done.returncode == 0, done.stderr
        local_solr.stop(data_dir)
        # The core now lives in the folder it was built in; a start must not make a second 'neardup' beside it.
        node = local_solr.start(data_dir, node.port, exit_with=os.getpid(), echo=lambda _: None)
        assert Solr(node.url).count() == 51
        assert NearDuplicates(node.url).settings.bands == 12
        assert cores(node.base_url) == {"neardup"}
        assert len([p for p in (data_dir / "home").iterdir() if p.name not in ("configsets", "solr.xml")]) == 1
    finally:
        local_solr.stop(data_dir)


def test_standard_input_cut_short_leaves_the_index_as_it_was(core, restaurant_records, tmp_path):
    # `producer | head -c N | neardup index -`: the stream ends inside a line, as a whole one never does.
    indexed(core.url, restaurant_records)
    before = served(core.url, tmp_path, "before.tsv")
    # Cut inside the first of the blocks the reader takes, as anywhere else: a few thousand records will do.
    whole = "".join(new_records(tmp_path / "new.txt").read_text().splitlines(keepends=True)[:CUT_SHORT])
    cut = whole[:len(whole) // 2]
    assert not cut.endswith("\n")
    jsonl = "".join(json.dumps({"id": f"j{n}", "text": f"Cafe {n} on Oak Avenue"}) + "\n" for n in range(500))
    for args, given in ((["-"], cut), (["-", "--bands", "20", "--band-rows", "5"], cut), (["--append", "-"], cut),
                        (["-", "--input-format", "jsonl"], jsonl[:-30]), (["--append", "-", "--input-format", "jsonl"],
                                                                         jsonl[:-30])):
        done = run_cli("index", *args, "--solr-url", core.url, "-q", input=given)
        assert done.returncode == 4, (args, done.stderr)
        line = done.stderr.strip().splitlines()[-1]
        assert line.startswith("neardup: error: <stdin> ended in the middle of a line") and "hint:" in line, line
        assert "Traceback" not in done.stderr
        assert leftovers(core.base_url, core.name) == set()
        assert served(core.url, tmp_path, "after.tsv") == before
    # Whole, the same records are indexed.
    done = run_cli("index", "-", "--solr-url", core.url, "-q", input=cut[:cut.rindex("\n") + 1])
    assert done.returncode == 0, done.stderr
    assert Solr(core.url).count() == cut.count("\n")


def held_open_replacement(core, lines: list[str]) -> subprocess.Popen:
    """``neardup index -`` replacing the index with ``lines``, all but the
    last 100 written, once half of them are in its new core: under way, its
    input held open (the rest to be written by the caller)."""
    run = subprocess.Popen([sys.executable, "-m", "neardup_solr", "index", "-", "--bands", "20", "--band-rows", "5",
                            "--solr-url", core.url, "-q"], stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=child_env())
    try:
        before = adds_by_core([core.base_url], core.name)
        run.stdin.write("".join(lines[:-100]))  # read as they come: less than a megabyte, the input held open
        run.stdin.flush()
        until_half_added(run, before, [core.base_url], core.name)
    except BaseException:
        run.kill()
        raise
    return run


def test_a_second_replacement_or_an_append_while_one_runs_is_refused_in_one_line(core, restaurant_records, tmp_path):
    # Before, the second replacement removed the first one's new core as a leftover, and the first failed with
    # 544 bytes of Solr's HTML (HTTP 404); an append went to the index being replaced, and was lost with it.
    indexed(core.url, restaurant_records)
    lines = new_records(tmp_path / "new.txt").read_text().splitlines(keepends=True)
    first = held_open_replacement(core, lines)
    try:
        other = write_records(tmp_path / "other.txt", [f"x{i} Cafe {i} on {i % 13} Oak Avenue" for i in range(200)])
        second = run_cli("index", str(other), "--solr-url", core.url, "-q")
        assert second.returncode == 1, second.stderr
        last = second.stderr.splitlines()[-1]  # after the banding it chose
        assert "Traceback" not in second.stderr and second.stderr.count("error") == 1
        assert last.startswith(f"neardup: error: another replacement of the index at {core.url} is under way")
        assert last.endswith("(hint: run this again when it is done)")
        append = run_cli("index", "--append", str(other), "--solr-url", core.url, "-q")
        assert append.returncode == 1, append.stderr
        assert append.stderr.count("\n") == 1 and "Traceback" not in append.stderr
        assert append.stderr.startswith(f"neardup: error: the index at {core.url} is being replaced")
        first.stdin.write("".join(lines[-100:]))
        first.stdin.close()
        stderr = first.stderr.read()
        assert first.wait(timeout=300) == 0, stderr
    finally:
        if first.poll() is None:
            first.kill()
    solr = Solr(core.url)
    assert solr.count() == NEW_RECORDS and solr.texts(["x1", "n1"]).keys() == {"n1"}
    assert leftovers(core.base_url, core.name) == set()
    # Done, it takes appends and replacements again.
    assert run_cli("index", "--append", str(other), "--solr-url", core.url, "-q").returncode == 0
    assert solr.count() == NEW_RECORDS + 200


def test_a_replacement_whose_new_core_is_removed_under_it_says_so_in_one_line(core, restaurant_records, tmp_path):
    # As when a second replacement took it for a leftover: it failed with 544 bytes of Solr's HTML (HTTP 404).
    indexed(core.url, restaurant_records)
    before = served(core.url, tmp_path, "before.tsv")
    lines = new_records(tmp_path / "new.txt").read_text().splitlines(keepends=True)
    run = held_open_replacement(core, lines)
    try:
        [building] = leftovers(core.base_url, core.name)
        answer = requests.get(f"{core.base_url}/admin/cores", timeout=60, params={
            "action": "UNLOAD", "core": building, "deleteIndex": "true", "deleteInstanceDir": "true"})
        assert answer.status_code == 200, answer.text
        run.stdin.write("".join(lines[-100:]))
        run.stdin.close()
        stderr = run.stderr.read()
        assert run.wait(timeout=300) == 5, stderr
    finally:
        if run.poll() is None:
            run.kill()
    assert stderr.count("\n") == 1 and "<" not in stderr and "Traceback" not in stderr, stderr
    assert stderr.startswith(f"neardup: error: the core {building} this replacement of {core.url} built in was "
                             "removed while it ran"), stderr
    assert served(core.url, tmp_path, "after.tsv") == before
    assert leftovers(core.base_url, core.name) == set()



class Swapping:
    """Which request of a replacement a test stops Solr at: the swap
    (``after`` False) or the first write of settings after it."""

    def __init__(self, after: bool):
        self.after, self.swapped = after, False

    def __call__(self, method: str, path: str, body: bytes) -> bool:
        swap = "action=SWAP" in path
        if not self.after:
            return swap
        held = self.swapped and method == "POST" and "/config" in path
        self.swapped = self.swapped or swap
        return held


def killed_at(data_dir, node, stop: Swapping, records, *args: str) -> local_solr.Node:
    """Solr killed (SIGKILL) while ``index records args`` waits for its
    request ``stop`` holds, the command killed after it; Solr started again."""
    from faults import FaultyProxy

    with FaultyProxy(node.base_url.rsplit("/solr", 1)[0], fault="hang", failures=1, match=stop) as proxy:
        run = cli_process("index", str(records), *args, "--quiet", "--solr-url", f"{proxy.base}/solr/neardup")
        deadline = time.monotonic() + HALF_WAY_WAIT
        while not any(e.faulted for e in proxy.log):
            assert run.poll() is None, f"the replacement ended before it was stopped: {run.communicate()}"
            assert time.monotonic() < deadline, f"the replacement was not stopped in {HALF_WAY_WAIT} s"
            time.sleep(POLL)
        os.kill(node.pid, signal.SIGKILL)
        run.kill()
        run.communicate(timeout=60)
    # A killed JVM takes a while to go on a busy machine; until it has, its port still answers.
    deadline = time.monotonic() + HALF_WAY_WAIT
    while local_solr.is_launcher(node.pid) or local_solr.port_in_use(node.port):
        assert time.monotonic() < deadline, f"the killed Solr was still there after {HALF_WAY_WAIT} s"
        time.sleep(POLL)
    return local_solr.start(data_dir, node.port, exit_with=os.getpid(), echo=lambda _: None)


def test_solr_killed_between_the_new_cores_commit_and_the_swap_keeps_the_index_and_its_settings(
        restaurant_records, tmp_path):
    # The new core's settings are saved to the overlay its configset shares with the served core; killed before
    # the swap, Solr restarted with the old records under the new run's banding (25 x 5 on 5,001 records of
    # 32 x 4), and every query found nothing.
    data_dir = tmp_path / "node"
    node = local_solr.start(data_dir, free_port(), exit_with=os.getpid(), echo=lambda _: None)
    try:
        indexed(node.url, restaurant_records)
        settings = NearDuplicates(node.url).settings
        assert (settings.bands, settings.band_rows) != (20, 5)
        before = served(node.url, tmp_path, "before.tsv")
        others = write_records(tmp_path / "others.txt", [f"x{i} Cafe {i} on {i % 13} Oak Avenue" for i in range(300)])
        node = killed_at(data_dir, node, Swapping(after=False), others, "--bands", "20", "--band-rows", "5")
        assert NearDuplicates(node.url).settings == settings
        found = run_cli("query", "--id", "535", "--solr-url", node.url)
        assert found.returncode == 0 and "220" in found.stdout, (found.stdout, found.stderr)
        assert served(node.url, tmp_path, "after.tsv") == before
        # The next run removes the core the killed one built, and serves its records with their settings.
        done = run_cli("index", str(others), "--bands", "20", "--band-rows", "5", "--quiet", "--solr-url", node.url)
        assert done.returncode == 0, done.stderr
        assert leftovers(node.base_url, "neardup") == set()
        assert (NearDuplicates(node.url).settings.bands, Solr(node.url).count()) == (20, 300)
    finally:
        local_solr.stop(data_dir)


def test_solr_killed_right_after_the_swap_serves_the_new_records_with_their_settings(restaurant_records, tmp_path):
    # Swapped, the new core serves; the old core's properties still stand beside its own in the shared overlay.
    data_dir = tmp_path / "node"
    node = local_solr.start(data_dir, free_port(), exit_with=os.getpid(), echo=lambda _: None)
    try:
        others = write_records(tmp_path / "others.txt", [f"x{i} Cafe {i} on {i % 13} Oak Avenue" for i in range(300)])
        done = run_cli("index", str(others), "--bands", "20", "--band-rows", "5", "--quiet", "--solr-url", node.url)
        assert done.returncode == 0, done.stderr
        settings = NearDuplicates(node.url).settings
        before = served(node.url, tmp_path, "before.tsv")
        indexed(node.url, restaurant_records)
        old = run_cli("report", str(tmp_path / "restaurants.tsv"), "--solr-url", node.url, "--quiet")
        assert old.returncode == 0, old.stderr
        node = killed_at(data_dir, node, Swapping(after=True), others, "--bands", "20", "--band-rows", "5")
        assert NearDuplicates(node.url).settings == settings and Solr(node.url).count() == 300
        found = run_cli("query", "--id", "x1", "--solr-url", node.url)
        assert found.returncode == 0 and "\tx11\t" in found.stdout, (found.stdout, found.stderr)
        assert served(node.url, tmp_path, "after.tsv") == before
    finally:
        local_solr.stop(data_dir)
