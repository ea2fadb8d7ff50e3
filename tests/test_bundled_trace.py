"""check() after every operation of the bundled default trace (issue 2: both
list strategies; the other strategies' test files check it too, thinned out
after the first 2000 operations)."""

import pytest

from heapscope.allocators.registry import make_strategy
from heapscope.traces import default_trace_path, read_rep

from .heap_harness import run_checked


@pytest.mark.parametrize("name", ["next-fit", "first-fit"])
def test_every_operation_of_the_default_trace_keeps_every_invariant(name):
    trace = read_rep(default_trace_path())
    s = make_strategy(name)
    where = run_checked(s, list(trace))
    assert where == {}                       # the trace frees everything at the end
    assert s.in_use == 0 and s.header_in_use == 0
    assert len(s.free_list()) == 1           # and the list has coalesced back into one block
