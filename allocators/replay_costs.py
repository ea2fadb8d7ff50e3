"""Which replays to start first when there are more than workers: the longest.

``heapscope compare`` of every built-in strategy on a long trace runs twelve
replays on one worker per core.  Started in the registry's order, the
slowest strategy (V7's malloc, which walks every block) could start last
and run alone while the other core idles; started longest first (Graham's
LPT rule: R. L. Graham, "Bounds on multiprocessing timing anomalies", SIAM
J. Appl. Math. 17, 1969), the replays left at the end are the short ones,
and the wall time is within the shortest replay of the CPU time over the
cores.

The costs are CPU microseconds an operation of each strategy's replay with
measures, as ``compare`` runs them (its ``cpu s`` column over the ops), on
the bundled gcc-cc1 trace (docs/benchmarks.md, "Ten million operations"):
only their order matters.  A strategy not listed (a strategy of your own)
is taken as the slowest: it may be, and it runs under a time limit.
"""

from __future__ import annotations

from typing import Iterable, TypeVar

#: CPU us an op with measures, gcc-cc1 (63 678 ops), 2 December 2026
COST_PER_OP = {
    "v7-malloc": 10.9,
    "dlmalloc": 6.1,
    "first-fit": 5.9,
    "gnu-malloc": 5.6,
    "next-fit": 5.3,
    "phkmalloc": 5.1,
    "segregated-first-fit": 4.9,
    "splay-best-fit": 4.7,
    "rotating-list": 4.2,
    "tlsf": 3.1,
    "buddy": 2.4,
    "bsd-buckets": 1.4,
}

T = TypeVar("T")


def cost_per_op(name: str) -> float:
    """The CPU an operation of ``name``'s replay is expected to take (us);
    the slowest known for a strategy not listed."""
    return COST_PER_OP.get(name, max(COST_PER_OP.values()))


def longest_first(items: Iterable[T], name=lambda item: item) -> list[T]:
    """``items`` (strategies, or things ``name`` maps to one) in the order
    to start them: the most costly first, ties in their given order."""
    return sorted(items, key=lambda item: -cost_per_op(name(item)))
