"""Compare mode's ranking summed up a run of rows at a time (issue 25): a
summary grown in runs is the one made in one go, and both are what plain
numpy says of every prefix of the series; a long timeline's summary grows a
few rows per turn of the event loop, its row joining the table once done."""

import random

import numpy as np
import pytest

from heapscope.allocators.metrics import summarize
from heapscope.allocators.replay import Timeline
from heapscope.gui import compare_view
from heapscope.gui.ranking import RunningSummary

from .test_compare_mode import THREE, compare

INT_KEYS = ("ops", "failed", "max_live", "max_heap", "search_max")


def by_numpy(series, t: int) -> dict:
    """The table's measures over the first ``t`` steps, each straight from
    the columns (no running values)."""
    live, heap = series.live[:t].astype(np.int64), series.heap[:t].astype(np.int64)
    counted = series.is_malloc[:t] & ~series.failed[:t]
    searched = series.search[:t][counted].astype(np.int64)
    ml, mh = int(live.max()), int(heap.max())
    return {"ops": t, "failed": int(np.count_nonzero(series.failed[:t])), "max_live": ml, "max_heap": mh,
            "waste": (mh - ml) / ml if ml else float("nan"), "utilisation": ml / mh if mh else float("nan"),
            "search_mean": int(searched.sum()) / len(searched) if len(searched) else 0.0,
            "search_max": int(searched.max()) if len(searched) else 0,
            "work_per_op": int(series.work[:t].astype(np.int64).sum()) / t}


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]) for k in a)      # NaN equals NaN


@pytest.mark.parametrize("name", ["next-fit", "buddy", "bsd-buckets"])
def test_a_summary_grown_in_runs_is_the_one_made_at_once_and_numpys(small_trace, name):
    tl = Timeline(small_trace, name, {"heap_limit": 30000}).build()
    s = tl.series
    assert s.failed.any() or name != "next-fit"      # the failed column is exercised
    whole = RunningSummary(s)
    rng = random.Random(name)
    for _ in range(4):
        cuts = sorted(rng.sample(range(1, s.n), 6)) + [s.n]
        grown = RunningSummary()
        for cut in cuts:
            grown.extend(s, cut)
            assert grown.n == cut
        grown.extend(s, cuts[-1])                        # nothing more to add: no change
        for t in [0, 1, 2] + cuts + list(range(3, s.n + 1, 53)) + [s.n + 5]:
            assert grown.at(t) == whole.at(t) or same(grown.at(t), whole.at(t)), (cuts, t)
    for t in list(range(1, 40)) + list(range(40, s.n + 1, 29)) + [s.n]:
        expected = by_numpy(s, t)
        assert same(whole.at(t), expected), (t, whole.at(t), expected)
        for key in INT_KEYS:
            assert whole.at(t)[key] == summarize(s.prefix(t))[key]


@pytest.fixture
def chunked(monkeypatch):
    """Every timeline counts as long, and its summary grows 50 rows a turn;
    the runs each summary grew by are kept (what ``extend`` was asked)."""
    monkeypatch.setattr(compare_view, "SUMMARY_LATER_FROM", 0)
    monkeypatch.setattr(compare_view, "SUMMARY_ROWS_PER_TURN", 50)
    runs = []
    extend = RunningSummary.extend

    def recorded(self, series, upto):
        before = self.n
        extend(self, series, upto)
        runs.append(self.n - before)
    monkeypatch.setattr(RunningSummary, "extend", recorded)
    return runs


def test_a_long_ranking_grows_a_few_rows_a_turn_and_joins_whole(qtbot, loaded, chunked):
    w = loaded
    table = w.compare.view.table
    compare(qtbot, w, THREE)
    # the rows show before their summaries: none is made in one go
    assert len(table.summaries) < 3
    qtbot.waitUntil(lambda: len(table.summaries) == 3, timeout=20000)
    assert max(chunked) <= 50 and sum(chunked) >= 3 * w.model.n
    w.seek(333)
    qtbot.waitUntil(lambda: w.model.staging is None, timeout=10000)
    qtbot.wait(10)
    for r, name in enumerate(THREE):
        series = w.model.timeline(r).series
        assert table.summaries[name].n == series.n
        assert same(table.rows[name], by_numpy(series, 333))
    assert table.table.rowCount() == 3


def test_a_seek_far_past_a_summary_sums_the_rest_up_in_turns(qtbot, loaded, chunked):
    # a summary made while its timeline was building ends early; a seek past
    # it once the timeline is built adds the rest a run at a time, its row
    # out of the table meanwhile
    w = loaded
    table = w.compare.view.table
    compare(qtbot, w, THREE)
    qtbot.waitUntil(lambda: len(table.summaries) == 3 and not table._later, timeout=20000)
    tl = w.model.timeline(1)
    short = RunningSummary(tl.series, 100)
    table._keep(tl, short)
    chunked.clear()
    w.model.seek(420, at_once=True)
    table.redraw()
    assert tl.strategy_name not in table.summaries and table.table.rowCount() == 2
    qtbot.waitUntil(lambda: len(table.summaries) == 3, timeout=20000)
    assert chunked and max(chunked) <= 50
    qtbot.wait(10)
    assert table.summaries[tl.strategy_name] is short and short.n == tl.series.n
    for r, name in enumerate(THREE):
        assert same(table.rows[name], by_numpy(w.model.timeline(r).series, 420))
    assert table.table.rowCount() == 3
