"""check() along the bundled default trace for the two K&R list strategies,
thinned as the other strategies' files do it (every op of the first 2000,
then every 50th and the last), plus, after every op, a check in O(1) of the
free-list neighbourhood the op changed: K&R leaves the rover at the free
block before the one a free inserted or a malloc used, so a join that a free
missed, or a rover that left the list, is at the rover, whenever it happens."""

import pytest

from heapscope.allocators.next_fit import BASE
from heapscope.allocators.registry import make_strategy
from heapscope.traces import default_trace_path, read_rep

from .heap_harness import check_long_trace


def around_the_rover(s, step) -> None:
    """The rover is on the free list, and of the free blocks at the rover and
    the two after it, no two address-order neighbours touch."""
    p = s.freep
    assert p == BASE or p in s.next, f"op {step}: the rover {p:#x} is not on the free list"
    ring = [p, s.next[p], s.next[s.next[p]]]
    for a, b in zip(ring, ring[1:]):
        if BASE not in (a, b) and a < b:
            assert a + s.size[a] * s.unit != b, \
                f"op {step}: free blocks {a:#x} and {b:#x} touch but were not joined"


@pytest.mark.parametrize("name", ["next-fit", "first-fit"])
def test_the_default_trace_keeps_every_invariant(name):
    trace = read_rep(default_trace_path())
    s = make_strategy(name)
    where = check_long_trace(s, list(trace), local=around_the_rover)
    assert where == {}                       # the trace frees everything at the end
    assert s.in_use == 0 and s.header_in_use == 0
    assert len(s.free_list()) == 1           # and the list has coalesced back into one block
