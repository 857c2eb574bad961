import os
import threading

import pytest

from neardup_solr.errors import NeardupError
from neardup_solr.match.weighing import FORK_FROM, MIN_SPAN, RECORD_WORDS, VERIFY_SPAN, pieces, workers_for
from neardup_solr.parallel import Grouped, bounded_map, cores, forked_map, unordered_map


def test_forked_map_keeps_order_and_inherits_unpicklable_state():
    table = {n: n * n for n in range(1000)}  # read by the workers, never sent
    square = lambda n: (table[n], os.getpid())  # noqa: E731 - a lambda cannot be pickled
    results = list(forked_map(square, range(1000), 2))
    assert [value for value, _ in results] == [n * n for n in range(1000)]
    assert os.getpid() not in {pid for _, pid in results}


def test_one_worker_runs_in_this_process():
    assert list(forked_map(lambda n: (n, os.getpid()), range(3), 1)) == [(n, os.getpid()) for n in range(3)]


def test_bounded_map_keeps_order():
    assert list(bounded_map(lambda n: -n, range(100), 4)) == [-n for n in range(100)]


def test_unordered_map_gives_every_result_once_and_is_not_held_up_by_a_slow_item():
    """The first item is held until every other is done: bounded_map would
    give nothing before it and stop taking items; unordered_map gives the
    others first, each once, with never more than twice the threads in
    flight (and the one item taken before a thread is free for it)."""
    release, taken, finished, most = threading.Event(), [], [], []
    lock = threading.Lock()

    def items():
        for n in range(40):
            with lock:
                taken.append(n)
                most.append(len(taken) - len(finished))
            yield n

    def work(n):
        if n == 0:
            assert release.wait(10)
        with lock:
            finished.append(n)
        return -n

    results = []
    for result in unordered_map(work, items(), 3):
        results.append(result)
        if len(results) == 39:
            release.set()
    assert sorted(results) == sorted(-n for n in range(40)) and results[-1] == 0
    assert max(most) <= 2 * 3 + 1


def test_a_grouped_call_returns_only_after_a_run_that_started_after_it():
    # Every event takes the next number, so "after" needs no clock.
    lock = threading.Lock()
    clock = iter(range(10**6))
    runs: list[tuple[int, int]] = []  # (started, ended), in order

    def tick() -> int:
        with lock:
            return next(clock)

    def action():
        started = tick()
        threading.Event().wait(0.002)
        runs.append((started, tick()))

    grouped = Grouped(action)
    calls: list[tuple[int, int]] = []

    def caller():
        for _ in range(20):
            called = tick()
            grouped.run()
            calls.append((called, tick()))

    threads = [threading.Thread(target=caller) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 160
    for called, returned in calls:
        assert any(called < started and ended < returned for started, ended in runs)
    assert all(a[1] < b[0] for a, b in zip(runs, runs[1:]))  # one run at a time
    assert len(runs) < len(calls)


def test_callers_that_arrive_during_a_run_share_the_next_one():
    arrived = threading.Semaphore(0)
    runs = []

    def action():
        runs.append(len(runs))
        if len(runs) == 1:
            for _ in range(7):  # the first run lasts until the seven others have called
                arrived.acquire()
            threading.Event().wait(0.2)

    grouped = Grouped(action)
    first = threading.Thread(target=grouped.run)
    first.start()
    while not runs:
        threading.Event().wait(0.001)

    def caller():
        arrived.release()
        grouped.run()

    others = [threading.Thread(target=caller) for _ in range(7)]
    for thread in others:
        thread.start()
    for thread in [first, *others]:
        thread.join()
    # Seven callers, one run for them (two at most, for one that reached the lock only after that run began).
    assert 2 <= len(runs) <= 3


def test_a_runs_error_reaches_every_caller_waiting_for_it():
    gate = threading.Event()
    failing = [True]
    runs = []

    def action():
        runs.append(None)
        if len(runs) == 1:
            gate.wait(5)
        elif failing[0]:
            raise RuntimeError("Solr refused the commit")

    grouped = Grouped(action)
    first = threading.Thread(target=grouped.run)
    first.start()
    while not runs:
        threading.Event().wait(0.001)
    errors = []

    def caller():
        try:
            grouped.run()
        except RuntimeError as err:
            errors.append(str(err))

    others = [threading.Thread(target=caller) for _ in range(4)]
    for thread in others:
        thread.start()
    threading.Event().wait(0.2)
    gate.set()
    for thread in [first, *others]:
        thread.join()
    assert errors == ["Solr refused the commit"] * 4
    assert 2 <= len(runs) <= 5
    failing[0] = False
    before = len(runs)
    grouped.run()  # a failed run leaves it usable: the next caller runs the action again
    assert len(runs) == before + 1


def test_a_worker_that_dies_is_an_error_not_a_hang():
    def die(n):
        if n == 5:
            os._exit(1)
        return n

    with pytest.raises(NeardupError, match="worker process died"):
        list(forked_map(die, range(10), 2))


@pytest.mark.parametrize("count, words, cost", [(125_620, 347.0, 1), (391_578, 8.9, 1), (100_000, 8.9, 1),
                                               (7, 500.0, 1), (714_120, 9.9, 2), (100_000, 8.9, 2)])
def test_verification_is_cut_by_work_not_by_pairs(count, words, cost):
    """Pieces of work cover every candidate once, in order; a pair of long
    documents is as much work as dozens of short records, so 10,000
    documents' 125,620 candidates are verified on every core, where as many
    short records' pairs are not worth a fork; work twice as costly a piece
    (a record weighed, a kept pair made) forks at half as many pieces."""
    spans = pieces(count, words, cost)
    assert spans[0][0] == 0 and spans[-1][1] == count
    assert all(end == start for (_, end), (start, _) in zip(spans, spans[1:]))
    largest = max(end - start for start, end in spans)
    assert largest * max(words, RECORD_WORDS) * cost <= VERIFY_SPAN * RECORD_WORDS or largest <= MIN_SPAN
    long_documents = words > 100 and count > MIN_SPAN
    assert workers_for(count, words, cost) == (cores() if long_documents or count * cost >= FORK_FROM else 1)
    assert len(spans) >= 2 or not long_documents
