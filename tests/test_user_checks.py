"""Strategies broken on purpose: each mistake is caught at the operation that
made it, named in terms of the user's code (the method, the line of the file),
with the trace file and line of the operation.

Every broken strategy is the bump allocator below with one bug, switched on
at a chosen call; the line marked ``# BUG`` is where an exception is raised.
"""

import json
import pickle
import textwrap

import pytest

from heapscope.allocators import plugins
from heapscope.allocators.grading import check_trace, grade
from heapscope.allocators.replay import Timeline
from heapscope.allocators.user import UserStrategyError
from heapscope.cli import main
from heapscope.traces import read_rep

BASE = '''
from heapscope import FREE, USED, UserStrategy, align_up


class Bump(UserStrategy):
    """Bump allocator"""

    def __init__(self, **common):
        super().__init__(**common)
        self.blocks = []            # [addr, size, payload or None]
        self.entry = {}
        self.calls = 0

    def grow(self, size):
        need = align_up(max(size, 1), self.align)
        addr = self._take_core(need)
        return addr, need

    def book(self, payload, addr, need, size):
        self._note_alloc(payload, addr, need, size, payload - addr)
        self.entry[payload] = [addr, need, payload]
        self.blocks.append(self.entry[payload])
        self.blocks.sort()
        return payload

    def _malloc(self, size):
        self.calls += 1
        return self.alloc(size)

    def alloc(self, size):
        addr, need = self.grow(size)
        if addr is None:
            return None
        return self.book(addr, addr, need, size)

    def _free(self, payload):
        self._note_free(payload)
        self.entry.pop(payload)[2] = None

    def _blocks(self):
        for addr, size, payload in self.blocks:
            yield addr, size, (FREE if payload is None else USED), payload
'''

#: ops of the test trace, one a line after the 4 header lines and a comment
OPS = ["a 0 24", "a 1 40", "a 2 8", "f 1", "a 3 100", "a 4 16", "r 0 200", "f 2", "a 5 30",
       "f 0", "a 6 7", "f 3", "f 4", "f 5", "f 6"]
FIRST_OP_LINE = 6


@pytest.fixture
def trace_path(tmp_path):
    path = tmp_path / "bugs.rep"
    path.write_text("0\n7\n%d\n1\n# ops start on line 6\n" % len(OPS) + "\n".join(OPS) + "\n")
    return path


@pytest.fixture
def load(tmp_path):
    """Write a strategy file (BASE plus ``source``) and load its class."""
    loaded = []

    def make(source: str, cls: str, name: str):
        path = tmp_path / f"{name}.py"
        path.write_text(BASE + textwrap.dedent(source).replace("NAME", name))
        klass = plugins.load_file(f"{path}:{cls}")
        loaded.append(klass.name)
        return klass, path
    yield make
    for name in loaded:
        plugins.forget(name)


def bug_line(path) -> int:
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if "# BUG" in line)


def def_line(path, method: str, cls: str = "Bump") -> int:
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"class {cls}("))
    return next(i for i, line in enumerate(lines[start:], start + 1) if f"def {method}(" in line)


def graded(klass, trace_path, **kw):
    result = grade(klass, [(str(trace_path), read_rep(trace_path))], timing=False, **kw)
    t, = result.traces
    return t


def assert_caught(t, step, method, message_part):
    assert not t.valid
    e = t.error
    assert (e.step, e.method) == (step, method), str(e)
    assert t.line == FIRST_OP_LINE + step - 1
    assert message_part in e.message, e.message
    return e


def test_the_bump_base_itself_is_valid(load, trace_path):
    klass, _ = load("class Fine(Bump):\n    name = 'NAME'\n", "Fine", "fine")
    t = graded(klass, trace_path, check_every=1)
    assert t.valid, t.error
    assert t.max_live == 24 + 8 + 100 + 16 + (200 - 24) - 8 + 30
    assert t.heap == 24 + 40 + 8 + 104 + 16 + 200 + 32 + 8


def test_overlapping_payloads(load, trace_path):
    klass, path = load('''
        class Inside(Bump):
            name = "NAME"

            def alloc(self, size):
                if self.calls == 4:        # 8 bytes into the 1st block, still live
                    self.grow(size)
                    first = self.blocks[0]
                    self._note_alloc(first[0] + 8, first[0] + 8, 104, size, 0)
                    return first[0] + 8
                return super().alloc(size)
        ''', "Inside", "inside")
    t = graded(klass, trace_path)
    e = assert_caught(t, 5, "_malloc", "your _malloc returned 0x8, which is inside the live block at 0x0 "
                                       "of 24 bytes, handed out at step 1")
    assert e.location.endswith(f"inside.py:{def_line(path, '_malloc')}")


def test_a_payload_running_into_the_next_live_block(load, trace_path):
    klass, _ = load('''
        class RunsInto(Bump):
            name = "NAME"

            def alloc(self, size):
                if self.calls == 4:        # into the hole id 1 left (0x18, 40 bytes): 100 do not fit
                    self.grow(size)
                    self._note_alloc(0x18, 0x18, 104, size, 0)
                    self.blocks.append([0x18, 104, 0x18])
                    return 0x18
                return super().alloc(size)
        ''', "RunsInto", "runsinto")
    t = graded(klass, trace_path)
    assert_caught(t, 5, "_malloc", "your _malloc returned 0x18 for 100 bytes, which run into the live "
                                   "block at 0x40 of 8 bytes, handed out at step 3")


def test_a_misaligned_payload(load, trace_path):
    klass, _ = load('''
        class Misaligned(Bump):
            name = "NAME"

            def alloc(self, size):
                if self.calls == 2:
                    addr, need = self.grow(size + 8)
                    return self.book(addr + 4, addr, need, size)
                return super().alloc(size)
        ''', "Misaligned", "misaligned")
    t = graded(klass, trace_path)
    assert_caught(t, 2, "_malloc", "which is not a multiple of the alignment 8")


def test_a_misaligned_payload_with_align_16(load, trace_path):
    klass, _ = load('''
        class Word(Bump):
            name = "NAME"

            def grow(self, size):
                need = align_up(max(size, 1), self.word)   # rounds to the word, not to align
                return self._take_core(need), need
        ''', "Word", "word")
    t = graded(klass, trace_path, params={"align": 16})
    assert_caught(t, 2, "_malloc", "not a multiple of the alignment 16")   # 24 bytes: next at 0x18


def test_a_payload_outside_the_heap(load, trace_path):
    klass, _ = load('''
        class Outside(Bump):
            name = "NAME"

            def alloc(self, size):
                if self.calls == 3:
                    addr = self.arena.brk + 64      # never grew the heap
                    return self.book(addr, addr, align_up(size, 8), size)
                return super().alloc(size)
        ''', "Outside", "outside")
    t = graded(klass, trace_path)
    assert_caught(t, 3, "_malloc", "outside the heap [0x0, 0x40): grow the heap with self._take_core")


def test_a_block_handed_out_twice(load, trace_path):
    klass, _ = load('''
        class Twice(Bump):
            name = "NAME"

            def alloc(self, size):
                if self.calls == 5:               # the 2nd live block again (op 3, a 2 8)
                    again = [b for b in self.blocks if b[2] is not None][1]
                    self._note_alloc(again[2], again[0], again[1], size, 0)
                    return again[2]
                return super().alloc(size)
        ''', "Twice", "twice")
    t = graded(klass, trace_path)
    # op 6 (a 4 16) is the 5th malloc; live then: ids 0, 2, 3
    assert_caught(t, 6, "_malloc", "already the payload of the live block at 0x40 of 8 bytes, handed "
                                   "out at step 3 and not freed since: the same block was handed out twice")


def test_a_free_that_forgets_to_unbook_the_block(load, trace_path):
    klass, path = load('''
        class Forgets(Bump):
            name = "NAME"

            def _free(self, payload):
                self.entry.pop(payload)[2] = None     # no self._note_free(payload)
        ''', "Forgets", "forgets")
    t = graded(klass, trace_path)
    e = assert_caught(t, 4, "_free", "your _free(0x18) did not unbook the block: call self._note_free(0x18)")
    assert e.operation == "free(0x18)"
    assert t.operation == "free of id 1"


def test_a_free_that_forgets_the_block_in_the_walk(load, trace_path):
    # Unbooked, but the walk still shows it in use: caught by the walk check,
    # at the free that forgot it, even when the walk is checked only now and then.
    klass, _ = load('''
        class StillUsed(Bump):
            name = "NAME"

            def _free(self, payload):
                self._note_free(payload)             # but the block stays "in use"
        ''', "StillUsed", "stillused")
    t = graded(klass, trace_path, check_every=5)
    assert_caught(t, 4, "_blocks", "your _blocks reports a used block at 0x18 (payload 0x18) after "
                                   "free(0x18), but no block is booked at that payload: it was freed at step 4")


def test_an_exception_inside_malloc_names_the_line(load, trace_path):
    klass, path = load('''
        class Raises(Bump):
            name = "NAME"

            def alloc(self, size):
                if self.calls == 7:       # the 6th call is realloc's (r 0 200)
                    return self.pick(size)
                return super().alloc(size)

            def pick(self, size):
                empty = []
                return empty.pop()   # BUG
        ''', "Raises", "raises")
    t = graded(klass, trace_path)
    e = assert_caught(t, 9, "_malloc", "your _malloc raised IndexError: pop from empty list")
    assert e.location.endswith(f"raises.py:{bug_line(path)}")


def test_a_walk_with_a_gap_is_caught_at_the_operation_that_made_it(load, tmp_path):
    # 100 mallocs, then frees; the walk loses a block from the 70th malloc on.
    # Checked every few operations (many blocks), grade goes back and finds op 70.
    klass, _ = load('''
        class Gap(Bump):
            name = "NAME"

            def _blocks(self):
                blocks = list(super()._blocks())
                if self.calls >= 70:
                    del blocks[10]
                return blocks
        ''', "Gap", "gap")
    path = tmp_path / "many.rep"
    ops = [f"a {i} 16" for i in range(100)] + [f"f {i}" for i in range(100)]
    path.write_text(f"0\n100\n{len(ops)}\n1\n" + "\n".join(ops) + "\n")
    trace = read_rep(path)
    error = check_trace(lambda: klass(), trace, check_every=16).error
    assert error.step == 70 and error.method == "_blocks", str(error)
    assert "your _blocks left a gap after malloc(16): nothing covers 0xa0..0xb0" in error.message
    error = check_trace(lambda: klass(), trace).error    # adaptive: the same answer
    assert error.step == 70


def test_a_walk_that_stops_short(load, trace_path):
    klass, _ = load('''
        class Short(Bump):
            name = "NAME"

            def _blocks(self):
                return list(super()._blocks())[:-1] if self.calls >= 3 else super()._blocks()
        ''', "Short", "short")
    t = graded(klass, trace_path)
    assert_caught(t, 3, "_blocks", "your _blocks stops at 0x40 after malloc(8), but the heap reaches 0x48")


def test_malloc_that_does_not_book_its_block(load, trace_path):
    klass, _ = load('''
        class NoBooking(Bump):
            name = "NAME"

            def _malloc(self, size):
                addr, need = self.grow(size)
                self.blocks.append([addr, need, addr])
                return addr
        ''', "NoBooking", "nobooking")
    t = graded(klass, trace_path)
    assert_caught(t, 1, "_malloc", "your _malloc returned 0x0 but did not book it: call "
                                   "self._note_alloc(payload, block_addr, block_size, request, header)")


def test_realloc_that_moves_without_copying(load, trace_path):
    klass, _ = load('''
        class NoCopy(Bump):
            name = "NAME"

            def _realloc(self, payload, size):
                new = self._malloc(size)
                self._free(payload)
                return new
        ''', "NoCopy", "nocopy")
    t = graded(klass, trace_path)
    e = assert_caught(t, 7, "_realloc", "without copying the program's 24 bytes: call "
                                        "self._copy_payload(old, new, 24)")
    assert e.operation == "realloc(0x0, 200)"


def test_realloc_that_copies_after_freeing(load, trace_path):
    klass, _ = load('''
        class LateCopy(Bump):
            name = "NAME"

            def _realloc(self, payload, size):
                new = self._malloc(size)
                self._free(payload)
                self._copy_payload(payload, new, 24)
                return new
        ''', "LateCopy", "latecopy")
    t = graded(klass, trace_path)
    # step 7's realloc(0x0, 200): the new block is fresh memory at the break,
    # 0xc0 (24 + 40 + 8 + 104 + 16 bytes handed out before)
    assert_caught(t, 7, "_realloc", "your _realloc copied into 0xc0 from a block that no longer held "
                                    "the program's bytes (copy before you free the old block at 0x0)")


def test_the_default_realloc_keeps_the_bytes_and_a_footer_needs_payload_capacity(load, trace_path):
    # Blocks with a footer word booked as header bytes: without _payload_capacity,
    # a realloc in place would hand the program the footer.
    source = '''
        class Footer(Bump):
            name = "NAME"

            def grow(self, size):
                need = align_up(max(size, 1) + 8, 8)       # payload + a footer word
                return self._take_core(need), need

            def book(self, payload, addr, need, size):
                self._note_alloc(payload, addr, need, size, 8)
                self.entry[payload] = [addr, need, payload]
                self.blocks.append(self.entry[payload])
                return payload


        class FooterFixed(Footer):
            name = "NAME-fixed"

            def _payload_capacity(self, payload):
                addr, need, _ = self.entry[payload]
                return need - 8
        '''
    klass, path = load(source, "Footer", "footer")
    trace = trace_path.parent / "grow.rep"
    trace.write_text("0\n1\n3\n1\na 0 20\nr 0 25\nf 0\n")
    t = grade(klass, [(str(trace), read_rep(trace))], timing=False).traces[0]
    assert t.error.step == 2 and t.error.method == "_realloc"
    # a 20-byte request in a block of align_up(20 + 8, 8) = 32 bytes, 8 of them the footer:
    # 25 bytes in place leave 7, not the 8 booked
    assert t.error.message == ("your _realloc kept the block at 0x0 in place for 25 bytes, but its "
                               "32 bytes hold 8 header bytes too: if your blocks end with a footer, "
                               "override _payload_capacity to leave it out")
    fixed = plugins.load_file(f"{path}:FooterFixed")
    try:
        assert grade(fixed, [(str(trace), read_rep(trace))], timing=False).valid
    finally:
        plugins.forget(fixed.name)


def test_own_check_structure_and_structure_are_run(load, trace_path):
    klass, path = load('''
        class OwnCheck(Bump):
            name = "NAME"

            def _check_structure(self, blocks):
                assert self.calls < 4, f"more than three mallocs ({self.calls})"   # BUG
        ''', "OwnCheck", "owncheck")
    t = graded(klass, trace_path, check_every=1)
    e = assert_caught(t, 5, "_check_structure", "your _check_structure found a problem: more than three "
                                                "mallocs (4)")
    assert e.location.endswith(f"owncheck.py:{bug_line(path)}")
    klass, _ = load('''
        class BadStructure(Bump):
            name = "NAME"

            def structure(self):
                return self.lists_structure({"all": [b[0] for b in self.blocks]})
        ''', "BadStructure", "badstructure")
    t = graded(klass, trace_path, check_every=1)
    assert_caught(t, 1, "structure", "your structure() disagrees with your walk: the lists structure "
                                     "names ['0x0'], which are not free blocks of the heap")


def test_init_without_common_options_is_explained(load, trace_path):
    klass, _ = load('''
        class NoCommon(Bump):
            name = "NAME"

            def __init__(self):
                super().__init__()
        ''', "NoCommon", "nocommon")
    with pytest.raises(UserStrategyError) as info:
        klass(word=4)
    assert "your __init__ does not take 'word'" in str(info.value)
    assert "**common" in str(info.value)
    t = graded(klass, trace_path, params={"word": 4})
    assert t.error.method == "__init__"
    klass, _ = load('''
        class NoSuper(Bump):
            name = "NAME"

            def __init__(self, **common):
                self.blocks = []
        ''', "NoSuper", "nosuper")
    with pytest.raises(UserStrategyError, match=r"did not call super\(\).__init__\(\*\*common\)"):
        klass()


def test_an_unpicklable_attribute_is_named(load, trace_path):
    klass, _ = load('''
        class Lambda(Bump):
            name = "NAME"

            def __init__(self, **common):
                super().__init__(**common)
                self.key = lambda block: block[1]
        ''', "Lambda", "lambda")
    t = graded(klass, trace_path)
    assert "your strategy cannot be pickled: self.key holds function" in t.error.message
    assert "no lambdas, generators" in t.error.message
    # The window's timeline says the same, and keeps no steps
    from heapscope.traces import load_trace
    timeline = Timeline(load_trace("vo1989:steps=50"), klass.name).build()
    assert timeline.fault is not None and "self.key holds function" in timeline.fault.message
    assert timeline.n == 0


def test_a_fault_stops_the_timeline_before_the_step_and_seeks_still_work(load):
    klass, _ = load('''
        class Late(Bump):
            name = "NAME"

            def alloc(self, size):
                if self.calls == 301:
                    raise RuntimeError("out of ideas")   # BUG
                return super().alloc(size)
        ''', "Late", "late")
    from heapscope.traces import load_trace
    trace = load_trace("vo1989:steps=400")
    timeline = Timeline(trace, klass.name, checkpoint_every=64).build()
    fault = timeline.fault
    assert fault is not None and fault.method == "_malloc"
    assert "out of ideas" in fault.message
    assert timeline.n == fault.step - 1
    kinds = trace.kind.tolist()
    assert sum(1 for k in kinds[:fault.step] if k != 1) == 301     # the 301st malloc
    for t in (timeline.n, 5, timeline.n - 1, 0, timeline.n):
        strategy = timeline.seek(t)
        strategy.check()
        assert len(strategy.live) == len(timeline.program.live)
    assert pickle.loads(pickle.dumps(timeline.strategy)).state_signature() == \
        timeline.strategy.state_signature()


def test_grade_cli_text_and_json_and_exit_status(load, trace_path, capsys):
    _, path = load('''
        class Raises(Bump):
            name = "NAME"

            def _free(self, payload):
                raise KeyError(payload)   # BUG
        ''', "Raises", "clifree")
    spec = f"{path}:Raises"
    assert main(["grade", spec, str(trace_path)]) == 1
    out = capsys.readouterr().out
    line = bug_line(path)
    assert "bugs: error at step 4 (bugs.rep line 9): free of id 1, free(0x18)" in out
    assert f"in Raises._free ({path}:{line})" in out
    assert "your _free raised KeyError: 24" in out
    assert f"see it: heapscope open {trace_path} --allocator {spec} --strategy clifree --step 4" in out
    assert "perf index 0 / 100: 1 of 1 trace has an error" in out
    assert main(["grade", spec, str(trace_path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    error = report["traces"][0]["error"]
    assert (error["step"], error["line"], error["method"], error["class"]) == (4, 9, "_free", "Raises")
    assert error["location"].endswith(f"clifree.py:{line}")
    assert report["perf_index"] == 0 and report["valid"] is False


def test_malformed_answers_are_the_users_mistakes_not_ours(load, trace_path):
    # each would otherwise end in an IndexError or TypeError inside heapscope
    cases = [
        ('''
        class ShortBlock(Bump):
            name = "NAME"

            def _blocks(self):
                for addr, size, payload in self.blocks:
                    yield addr, size
        ''', "ShortBlock", "_blocks", "your _blocks yielded (0, 24); each block is (addr, size, state, "
                                      "payload)"),
        ('''
        class FloatCore(Bump):
            name = "NAME"

            def grow(self, size):
                return self._take_core(size / 1), size
        ''', "FloatCore", "_malloc", "self._take_core(24.0) was called: it takes a number of bytes"),
        ('''
        class StrBooking(Bump):
            name = "NAME"

            def book(self, payload, addr, need, size):
                self._note_alloc(payload, str(addr), need, size, 0)
                self.blocks.append([addr, need, payload])
                return payload
        ''', "StrBooking", "_malloc", "self._note_alloc(0, '0', 24, 24, 0) was called: every "
                                      "argument is an int"),
        ('''
        class JunkStructure(Bump):
            name = "NAME"

            def structure(self):
                return [b[0] for b in self.blocks]
        ''', "JunkStructure", "structure", "not the shape of docs/structure.md"),
    ]
    for source, cls, method, message in cases:
        klass, path = load(source, cls, cls.lower())
        t = graded(klass, trace_path, check_every=1)
        assert t.error is not None and t.error.step == 1, (cls, t.error)
        assert t.error.method == method and message in t.error.message, (cls, str(t.error))
        if cls in ("FloatCore", "StrBooking"):     # a helper called wrongly: the line of the call
            lines = path.read_text().splitlines()
            call = "_take_core(size / 1)" if cls == "FloatCore" else "_note_alloc(payload, str("
            assert t.error.location.endswith(
                f":{next(i for i, text in enumerate(lines, 1) if call in text)}"), t.error.location
    # the window's gauges walk the heap too: a bad walk stops the timeline, it does not crash it
    from heapscope.traces import load_trace
    from heapscope.allocators.registry import STRATEGIES
    timeline = Timeline(load_trace("vo1989:steps=20"), "shortblock").build()
    assert timeline.fault.method == "_blocks" and timeline.n == 0
    assert "shortblock" in STRATEGIES
    klass, _ = load('''
        class Words(Bump):
            name = "NAME"

            def explain_event(self, event):
                return 42
        ''', "Words", "words")
    from heapscope.allocators.explain import explain_step
    s = klass()
    s.malloc(10)
    with pytest.raises(UserStrategyError, match="your explain_event returned 42: return a line of text"):
        explain_step(s, s.rec)


# ------------------------------------------------- small rules, worked by hand
def test_the_default_structure_puts_every_free_block_on_one_list():
    # Bump hands out 0x0 (24 bytes) and 0x18 (8); freeing 0x0 leaves one free block
    namespace = {}
    exec(BASE, namespace)
    b = namespace["Bump"]()
    p = b.malloc(24)
    b.malloc(8)
    b.free(p)
    assert b.structure() == {"kind": "lists", "sizes": {0: 24}, "pointers": [], "outside": [],
                             "lists": {"free blocks": [0]}}


@pytest.mark.parametrize("statement, raised", [
    ("len(5)", "TypeError: object of type 'int' has no len()"),
    ("int('x')", "ValueError: invalid literal for int() with base 10: 'x'"),
    ("raise SystemExit(3)", "SystemExit: 3"),
])
def test_an_exception_in_init_is_named_as_inits_before_any_operation(statement, raised):
    namespace = {}
    exec(BASE + textwrap.dedent(f'''
    class BadInit(Bump):
        def __init__(self, **common):
            super().__init__(**common)
            {statement}
    '''), namespace)
    with pytest.raises(UserStrategyError) as info:
        namespace["BadInit"]()
    e = info.value
    assert (e.method, e.step, e.operation) == ("__init__", None, None)
    assert e.message == f"your __init__ raised {raised}"


def test_values_in_messages_are_cut_at_60_characters():
    from heapscope.allocators.user import _short
    assert _short("x" * 58) == "'" + "x" * 58 + "'"              # repr: 60 characters, whole
    assert _short("x" * 59) == "'" + "x" * 56 + "..."            # 61: the first 57 and "..."


def test_malloc_that_books_another_payload_is_told_which(load, trace_path):
    # grows 32 bytes at 0x0, books the payload 0x8 and returns 0x0
    klass, _ = load('''
        class BooksAnother(Bump):
            name = "NAME"

            def _malloc(self, size):
                addr, need = self.grow(size + 8)
                self.book(addr + 8, addr, need, size)
                return addr
        ''', "BooksAnother", "booksanother")
    t = graded(klass, trace_path)
    e = assert_caught(t, 1, "_malloc", "your _malloc returned 0x0 but did not book it")
    assert e.message.endswith("for every block you hand out (it booked 0x8: the first argument "
                              "of _note_alloc is the payload address you return)")


def test_realloc_that_copies_part_of_the_bytes(load, trace_path):
    # step 7, realloc of id 0 (24 bytes at 0x0) to 200: the bump is at 0xc0 by
    # then (24 + 40 + 8 + 104 + 16 bytes); realloc must keep min(24, 200) bytes
    klass, _ = load('''
        class HalfCopy(Bump):
            name = "NAME"

            def _realloc(self, payload, size):
                new = self._malloc(size)
                self._copy_payload(payload, new, 8)
                self._free(payload)
                return new
        ''', "HalfCopy", "halfcopy")
    t = graded(klass, trace_path)
    assert_caught(t, 7, "_realloc", "your _realloc moved the block from 0x0 to 0xc0 and copied "
                                    "only 8 of the 24 bytes realloc must keep (the smaller of "
                                    "the old and the new size)")


def test_malloc_that_books_more_header_than_its_block_has_room_for(load, trace_path):
    # 24 bytes asked, a 24-byte block: no room for the 8 header bytes booked
    klass, _ = load('''
        class FatHeader(Bump):
            name = "NAME"

            def _malloc(self, size):
                addr, need = self.grow(size)
                self._note_alloc(addr, addr, need, size, 8)
                self.entry[addr] = [addr, need, addr]
                self.blocks.append(self.entry[addr])
                return addr
        ''', "FatHeader", "fatheader")
    t = graded(klass, trace_path)
    assert_caught(t, 1, "_malloc", "your _malloc booked 8 header bytes in a block of 24 bytes "
                                   "holding 24: header bytes are the block's bytes that are "
                                   "neither payload nor padding")


def test_a_pool_carved_by_hand_counts_the_span_of_the_blocks_handed_out(load, tmp_path):
    # A fixed pool of 64 bytes at 0x0 whose blocks are carved without
    # _take_core: H is the span of what was handed out, 0x0 to 24 + 8 = 0x20,
    # the peak live payload is 24 + 8: utilisation 32 / 32.
    klass, _ = load('''
        class Direct(Bump):
            name = "NAME"

            def __init__(self, **common):
                super().__init__(**common)
                self.used = 0

            def grow(self, size):
                need = align_up(max(size, 1), self.align)
                if self.used + need > self.arena.brk - self.arena.base:
                    return None, need
                addr = self.arena.base + self.used
                self.used += need
                return addr, need

            def _blocks(self):
                yield from super()._blocks()
                end = self.arena.base + self.used     # the rest of the pool: one free block
                if end < self.arena.brk:
                    yield end, self.arena.brk - end, FREE, None
        ''', "Direct", "direct")
    path = tmp_path / "two.rep"
    path.write_text("0\n2\n4\n1\na 0 24\na 1 8\nf 0\nf 1\n")
    t = graded(klass, path, params={"pool_size": 64})
    assert t.valid, t.error
    assert (t.heap, t.max_live, t.utilisation) == (32, 32, 1.0)


def test_a_walk_that_calls_a_live_block_free(load, trace_path):
    # the walk covers the heap, but says the first block (0x0, 24 bytes,
    # handed out at step 1) is free: the live block is in no used block
    klass, _ = load('''
        class AllFree(Bump):
            name = "NAME"

            def _blocks(self):
                for addr, size, payload in self.blocks:
                    yield addr, size, FREE, None
        ''', "AllFree", "allfree")
    t = graded(klass, trace_path, check_every=1)
    assert_caught(t, 1, "_blocks", "the live block at 0x0 of 24 bytes, handed out at step 1 "
                                       "is in no used block of your walk")


def test_a_failed_realloc_that_changed_the_books(load, trace_path):
    # step 7, realloc(0x0, 200): None after unbooking the block at 0x0
    klass, _ = load('''
        class FailsDirty(Bump):
            name = "NAME"

            def _realloc(self, payload, size):
                self._free(payload)
                return None
        ''', "FailsDirty", "failsdirty")
    t = graded(klass, trace_path)
    assert_caught(t, 7, "_realloc", "your _realloc returned None (out of memory) but changed the "
                                    "books: a failed realloc must leave the block at 0x0 as it was")


def test_an_exception_in_realloc_is_named_as_reallocs(load, trace_path):
    klass, _ = load('''
        class RaisesInRealloc(Bump):
            name = "NAME"

            def _realloc(self, payload, size):
                raise ValueError("no realloc today")
        ''', "RaisesInRealloc", "raisesinrealloc")
    t = graded(klass, trace_path)
    e = assert_caught(t, 7, "_realloc", "your _realloc raised ValueError: no realloc today")
    assert e.operation == "realloc(0x0, 200)"


def test_a_walk_giving_a_free_block_a_payload_is_named_whole(load, trace_path):
    # step 4 frees id 1 (the block at 0x18); the walk after it still gives it its payload
    klass, _ = load('''
        class FreeWithPayload(Bump):
            name = "NAME"

            def _free(self, payload):
                self._note_free(payload)
                self.entry.pop(payload).append("freed")

            def _blocks(self):
                for block in self.blocks:
                    addr, size, payload = block[:3]
                    yield addr, size, (FREE if len(block) > 3 else USED), payload
        ''', "FreeWithPayload", "freewithpayload")
    t = graded(klass, trace_path, check_every=1)
    assert_caught(t, 4, "_blocks", "your _blocks reports a free block at 0x18 with payload 0x18: "
                                   "only used blocks have a payload")


def test_a_block_booked_over_a_live_one_away_from_its_payload_is_named_whole(load, trace_path):
    # step 5 (a 3 100): the payload is fresh memory at 0x48 (after 24 + 40 + 8 bytes),
    # but its block is booked from 0x0 to the new break 0x48 + 104 = 0xb0 (176 bytes),
    # over the live block of step 1 at 0x0; neither is the payload inside it nor does
    # it run into it
    klass, _ = load('''
        class WideBlock(Bump):
            name = "NAME"

            def alloc(self, size):
                if self.calls == 4:
                    addr, need = self.grow(size)
                    self._note_alloc(addr, 0, addr + need, size, addr)
                    return addr
                return super().alloc(size)
        ''', "WideBlock", "wideblock")
    t = graded(klass, trace_path)
    assert_caught(t, 5, "_malloc", "your _malloc returned 0x48 in a block booked at 0x0 of 176 bytes, "
                                   "which overlaps the live block at 0x0 of 24 bytes, handed out at step 1")


def test_the_windows_replay_of_a_realloc_that_moves_keeps_the_copy_it_made(load, trace_path):
    # the window replays through the public methods (grade's pass has its own calls):
    # step 7, realloc(0x0, 200), moves (the default _realloc: malloc, copy, free)
    klass, _ = load("class Fine(Bump):\n    name = 'NAME'\n", "Fine", "finewindow")
    timeline = Timeline(read_rep(trace_path), klass.name).build()
    assert timeline.fault is None, timeline.fault
    strategy = timeline.seek(7)
    # bump: 24 + 40 + 8 + 104 + 16 bytes before it, the new block at 192
    assert strategy.live[192].request == 200 and 0 not in strategy.live


def test_a_free_says_the_block_is_released_before_what_it_leads_to(load):
    from heapscope.allocators.events import ListInsert, Released
    klass, _ = load('''
        from heapscope.allocators.events import ListInsert


        class Listed(Bump):
            name = "NAME"

            def _free(self, payload):
                lb = self._note_free(payload)
                self.entry.pop(payload)[2] = None
                if self.record:
                    self._event(ListInsert(lb.block_addr, lb.block_size, (0,)))
        ''', "Listed", "listed")
    strategy = klass()
    strategy.record = True
    payload = strategy.malloc(16)
    strategy.free(payload)
    assert [type(e) for e in strategy.rec.events] == [Released, ListInsert]
    assert (strategy.rec.events[0].addr, strategy.rec.events[0].size) == (0, 16)


def test_a_strategy_unpicklable_from_a_later_step_is_named_at_the_checkpoint(load, trace_path):
    # the 3rd malloc (step 3) keeps a lambda: the first state saved after it, the
    # checkpoint at step 4 (one every 2 steps), cannot be pickled
    klass, _ = load('''
        class LateLambda(Bump):
            name = "NAME"

            def alloc(self, size):
                if self.calls == 3:
                    self.key = lambda block: block[1]
                return super().alloc(size)
        ''', "LateLambda", "latelambda")
    timeline = Timeline(read_rep(trace_path), klass.name, checkpoint_every=2).build()
    assert timeline.fault is not None and "self.key holds function" in timeline.fault.message
    assert timeline.fault.step == 4


def test_a_class_keeps_the_title_it_sets_else_takes_its_docstrings_first_line(load):
    titled, _ = load('''
        class Titled(Bump):
            """The docstring's line"""
            name = "NAME"
            title = "My own title"
        ''', "Titled", "titled")
    assert titled.title == "My own title"
    documented, _ = load('''
        class Documented(Bump):
            """First line of the docstring

            and more."""
            name = "NAME"
        ''', "Documented", "documented")
    assert documented.title == "First line of the docstring"


def test_a_booking_in_an_int_subclass_is_read_as_ints(load, trace_path):
    klass, _ = load('''
        class Address(int):
            """an address type of the user's own: still an int"""


        class Typed(Bump):
            name = "NAME"

            def book(self, payload, addr, need, size):
                return super().book(Address(payload), Address(addr), need, size)
        ''', "Typed", "typed")
    t = graded(klass, trace_path, check_every=1)
    assert t.valid, t.error


def test_check_steps_checks_the_walk_after_every_public_operation(load):
    klass, _ = load('''
        class AllFreeWalk(Bump):
            name = "NAME"

            def _blocks(self):
                for addr, size, payload in self.blocks:
                    yield addr, size, FREE, None
        ''', "AllFreeWalk", "allfreewalk")
    quiet = klass()
    assert quiet.check_steps is False
    quiet.malloc(24)                      # no walk: nothing said yet
    strict = klass(check_steps=True)
    assert strict.check_steps is True
    with pytest.raises(UserStrategyError) as e:
        strict.malloc(24)
    assert e.value.method == "_blocks" and "is in no used block of your walk" in e.value.message


def test_a_malformed_structure_points_at_the_users_def(load):
    klass, path = load('''
        class Shapeless(Bump):
            name = "NAME"

            def structure(self):
                return 42
        ''', "Shapeless", "shapeless")
    with pytest.raises(UserStrategyError) as e:
        klass().structure()
    assert e.value.method == "structure" and "your structure() returned 42" in e.value.message
    assert e.value.location.endswith(f"shapeless.py:{def_line(path, 'structure', 'Shapeless')}")


#: after step 1 (a 0 24) the heap is the one block 0x0 of 24 bytes, the break 0x18
@pytest.mark.parametrize("bug, method, says", [
    ("""
            def _blocks(self):
                self.arena.brk += 64                       # the walk moves the break
                yield from super()._blocks()
     """, "_blocks", "the break moved from 0x18 to 0x58 without self._take_core: grow the heap only "
                     "with self._take_core(n), which keeps to the heap limit and the pool"),
    ("""
            def _malloc(self, size):
                self.arena.limit = 4096                    # graded with no heap limit: None
                return super()._malloc(size)
     """, "_malloc", "self.arena.limit changed from None to 4096: the heap limit is the grader's "
                     "(--heap-limit), not the strategy's: grow the heap only with self._take_core(n), "
                     "which keeps to the heap limit and the pool"),
    # the walk says 32 bytes (so it runs past the break too: the size is named first)
    ("""
            def _blocks(self):
                for addr, size, state, payload in super()._blocks():
                    yield addr, size + 8 * (addr == 0), state, payload
     """, "_blocks", "your _blocks reports a used block at 0x0 of 32 bytes, but payload 0x0 was booked "
                     "as a block at 0x0 of 24 bytes after malloc(24)"),
    ("""
            def _blocks(self):
                yield from super()._blocks()
                yield self.arena.brk, 16, FREE, None       # 16 bytes after the break
     """, "_blocks", "your _blocks runs to 0x28, past the end of the heap 0x18 after malloc(24)"),
], ids=["walk-moves-the-break", "own-heap-limit", "walk-gives-another-size", "walk-past-the-break"])
def test_a_mistake_at_the_first_step_is_named_whole(load, trace_path, bug, method, says):
    klass, _ = load("class Broken(Bump):\n    name = 'NAME'\n" + textwrap.indent(textwrap.dedent(bug), "    "),
                    "Broken", "broken")
    t = graded(klass, trace_path, check_every=1)
    e = assert_caught(t, 1, method, says)
    assert e.message == says


def test_a_strategy_without_a_walk_is_told_to_write_one():
    # a plugin file without _blocks is refused when loaded (tests/test_plugins.py);
    # a class made in Python and used directly hears it at its first walk
    from heapscope import UserStrategy, align_up

    class NoWalk(UserStrategy):
        def _malloc(self, size):
            need = align_up(max(size, 1), self.align)
            addr = self._take_core(need)
            self._note_alloc(addr, addr, need, size, 0)
            return addr

        def _free(self, payload):
            self._note_free(payload)

    s = NoWalk()
    assert s.malloc(16) == 0
    with pytest.raises(UserStrategyError) as caught:
        s.walk()
    assert caught.value.method == "_blocks"
    assert caught.value.message == ("NoWalk has no _blocks: write def _blocks(self) yielding "
                                    "(addr, size, state, payload) for every block")


def test_a_strategy_without_a_malloc_is_told_to_write_one():
    from heapscope import UserStrategy

    class NoMalloc(UserStrategy):
        def _free(self, payload):
            self._note_free(payload)

        def _blocks(self):
            return iter(())

    with pytest.raises(UserStrategyError) as caught:
        NoMalloc().malloc(16)
    assert (caught.value.method, caught.value.step) == ("_malloc", 1)
    assert caught.value.message == ("NoMalloc has no _malloc: write def _malloc(self, size) "
                                    "returning the payload address or None")


def test_a_realloc_of_null_counts_the_time_in_the_users_code(load):
    # the public realloc(NULL, n) is a malloc: the 2 ms the user's _malloc sleeps count
    klass, _ = load('''
        import time

        class Slow(Bump):
            name = "NAME"

            def _malloc(self, size):
                time.sleep(0.002)
                return super()._malloc(size)
        ''', "Slow", "slow")
    s = klass()
    s.own_seconds = 0.0
    assert s.realloc(None, 16) == 0
    assert s.own_seconds >= 0.002


def test_the_walk_the_window_keeps_gives_each_used_block_its_request_and_header(load):
    # the states the window seeks to (allocators/replay.py) keep walk_tuples():
    # (addr, size, state, payload, request, header); a block of 8 header bytes
    # and 24 of payload room for malloc(20): block 0x0 of 32, payload 0x8
    from heapscope import FREE, USED
    klass, _ = load('''
        class Headed(Bump):
            name = "NAME"

            def alloc(self, size):
                need = align_up(max(size, 1), self.align) + 8
                addr = self._take_core(need)
                return self.book(addr + 8, addr, need, size)
        ''', "Headed", "headed")
    s = klass()
    assert s.malloc(20) == 8
    assert s.walk_tuples() == [(0, 32, USED, 8, 20, 8)]
    s.free(8)
    assert s.walk_tuples() == [(0, 32, FREE, None, 0, 0)]


def test_a_helper_misused_in_free_is_named_as_frees(load, trace_path):
    # step 4 is the trace's first free (f 1): the mistake is _free's, not _malloc's
    klass, _ = load('''
        class FreeTakesCore(Bump):
            name = "NAME"

            def _free(self, payload):
                self._take_core(-8)
                super()._free(payload)
        ''', "FreeTakesCore", "freetakescore")
    t = graded(klass, trace_path)
    e = assert_caught(t, 4, "_free", "self._take_core(-8) was called: it takes a number of bytes, an int >= 0")
    assert e.operation == "free(0x18)"


def test_the_free_blocks_of_a_pool_include_the_part_not_carved_yet():
    # a 256-byte pool: 24 + 8 bytes carved, the first block freed; the user's
    # free_blocks names that block only, the pool's uncarved 32..256 is added
    from heapscope import FREE, USED, UserStrategy, align_up

    class Pooled(UserStrategy):
        def __init__(self, **common):
            super().__init__(**common)
            self.blocks = {}

        def _malloc(self, size):
            need = align_up(max(size, 1), self.align)
            addr = self._take_core(need)
            self._note_alloc(addr, addr, need, size, 0)
            self.blocks[addr] = [need, addr]
            return addr

        def _free(self, payload):
            self._note_free(payload)
            self.blocks[payload][1] = None

        def _blocks(self):
            for addr in sorted(self.blocks):
                need, payload = self.blocks[addr]
                yield addr, need, (FREE if payload is None else USED), payload

        def free_blocks(self):
            return [(a, n) for a, (n, p) in sorted(self.blocks.items()) if p is None]

    s = Pooled(pool_size=256)
    assert (s.malloc(24), s.malloc(8)) == (0, 24)
    s.free(0)
    assert s.free_blocks() == [(0, 24), (32, 256 - 32)]


def test_the_walks_quick_test_passes_only_a_walk_the_loop_passes():
    # user._walk_agrees is tried before _check_heap's loop: each walk below has
    # one mistake the loop names, so the quick test must say False to it
    from heapscope.allocators.strategy import Block, LiveBlock
    from heapscope.allocators.user import FREE, META, USED, _walk_agrees
    live = {16: LiveBlock(0, 32, 20, 16), 56: LiveBlock(48, 16, 8, 8)}
    good = [Block(0, 32, USED, 16, 20, 16), Block(32, 16, FREE, None, 0, 0),
            Block(48, 16, USED, 56, 8, 8), Block(64, 8, META, None, 0, 0)]
    assert _walk_agrees(good, 0, 72, live)
    bad = {
        "a gap": [good[0], good[1]._replace(size=8)] + good[2:],
        "an address not an int": [good[0], good[1]._replace(addr=32.0)] + good[2:],
        "a size not an int": [good[0], good[1]._replace(size=16.0)] + good[2:],
        "a block of 0 bytes": good[:3] + [good[3]._replace(size=0), Block(64, 8, META, None, 0, 0)],
        "short of the break": good[:3],
        "a used block not booked": [good[0], good[1]._replace(state=USED, payload=40)] + good[2:],
        "a used block booked elsewhere": [good[0]._replace(payload=56)] + good[1:2]
                                          + [good[2]._replace(payload=16)] + good[3:],
        "a payload on a free block": [good[0], good[1]._replace(payload=40)] + good[2:],
        "a state of its own": good[:3] + [good[3]._replace(state="spare")],
        "a booked block missing": [good[0], good[1], good[2]._replace(state=FREE, payload=None),
                                   good[3]],
    }
    for what, blocks in bad.items():
        assert not _walk_agrees(blocks, 0, 72, live), what
    assert not _walk_agrees(good, 0, 80, live) and not _walk_agrees(good, 8, 72, live)
    assert _walk_agrees([], 0, 0, {}) and not _walk_agrees([], 0, 8, {})


def test_a_walk_check_walks_the_heap_once(load, trace_path):
    # check() and a structure() built by lists_structure read one walk
    from heapscope.allocators.grading import full_check
    klass, _ = load('''
        class Counted(Bump):
            name = "NAME"
            walks = 0

            def _blocks(self):
                type(self).walks += 1
                yield from super()._blocks()

            def structure(self):
                return self.lists_structure({"free": [b[0] for b in self.blocks if b[2] is None]})
        ''', "Counted", "counted")
    s = klass()
    s.own_seconds, s.record = 0.0, False
    for size in (8, 24, 16):
        s.malloc(size)
    s.free(8)
    klass.walks = 0
    assert full_check(s) == 3
    assert klass.walks == 1
    s.structure()                   # outside a walk check, a walk of its own
    assert klass.walks == 2
