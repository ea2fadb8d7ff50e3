"""Every registered strategy, random traces, check() after every operation.

The list comes from the registry, so a new strategy is tested here the day it
is registered, without its author writing anything.  Each strategy's own test
file adds what is particular to it (worked examples, its structure's
invariants under its own parameters).
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heapscope.allocators.params import ParamError
from heapscope.allocators.registry import make_strategy, strategy_names

from .heap_harness import ALLOC, FREE, REALLOC, WHICH, run_checked

#: The heap each strategy is tested in: name -> parameters given to every
#: strategy.  A mode every strategy must support is one more line here.
MODES = {
    "sbrk": {},
    "sbrk-word4": {"word": 4},
    "heap-limit": {"heap_limit": 64 * 1024},
    "pool": {"pool_size": 64 * 1024},
    "pool-odd": {"pool_size": 50_001},
    "align16": {"align": 16},
}
#: modes a strategy may refuse when it is built (with a ParamError naming the
#: parameter), as TLSF refuses an alignment its bins cannot keep
MAY_BE_REFUSED = {"align16"}

#: sizes: mostly small (many blocks, much coalescing), some 0, some large
#: (several pages: morecore, the big-block paths, and failures under a limit)
SIZES = st.one_of(st.just(0), st.integers(1, 64), st.integers(65, 4096),
                  st.integers(4097, 1 << 20))


#: strategies made once (tests/heap_harness.py, WHICH says why)
WHAT = st.integers(0, 3)


@st.composite
def programs(draw, max_ops: int = 80):
    """(kind, id, size) ops a correct program could issue: malloc, free and
    realloc (of a live id, or of an id whose malloc failed: realloc(NULL, n))."""
    n = draw(st.integers(1, max_ops))
    live: list[int] = []
    ops = []
    for next_id in range(n):
        what = draw(WHAT) if live else 0     # 0-1 malloc, 2 free, 3 realloc
        if what < 2:
            ops.append((ALLOC, next_id, draw(SIZES)))
            live.append(next_id)
        else:
            i = live[draw(WHICH) % len(live)]
            if what == 2:
                live.remove(i)
                ops.append((FREE, i, 0))
            else:
                ops.append((REALLOC, i, draw(SIZES)))
    return ops


def strategy_and_mode_pairs():
    """(strategy, mode) pairs: every pair in the deep suite; in the quick one
    each strategy in ``sbrk`` and in two of the other five modes (strategy i
    with mode j >= 1 when (i + j) % 5 is 0 or 2), so that every mode meets
    four or five strategies; the other pairs marked ``deep`` (tests/depth.py;
    docs/testing.md's table).  Each strategy meets every mode in the quick
    suite elsewhere: tests/test_pools_and_alignment.py (both words, an
    alignment, a pool run out), tests/test_bulk_replay.py (a heap limit, a
    pool)."""
    modes = list(MODES)
    return [pytest.param(name, mode, id=f"{name}-{mode}",
                         marks=() if j == 0 or (i + j) % 5 in (0, 2) else pytest.mark.deep)
            for i, name in enumerate(strategy_names()) for j, mode in enumerate(modes)]


@pytest.mark.parametrize("name, mode", strategy_and_mode_pairs())
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=programs())
def test_random_programs_keep_every_invariant(name, mode, ops):
    try:
        s = make_strategy(name, **MODES[mode])
    except ParamError as exc:
        assert mode in MAY_BE_REFUSED, f"{name} refuses {MODES[mode]}: {exc}"
        assert all(p in str(exc) for p in MODES[mode]), exc
        return
    s.check()                                  # the empty heap too
    run_checked(s, ops)
