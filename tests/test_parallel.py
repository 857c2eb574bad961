import os
import threading

import pytest

from neardup_solr.errors import NeardupError
from neardup_solr.match.weighing import FORK_FROM, MIN_SPAN, RECORD_WORDS, VERIFY_SPAN, pieces, workers_for
from neardup_solr.parallel import bounded_map, cores, forked_map, unordered_map


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
