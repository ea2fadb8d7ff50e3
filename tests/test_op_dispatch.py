"""Every replay dispatches its operations through the one loop,
``allocators/op_dispatch.run_ops``.

Each replay path runs here with ``run_ops`` replaced by a counting wrapper of
itself (the name every path looks up, ``replay.run_ops``): the wrapper must
see every operation the path applies, no more and no fewer.  A path with a
dispatch of its own (a loop over the trace's kinds written a second time)
applies operations the wrapper never sees, and fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

from heapscope.allocators import grading, op_dispatch, plugins, replay
from heapscope.allocators.registry import make_strategy
from heapscope.allocators.replay import Program, Timeline, apply_op, replay_bare, replay_ops
from heapscope.traces import make_workload

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def seen(monkeypatch):
    """Operations that went through run_ops, counted (a list: [count])."""
    count = [0]
    real = op_dispatch.run_ops

    def counting(calls, program, rec, kinds, ids, sizes, *args, **kw):
        count[0] += len(kinds)
        return real(calls, program, rec, kinds, ids, sizes, *args, **kw)

    monkeypatch.setattr(replay, "run_ops", counting)
    return count


@pytest.fixture(scope="module")
def trace():
    return make_workload("vo1989", steps=300, seed=4)


@pytest.fixture
def segfit():
    """A user strategy: it watches its public calls, so replays go through them."""
    plugins.load_file(f"{EXAMPLES / 'segfit.py'}:SegFit")
    yield "segfit"
    plugins.forget("segfit")


def columns(trace):
    return trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()


def test_the_one_loop_is_the_one_replay_uses():
    assert replay.run_ops is op_dispatch.run_ops
    assert grading.apply_op is replay.apply_op and grading.replay_ops is replay.replay_ops


@pytest.mark.parametrize("name", ["tlsf", "buddy", "bsd-buckets", "first-fit"])
def test_apply_op_goes_through_the_loop(seen, trace, name):
    s, program = make_strategy(name), Program()
    for op in zip(*columns(trace)):
        apply_op(s, program, *op)
    assert seen[0] == len(trace)


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("name", ["tlsf", "buddy", "bsd-buckets", "next-fit"])
def test_bulk_replay_goes_through_the_loop(seen, trace, name, fused):
    replay_ops(make_strategy(name), Program(), *columns(trace), fused=fused)
    assert seen[0] == len(trace)
    seen[0] = 0
    replay_bare(trace, make_strategy(name), fused)
    assert seen[0] == len(trace)


def test_a_bounded_replay_goes_through_the_loop(seen, trace):
    """A request past the strategy's bound: the ops are wrapped, not re-dispatched."""
    kinds, ids, sizes = columns(trace)
    sizes[0] = 1 << 45
    assert kinds[0] == 0, "the first op is a malloc"
    s = make_strategy("tlsf")
    replay_ops(s, Program(), kinds, ids, sizes)
    assert seen[0] == len(trace)
    assert s.arena.refusals == 1, "the request past the bound was refused at once"


@pytest.mark.parametrize("name", ["tlsf", "buddy", "bsd-buckets", "splay-best-fit"])
def test_the_build_and_seeks_go_through_the_loop(seen, trace, name):
    tl = Timeline(trace, name, checkpoint_every=64).build()
    assert seen[0] == len(trace), "the build applied operations the loop did not see"
    seen[0] = 0
    tl.seek(200)                 # restores the checkpoint at 192, replays 7, applies 1
    assert seen[0] == 200 - 192
    seen[0] = 0
    tl.state_at(100)             # from the checkpoint at 64
    assert seen[0] == 100 - 64


def test_a_user_strategy_goes_through_the_loop(seen, trace, segfit):
    """Through its public calls, with and without measures, and grade's check pass."""
    tl = Timeline(trace, segfit, checkpoint_every=64).build()
    assert tl.fault is None
    assert seen[0] == len(trace)
    seen[0] = 0
    replay_ops(make_strategy(segfit), Program(), *columns(trace))
    assert seen[0] == len(trace)
    seen[0] = 0
    checked = grading.check_trace(lambda: make_strategy(segfit), trace, check_every=50)
    assert seen[0] >= len(trace), checked
