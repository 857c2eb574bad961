import os

import pytest

from neardup_solr.errors import NeardupError
from neardup_solr.parallel import bounded_map, forked_map


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


def test_a_worker_that_dies_is_an_error_not_a_hang():
    def die(n):
        if n == 5:
            os._exit(1)
        return n

    with pytest.raises(NeardupError, match="worker process died"):
        list(forked_map(die, range(10), 2))
