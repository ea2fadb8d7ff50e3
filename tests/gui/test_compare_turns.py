"""Compare mode entered half way through a trace, a piece a turn (issue 25).

The stall probe (benchmarks/bench_stall.py) found the compare phase holding
the event loop 190-260 ms on an idle machine: every new row's heap made in
one ``ShowModel.show``; pieces from several timers run in the same pass of
the event loop; a row joining before the others moving each row below it to
the next strategy (each drawn anew); the parameters panel remade whole.
These tests pin each fix by what a person would see go wrong without it:
the heaps shown, the rows' widgets, what was drawn again."""

import pytest
from PySide6.QtCore import QObject, QTimer

from heapscope.allocators.registry import STRATEGIES, make_strategy
from heapscope.allocators.replay import Program, replay_ops
from heapscope.gui import show_model
from heapscope.gui.compare_view import CompareHeapMap
from heapscope.gui.params_panel import own_first
from heapscope.gui.show_model import ShowModel
from heapscope.gui.turns import Turns, turns

from .test_compare_rows_join import _built

NAMES = ["next-fit", "first-fit", "tlsf", "buddy"]
POSITION = 260


def walk_at(trace, name: str, t: int) -> list:
    """``name``'s blocks after the first ``t`` operations, replayed here from scratch."""
    strategy = make_strategy(name)
    replay_ops(strategy, Program(), trace.kind[:t].tolist(), trace.ids[:t].tolist(),
               trace.sizes[:t].tolist())
    return [(b[0], b[1]) for b in strategy.walk_tuples()]


def drawn(row) -> list:
    return list(zip(row.map.blocks.addr.tolist(), row.map.blocks.size.tolist()))


# ----------------------------------------------------------------- the queue
def test_turns_run_a_piece_a_turn_first_asked_first_each_once(qtbot):
    queue = Turns()
    log = []

    def piece(name):
        def run():
            log.append(name)
            # what else the event loop has to do: it runs before the next piece
            QTimer.singleShot(0, lambda: log.append(f"after {name}"))
        return run
    a, b, c = piece("a"), piece("b"), piece("c")
    queue.call_soon(a)
    queue.call_soon(b)
    queue.call_soon(a)              # asked again before it ran: once
    queue.call_soon(c)
    assert queue.busy and log == []          # nothing runs inside the asking
    qtbot.waitUntil(lambda: not queue.busy and len(log) == 6, timeout=5000)
    assert log == ["a", "after a", "b", "after b", "c", "after c"]
    assert queue.ran == 3
    # nothing waits: no timer wakes the event loop any more
    qtbot.wait(10)
    assert not queue._timer.isActive()


def test_turns_skip_a_piece_whose_owner_is_gone_and_go_on_after_one_that_raises(qtbot):
    queue = Turns()
    log = []
    owner = QObject()
    queue.call_soon(lambda: log.append("owned"), owner)

    def raises():
        log.append("raises")
        raise RuntimeError("a piece's own fault")
    queue.call_soon(raises)
    queue.call_soon(lambda: log.append("last"))
    owner.deleteLater()
    with qtbot.captureExceptions() as raised:
        qtbot.waitUntil(lambda: not queue.busy, timeout=5000)
    assert log == ["raises", "last"]
    assert [type(e[1]) for e in raised] == [RuntimeError]


def test_the_application_has_one_queue():
    assert turns() is turns()


# ------------------------------------------------------- the new rows' heaps
@pytest.mark.fresh_window
def test_entering_compare_mode_makes_each_new_rows_heap_in_a_turn_before_the_show(qtbot, loaded,
                                                                                  monkeypatch):
    w = loaded
    # the small trace, as a big one (the least length made in turns)
    monkeypatch.setattr(show_model, "STAGED_FROM_OPS", len(w.trace))
    w.seek(POSITION)
    shown_before = list(w.model.shown)
    for tl in _built(w.trace, NAMES[1:]):
        w.model.add_timeline(tl)                # built: each stands at its last step
    made, shows = [], []
    prepare, show = ShowModel.prepare, ShowModel.show

    def logged_prepare(self, key, position):
        made.append((key[0], position, turns().ran))
        return prepare(self, key, position)

    def logged_show(self, keys, position=None):
        # where every timeline of the rows stands as the show begins
        shows.append(([self._timelines[k].position for k in keys], turns().ran))
        return show(self, keys, position)
    monkeypatch.setattr(ShowModel, "prepare", logged_prepare)
    monkeypatch.setattr(ShowModel, "show", logged_show)
    with qtbot.waitSignal(w.compare.changed, timeout=30000):
        w.compare.compare(NAMES)
        # nothing made inside the key press: the rows wait for their heaps
        assert w.model.shown == shown_before and made == [] and w.compare.busy
    assert not w.compare.busy
    # the three rows not shown had their heaps made, one a turn, then the show
    assert [(name, pos) for name, pos, _ in made] == [(n, POSITION) for n in NAMES[1:]]
    assert len({turn for _, _, turn in made}) == 3
    assert len(shows) == 1 and shows[0][1] > max(turn for _, _, turn in made)
    assert shows[0][0] == [POSITION] * len(NAMES)     # the show seeks nothing
    rows = w.compare.view.shown_rows()
    assert [r.name.text() for r in rows] == NAMES
    assert [drawn(r) for r in rows] == [walk_at(w.trace, n, POSITION) for n in NAMES]
    # back to one strategy and in again: every heap is there, shown in the call
    w.compare.leave()
    made.clear()
    w.compare.compare(NAMES)
    assert [k[0] for k in w.model.shown] == NAMES and made == [] and not w.compare.heaps.busy


@pytest.mark.fresh_window
def test_a_short_trace_shows_its_rows_without_waiting_turns(qtbot, loaded):
    w = loaded
    assert not w.compare.heaps.busy             # (a new window's)
    assert len(w.trace) < show_model.STAGED_FROM_OPS
    w.seek(POSITION)
    for tl in _built(w.trace, NAMES[1:]):
        w.model.add_timeline(tl)
    w.compare.compare(NAMES)
    # shown in the call (its rows then join the view a turn each)
    assert [k[0] for k in w.model.shown] == NAMES and w.model.position == POSITION
    assert not w.compare.heaps.busy


@pytest.mark.fresh_window
def test_prepare_makes_a_rows_heap_apart_and_leaves_a_shown_row_alone(qtbot, loaded):
    w = loaded
    model = w.model
    w.seek(POSITION)
    key = model.add_timeline(_built(w.trace, ["tlsf"])[0])
    shown = model.shown[0]
    shown_at = model.timeline(0).position
    assert model.prepare(shown, 10) is False and model.timeline(0).position == shown_at
    assert not model.prepared(key, 120)
    assert model.prepare(key, 120) is True and model.prepared(key, 120)
    assert model.prepare(key, 120) is False             # nothing left to make
    heap = model._trackers[key].heap
    assert list(zip(heap.blocks.addr.tolist(), heap.blocks.size.tolist())) == walk_at(w.trace, "tlsf", 120)
    assert model.position == POSITION and model.shown == [shown]


# ----------------------------------------------- a row joining before others
@pytest.mark.fresh_window
def test_a_row_joining_before_others_leaves_each_row_on_its_strategy(qtbot, loaded, monkeypatch):
    w = loaded
    w.seek(POSITION)
    for tl in _built(w.trace, NAMES[1:]):
        w.model.add_timeline(tl)
    view = w.compare.view
    first = ["next-fit", "tlsf", "buddy"]
    with qtbot.waitSignal(w.compare.changed, timeout=30000):
        w.compare.show_rows(first, POSITION)
    before = {r.name.text(): r for r in view.shown_rows()}
    layouts = {name: r.map.layout_ for name, r in before.items()}
    groups = dict(w.panels.params_panel._groups)
    renders = {}
    render = CompareHeapMap._render

    def counted(self, *args, **kwargs):
        renders[id(self)] = renders.get(id(self), 0) + 1
        return render(self, *args, **kwargs)
    monkeypatch.setattr(CompareHeapMap, "_render", counted)
    with qtbot.waitSignal(w.compare.changed, timeout=30000):
        w.compare.show_rows(NAMES, POSITION)             # first-fit joins second
    rows = view.shown_rows()
    assert [r.name.text() for r in rows] == NAMES
    assert [view.rows_split.widget(i) for i in range(len(rows))] == rows
    # the rows there before are the same widgets, on the same strategies
    for name in first:
        assert rows[NAMES.index(name)] is before[name]
        assert rows[NAMES.index(name)].key[0] == name
    # drawn again only where the shared scale changed (a bigger heap joined)
    same_scale = [n for n in first if before[n].map.layout_ == layouts[n]]
    assert same_scale, "the joining row changed every row's scale: pick another"
    assert all(renders.get(id(before[n].map), 0) == 0 for n in same_scale)
    assert [drawn(r) for r in rows] == [walk_at(w.trace, n, POSITION) for n in NAMES]
    # the parameters panel kept the groups of the rows still shown
    now = w.panels.params_panel._groups
    assert [k[0] for k in now] == NAMES
    assert all(now[k] is groups[k] for k in groups)
    editors = w.panels.params_panel.editors
    for name in NAMES:
        assert sorted(p for s, p in editors if s == name) == sorted(
            p.name for p in own_first(STRATEGIES[name]))


@pytest.mark.fresh_window
def test_the_densifier_waits_while_pieces_wait_their_turn(qtbot, loaded):
    w = loaded
    densifier = w.compare.densifier
    assert densifier.held is not None
    queue = turns()
    log = []
    queue.call_soon(lambda: log.append(densifier.held()))
    assert densifier.held()                 # a piece waits
    qtbot.waitUntil(lambda: not queue.busy, timeout=5000)
    assert log == [False] and not densifier.held()


def test_a_strategy_of_your_own_is_not_made_ahead_but_shown_with_its_code_watched(qtbot, small_trace_path,
                                                                                  monkeypatch):
    # HeapsInTurns makes the new rows' heaps in the GUI process, where a
    # strategy of your own must not run unwatched: its heap is left to the
    # show (gui/row_heaps.py), the built-in beside it is made ahead
    from pathlib import Path
    from heapscope.allocators import plugins
    from heapscope.cli import parse_window_request
    from heapscope.gui.app import make_window
    root = Path(__file__).resolve().parents[2]
    req = parse_window_request(["open", small_trace_path, "--allocator",
                                f"{root / 'examples' / 'bump.py'}:Bump", "--step", str(POSITION)])
    try:
        w = make_window(req.trace, "next-fit", req.params, req.strategy_params, req.step, None)
        qtbot.addWidget(w)
        w.show()
        qtbot.waitUntil(lambda: w.model.position == POSITION and not w.busy, timeout=60000)
        monkeypatch.setattr(show_model, "STAGED_FROM_OPS", len(w.trace))
        made = []
        prepare = ShowModel.prepare
        monkeypatch.setattr(ShowModel, "prepare",
                            lambda self, key, position: (made.append(key[0]), prepare(self, key, position))[1])
        w.compare.compare(["next-fit", "bump", "tlsf"])
        qtbot.waitUntil(lambda: w.compare.active and not w.compare.busy
                        and len(w.compare.view.shown_rows()) == 3, timeout=60000)
        assert "tlsf" in made and "bump" not in made
        rows = w.compare.view.shown_rows()
        assert [r.name.text() for r in rows] == ["next-fit", "bump", "tlsf"]
        assert w.model.position == POSITION
        for row in rows:
            assert drawn(row) == walk_at(w.trace, row.name.text(), POSITION), row.name.text()
        w.compare.loader.cancel()
        w.loader.cancel()
        w.loader.wait()
        w.close()
    finally:
        plugins.forget("bump")
