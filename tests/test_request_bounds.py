"""Absurd requests cost nothing (issue 19): a request no heap of a strategy
could ever hold fails at once, in O(1) memory and time, in every strategy and
on every replay path, recorded as refused growth; ``heapscope check`` warns
of requests past 1 GiB.

The bound of each strategy (``Strategy.largest_request``) is checked against
the policy itself: its own readable ``_malloc``, called past the bound, must
never grant the request (else the bound would change what the strategy does).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest


from heapscope.allocators.events import GrowFailed
from heapscope.allocators.registry import make_strategy, strategy_names
from heapscope.allocators.replay import Program, Timeline, apply_op, replay_ops
from heapscope.allocators.user import UserStrategy
from heapscope.cli import main
from heapscope.traces import read_rep
from heapscope.traces.trace import ALLOC, FREE, REALLOC

TIB = 1 << 40
#: the address space every heap lives in, as DESIGN.md and arena.py state it: 1 TiB
ADDRESS_SPACE = TIB
NAMES = strategy_names()

#: a 1 TiB malloc, a 1 TiB realloc of a live block and a realloc(NULL, 1 TiB),
#: between ordinary requests (the last op is ordinary: a build replays it apart)
TIB_REP = ("0\n4\n8\n1\n"
           f"a 0 {TIB}\na 1 16\nr 1 {TIB}\nr 2 {TIB}\nf 1\nf 0\na 3 8\nf 3\n")
#: (op index, trace id) of the three requests past every bound in TIB_REP
TIB_OPS = (0, 2, 3)


def _bumps(strategy) -> int:
    return strategy.arena.refusals


# --------------------------------------------------- 1 TiB under 512 MiB
UNDER_512_MIB = textwrap.dedent('''
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))
    from heapscope.allocators.registry import strategy_names
    from heapscope.allocators.replay import Program, Timeline, apply_op, replay_ops
    from heapscope.traces import read_rep
    trace = read_rep(sys.argv[1])
    ops = trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()
    out = {}
    for name in strategy_names():
        # the timeline's build: fused bulk ops with measures, as compare runs it
        tl = Timeline(trace, name, checkpoints=False).build()
        built = [bool(f) for f in tl.series.failed.tolist()]
        # the seek path: bulk replay without measures
        tl.seek(0); tl.seek(len(trace) - 1)
        # the public calls, one record each (the window's last step, user strategies)
        from heapscope.allocators.registry import make_strategy
        s = make_strategy(name)
        program = Program()
        public = [apply_op(s, program, *op).failed for op in zip(*ops)]
        out[name] = {"built": built, "public": public, "refusals": s.arena.refusals,
                     "heap": s.heap_size}
    print(json.dumps(out))
''')


def test_a_tib_request_fails_in_every_strategy_under_a_512_mib_address_space(tmp_path):
    rep = tmp_path / "tib.rep"
    rep.write_text(TIB_REP)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               NUMEXPR_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", UNDER_512_MIB, str(rep)], capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert sorted(out) == sorted(NAMES)
    for name, row in out.items():
        for path in ("built", "public"):
            failed = [i for i, f in enumerate(row[path]) if f]
            assert failed == list(TIB_OPS), (name, path, row[path])
        assert row["refusals"] == len(TIB_OPS), name
        assert row["heap"] < 1 << 20, name


# ------------------------------------------ just over the heap limit
LIMIT = 64 * 1024


class Bump(UserStrategy):
    """A bump allocator with no header, counting the requests it is handed."""
    name = "test-bound-bump"

    def __init__(self, **common):
        super().__init__(**common)
        self.blocks = []
        self.seen = 0

    def _malloc(self, size):
        self.seen += 1
        need = max(size, 1) + (-max(size, 1) % self.align)
        addr = self._take_core(need)
        if addr is None:
            return None
        self._note_alloc(addr, addr, need, size, 0)
        self.blocks.append([addr, need, addr])
        return addr

    def _free(self, payload):
        self._note_free(payload)
        for b in self.blocks:
            if b[2] == payload:
                b[2] = None

    def _blocks(self):
        for addr, size, payload in self.blocks:
            yield addr, size, ("used" if payload is not None else "free"), payload


def _with_a_searchable_heap(strategy):
    """A heap with free blocks a search would examine: 8 blocks, every other freed."""
    payloads = [strategy.malloc(100 + 40 * i) for i in range(8)]
    assert None not in payloads
    for p in payloads[::2]:
        strategy.free(p)
    return payloads[1::2]


@pytest.mark.parametrize("name", NAMES + ["user"])
@pytest.mark.parametrize("mode", ["heap_limit", "pool_size"])
def test_a_request_just_over_the_limit_fails_at_once_without_growing_the_heap(name, mode):
    s = Bump(**{mode: LIMIT}) if name == "user" else make_strategy(name, **{mode: LIMIT})
    kept = _with_a_searchable_heap(s)
    brk, grows, refusals, books = s.arena.brk, s.arena.grow_calls, s.arena.refusals, dict(s.live)
    seen = getattr(s, "seen", None)
    assert s.malloc(LIMIT + 1) is None
    rec = s.rec
    assert rec.failed and rec.visits == 0 and rec.grows == 0     # no search, no growth
    assert any(isinstance(e, GrowFailed) for e in rec.events)
    assert s.realloc(kept[0], LIMIT + 1) is None                 # the old block stays
    assert s.rec.failed and s.rec.visits == 0
    assert (s.arena.brk, s.arena.grow_calls, s.live) == (brk, grows, books)
    assert s.arena.refusals == refusals + 2
    if seen is not None:
        assert s.seen == seen          # the user's _malloc never saw them
    s.check()


# ------------------------------------------- the bounds, checked against the policies
def _fresh(name, word, **kw):
    s = make_strategy(name, word=word, **kw)
    s.record = False
    return s


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("word", [4, 8])
def test_no_policy_grants_a_request_past_its_bound(name, word):
    """The bound only refuses what the policy would refuse: past it, the
    policy's own readable _malloc on a fresh heap (the most room it ever has)
    returns None too, for heap limits, pools and odd sizes."""
    for room in (4096, 5000, 65536, 100_000, 1 << 20):
        for mode in ("heap_limit", "pool_size"):
            bound = _fresh(name, word, **{mode: room}).largest_request()
            assert bound < room
            for size in {bound + 1, bound + word, room - 1, room, room + 1}:
                if size > bound:
                    assert _fresh(name, word, **{mode: room})._malloc(size) is None, (room, mode, size)


@pytest.mark.parametrize("name", ["tlsf", "bsd-buckets", "buddy"])
@pytest.mark.parametrize("word", [4, 8])
def test_model_bounds_hold_without_a_limit(name, word):
    """TLSF's largest class, the largest bucket and the buddy system's powers
    of two bound requests below the address space; their policies refuse
    what is past them (cheap to try: none grows a heap for it)."""
    s = _fresh(name, word)
    bound = s.largest_request()
    assert _fresh(name, word)._malloc(bound + 1) is None
    assert _fresh(name, word)._malloc(bound + word) is None


def test_the_model_bounds_are_the_originals_rules():
    # TLSF on LP64: blocks below 2**32 (FL_INDEX_MAX 32); the search rounds a
    # request up by 2**(fls - 5) - 1, so past 2**32 - 2**26 it leaves the last level.
    assert make_strategy("tlsf").largest_request() == 2**32 - 2**26
    assert make_strategy("tlsf", word=4).largest_request() == 2**30 - 2**24
    # Buddy: the largest power of two in the room, less the 8-byte header word.
    assert make_strategy("buddy").largest_request() == 2**40 - 8
    assert make_strategy("buddy", heap_limit=100_000).largest_request() == 65536 - 8
    # Others: the room less a word.
    assert make_strategy("first-fit", pool_size=4096).largest_request() == 4096 - 8
    assert make_strategy("dlmalloc", word=4).largest_request() == ADDRESS_SPACE - 4
    assert Bump(heap_limit=1000).largest_request() == 1000


def test_a_bound_request_still_reaches_the_policy():
    """At the bound itself nothing is refused early: TLSF grants its largest
    request (a 4 GiB heap costs nothing simulated)."""
    s = make_strategy("tlsf")
    assert s.malloc(s.largest_request()) is not None
    assert s.arena.refusals == 0


def test_the_heap_never_grows_past_the_address_space():
    s = Bump()
    assert s.malloc(ADDRESS_SPACE - 4096) is not None
    assert s.malloc(8192) is None and s.arena.refusals == 1
    assert s.heap_size == ADDRESS_SPACE - 4096


@pytest.mark.parametrize("name", NAMES)
def test_bulk_and_public_replays_agree_on_absurd_requests(name, tmp_path):
    rep = tmp_path / "tib.rep"
    rep.write_text(TIB_REP)
    trace = read_rep(rep)
    ops = list(zip(trace.kind.tolist(), trace.ids.tolist(), trace.sizes.tolist()))
    public = make_strategy(name)
    p1 = Program()
    for op in ops:
        apply_op(public, p1, *op)
    for fused in (True, False):
        bulk = make_strategy(name)
        p2 = Program()
        replay_ops(bulk, p2, *map(list, zip(*ops)), fused=fused)
        assert bulk.state_signature() == public.state_signature()
        assert (p2.live, p2.failed_ids, bulk.arena.refusals) == (p1.live, p1.failed_ids, 3)


def test_the_window_explains_an_absurd_request(tmp_path):
    rep = tmp_path / "tib.rep"
    rep.write_text(TIB_REP)
    tl = Timeline(read_rep(rep), "phkmalloc").build()
    tl.seek(1)
    assert tl.last_record.failed
    assert tl.describe() == (f"step 1: malloc({TIB}) for id 0 -> NULL (more than phkmalloc can "
                             f"ever hand out: at most {TIB - 8})")
    assert any("fails at once" in getattr(e, "text", "") for e in tl.last_record.events)
    assert any(isinstance(e, GrowFailed) for e in tl.last_record.events)


# -------------------------------------------------------------- check
def test_check_warns_of_requests_past_a_gib(capsys, tmp_path):
    rep = tmp_path / "tib.rep"
    rep.write_text(TIB_REP)
    code = main(["check", str(rep)])
    out, err = capsys.readouterr()
    assert code == 0 and "OK, a valid trace" in out
    assert "warning" in err and "3 requests past 1G" in err and f"op 1: {TIB} bytes" in err
    small = tmp_path / "small.rep"
    small.write_text(f"0\n1\n2\n1\na 0 {1 << 30}\nf 0\n")      # 1 GiB itself: no warning
    assert main(["check", str(small)]) == 0
    assert capsys.readouterr().err == ""
