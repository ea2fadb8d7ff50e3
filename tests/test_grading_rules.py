"""``heapscope grade``'s rules that a student's allocator cannot game (issue 19):
a NULL is an error unless the heap was refused growth; utilisation counts
every request of the trace, so failing never raises it, and a 0-byte heap is
never 1; the heap grows only through ``_take_core``; a strategy must give the
same addresses on every replay; a bundled trace's name means the bundled
trace whatever folder grade runs in; ``--baseline`` scores a built-in beside.

The allocators are user strategies written here, each a few lines on top of
the bump allocator below.  Expected numbers are worked out by hand in the
comments.
"""

import io
import json
import textwrap
from pathlib import Path

import pytest

from heapscope.allocators import plugins
from heapscope.allocators.grading import (TIMED_RUNS, check_trace, grade, trace_peak_live,
                                          utilisation)
from heapscope.allocators.replay import Timeline
from heapscope.cli import _grade_progress, default_grade_traces, main
from heapscope.traces import TraceError, load_trace, read_rep
from heapscope.traces.trace import Trace

from tests.depth import deep

ROOT = Path(__file__).resolve().parent.parent

BUMP = '''
import random

from heapscope import FREE, USED, UserStrategy, align_up


class Bump(UserStrategy):
    """Bump allocator: fresh memory for every request (align 8, no header)"""

    def __init__(self, **common):
        super().__init__(**common)
        self.blocks = []                 # [addr, size, payload or None]
        self.entry = {}

    def place(self, addr, need, size):
        self._note_alloc(addr, addr, need, size, 0)
        self.entry[addr] = [addr, need, addr]
        self.blocks.append(self.entry[addr])
        return addr

    def _malloc(self, size):
        need = align_up(max(size, 1), self.align)
        addr = self._take_core(need)
        if addr is None:
            return None
        return self.place(addr, need, size)

    def _free(self, payload):
        self._note_free(payload)
        self.entry.pop(payload)[2] = None

    def _blocks(self):
        for addr, size, payload in self.blocks:
            yield addr, size, (FREE if payload is None else USED), payload
'''


@pytest.fixture
def load(tmp_path):
    """Write a strategy file (BUMP plus ``source``) and load its class."""
    loaded = []

    def make(source: str, cls: str):
        path = tmp_path / f"{cls.lower()}.py"
        path.write_text(BUMP + textwrap.dedent(source))
        klass = plugins.load_file(f"{path}:{cls}")
        loaded.append(klass.name)
        return klass
    yield make
    for name in loaded:
        plugins.forget(name)


def rep(tmp_path, ops: list[str], name: str = "t.rep") -> Path:
    """A .rep file whose first op is on line 5."""
    path = tmp_path / name
    ids = 1 + max(int(op.split()[1]) for op in ops) if ops else 0
    path.write_text(f"0\n{ids}\n{len(ops)}\n1\n" + "\n".join(ops) + "\n")
    return path


def graded(klass, path, **kw):
    kw.setdefault("timing", False)
    result = grade(klass, [(str(path), read_rep(path))], **kw)
    t, = result.traces
    return t


# ------------------------------------------------------------------ NULL
ALWAYS_NONE = '''
class Never(Bump):
    name = "never"

    def _malloc(self, size):
        return None
'''

SMALL_ONLY = '''
class SmallOnly(Bump):
    name = "small-only"

    def _malloc(self, size):
        if size > 100:
            return None
        return super()._malloc(size)
'''


def test_an_allocator_that_never_allocates_is_invalid_at_its_first_request(load, tmp_path):
    klass = load(ALWAYS_NONE, "Never")
    path = rep(tmp_path, ["a 0 24", "a 1 40", "f 0", "f 1"])
    t = graded(klass, path)
    assert not t.valid
    assert (t.error.step, t.error.method, t.line) == (1, "_malloc", 5)
    assert t.operation == "malloc(24) for id 0"
    assert "returned None (out of memory) but the heap was never refused growth" in t.error.message


def test_the_report_names_the_step_the_trace_line_and_the_request(load, tmp_path, capsys):
    load(ALWAYS_NONE, "Never")
    path = rep(tmp_path, ["a 0 24", "a 1 40", "f 0", "f 1"])
    assert main(["grade", str(tmp_path / "never.py:Never"), str(path)]) == 1
    out = capsys.readouterr().out
    assert "error at step 1 (" in out and "t.rep line 5): malloc(24) for id 0" in out
    assert "never refused growth during this request" in out
    assert "perf index 0 / 100" in out


def test_refusing_big_requests_is_invalid_at_the_first_big_one(load, tmp_path):
    klass = load(SMALL_ONLY, "SmallOnly")
    # step 4 is the first request over 100 bytes; line 5 + 3
    path = rep(tmp_path, ["a 0 24", "a 1 40", "f 0", "a 2 150", "f 1", "f 2"])
    t = graded(klass, path)
    assert (t.valid, t.error.step, t.line, t.operation) == (False, 4, 8, "malloc(150) for id 2")
    # a realloc growing past 100 bytes goes through the default _realloc, which mallocs
    path = rep(tmp_path, ["a 0 24", "r 0 200", "f 0"], "r.rep")
    t = graded(klass, path)
    assert (t.valid, t.error.step, t.operation) == (False, 2, "realloc of id 0 to 200 bytes")
    assert "never refused growth" in t.error.message


def test_a_realloc_of_your_own_returning_none_for_nothing_is_invalid(load, tmp_path):
    klass = load('''
    class NoRealloc(Bump):
        name = "no-realloc"

        def _realloc(self, payload, size):
            return None
    ''', "NoRealloc")
    t = graded(klass, rep(tmp_path, ["a 0 24", "r 0 200", "f 0"]))
    assert (t.valid, t.error.step, t.error.method) == (False, 2, "_realloc")


def test_a_null_for_zero_bytes_is_what_c_allows(load, tmp_path):
    klass = load('''
    class ZeroNull(Bump):
        name = "zero-null"

        def _malloc(self, size):
            return None if size == 0 else super()._malloc(size)
    ''', "ZeroNull")
    t = graded(klass, rep(tmp_path, ["a 0 0", "a 1 40", "f 0", "f 1"]))
    assert t.valid, t.error
    # U = 40, H = 40, the NULL for 0 bytes costs nothing: 1.0
    assert (t.failed, t.failed_bytes, t.utilisation) == (0, 0, 1.0)


def test_a_null_after_a_refused_growth_is_out_of_memory_and_valid(load, tmp_path):
    klass = load("", "Bump")
    # limit 100: 24 -> brk 24, 40 -> brk 64, 100 needs 104 more: refused (64 + 104 > 100)
    path = rep(tmp_path, ["a 0 24", "a 1 40", "f 0", "a 2 100", "f 1", "f 2"])
    t = graded(klass, path, params={"heap_limit": 100})
    assert t.valid, t.error
    assert (t.failed, t.failed_bytes, t.heap) == (1, 104, 64)
    # in a fixed pool a None is out of memory too (pool 32: 24 fits, then 40 does not)
    t = graded(klass, path, params={"pool_size": 32})
    assert t.valid, t.error
    assert t.failed == 2          # 40 and 100


def test_the_bump_example_under_a_1k_limit_fails_after_refusals_and_stays_valid(tmp_path):
    bump = plugins.load_file(f"{ROOT}/examples/bump.py:Bump")
    try:
        trace = load_trace("vo1989:steps=500")
        result = grade(bump, [("vo", trace)], {"heap_limit": 1024}, timing=False)
        t, = result.traces
        assert t.valid, t.error
        unlimited, = grade(bump, [("vo", trace)], timing=False).traces
        # failing may not raise utilisation (the issue: 0.243 unlimited, 0.449 at 1K)
        assert t.utilisation <= unlimited.utilisation
        assert t.failed > 0 and t.heap <= 1024
    finally:
        plugins.forget("bump")


# ------------------------------------------------------------ utilisation
def test_utilisation_counts_the_trace_not_the_strategy_and_failing_never_pays(load, tmp_path):
    klass = load("", "Bump")
    path = rep(tmp_path, ["a 0 24", "a 1 40", "f 0", "a 2 100", "f 1", "f 2"])
    # U: live 24, 64, 40, 140, 100, 0: the peak is 140 (the trace alone)
    # unlimited: H = 24 + 40 + 104 = 168, R = 0: 140 / 168
    t = graded(klass, path)
    assert t.utilisation == pytest.approx(140 / 168)
    assert (t.max_live, t.heap) == (140, 168)
    # limit 100: H = 64, the 100-byte request failed and counts 104 (aligned): 140 / 168 again
    # (the old rule said 64 / 64 = 1.000 here: failing raised utilisation)
    t = graded(klass, path, params={"heap_limit": 100})
    assert t.utilisation == pytest.approx(140 / 168)
    assert (t.max_live, t.heap, t.failed_bytes) == (140, 64, 104)


def test_a_failed_realloc_counts_its_new_size(load, tmp_path):
    klass = load("", "Bump")
    path = rep(tmp_path, ["a 0 10", "r 0 50", "a 1 30", "f 0", "f 1"])
    # U: 10, 50 (the realloc as if it succeeded), 80, 30, 0: peak 80
    # unlimited: 16, then the realloc moves to a new 56-byte block, then 32: H = 104
    t = graded(klass, path)
    assert t.utilisation == pytest.approx(80 / 104)
    # limit 64: 16; the realloc needs 56 more (72 > 64): refused, R = 56; 30 -> 32 (48): H = 48
    # (the old rule: the program's own peak 40 / 48)
    t = graded(klass, path, params={"heap_limit": 64})
    assert t.valid, t.error
    assert t.utilisation == pytest.approx(80 / 104)
    assert (t.max_live, t.heap, t.failed_bytes) == (80, 48, 56)


def test_a_zero_byte_heap_is_never_utilisation_one(load, tmp_path):
    empty = rep(tmp_path, [], "empty.rep")
    t = graded(load("", "Bump"), empty)
    assert (t.valid, t.heap, t.utilisation) == (True, 0, 0.0)     # was 1.000
    assert utilisation(0, 0, 0) == 0.0
    klass = load(ALWAYS_NONE, "Never")
    # a pool of 0 bytes: every request fails, legitimately; U = 20 + 36 = 56,
    # R = 24 + 40 = 64 (aligned): 56 / 64, where the old rule said 1.000
    path = rep(tmp_path, ["a 0 20", "a 1 36", "f 0", "f 1"])
    t = graded(klass, path, params={"pool_size": 0})
    assert t.valid, t.error
    assert t.utilisation == pytest.approx(56 / 64)
    assert (t.heap, t.failed_bytes) == (0, 64)


def test_the_peak_live_payload_is_the_traces_own(tmp_path):
    # a second computation: a dict of live ids, walked op by op
    trace = load_trace("djgpp1997:actions=3000")
    live, total, peak = {}, 0, 0
    for kind, ident, size in trace:
        total -= live.pop(ident, 0)
        if kind != 1:                  # not a free
            live[ident] = size
            total += size
        peak = max(peak, total)
    assert trace_peak_live(trace) == peak
    assert trace_peak_live(Trace.from_ops([])) == 0


# ----------------------------------------------------------- the one door
RAW_BRK = '''
class RawBrk(Bump):
    name = "raw-brk"

    def _malloc(self, size):
        need = align_up(max(size, 1), self.align)
        addr = self.arena.brk
        self.arena.brk += need           # round the heap limit
        return self.place(addr, need, size)
'''


def test_moving_the_break_by_hand_is_invalid(load, tmp_path, capsys):
    klass = load(RAW_BRK, "RawBrk")
    t = graded(klass, rep(tmp_path, ["a 0 24", "a 1 40", "f 0", "f 1"]), params={"heap_limit": 1024})
    assert (t.valid, t.error.step, t.error.method) == (False, 1, "_malloc")
    assert "the break moved from 0x0 to 0x18 without self._take_core" in t.error.message
    # the case: the default trace under --heap-limit 1K graded valid at 35,904 B
    assert main(["grade", str(tmp_path / "rawbrk.py:RawBrk"), "default", "--heap-limit", "1K"]) == 1
    out = capsys.readouterr().out
    assert "error at step 1" in out and "without self._take_core" in out


@pytest.mark.parametrize("cheat, said", [
    ("self.arena.limit = None", "self.arena.limit changed from 64 to None"),
    ("self.arena.refusals += 1", "self.arena.refusals changed from 0 to 1 without self._take_core"),
    ("self.arena.fixed = True", "self.arena.fixed changed from False to True"),
    ("self.arena.base = 8", "self.arena.base changed from 0x0 to 0x8"),
])
def test_changing_the_arena_by_hand_is_invalid(load, tmp_path, cheat, said):
    klass = load(f'''
    class Cheat(Bump):
        name = "cheat"

        def _malloc(self, size):
            if size == 40:
                {cheat}
            return super()._malloc(size)
    ''', "Cheat")
    t = graded(klass, rep(tmp_path, ["a 0 24", "a 1 40", "f 0", "f 1"]), params={"heap_limit": 64})
    assert (t.valid, t.error.step) == (False, 2), t.error
    assert said in t.error.message


def test_moving_the_break_in_the_walk_is_caught_by_the_walk_checks(load, tmp_path):
    klass = load('''
    class WalkGrows(Bump):
        name = "walk-grows"

        def _blocks(self):
            out = list(super()._blocks())
            if len(self.blocks) == 2 and self.arena.brk == 64:
                self.arena.brk += 8
            return out
    ''', "WalkGrows")
    t = graded(klass, rep(tmp_path, ["a 0 24", "a 1 40", "f 0", "f 1"]), check_every=1)
    assert (t.valid, t.error.step) == (False, 2)
    assert "the break moved from 0x40 to 0x48 without self._take_core" in t.error.message


# ------------------------------------------------------------- determinism
RANDOM = '''
class Random(Bump):
    name = "random-gaps"

    def _malloc(self, size):
        need = align_up(max(size, 1), self.align)
        gap = 8 * random.randrange(1000)      # addresses change from run to run
        addr = self._take_core(gap + need)
        return None if addr is None else self.place_after(addr, gap, need, size)

    def place_after(self, addr, gap, need, size):
        if gap:
            self.blocks.append([addr, gap, None])
        return self.place(addr + gap, need, size)
'''

RUNS = '''
RUNS = [0]


class Drifts(Bump):
    """Deterministic for four requests, then not: the fifth leaves a gap of 8 x
    the number of instances made so far."""
    name = "drifts"

    def __init__(self, **common):
        super().__init__(**common)
        RUNS[0] += 1
        self.n = 0

    def _malloc(self, size):
        self.n += 1
        if self.n == 5:
            gap = 8 * RUNS[0]
            addr = self._take_core(gap)
            self.blocks.append([addr, gap, None])
        return super()._malloc(size)
'''


def test_a_strategy_using_random_addresses_is_not_deterministic(load, tmp_path):
    klass = load(RANDOM, "Random")
    ops = [f"a {i} 16" for i in range(40)] + [f"f {i}" for i in range(40)]
    t = graded(klass, rep(tmp_path, ops), timing=True)
    assert not t.valid
    assert t.error.message.startswith("not deterministic: step ")
    assert " the first time and 0x" in t.error.message and t.error.step >= 1


def test_determinism_names_the_first_step_that_differs(load, tmp_path):
    klass = load(RUNS, "Drifts")
    ops = [f"a {i} 8" for i in range(6)] + [f"f {i}" for i in range(6)]
    t = graded(klass, rep(tmp_path, ops), timing=True)
    # instances: 1 the check pass (gap 8: the fifth request at 32 + 8 = 0x28),
    # 2..4 the three timed runs of a short trace (their books differ), 5 the
    # replay that looks for the step (gap 40: 32 + 40 = 0x48)
    assert TIMED_RUNS == 3
    assert not t.valid
    assert t.error.step == 5 and t.line == 9
    assert "not deterministic: step 5 returned 0x28 the first time and 0x48 the second" \
        in t.error.message


OVERLAPS_LATER = '''
RUNS = [0]


class OverlapsLater(Bump):
    """Right in its first instance (the check pass); every later one hands
    out its first block again for the second request: an overlap only the
    result checks would see."""
    name = "overlaps-later"

    def __init__(self, **common):
        super().__init__(**common)
        RUNS[0] += 1
        self.first = None

    def _malloc(self, size):
        if RUNS[0] > 1 and self.first is not None:
            return self.place(self.first, align_up(size, self.align), size)
        self.first = super()._malloc(size)
        return self.first
'''


def test_the_timed_runs_are_unguarded_and_compared_by_their_books(load, tmp_path):
    # The timed runs replay without the result checks (the check pass ran them);
    # a later instance that overlaps is therefore caught by its books differing,
    # and named by the replay that looks for the step: the bump gave 0x0 then
    # 0x8 the first time; the second time 0x0 twice.  A guarded timed run would
    # report the overlap itself instead.
    klass = load(OVERLAPS_LATER, "OverlapsLater")
    t = graded(klass, rep(tmp_path, ["a 0 8", "a 1 8"]), timing=True)
    assert not t.valid
    assert t.error.step == 2 and t.line == 6
    assert t.error.message == (
        "not deterministic: step 2 returned 0x8 the first time and 0x0 the second: the same "
        "trace must give the same heap every time (seed any random numbers you use, and do not "
        "depend on the time, id() or the order of a set of objects)")


def test_a_seeded_random_strategy_is_deterministic(load, tmp_path):
    klass = load(RANDOM.replace("random.randrange", "self.rng.randrange").replace(
        "    def _malloc(self, size):",
        "    def __init__(self, **common):\n        super().__init__(**common)\n"
        "        self.rng = random.Random(7)\n\n    def _malloc(self, size):", 1), "Random")
    ops = [f"a {i} 16" for i in range(40)] + [f"f {i}" for i in range(40)]
    t = graded(klass, rep(tmp_path, ops), timing=True)
    assert t.valid, t.error
    assert t.seconds > 0


def test_a_cache_the_walk_fills_is_not_called_non_deterministic(load, tmp_path):
    # the check pass walks the heap, the timed runs do not: the strategy's own
    # attributes differ at the end, its addresses never do
    klass = load('''
    class Cached(Bump):
        name = "cached"

        def _blocks(self):
            self.walks = getattr(self, "walks", 0) + 1
            return super()._blocks()
    ''', "Cached")
    ops = [f"a {i} 16" for i in range(20)] + [f"f {i}" for i in range(20)]
    t = graded(klass, rep(tmp_path, ops), timing=True)
    assert t.valid, t.error


# ------------------------------------------------------- default trace names
def test_bundled_names_win_over_files_of_the_current_folder(tmp_path, monkeypatch):
    tiny = "0\n2\n3\n1\na 0 8\na 1 8\nf 0\n"
    for name in ("default", "gcc-cc1", "vo1989"):
        (tmp_path / name).write_text(tiny)
    monkeypatch.chdir(tmp_path)
    assert len(load_trace("default")) == 20000          # the bundled default.rep
    assert len(load_trace("gcc-cc1")) == 63678
    assert len(load_trace("vo1989:steps=100")) == 200   # the workload
    assert len(load_trace("vo1989")) == 20000
    assert len(load_trace("./default")) == 3            # a path names the file
    assert len(load_trace(str(tmp_path / "gcc-cc1"))) == 3
    (tmp_path / "mine").write_text(tiny)
    assert len(load_trace("mine")) == 3                 # no bundled trace of that name
    with pytest.raises(TraceError, match=r"needs a path|named with a path: \./nothing"):
        load_trace("nothing")
    for name in default_grade_traces():
        source = getattr(load_trace(name), "source", None)
        assert source is None or Path(source).parent != tmp_path, name


#: the quick suite grades each default trace's first operations only
GRADED_OPS = 300


def test_grade_with_no_trace_names_grades_the_bundled_ones(tmp_path, monkeypatch, capsys):
    """A decoy of three operations in the folder for each default name; grade
    with no trace must load the bundled trace of every name, whole.  The deep
    suite grades them whole (ten traces, the 40k-row sqlite among them,
    with the timed runs: 9 s); the quick one grades each trace's first
    GRADED_OPS operations, after checking that grade loaded the bundled
    trace itself (the decoys are what a wrong resolution would read)."""
    from heapscope import cli
    decoy = "0\n2\n3\n1\na 0 8\na 1 8\nf 0\n"
    for name in default_grade_traces():
        (tmp_path / name).write_text(decoy)
    monkeypatch.chdir(tmp_path)
    loaded = {}
    if not deep():
        def load_head(name):
            trace = load_trace(name)
            loaded[name] = len(trace)
            return Trace.from_ops(list(trace)[:GRADED_OPS], name=trace.name)
        monkeypatch.setattr(cli, "load_trace", load_head)
    assert main(["grade", f"{ROOT}/examples/bump.py:Bump", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    plugins.forget("bump")
    assert [t["trace"] for t in data["traces"]] == default_grade_traces()
    assert all(t["ops"] > 3 for t in data["traces"])
    if not deep():
        # every default name was loaded as its bundled trace or workload, whole
        monkeypatch.chdir(ROOT)
        assert loaded == {name: len(load_trace(name)) for name in default_grade_traces()}
        assert all(ops > GRADED_OPS for ops in loaded.values())


# --------------------------------------------------------------- baseline
def test_a_baseline_is_scored_by_the_same_rule(load, tmp_path, capsys):
    klass = load("", "Bump")
    trace = load_trace("vo1989:steps=300")
    result = grade(klass, [("vo", trace)], baseline="next-fit")
    t, = result.traces
    b = t.baseline
    assert b is not None and b.error is None and b.seconds > 0
    # independently: the timeline's heap after the last step, and the trace's peak
    tl = Timeline(trace, "next-fit").build()
    assert b.heap == int(tl.series.heap[-1])
    assert b.utilisation == pytest.approx(trace_peak_live(trace) / b.heap)
    assert result.baseline_mean_utilisation == b.utilisation
    # in the reports
    path = tmp_path / "vo.rep"
    path.write_text("0\n3\n4\n1\na 0 24\na 1 40\nf 0\nf 1\n")
    assert main(["grade", str(tmp_path / "bump.py:Bump"), str(path), "--baseline", "next-fit",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["baseline"]["strategy"] == "next-fit"
    assert data["traces"][0]["baseline"]["utilisation"] > 0
    assert main(["grade", str(tmp_path / "bump.py:Bump"), str(path), "--baseline", "next-fit"]) == 0
    head = capsys.readouterr().out.splitlines()
    assert any("baseline next-fit util" in line and "baseline next-fit Kops/s" in line
               for line in head)


def test_a_baseline_must_be_built_in(load, capsys):
    load("", "Bump")
    assert main(["grade", "bump", "default", "--baseline", "no-such"]) == 2
    assert "--baseline no-such: not a built-in strategy" in capsys.readouterr().err


# --------------------------------------------------------------- progress
def test_progress_ends_each_trace_with_a_summary_line(load, tmp_path):
    klass = load("", "Bump")
    told = []
    grade(klass, [("a", load_trace("vo1989:steps=200")), ("b", load_trace("perl-words"))],
          progress=lambda name, what: told.append((name, what)))
    done = [(name, what) for name, what in told if what.startswith("done: ")]
    assert [name for name, _ in done] == ["vo1989:steps=200", "perl-words"]
    assert all(what.startswith("done: valid, util 0.") and "Kops/s" in what for _, what in done)
    assert ("perl-words", "timing") in told
    # on a terminal: a bar per trace, then its summary line kept (heapscope/console.py)
    from rich.console import Console
    from heapscope.console import Bars
    stream = io.StringIO()
    bars = Bars(stream, "%", console=Console(file=stream, force_terminal=True, width=100))
    show = _grade_progress(bars)
    show("gcc-cc1", "checking 40%")
    assert bars.progress.tasks[bars.tasks["gcc-cc1"]].completed == 40
    show("gcc-cc1", "timing")
    assert bars.progress.tasks[bars.tasks["gcc-cc1"]].description == "gcc-cc1: timing"
    assert bars.progress.tasks[bars.tasks["gcc-cc1"]].completed == 40
    show("gcc-cc1", "done: valid, util 0.812, 45.2 Kops/s")
    bars.close()
    assert "gcc-cc1" not in bars.tasks
    assert "trace gcc-cc1: valid, util 0.812, 45.2 Kops/s\n" in stream.getvalue()


def test_the_walk_checks_run_at_least_at_the_end(load, tmp_path):
    klass = load('''
    class LastBad(Bump):
        name = "last-bad"

        def _blocks(self):
            out = list(super()._blocks())
            if len(self.blocks) == 3:
                out.pop()                   # a gap at the end, from the third request on
            return out
    ''', "LastBad")
    path = rep(tmp_path, [f"a {i} 8" for i in range(3)])
    checked = check_trace(lambda: klass(), read_rep(path))
    assert checked.error is not None and checked.error.step == 3


# ------------------------------------------------------- the index, by hand
def _two_traces(fast: bool):
    """Two graded traces with numbers chosen to work the index by hand:
    A: 100 ops, peak 48 of a 64-byte heap (util 0.75); B: 300 ops, peak 0 of
    32 bytes (util 0, valid).  fast: the strategy took 1 + 3 ms, TLSF 2 + 6 ms
    (T = 400 / 0.004 = 100 Kops/s, T_ref = 50 Kops/s); else the other way."""
    from heapscope.allocators.grading import BaselineRun, TraceGrade
    own, ref = ((0.001, 0.003), (0.002, 0.006)) if fast else ((0.002, 0.006), (0.001, 0.003))
    a = TraceGrade("a.rep", "a", 100, max_live=48, heap=64, seconds=own[0], reference_seconds=ref[0],
                   baseline=BaselineRun(heap=96, seconds=0.004, max_live=48))
    b = TraceGrade("b.rep", "b", 300, max_live=0, heap=32, seconds=own[1], reference_seconds=ref[1],
                   baseline=BaselineRun(error="ValueError: no"))
    return a, b


def test_the_performance_index_worked_by_hand():
    from heapscope.allocators.grading import Grade
    a, b = _two_traces(fast=True)
    g = Grade("mine", {}, [a, b])
    assert g.valid
    assert a.utilisation == 0.75 and b.utilisation == 0.0
    assert g.mean_utilisation == pytest.approx(0.375)
    assert g.throughput == pytest.approx(100_000) and g.reference_throughput == pytest.approx(50_000)
    assert g.throughput_ratio == pytest.approx(2.0)
    # 100 x (0.6 x 0.375 + 0.4 x min(2, 1)) = 22.5 + 40
    assert g.perf_index == pytest.approx(62.5)
    # B alone: utilisation 0 counts as 0 (not as missing): 100 x (0 + 0.4 x 1)
    assert Grade("mine", {}, [b]).perf_index == pytest.approx(40.0)
    slow = Grade("mine", {}, list(_two_traces(fast=False)))
    # T = 400 / 0.008 = 50 Kops/s, T_ref = 100 Kops/s: 100 x (0.225 + 0.4 x 0.5)
    assert slow.throughput_ratio == pytest.approx(0.5)
    assert slow.perf_index == pytest.approx(42.5)
    # the baseline: only A ran (B's strategy refused the trace): 48 / 96, 100 ops in 4 ms
    assert g.baseline_mean_utilisation == pytest.approx(0.5)
    assert g.baseline_throughput == pytest.approx(25_000)
    assert a.baseline.throughput(100) == pytest.approx(25_000) and b.baseline.utilisation is None


def test_the_summary_line_worked_by_hand():
    from heapscope.allocators.grading import Grade
    from heapscope.allocators.user import UserStrategyError
    a, b = _two_traces(fast=True)
    assert a.summary() == "valid, util 0.750, 100.0 Kops/s"
    b.failed, b.failed_bytes = 2, 32           # 0 / (32 + 32)
    assert b.summary() == "valid, util 0.000, 100.0 Kops/s, 2 requests refused"
    b.failed = 1
    assert b.summary().endswith(", 1 request refused")
    b.error = UserStrategyError("it broke", method="_malloc", step=3)
    assert b.summary() == "INVALID at step 3: it broke"
    assert b.utilisation is None and b.throughput == pytest.approx(100_000)
    g = Grade("mine", {}, [a, b])
    # one invalid trace: the index is 0, the means count the valid ones only
    assert not g.valid and g.perf_index == 0.0
    assert g.mean_utilisation == 0.75 and g.throughput == pytest.approx(100_000)
