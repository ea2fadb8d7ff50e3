"""A structure kind is one module (docs/architecture.md, "A new structure kind").

The steps of the recipe, taken by a small kind defined here and registered
from this module alone: ``test-row`` reads a first-fit heap as one row of
free blocks in address order.  Registered, it is accepted by
``structure.make``, checked against the heap walk (the shared rules and its
own), gives ``members`` and ``where``, is followed from the events and has
mid-step states, is worded by predict, and is drawn by the window's
structure panel -- the generic lists view, since it has no view of its own --
with its blocks under its own labels, and ``heapscope inspect`` writes it in
its own lines (or, without lines of its own, lists its blocks by place).  No
other file of heapscope names it, and no file outside
allocators/structure_kinds/ switches on a built-in kind's name either.
"""

import ast

import contextlib
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from heapscope.allocators import events as ev
from heapscope.allocators import registry, structure, structure_kinds, structure_replay
from heapscope.allocators.first_fit import FirstFit
from heapscope.allocators.predict import GROW, Generic, hx, reveal
from heapscope.allocators.replay import Timeline
from heapscope.allocators.step_states import StepStates
from heapscope.allocators.structure import StructureMismatch, check_against_heap
from heapscope.allocators.structure_replay import Follower, ReplayError, replay_events, replayable
from heapscope.traces import make_workload
from heapscope.traces.trace import ALLOC

from .gui.conftest import temporary_settings, wait_loaded, window  # noqa: F401 (fixtures)

ROW = "test-row"
ROOT = pathlib.Path(__file__).resolve().parents[1]


# ------------------------------------------------------------- the kind
class RowFollower(Follower):
    """The row from first fit's events: ListInsert links a block, ListRemove
    unlinks it; the row is always in address order."""

    def __init__(self, before: dict) -> None:
        super().__init__(before)
        self.row = set(before["row"])

    @staticmethod
    def replayable(s: dict, out: dict) -> list[int]:
        out["row"] = list(s["row"])
        return out["row"]

    def apply(self, e) -> None:
        if isinstance(e, ev.ListInsert):
            if e.addr in self.row:
                raise ReplayError(f"{e.addr:#x} joins the row twice")
            self.row.add(e.addr)
        elif isinstance(e, ev.ListRemove):
            if e.addr not in self.row:
                raise ReplayError(f"{e.addr:#x} leaves the row but is not in it")
            self.row.discard(e.addr)

    def result(self, strict: bool) -> dict:
        row = sorted(self.row)
        return self.sized({"row": row}, row, strict)


class RowSpeaker(Generic):
    policy = "the row"

    def why_chosen(self) -> str:
        f = self.f
        return f"the row is read from its left end; {hx(f.chosen)} is the first block that fits {f.need:,} B."


class RowKind(structure_kinds.StructureKind):
    """``row``: the free blocks in address order, as one row."""

    name = ROW
    follower = RowFollower
    speaker = RowSpeaker

    def members(self, s: dict) -> list[int]:
        return list(s["row"])

    def where(self, s: dict) -> dict[int, str]:
        return {a: f"place {i} of the row" for i, a in enumerate(s["row"])}

    def check(self, s: dict) -> None:
        row = s["row"]
        if row != sorted(row):
            raise StructureMismatch(f"the row is out of address order: {row[:8]}")

    # how it reads, in heapscope inspect and in the window's lists view
    def inspect_lines(self, s: dict, all_items: bool, named: set) -> list[str]:
        row = s["row"]
        return [f"  the row, left to right ({len(row)}): "
                + " | ".join(f"{a:#x}{'*' if a in named else ''}" for a in row)]

    def labelled_lists(self, s: dict, named=()) -> list:
        return [(None, "the row, left to right", list(s["row"]))]


class RowFirstFit(FirstFit):
    """First fit whose structure() answers in the test kind."""

    name = "row-first-fit"

    def structure(self) -> dict:
        ring = super().structure()
        return structure.make(ROW, ring["sizes"], outside_blocks=ring["outside"], row=ring["free_list"])


@contextlib.contextmanager
def row_registered():
    """The one place the kind is registered; it is forgotten afterwards, so
    the other tests see the built-in kinds only."""
    structure_kinds.register(RowKind)
    try:
        yield structure_kinds.get(ROW)
    finally:
        structure_kinds.unregister(ROW)


@pytest.fixture
def row_kind():
    with row_registered() as kind:
        yield kind


@pytest.fixture(scope="module")
def trace():
    return make_workload("vo1989", steps=400, seed=3)


@pytest.fixture(scope="module")
def replayed(trace):
    """(t, heap before step t, its record, heap after it) for every step of the
    trace through the test kind's strategy."""
    with row_registered():      # the timeline's structures are of the kind
        tl = Timeline(trace, RowFirstFit).build()
        out = []
        for t in range(1, tl.n + 1):
            before = tl.state_at(t - 1)
            tl.seek(t)
            rec = tl.last_record
            rec.op = tl.op(t)       # (kind, id, size) of the trace's operation
            out.append((t, before, rec, tl.state_at(t)))
        return out


def test_the_kind_is_made_only_while_registered(row_kind):
    assert ROW in structure.KINDS and row_kind.name == ROW
    made = structure.make(ROW, {64: 32}, row=[64])
    assert made["kind"] == ROW and made["row"] == [64]
    structure_kinds.unregister(ROW)
    assert ROW not in structure.KINDS
    with pytest.raises(ValueError, match="unknown structure kind 'test-row'"):
        structure.make(ROW, {64: 32}, row=[64])
    with pytest.raises(ValueError, match="unknown structure kind"):
        structure.members(made)


def test_it_is_checked_against_the_heap(row_kind, replayed):
    free_seen = 0
    for t, before, rec, after in replayed:
        check_against_heap(after.structure, after.blocks)
        free_seen += len(after.structure["row"])
    assert free_seen > 0
    # the kind's own rule: a row out of address order is refused, in its words
    t, _, _, after = next(x for x in replayed if len(x[3].structure["row"]) >= 2)
    broken = dict(after.structure, row=list(reversed(after.structure["row"])))
    with pytest.raises(StructureMismatch, match="the row is out of address order"):
        check_against_heap(broken, after.blocks)
    # the rules every kind shares: each free block of the walk named once
    missing = dict(after.structure, row=after.structure["row"][1:])
    with pytest.raises(StructureMismatch, match="in the heap but not in the test-row structure"):
        check_against_heap(missing, after.blocks)


def test_it_gives_members_and_where(row_kind, replayed):
    _, _, _, after = next(x for x in replayed if len(x[3].structure["row"]) >= 3)
    s = after.structure
    free = sorted(b[0] for b in after.blocks if b[2] == "free")
    assert structure.members(s) == free          # address order, read off the heap walk
    assert structure.where(s) == {a: f"place {i} of the row" for i, a in enumerate(free)}


def test_it_is_followed_from_events_and_has_mid_step_states(row_kind, replayed):
    assert ROW in structure_replay.REPLAYABLE_KINDS
    mid_states = 0
    for t, before, rec, after in replayed:
        events = list(rec.events)
        # the events alone rebuild the structure the strategy gives after the step
        assert replay_events(before.structure, events) == replayable(after.structure), f"step {t}"
        states = StepStates(before.structure, after.structure, events)
        assert states.available
        assert states.at(-1) == before.structure
        assert states.at(len(events) - 1) == after.structure, f"step {t}"
        for i in range(len(events) - 1):
            mid = states.at(i)
            if mid["row"] not in (before.structure["row"], after.structure["row"]):
                mid_states += 1
                assert set(mid["sizes"]) == set(mid["row"])
    # some steps pass through a row that is neither the one before nor after
    # (first fit unlinks a block, then links its remainder)
    assert mid_states > 0


def test_a_kind_without_a_follower_has_no_mid_step_states(row_kind, replayed, monkeypatch):
    monkeypatch.setattr(RowKind, "follower", None)
    assert ROW not in structure_replay.REPLAYABLE_KINDS
    t, before, rec, after = next(x for x in replayed if len(x[2].events) > 1)
    states = StepStates(before.structure, after.structure, rec.events)
    assert not states.available and states.at(0) is after.structure


def test_it_is_worded_by_predict(row_kind, replayed):
    worded = 0
    for t, before, rec, after in replayed:
        kind, _, size = rec.op
        if kind != ALLOC or any(isinstance(e, (ev.Grow, ev.GrowFailed)) for e in rec.events):
            continue
        verdict = reveal(t, size, before, rec, RowFirstFit.name)
        assert verdict.answer != GROW
        # first fit takes the lowest free block that holds the block it placed
        placed = next(e for e in rec.events if isinstance(e, ev.Placed))
        lowest = min(b[0] for b in before.blocks
                     if b[2] == "free" and b[0] <= placed.addr < b[0] + b[1])
        assert verdict.answer == lowest
        assert verdict.reason.startswith(f"The row is read from its left end; {hx(lowest)} is the first")
        worded += 1
    assert worded > 10


def test_it_is_drawn_by_the_window_s_structure_panel(row_kind, qtbot, monkeypatch, request, tmp_path, trace):
    from heapscope import traces
    from heapscope.gui.structure_views.lists_view import ListsView
    monkeypatch.setitem(registry.STRATEGIES, RowFirstFit.name, RowFirstFit)
    w = request.getfixturevalue("window")      # built now: its picker lists the strategy
    path = tmp_path / "row.rep"
    traces.write_rep(trace, path)
    wait_loaded(qtbot, w, lambda: w.open_trace(str(path)))
    i = w.strategy_box.findData(RowFirstFit.name)
    assert i >= 0
    wait_loaded(qtbot, w, lambda: w.strategy_box.activated.emit(i))
    w.seek(300)
    s = w.timeline.strategy.structure()
    assert s["kind"] == ROW and s["row"]
    view = w.structure_panel.view
    assert isinstance(view, ListsView)           # no view of its own: the generic one
    assert view.title.text() == "Free structure: test-row, drawn as lists"
    drawn = view.drawn()
    shown = [a for entry in drawn["lists"] for a in entry["blocks"]]
    assert sorted(shown) == sorted(b[0] for b in w.timeline.strategy.walk_tuples() if b[2] == "free")
    # under the label its module gives (then the blocks kept outside it)
    assert drawn["lists"][0]["label"] == "the row, left to right"
    # the window says where the kind keeps a block, in the kind's words
    places = w.model.step(0).places
    assert places[s["row"][0]] == "in place 0 of the row"


def test_heapscope_inspect_writes_it_in_its_own_lines(row_kind, monkeypatch, trace):
    from heapscope.inspection import format_text, inspect_step
    monkeypatch.setitem(registry.STRATEGIES, RowFirstFit.name, RowFirstFit)
    report = inspect_step(trace, RowFirstFit.name, 300)
    outside = {o["addr"] for o in report["structure"]["outside"]}
    # the row read off the heap walk: its free blocks in address order
    free = sorted(b[0] for b in report["blocks"] if b[2] == "free" and b[0] not in outside)
    named = {a for e in report["events"] for a in e["addrs"]}
    assert len(free) >= 2 and named
    lines = format_text(report).splitlines()
    at = lines.index(f"Structure ({ROW}):")
    expected = "  the row, left to right ({}): {}".format(
        len(free), " | ".join(hex(a) + ("*" if a in named else "") for a in free))
    assert lines[at + 1] == expected
    # then what every kind shares: the blocks kept apart
    assert lines[at + 2:] == [line for line in lines[at + 2:] if line.startswith("  kept apart: ")]
    assert len(lines) - at - 2 == len(outside)


def test_heapscope_inspect_lists_its_blocks_by_place(row_kind, monkeypatch, trace):
    """Without lines of its own, a kind is listed by the places it names."""
    from heapscope.inspection import format_text, inspect_step
    monkeypatch.setitem(registry.STRATEGIES, RowFirstFit.name, RowFirstFit)
    monkeypatch.setattr(RowKind, "inspect_lines", structure_kinds.StructureKind.inspect_lines)
    report = inspect_step(trace, RowFirstFit.name, 300)
    row = report["structure"]["row"]
    assert report["structure"]["kind"] == ROW and row
    lines = format_text(report).splitlines()
    at = lines.index(f"Structure ({ROW}):")
    # one line per place the kind names, in its words, with the block's address
    assert all(any(line.startswith(f"  place {i} of the row: {a:#x}") for line in lines[at + 1:])
               for i, a in enumerate(row)), lines[at:at + 5]


def test_a_view_of_its_own_is_found_by_its_module_name_alone():
    """Step 6 with a view of its own: each ``*_view.py`` module of
    gui/structure_views/ is imported by ``view_for`` itself (no list names
    them).  In a fresh interpreter, where nothing else imported the views,
    each kind a module registers (read off its ``@register_view`` lines) gets
    that view, and a kind without one the generic lists view."""
    views = ROOT / "gui" / "structure_views"
    expected = {}
    for module in views.glob("*_view.py"):
        for kind, cls in re.findall(r'^@register_view\("([^"]+)"\)\nclass (\w+)', module.read_text(), re.M):
            expected[kind] = cls
    assert len(expected) >= 10 and expected["lists"] == "ListsView"
    asked = sorted(expected) + ["size-classes", ROW]
    code = ("import json, sys; from heapscope.gui.structure_views import view_for; "
            "print(json.dumps({k: view_for(k).__name__ for k in json.loads(sys.argv[1])}))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(asked)], capture_output=True, text=True,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert expected["bins"] == "BinsView"        # the lists view with dlmalloc's bin map
    assert json.loads(done.stdout) == {**expected, "size-classes": "ListsView", ROW: "ListsView"}


# ------------------------------------------- no switch on a kind's name
#: the comparisons of a structure kind's name that stay outside
#: allocators/structure_kinds/: (file, kind compared with, how many), why
KIND_SWITCHES_ALLOWED = {
    # the generic lists view titles its own kind apart from a kind it draws
    # in its stead ("the strategy's lists" / "bins, drawn as lists")
    ("gui/structure_views/lists_view.py", "lists", 1),
}


def _names_a_kind(node: ast.AST) -> bool:
    """``kind``, ``x.kind``, ``x["kind"]`` or ``x.get("kind", ...)``."""
    if isinstance(node, ast.Name):
        return node.id == "kind"
    if isinstance(node, ast.Attribute):
        return node.attr == "kind"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "kind"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "kind"
    return False


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for x in node.elts for s in _strings(x)]
    return []


def kind_switches(source: str, kinds) -> list[tuple[int, str]]:
    """(line, kind name) of each comparison of a kind (:func:`_names_a_kind`)
    with the string name of one of ``kinds`` (``==``, ``!=``, ``in``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if not any(_names_a_kind(x) for x in sides):
            continue
        for x in sides:
            found.extend((node.lineno, s) for s in _strings(x) if s in kinds)
    return found


def test_the_scan_finds_a_switch_on_a_kind_s_name():
    kinds = {"tlsf", "buddy", "address-ring"}
    source = """
if s["kind"] == "tlsf": pass
elif structure.get("kind") in ("buddy", "lists"): pass
if self.kind != "address-ring" or kind == "zig": pass
if e.kind == "zig-zag" or op["kind"] == "free" or name == "tlsf": pass
"""
    assert kind_switches(source, kinds) == [(2, "tlsf"), (3, "buddy"), (4, "address-ring")]


def test_no_switch_on_a_structure_kind_s_name_outside_its_module():
    """A kind's words, lines and lists live in its module: nothing outside
    allocators/structure_kinds/ compares a kind with a registered kind's
    name, but for the allow-list above (which can only shrink: an entry no
    longer found fails too)."""
    kinds = set(structure_kinds.names())
    assert {"address-ring", "tlsf", "bins", "lists"} <= kinds
    found: dict[tuple[str, str], int] = {}
    for folder in ("allocators", "heapscope", "gui", "traces"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith("allocators/structure_kinds/"):
                continue
            for line, name in kind_switches(path.read_text(), kinds):
                found[(rel, name)] = found.get((rel, name), 0) + 1
    allowed = {(path, name): n for path, name, n in KIND_SWITCHES_ALLOWED}
    assert found == allowed, ("a switch on a structure kind's name outside its module: move the "
                              "per-kind part into allocators/structure_kinds/ (docs/architecture.md)")
