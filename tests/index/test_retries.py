"""Transient faults between us and the real Solr: bounded retries with backoff,
no retries for 4xx answers, and a configurable timeout.

The faults are injected by a proxy in front of the real Solr, which also
measures, by its own clock, how long the client waited before each retry.
"""

import pytest

from conftest import create_core, drop_core, run_cli
from faults import FaultyProxy

from neardup_solr.errors import SolrFailure
from neardup_solr.index.solr import Solr

# The backoff docs/troubleshooting.md gives: "waiting 0.5 s, 1 s, 2 s..." before the 1st, 2nd, 3rd retry.
BACKOFF = [0.5, 1.0, 2.0]
TIMEOUT = 3.0  # --timeout: ample for every real answer on a busy machine; a hanging request takes this long


def within_backoff(wait: float, backoff: float) -> bool:
    """The backoff, give or take the moments the client and the proxy take to
    send and to notice a request (milliseconds, more on a busy machine), and
    far from what no wait, a halved or a doubled backoff would be."""
    return 0.75 * backoff <= wait < 1.5 * backoff + 0.25


def is_document_add(method: str, path: str, body: bytes) -> bool:
    return method == "POST" and "/update" in path and body.lstrip().startswith(b"[")  # a JSON list of documents


def is_candidate_query(method: str, path: str, body: bytes) -> bool:
    return "/select" in path and b"content_lsh" in path.encode() + body


@pytest.fixture
def records(tmp_path):
    path = tmp_path / "r.txt"
    path.write_text("".join(f"{i} Record number {i} on Main Street\n" for i in range(1, 51)))
    return path


@pytest.fixture(scope="module")
def indexed(solr_node, tmp_path_factory):
    """A core holding the records and two listings of one deli, for queries only."""
    path = tmp_path_factory.mktemp("indexed") / "r.txt"
    path.write_text("1 Art's Deli 12224 Ventura Blvd. Studio City\n"
                    "2 Art's Delicatessen 12224 Ventura Blvd. Studio City\n"
                    + "".join(f"{i} Record number {i} on Main Street\n" for i in range(3, 51)))
    core = create_core(solr_node)
    assert run_cli("index", str(path), "--reference", "--solr-url", core.url).returncode == 0
    yield core
    drop_core(core)


def through(proxy, core):
    return proxy.base + "/solr/" + core.name


def solr_of(core) -> str:
    return core.url.rsplit("/solr/", 1)[0]


def assert_waits(proxy, retries):
    waits = proxy.waits(TIMEOUT)
    assert len(waits) == retries, waits
    for wait, backoff in zip(waits, BACKOFF):
        assert within_backoff(wait, backoff), waits


def assert_backed_off(proxy, retries):
    tries = proxy.tries()
    # The same request, sent again: the faulted tries and the one that got through.
    assert len(tries) == retries + 1 and len({t.fingerprint for t in tries}) == 1
    assert [t.faulted for t in tries] == [True] * retries + [False]
    assert_waits(proxy, retries)


@pytest.mark.parametrize("fault", ["503", "reset"])
def test_a_failed_ping_is_retried_and_nothing_is_lost(core, records, fault):
    with FaultyProxy(solr_of(core), fault=fault, failures=2) as proxy:
        done = run_cli("index", str(records), "--solr-url", through(proxy, core), "--retries", "3")
    assert done.returncode == 0, done.stderr
    assert core.count() == 50
    # The ping was tried three times: two faults, then through.
    assert proxy.requests[:3] == [proxy.requests[0]] * 3 and "/admin/ping" in proxy.requests[0]
    assert_backed_off(proxy, 2)


@pytest.mark.parametrize("fault", ["503", "reset", "hang"])
def test_a_failed_update_is_retried_with_backoff_and_nothing_is_lost(core, records, fault):
    with FaultyProxy(solr_of(core), fault=fault, failures=3, match=is_document_add) as proxy:
        done = run_cli("index", str(records), "--solr-url", through(proxy, core), "--retries", "3",
                       "--timeout", str(TIMEOUT))
    assert done.returncode == 0, done.stderr
    assert core.count() == 50 and len({d["id"] for d in core.iter_docs(["id"])}) == 50
    assert_backed_off(proxy, 3)


@pytest.mark.parametrize("fault", ["503", "hang"])
def test_a_failed_query_is_retried_with_backoff_and_answers_as_without_faults(indexed, fault):
    core = indexed
    direct = run_cli("query", "Arts Deli 12224 Ventura Boulevard Studio City", "--solr-url", core.url)
    assert direct.returncode == 0 and direct.stdout.count("\n") == 2, direct.stderr
    with FaultyProxy(solr_of(core), fault=fault, failures=3, match=is_candidate_query) as proxy:
        done = run_cli("query", "Arts Deli 12224 Ventura Boulevard Studio City", "--solr-url", through(proxy, core),
                       "--retries", "3", "--timeout", str(TIMEOUT))
    assert done.returncode == 0, done.stderr
    assert done.stdout == direct.stdout
    assert_backed_off(proxy, 3)


@pytest.mark.parametrize(("fault", "code", "message"), [("503", 5, "(HTTP 503)"), ("hang", 3, "did not answer within")])
def test_retries_are_bounded(core, records, fault, code, message):
    with FaultyProxy(solr_of(core), fault=fault, failures=100, match=is_document_add) as proxy:
        done = run_cli("index", str(records), "--solr-url", through(proxy, core), "--retries", "2",
                       "--timeout", str(TIMEOUT))
    assert done.returncode == code
    assert message in done.stderr and "Traceback" not in done.stderr
    assert sum(e.faulted for e in proxy.log) == 3  # the first try and two retries of the update
    assert_waits(proxy, 2)


def test_retries_of_the_ping_are_bounded(core, records):
    with FaultyProxy(solr_of(core), fault="503", failures=100) as proxy:
        done = run_cli("index", str(records), "--solr-url", through(proxy, core), "--retries", "2")
    assert done.returncode == 5
    assert "(HTTP 503)" in done.stderr and "Traceback" not in done.stderr
    assert len(proxy.requests) == 3  # the first try and two retries of the ping


def is_query(method: str, path: str, body: bytes) -> bool:
    return "/select" in path


@pytest.mark.parametrize(("command", "after"), [(["report", "{out}"], 1), (["report", "--shingles", "{out}"], 10),
                                               (["query", "Art's Deli 12224 Ventura Blvd. Studio City"], 1)])
def test_an_answer_marked_partial_is_refused(indexed, tmp_path, command, after):
    """Solr marks an answer partial when a shard did not answer and the request
    tolerated that; such an answer is never used, however it came about."""
    core = indexed
    out = tmp_path / "pairs.tsv"
    with FaultyProxy(solr_of(core), fault="partial", failures=1000, match=is_query, after=after) as proxy:
        url = through(proxy, core)
        done = run_cli(*(a.format(out=out) for a in command), "--solr-url", url)
    assert any(e.faulted for e in proxy.log)  # (queries in flight may get partial answers too)
    assert done.returncode == 5
    assert done.stderr.strip().splitlines()[-1] == (
        f"neardup: error: Solr answered from only some shards of {url} (hint: check `neardup solr status` "
        "or the cluster's shards; every shard needs a live replica)")
    assert done.stdout == "" and not out.exists() and list(tmp_path.glob(".pairs.tsv*")) == []


def test_client_errors_are_not_retried(core):
    with FaultyProxy(solr_of(core)) as proxy:
        solr = Solr(through(proxy, core), retries=3)
        with pytest.raises(SolrFailure, match=r"HTTP 400"):
            solr.search("no_such_field:x")
        assert len(proxy.requests) == 1


def test_the_timeout_is_configurable(core, records):
    with FaultyProxy(solr_of(core), fault="slow", failures=1, delay=3) as proxy:
        done = run_cli("index", str(records), "--solr-url", through(proxy, core), "--timeout", "0.5",
                       "--retries", "0")
    assert done.returncode == 3
    assert done.stderr.strip() == (f"neardup: error: Solr at {through(proxy, core)} did not answer within 0.5 s "
                                   "(hint: raise --timeout (NEARDUP_TIMEOUT) if Solr is busy)")
