"""Transient faults between us and the real Solr: bounded retries with backoff,
no retries for 4xx answers, and a configurable timeout."""

import pytest

from conftest import run_cli
from faults import FaultyProxy

from neardup_solr.errors import SolrFailure
from neardup_solr.solr import Solr


@pytest.fixture
def records(tmp_path):
    path = tmp_path / "r.txt"
    path.write_text("".join(f"{i} Record number {i} on Main Street\n" for i in range(1, 51)))
    return path


def through(proxy, core):
    return proxy.base + "/solr/" + core.name


@pytest.mark.parametrize("fault", ["503", "reset"])
def test_transient_faults_are_retried_and_nothing_is_lost(core, records, fault):
    with FaultyProxy(core.url.rsplit("/solr/", 1)[0], fault=fault, failures=2) as proxy:
        done = run_cli("index", str(records), "--solr-url", through(proxy, core), "--retries", "3")
    assert done.returncode == 0, done.stderr
    assert core.count() == 50
    # The ping was tried three times: two faults, then through.
    assert proxy.requests[:3] == [proxy.requests[0]] * 3 and "/admin/ping" in proxy.requests[0]


def test_retries_are_bounded(core, records):
    with FaultyProxy(core.url.rsplit("/solr/", 1)[0], fault="503", failures=100) as proxy:
        done = run_cli("index", str(records), "--solr-url", through(proxy, core), "--retries", "2")
    assert done.returncode == 5
    assert "(HTTP 503)" in done.stderr and "Traceback" not in done.stderr
    assert len(proxy.requests) == 3  # the first try and two retries of the ping


def test_client_errors_are_not_retried(core):
    with FaultyProxy(core.url.rsplit("/solr/", 1)[0]) as proxy:
        solr = Solr(through(proxy, core), retries=3)
        with pytest.raises(SolrFailure, match=r"HTTP 400"):
            solr.search("no_such_field:x")
        assert len(proxy.requests) == 1


def test_the_timeout_is_configurable(core, records):
    with FaultyProxy(core.url.rsplit("/solr/", 1)[0], fault="slow", failures=1, delay=3) as proxy:
        done = run_cli("index", str(records), "--solr-url", through(proxy, core), "--timeout", "0.5",
                       "--retries", "0")
    assert done.returncode == 3
    assert done.stderr.strip() == (f"neardup: error: Solr at {through(proxy, core)} did not answer within 0.5 s "
                                   "(hint: raise --timeout (NEARDUP_TIMEOUT) if Solr is busy)")
