"""How deep the suite goes: the quick suite or the deep one (docs/testing.md).

``pytest`` (the README's test command) runs the quick suite: every test, with
the exhaustive cases thinned -- hypothesis tests draw a quarter of their
examples, and the walks over whole bundled traces check at fewer steps.
``pytest --deep`` runs the same tests at full depth; CI runs both.  A test
that scales itself asks :func:`deep` or :func:`pick`; the flag reaches the
test modules through the environment, set by tests/conftest.py before any
test module is imported (in every xdist worker too).
"""

from __future__ import annotations

import os

#: set to "1" by ``pytest --deep`` (tests/conftest.py)
ENV = "HEAPSCOPE_DEEP_TESTS"

#: the quick suite draws 1/HYPOTHESIS_SHARE of each hypothesis test's examples...
HYPOTHESIS_SHARE = 4
#: ...but never fewer than this (or the test's own number, if smaller)
HYPOTHESIS_LEAST = 5


def deep() -> bool:
    """Whether this is the deep suite (``pytest --deep``)."""
    return os.environ.get(ENV) == "1"


def pick(quick, deep_value):
    """``deep_value`` in the deep suite, ``quick`` in the quick one."""
    return deep_value if deep() else quick


def quick_examples(max_examples: int) -> int:
    """A hypothesis test's example count in the quick suite."""
    return min(max_examples, max(HYPOTHESIS_LEAST, max_examples // HYPOTHESIS_SHARE))


#: the strategies a quick suite's per-strategy GUI case runs for (the deep
#: suite runs every one): four structure views of different shapes -- a ring
#: of address-ordered blocks, a tree that rotates, bitmaps over a matrix of
#: lists, and buddy pairs split and merged
QUICK_STRATEGIES = ("next-fit", "splay-best-fit", "tlsf", "buddy")


def some_in_quick(values, keep=QUICK_STRATEGIES, every: int | None = None):
    """``values`` as pytest parameters: those in ``keep`` (or, with ``every``,
    every ``every``-th from the first) run in both suites, the others only in
    the deep one (marked ``deep``).  A tuple is the values of several
    argument names, as pytest takes them."""
    import pytest
    values = list(values)
    kept = (set(range(0, len(values), every)) if every else
            {i for i, v in enumerate(values) if v in keep})
    return [v if i in kept else
            pytest.param(*(v if isinstance(v, tuple) else (v,)), marks=pytest.mark.deep)
            for i, v in enumerate(values)]


#: a bundled trace longer than this is walked by the deep suite only: the
#: quick suite's tests that walk every bundled trace leave it out
#: (sqlite3-sql-40k, 175 334 operations, is sqlite3-sql's workload on more
#: rows: the same program and the same kinds of step; tests/gui/
#: test_real_trace_views.py looks at its late steps in both suites)
QUICK_TRACE_OPS = 100_000


def walked_examples():
    """The bundled traces (traces.bundled.examples()) that a test walking
    every one of them walks: all in the deep suite, those of at most
    QUICK_TRACE_OPS operations in the quick one."""
    from heapscope.traces.bundled import examples
    every = examples()
    return pick([ex for ex in every if ex.ops <= QUICK_TRACE_OPS], every)
