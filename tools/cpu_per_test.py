"""A pytest plugin that writes each test's CPU seconds, to find what makes the
suite slow on a busy machine (where wall times say more about the other jobs).

    PYTHONPATH=tools QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest -p cpu_per_test

Each process (the controller and every xdist worker) appends to
``$CPU_PER_TEST_DIR/<worker>.tsv`` (default ``/tmp/cpu-per-test``) one line a
test: its own CPU (every thread of the process: a window test's replay thread
too), the CPU of the child processes it waited for (a CLI test's
``heapscope``), its wall time and its node id; ``#start`` and ``#end`` lines
give the process's CPU before the first test and after the last (the
difference to the sum is collection and start-up).  Rank them with
``sort -t$'\\t' -k1 -gr``.  See docs/testing.md, "How long the suite takes".
"""

from __future__ import annotations

import os
import resource
import time

import pytest

_out = None


def _cpu() -> tuple[float, float]:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time(), children.ru_utime + children.ru_stime


def pytest_configure(config):
    global _out
    folder = os.environ.get("CPU_PER_TEST_DIR", "/tmp/cpu-per-test")
    os.makedirs(folder, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    _out = open(os.path.join(folder, worker + ".tsv"), "a", buffering=1)
    _out.write("#start\t%.3f\n" % sum(_cpu()))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    own, children = _cpu()
    wall = time.perf_counter()
    yield                                   # setup, call and teardown
    own2, children2 = _cpu()
    _out.write("%.4f\t%.4f\t%.3f\t%s\n" % (own2 - own, children2 - children,
                                          time.perf_counter() - wall, item.nodeid))


def pytest_unconfigure(config):
    if _out is not None:
        _out.write("#end\t%.3f\n" % sum(_cpu()))
        _out.close()
