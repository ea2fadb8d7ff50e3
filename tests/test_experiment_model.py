"""heapscope/experiments/model.py by hand: how a column shows each kind of
value, how a table finds a row, and the defaults every experiment relies on
(a series is bars of ours, a column shows a value as it is)."""

import math

import pytest

from heapscope.experiments.model import OURS, SEED, Chart, Column, Panel, Result, Series, Table


def test_the_two_sources_are_named_seed_and_ours():
    assert (SEED, OURS) == ("seed", "ours")


def test_a_column_shows_each_kind_of_value():
    c = Column("heap", "heap bytes", "{:,}")
    assert c.show(None) == "" and c.show("ENOMEM") == "ENOMEM"
    assert c.show(float("nan")) == "n/a"
    assert c.show(True) == "yes" and c.show(False) == "no"
    assert c.show(1234567) == "1,234,567"
    plain = Column("x", "x")
    assert plain.show(2.5) == "2.5" and plain.show(7) == "7"
    assert (plain.fmt, plain.source, plain.flag_above, plain.flag) == ("{}", OURS, None, "*")


def test_a_number_above_the_flag_is_marked():
    c = Column("h", "heap MiB", "{:.1f}", flag_above=2.0)
    assert c.show(2.0) == "2.0"                      # not above
    assert c.show(2.5) == "2.5*"
    marked = Column("h", "h", "{:.0f}", flag_above=10, flag=" (beyond RAM)")
    assert marked.show(11) == "11 (beyond RAM)" and marked.show(math.inf) == "inf (beyond RAM)"
    assert c.show(True) == "yes"                     # a bool is never a number here


def test_a_table_finds_a_strategys_row_and_its_values():
    t = Table("vax", "VAX", [Column("strategy", "strategy")],
              rows=[{"strategy": "tlsf", "waste": 0.1}, {"strategy": "buddy", "waste": None}])
    assert t.row("buddy") == {"strategy": "buddy", "waste": None}
    with pytest.raises(KeyError):
        t.row("dlmalloc")
    assert t.value("tlsf", "waste") == 0.1
    assert t.value("tlsf", "heap") is None and t.value("dlmalloc", "waste") is None
    assert Table("k", "t", []).rows == [] and Table("k", "t", []).notes == []


def test_a_series_is_bars_of_ours_unless_told_and_a_panel_plain():
    s = Series("ours", [1, None])
    assert (s.kind, s.source, s.marks) == ("bar", OURS, ())
    p = Panel("waste", ["a"], [s])
    assert (p.y_label, p.log_y, p.hlines, p.x_title, p.mark_at) == ("", False, (), "", None)
    chart = Chart("c", [p])
    assert chart.panels[0].series[0] is s


def test_a_result_finds_its_tables_and_starts_with_no_findings():
    a, b = Table("a", "A", []), Table("b", "B", [])
    r = Result("vo1989", "title", "seed 000", ["setup"], [a, b])
    assert r.table("b") is b and r.table("a") is a
    with pytest.raises(KeyError):
        r.table("c")
    assert (r.findings, r.chart, r.params) == ([], None, {})


def test_columns_series_panels_and_charts_cannot_be_changed_once_made():
    """Experiments share them (a module's columns, a chart the window keeps
    drawing): frozen, so that no reader changes what another reads."""
    import dataclasses
    s = Series("ours", [1])
    for obj, field in ((Column("k", "t"), "title"), (s, "label"), (Panel("p", [], [s]), "title"),
                       (Chart("c", []), "title")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, field, "changed")
