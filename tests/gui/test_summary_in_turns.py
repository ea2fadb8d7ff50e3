"""The status line's summary of a timeline built in the background, folded a
part a turn (gui/summary_in_turns.py): ``summarize()`` of a million steps at
once held the event loop 220-240 ms (issue 25's stall probe)."""

import math

from heapscope import traces
from heapscope.allocators.metrics import summarize
from heapscope.allocators.replay import Timeline
from heapscope.gui import summary_in_turns
from heapscope.gui.summary_in_turns import SummaryInTurns
from heapscope.gui.turns import turns


def test_a_series_folded_a_part_a_turn_gives_summarize_s_row(qtbot, monkeypatch):
    monkeypatch.setattr(summary_in_turns, "SUMMARY_CHUNK", 1000)
    timeline = Timeline(traces.make_workload("vo1989", steps=2600, seed=4), "first-fit").build()
    series = timeline.series
    assert series.n == 5200
    want = summarize(series)                # the whole series at once, as the CLI does
    rows, parts = [], []
    fold = summary_in_turns.RunningSummary.add

    def counted(self, s):
        parts.append((s.n, turns().ran))
        return fold(self, s)
    monkeypatch.setattr(summary_in_turns.RunningSummary, "add", counted)
    summaries = SummaryInTurns()
    summaries.start(series, rows.append)
    assert rows == [] and summaries.busy            # nothing in the call
    qtbot.waitUntil(lambda: bool(rows), timeout=5000)
    assert [n for n, _ in parts] == [1000] * 5 + [200]
    assert len({turn for _, turn in parts}) == 6    # a part a turn
    got = rows[0]
    assert set(got) == set(want)
    for key, value in want.items():
        if isinstance(value, float):
            assert math.isclose(got[key], value, rel_tol=1e-12, abs_tol=1e-12) or (
                math.isnan(value) and math.isnan(got[key])), key
        else:
            assert got[key] == value, key


def test_a_fold_started_again_drops_the_one_under_way(qtbot):
    a = Timeline(traces.make_workload("vo1989", steps=300, seed=1), "tlsf").build().series
    b = Timeline(traces.make_workload("vo1989", steps=400, seed=2), "tlsf").build().series
    rows = []
    summaries = SummaryInTurns()
    summaries.start(a, lambda row: rows.append(("a", row)))
    summaries.start(b, lambda row: rows.append(("b", row)))
    qtbot.waitUntil(lambda: not summaries.busy, timeout=5000)
    qtbot.wait(20)
    assert [name for name, _ in rows] == ["b"] and rows[0][1]["ops"] == 800
