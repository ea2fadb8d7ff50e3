"""Timelines built in worker processes: the same as a serial build, cancel
leaves no process behind, and a failing build names its strategy and error."""

from __future__ import annotations

import multiprocessing as mp
import os
import threading

import numpy as np
import pytest

from heapscope.allocators import registry
from heapscope.allocators.bsd_buckets import BSDBuckets
from heapscope.allocators.metrics import SERIES_COLUMNS
from heapscope.allocators.parallel import (BuildFailed, BuildSpec, Failed, Finished, ParallelBuild,
                                           Progress, build_timelines, default_start_method)
from heapscope.allocators.registry import strategy_names
from heapscope.allocators.replay import Timeline
from heapscope.traces import make_workload

TRACE = make_workload("vo1989", steps=2500, seed=21)
PARAMS = {"heap_limit": 600_000}     # some requests fail
SAMPLE_STEPS = (0, 1, 777, 2048, 4097, len(TRACE) - 1, len(TRACE))


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def no_summary_times(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in ("wall_s", "cpu_s")}


@pytest.fixture(scope="module")
def serial():
    return {name: Timeline(TRACE, name, PARAMS).build() for name in strategy_names()}


@pytest.fixture(scope="module", params=["fork", "forkserver"])
def parallel(request):
    specs = [BuildSpec(name, PARAMS) for name in strategy_names()]
    return build_timelines(TRACE, specs, start_method=request.param)


def test_parallel_timelines_equal_a_serial_build(serial, parallel):
    assert list(parallel) == strategy_names()
    for name, tl in parallel.items():
        ref = serial[name]
        assert isinstance(tl, Timeline) and tl.trace is TRACE
        assert no_summary_times(tl.summary()) == no_summary_times(ref.summary())
        for col in SERIES_COLUMNS + ("failed", "payload"):
            assert np.array_equal(getattr(tl.series, col), getattr(ref.series, col)), (name, col)
        assert tl.position == len(TRACE)
        assert tl.strategy.state_signature() == ref.strategy.state_signature()


def test_parallel_timelines_seek_to_the_serial_states(serial, parallel):
    for name, tl in parallel.items():
        ref = serial[name]
        for t in SAMPLE_STEPS:
            got = tl.seek(t).state_signature()
            assert got == ref.seek(t).state_signature(), (name, t)
            assert tl.program.live == ref.program.live
            assert tl.describe() == ref.describe()


def test_summaries_only(serial):
    rows = build_timelines(TRACE, [BuildSpec(n, PARAMS) for n in ("tlsf", "first-fit")],
                           keep="summary", checkpoints=False)
    for name, row in rows.items():
        assert no_summary_times(row) == no_summary_times(serial[name].summary())
        assert row["cpu_s"] > 0


def test_progress_comes_per_strategy_and_ends_at_the_total():
    seen = {}
    build_timelines(TRACE, ["buddy", "tlsf"], progress=lambda k, d, n: seen.setdefault(k, []).append((d, n)))
    assert set(seen) == {"buddy", "tlsf"}
    for reports in seen.values():
        assert reports[-1] == (len(TRACE), len(TRACE))
        assert [d for d, _ in reports] == sorted(d for d, _ in reports)


def test_one_strategy_twice_with_its_own_keys():
    out = build_timelines(TRACE, [BuildSpec("buddy", {"max_order": 12}, "small"),
                                  BuildSpec("buddy", {"max_order": 16}, "big")], keep="summary")
    assert out["small"]["max_heap"] != out["big"]["max_heap"]
    with pytest.raises(ValueError, match="share a key"):
        ParallelBuild(TRACE, ["tlsf", "tlsf"])


@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_cancel_leaves_no_process_behind(method):
    long_trace = make_workload("vo1989", steps=200_000, seed=1)
    build = ParallelBuild(long_trace, ["first-fit", "next-fit", "tlsf"], start_method=method,
                          workers=3).start()
    pids = list(build.running.values())
    assert len(pids) == 3 and all(not gone(pid) for pid in pids)
    while not any(isinstance(e, Progress) for e in build.poll(1.0)):
        pass
    build.cancel()
    assert build.finished and build.results == {}
    assert mp.active_children() == []
    assert all(gone(pid) for pid in pids)
    assert build.poll(0) == []


def test_cancel_from_a_progress_callback_and_from_another_thread():
    long_trace = make_workload("vo1989", steps=100_000, seed=2)
    build = ParallelBuild(long_trace, ["next-fit", "buddy"])
    results = build.wait(progress=lambda k, d, n: build.cancel())
    assert build.cancelled and results == {} and mp.active_children() == []

    build = ParallelBuild(long_trace, ["first-fit", "splay-best-fit"]).start()
    canceller = threading.Timer(0.3, build.cancel)
    canceller.start()
    build.wait()
    canceller.join()
    assert build.cancelled and mp.active_children() == []


class Exploding(BSDBuckets):
    """Raises on its 100th malloc."""
    name = "exploding"
    registered = False

    def _malloc(self, nbytes):
        self.count = getattr(self, "count", 0) + 1
        if self.count == 100:
            raise RuntimeError("simulated bug in malloc")
        return super()._malloc(nbytes)


class Dying(BSDBuckets):
    """Its process dies on the 50th malloc, without a word."""
    name = "dying"
    registered = False

    def _malloc(self, nbytes):
        self.count = getattr(self, "count", 0) + 1
        if self.count == 50:
            os._exit(3)
        return super()._malloc(nbytes)


@pytest.fixture
def broken_strategies():
    # Registered in this process only: a forked worker sees them.
    for cls in (Exploding, Dying):
        registry.STRATEGIES[cls.name] = cls
    yield
    for cls in (Exploding, Dying):
        del registry.STRATEGIES[cls.name]


def test_a_worker_that_raises_reports_its_strategy_and_error(broken_strategies):
    build = ParallelBuild(TRACE, ["tlsf", "exploding", "dying", BuildSpec("buddy", {"max_order": 99})],
                          start_method="fork").start()
    events = []
    while not build.finished:
        events += build.poll(1.0)
    failed = {e.key: e for e in events if isinstance(e, Failed)}
    assert set(failed) == {"exploding", "dying", "buddy"}
    assert "RuntimeError: simulated bug in malloc" == failed["exploding"].error
    assert "in _malloc" in failed["exploding"].details      # the worker's traceback
    assert "exit code 3" in failed["dying"].error
    assert "max_order" in failed["buddy"].error
    assert isinstance(build.results["exploding"], BuildFailed)
    assert [e.key for e in events if isinstance(e, Finished)] == ["tlsf"]
    assert isinstance(build.results["tlsf"], Timeline)
    assert mp.active_children() == []


def test_fork_only_when_this_process_runs_one_thread_and_no_qt(monkeypatch):
    import sys

    from heapscope.allocators import parallel
    # A thread an earlier test of this worker left (a FIFO writer still
    # blocked, a cluster's) is not this test's: count the threads as if
    # those were gone, with the real count underneath.
    strays = threading.active_count() - 1
    real_count = threading.active_count
    monkeypatch.setattr(parallel.threading, "active_count", lambda: real_count() - strays)
    monkeypatch.setitem(sys.modules, "PySide6", sys)
    assert default_start_method() == "forkserver"
    monkeypatch.delitem(sys.modules, "PySide6")
    for name in [m for m in sys.modules if m.startswith("PySide6")]:
        monkeypatch.delitem(sys.modules, name)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert default_start_method() == "forkserver"
    finally:
        stop.set()
        thread.join()
    assert default_start_method() == "fork"


@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_a_strategy_of_your_own_builds_in_a_worker_and_its_mistake_is_its_row(method):
    # A worker started afresh (forkserver) loads the user's file itself.
    from pathlib import Path

    from heapscope.allocators import plugins

    examples = Path(__file__).resolve().parent.parent / "examples"
    plugins.load_file(f"{examples / 'segfit.py'}:SegFit")
    plugins.load_file(f"{examples / 'broken.py'}:Broken")
    trace = make_workload("vo1989", steps=300, seed=4)
    try:
        out = build_timelines(trace, ["segfit", "broken"], start_method=method)
        serial = Timeline(trace, "segfit").build()
        assert no_summary_times(out["segfit"].summary()) == no_summary_times(serial.summary())
        assert out["segfit"].seek(200).state_signature() == serial.seek(200).state_signature()
        broken = Timeline(trace, "broken").build()
        assert broken.fault is not None
        assert isinstance(out["broken"], BuildFailed) and out["broken"].error == str(broken.fault)
    finally:
        plugins.forget("segfit")
        plugins.forget("broken")


class RegisteredHere(BSDBuckets):
    """4.3BSD's buckets under another name, registered by a test only."""
    name = "registered-here"
    registered = False


def test_a_strategy_registered_in_this_process_builds_in_a_fresh_worker():
    # forkserver starts workers afresh: they find the class by its module
    # (this test file) and name, as this process registered it.
    registry.STRATEGIES[RegisteredHere.name] = RegisteredHere
    try:
        out = build_timelines(TRACE, ["registered-here"], start_method="forkserver", keep="summary")
        assert no_summary_times(out["registered-here"]) == no_summary_times(
            Timeline(TRACE, "bsd-buckets").build().summary())
    finally:
        del registry.STRATEGIES[RegisteredHere.name]


def _niceness(trace, spec, note):
    import os
    return os.nice(0)


def test_a_build_streamed_to_a_window_runs_nicer_than_one_for_a_result():
    """A window's background builds (keep="stream") run STREAM_NICE nicer:
    seven workers at the window's own priority left its event loop 10 % of
    a core (a compare row's 50 ms of CPU took 0.3-0.7 s beside them, issue
    25's stall probe); builds whose result is awaited keep theirs."""
    import os
    from heapscope.allocators.parallel import STREAM_NICE, BuildSpec, ParallelBuild
    got = {}
    for keep in ("stream", "timeline"):
        build = ParallelBuild(None, [BuildSpec("tlsf", key=keep, job=_niceness)], keep=keep).start()
        build.wait()
        got.update(build.results)
    server = got["timeline"]          # the worker's niceness without it (its server's)
    assert server >= os.nice(0)
    assert got["stream"] == min(19, server + STREAM_NICE)


def _slow_to_exit(*args):
    """A worker that, its result sent, takes a second to exit (as one
    freeing a big heap does)."""
    import time
    _WORKER(*args)
    time.sleep(1.0)


_WORKER = None


@pytest.fixture
def slow_to_exit_build(monkeypatch):
    """A started build of TLSF whose worker takes a second to exit after its result."""
    from heapscope.allocators import parallel
    global _WORKER
    _WORKER = parallel._worker
    monkeypatch.setattr(parallel, "_worker", _slow_to_exit)
    return ParallelBuild(make_workload("vo1989", steps=300, seed=3), ["tlsf"],
                         start_method="fork").start()


def test_a_result_is_taken_without_waiting_for_its_worker_to_exit(slow_to_exit_build):
    """The window polls its builds on the GUI thread: waiting there for a
    worker to exit after its result (its heap freed) held the event loop
    100 ms and more (issue 25's stall probe).  The result comes at once;
    the build is finished, and its process joined, once the worker has
    exited."""
    build = slow_to_exit_build
    pid = build.running["tlsf"]
    events = []
    while not any(isinstance(e, Finished) for e in events):
        events += build.poll(5.0)
    assert isinstance(build.results["tlsf"], Timeline)
    assert not gone(pid) and not build.finished         # still exiting: not waited for
    assert build.poll(0) == [] and not build.finished   # a poll does not wait either
    while not build.finished:
        build.poll(5.0)
    assert gone(pid) and mp.active_children() == []


def test_cancel_waits_for_workers_still_exiting(slow_to_exit_build):
    build = slow_to_exit_build
    pid = build.running["tlsf"]
    while "tlsf" not in build.results:
        build.poll(5.0)
    build.cancel()
    assert gone(pid) and mp.active_children() == [] and build.finished


def test_a_build_started_while_the_server_starts_launches_once_it_answers(serial, monkeypatch):
    # entering compare mode just after the first load blocked the GUI thread
    # 227 ms reading the first worker's pid from a server still importing
    # the replay (issue 25): the build waits to launch, and poll() does it
    from heapscope.allocators import parallel as par
    ready = threading.Event()
    monkeypatch.setattr(par, "_server_ready", ready)
    assert par.server_starting()
    build = ParallelBuild(TRACE, [BuildSpec("tlsf", PARAMS)], start_method="forkserver").start()
    assert build.running == {} and not build.finished
    assert build.poll(0.05) == [] and build.running == {}       # still starting: nothing launched
    threading.Timer(0.1, ready.set).start()
    while not build.finished:
        build.poll(1.0)
    tl = build.results["tlsf"]
    assert no_summary_times(tl.summary()) == no_summary_times(serial["tlsf"].summary())


def test_warm_up_says_the_server_is_starting_until_it_has_forked(monkeypatch):
    from heapscope.allocators import parallel as par
    if par.default_start_method() != "forkserver":
        pytest.skip("the forkserver is this process's start method only without fork's conditions")
    monkeypatch.setattr(par, "_server_ready", threading.Event())
    monkeypatch.setattr(par, "_warmed", False)
    par._server_ready.set()
    par.warm_up()
    assert par.server_starting()
    assert par._server_ready.wait(60)
    assert not par.server_starting()
    par.warm_up()                   # once a process
    assert not par.server_starting()
