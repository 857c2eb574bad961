"""Transient faults between us and the real Solr: bounded retries with backoff,
no retries for 4xx answers, and a configurable timeout.

The faults are injected by a proxy in front of the real Solr, which also
measures, by its own clock, how long the client waited before each retry.
"""

import pytest

from conftest import run_cli
from faults import FaultyProxy

from neardup_solr.errors import SolrFailure
from neardup_solr.solr import Solr

# The README's backoff: "waiting 0.5 s, 1 s, 2 s..." before the 1st, 2nd, 3rd retry.
BACKOFF = [0.5, 1.0, 2.0]
# A wait is the backoff plus the client's own work between two tries
# (milliseconds); well under the step to the next backoff value.
SLACK = 0.4
TIMEOUT = 2.0  # --timeout: ample for every real answer; a hanging request takes this long


def is_document_add(method: str, path: str, body: bytes) -> bool:
    return method == "POST" and "/update" in path and body.lstrip().startswith(b"[")  # a JSON list of documents


def is_candidate_query(method: str, path: str, body: bytes) -> bool:
    return "/select" in path and b"content_lsh" in path.encode() + body


@pytest.fixture
def records(tmp_path):
    path = tmp_path / "r.txt"
    path.write_text("".join(f"{i} Record number {i} on Main Street\n" for i in range(1, 51)))
    return path


def through(proxy, core):
    return proxy.base + "/solr/" + core.name


def solr_of(core) -> str:
    return core.url.rsplit("/solr/", 1)[0]


def assert_waits(proxy, retries):
    waits = proxy.waits(TIMEOUT)
    assert len(waits) == retries, waits
    for wait, backoff in zip(waits, BACKOFF):
        assert backoff <= wait < backoff + SLACK, waits


def assert_backed_off(proxy, retries):
    tries = proxy.tries()
    # The same request, sent again: the faulted tries and the one that got through.
    assert len(tries) == retries + 1 and len({t.fingerprint for t in tries}) == 1
    assert [t.faulted for t in tries] == [True] * retries + [False]
    assert_waits(proxy, retries)


@pytest.mark.parametrize("fault", ["503", "reset", "hang"])
def test_a_failed_update_is_retried_with_backoff_and_nothing_is_lost(core, records, fault):
    with FaultyProxy(solr_of(core), fault=fault, failures=3, match=is_document_add) as proxy:
        done = run_cli("index", str(records), "--solr-url", through(proxy, core), "--retries", "3",
                       "--timeout", str(TIMEOUT))
    assert done.returncode == 0, done.stderr
    assert core.count() == 50 and len({d["id"] for d in core.iter_docs(["id"])}) == 50
    assert_backed_off(proxy, 3)


@pytest.mark.parametrize("fault", ["503", "hang"])
def test_a_failed_query_is_retried_with_backoff_and_answers_as_without_faults(core, tmp_path, fault):
    delis = tmp_path / "delis.txt"
    delis.write_text("1 Art's Deli 12224 Ventura Blvd. Studio City\n2 Art's Delicatessen 12224 Ventura Blvd. Studio City\n"
                     + "".join(f"{i} Record number {i} on Main Street\n" for i in range(3, 51)))
    assert run_cli("index", str(delis), "--solr-url", core.url).returncode == 0
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
