"""Replays for a table start longest first when there are more than workers
(allocators/replay_costs.py), and the window's builds start in the order given."""

from __future__ import annotations

import pytest

from heapscope.allocators import replay_costs
from heapscope.allocators.parallel import BuildSpec, ParallelBuild, build_timelines
from heapscope.allocators.registry import strategy_names
from heapscope.traces import make_workload

TRACE = make_workload("vo1989", steps=300, seed=4)


@pytest.fixture
def costs(monkeypatch):
    """Costs made up for the test: bsd-buckets the slowest, then tlsf, next-fit."""
    made_up = {"bsd-buckets": 9.0, "tlsf": 5.0, "next-fit": 2.0, "first-fit": 1.0}
    monkeypatch.setattr(replay_costs, "COST_PER_OP", made_up)
    return made_up


def test_longest_first_puts_unknown_strategies_first_and_keeps_ties_in_order(costs):
    names = ["first-fit", "mine", "next-fit", "bsd-buckets", "theirs", "tlsf"]
    # unknown ones count as the slowest known (9.0): tied with bsd-buckets, in given order
    assert replay_costs.longest_first(names) == ["mine", "bsd-buckets", "theirs", "tlsf",
                                                 "next-fit", "first-fit"]


def test_every_built_in_strategy_has_a_cost():
    assert set(replay_costs.COST_PER_OP) == set(strategy_names())


def _started(keep: str, specs) -> list[str]:
    build = ParallelBuild(TRACE, specs, keep=keep, checkpoints=False, workers=2)
    try:
        return [spec.key for spec in build._start_order()]
    finally:
        build.cancel()


def test_a_table_starts_its_longest_replays_first_and_the_window_its_own_order(costs):
    given = ["first-fit", "next-fit", "tlsf", "bsd-buckets"]
    assert _started("summary", given) == ["bsd-buckets", "tlsf", "next-fit", "first-fit"]
    assert _started("timeline", given) == given
    assert _started("stream", given) == given
    # as many workers as builds: nothing waits, the order does not matter
    build = ParallelBuild(TRACE, given[:2], keep="summary", workers=2)
    assert [s.key for s in build._start_order()] == given[:2]


def test_the_first_workers_run_the_longest_and_every_row_comes_back(costs):
    build = ParallelBuild(TRACE, ["first-fit", "next-fit", "tlsf", "bsd-buckets"], keep="summary",
                          checkpoints=False, workers=2).start()
    try:
        assert set(build.running) == {"bsd-buckets", "tlsf"}
        build.wait()
    finally:
        build.cancel()
    assert set(build.results) == {"first-fit", "next-fit", "tlsf", "bsd-buckets"}
    serial = build_timelines(TRACE, [BuildSpec("tlsf")], keep="summary", workers=1)
    assert build.results["tlsf"]["max_heap"] == serial["tlsf"]["max_heap"]
