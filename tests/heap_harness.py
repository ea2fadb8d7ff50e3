"""Shared helpers for strategy tests: valid random op sequences for hypothesis,
and a driver that calls ``check()`` after every operation (as sortedcontainers'
tests call ``_check()``)."""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from heapscope.allocators.strategy import Strategy
from tests.depth import pick

ALLOC, FREE, REALLOC = 0, 1, 2


#: what an op does once some block is live: 0 malloc, 1-2 free, 3 realloc
#: (without reallocs, 0-2); drawn from strategies made once, not one per op:
#: a strategy made inside the loop was validated anew at every draw, which
#: cost more than running the allocator on the program
_WHAT = {True: st.integers(0, 3), False: st.integers(0, 2)}
#: which live block a free or realloc names: this modulo the number live
WHICH = st.integers(0, 1 << 16)


@functools.lru_cache(maxsize=None)
def _sizes(max_size: int):
    """Request sizes: half of them small (0-64), half up to ``max_size``."""
    return st.one_of(st.integers(0, 64), st.integers(0, max_size))


@st.composite
def op_sequences(draw, max_ops: int = 80, max_size: int = 2000, reallocs: bool = True):
    """A list of (kind, id, size) that a correct program could issue: frees and
    reallocs only name live ids.  Every draw shrinks towards a malloc of
    size 0, and a free or realloc of the oldest live block."""
    n = draw(st.integers(min_value=1, max_value=max_ops))
    live: list[int] = []
    next_id = 0
    ops = []
    sizes = _sizes(max_size)
    what = _WHAT[reallocs]
    for _ in range(n):
        kind = draw(what) if live else 0
        if kind == 0:
            ops.append((ALLOC, next_id, draw(sizes)))
            live.append(next_id)
            next_id += 1
        else:
            i = live[draw(WHICH) % len(live)]
            if kind < 3:
                live.remove(i)
                ops.append((FREE, i, 0))
            else:
                ops.append((REALLOC, i, draw(sizes)))
    return ops


def apply_program(strategy: Strategy, ops, after=None) -> dict[int, int]:
    """Apply (kind, id, size) ops as the traced program would: a failed malloc
    leaves NULL, free(NULL) does nothing, a failed realloc keeps the old block.
    ``after(step, where, asked)`` runs after each op.  Returns id -> payload."""
    where: dict[int, int] = {}
    asked: dict[int, int] = {}
    for step, (kind, ident, size) in enumerate(ops):
        if kind == ALLOC:
            p = strategy.malloc(size)
            if p is not None:
                where[ident] = p
                asked[ident] = size
        elif kind == FREE:
            asked.pop(ident, None)
            strategy.free(where.pop(ident, None))
        else:
            p = strategy.realloc(where.get(ident), size)
            if p is not None:
                where[ident] = p
                asked[ident] = size
        if after is not None:
            after(step, where, asked)
    return where


def run_checked(strategy: Strategy, ops, check_every: int = 1) -> dict[int, int]:
    """Apply ops, calling ``strategy.check()`` after every ``check_every``-th one
    and verifying that walk() covers the heap, that the strategy's fast
    fragmentation probe agrees with a walk of its free blocks, and that live
    payloads never overlap.  Returns the final id -> payload map."""
    last = len(ops) - 1

    def verify(step, where, asked):
        if step % check_every and step != last:
            return
        blocks = strategy.check()
        assert sum(b.size for b in blocks) == strategy.heap_size, \
            f"step {step}: walk() covers {sum(b.size for b in blocks)} bytes of {strategy.heap_size}"
        fast = strategy.fragmentation_probe()
        slow = Strategy.fragmentation_probe(strategy)   # one pass over free_blocks()
        assert fast[:2] == slow[:2], f"step {step}: (F, Fmax) is {fast[:2]}, the free blocks say {slow[:2]}"
        spans = sorted((where[i], where[i] + asked[i]) for i in where)
        for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
            assert a1 <= b0, f"step {step}: payloads [{a0:#x},{a1:#x}) and [{b0:#x},{b1:#x}) overlap"

    return apply_program(strategy, ops, verify)


def check_long_trace(strategy: Strategy, ops, dense: int = 2000, every: int = 50,
                     local=None) -> dict[int, int]:
    """check() after each of the first ``dense`` ops, then after every
    ``every``-th and the last: a whole bundled trace in a few seconds.
    ``local(strategy, step)``, if given, runs after every other op: a cheap
    check of the part of the heap the op just changed, so that a break
    mended again before the next full check is still seen.

    Events are off (as in a timeline's build and in ``compare``): recording
    every block a search visits made these whole-trace runs 10-14 times
    slower, and what the events say is checked on the same traces by
    test_structure_replay.py and test_explain.py.

    The quick suite (tests/depth.py) checks after a quarter of the first
    ``dense`` ops and after every ``4 * every``-th: the same walk through the
    whole trace, at fewer stops."""
    last = len(ops) - 1
    strategy.record = False
    dense, every = pick(dense // 4, dense), pick(every * 4, every)

    def verify(step, where, asked):
        if step < dense or step % every == 0 or step == last:
            blocks = strategy.check()
            assert sum(b.size for b in blocks) == strategy.heap_size
        elif local is not None:
            local(strategy, step)

    return apply_program(strategy, ops, verify)


def assert_probe_matches_walk(strategy: Strategy, ops, slow=None) -> None:
    """After every op, the strategy's fast fragmentation probe equals the
    one-pass walk of its free blocks (or ``slow(strategy)``)."""
    slow = slow or Strategy.fragmentation_probe

    def compare(step, where, asked):
        assert strategy.fragmentation_probe() == slow(strategy), f"after op {step}"

    apply_program(strategy, ops, compare)
