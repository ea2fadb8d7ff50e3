"""Heaps with many free blocks, for the structure views' legibility and speed.

:func:`big_heap` mallocs ``2 n`` blocks and frees every other one, so about
``n`` free blocks remain and no two are neighbours (nothing coalesces), then
records one last malloc so the view has a step to light.  Used by the view
tests and by ``benchmarks/bench_structure_views.py``.
"""

from __future__ import annotations

import random

from heapscope.allocators.explain import explain_step
from heapscope.allocators.registry import make_strategy


def big_heap(strategy: str, n_free: int = 10_000, *, seed: int = 7, ascending: bool = False,
             max_size: int = 2000, last_request: int = 300):
    """(strategy, structure, explained events of the last malloc, record).

    ``ascending=True`` frees in increasing size order: in the splay tree,
    whose frees insert leaves without splaying, that builds a degenerate
    right spine as deep as there are distinct sizes."""
    rng = random.Random(seed)
    s = make_strategy(strategy, record=False)
    sizes = [rng.randint(1, max_size) for _ in range(2 * n_free)]
    payloads = [s.malloc(n) for n in sizes]
    victims = list(range(0, 2 * n_free, 2))
    if ascending:
        victims.sort(key=lambda i: sizes[i])
    for i in victims:
        s.free(payloads[i])
    s.record = True
    s.malloc(last_request)
    record = s.rec
    return s, s.structure(), explain_step(s, record), record
