"""Heaps with thousands of free blocks for the structure view tests, built by
driving a strategy directly (a Timeline would pickle a checkpoint of the big
heap every few dozen steps)."""

import random

from heapscope import traces
from heapscope.allocators import make_strategy
from heapscope.allocators.explain import explain_step
from heapscope.allocators.replay import Program, apply_op


def every_other_freed(n=10000, size=24, then=(("a", 4000), ("a", 24))):
    """2n mallocs of ``size`` bytes, every other one freed (n free blocks that
    cannot coalesce), then the mallocs of ``then``: by default one bigger than
    any free block (a search through all of them) and a small one.

    Plotnick's giant ``free(malloc(...))`` comes first (seed 002): one free
    block for all the small ones, so the list policies carve them from it in
    address order and each free finds its place at once (first fit's free
    walks from base: otherwise it would walk half the list every time).  It
    holds exactly the 2n blocks K&R cuts for the small requests (16-byte
    units plus a header unit), so the first-fit search at the end finds no
    big remainder at the bottom of the heap and walks all n blocks."""
    kr_block = ((size + 15) // 16 + 1) * 16
    giant = 2 * n * kr_block - 16
    ops = [("a", 2 * n + len(then), giant), ("f", 2 * n + len(then))]
    ops += [("a", i, size) for i in range(2 * n)] + [("f", i) for i in range(0, 2 * n, 2)]
    ops += [(kind, 2 * n + j, s) for j, (kind, s) in enumerate(then)]
    return traces.Trace.from_ops(ops)


def replay_last_steps(trace, strategy: str, last: int = 3):
    """Replay ``trace``; return the strategy and [(structure, explained)] of
    its last ``last`` steps, events recorded only for those."""
    s = make_strategy(strategy)
    program = Program()
    s.record = False
    n = len(trace)
    steps = []
    for i, (kind, ident, size) in enumerate(zip(trace.kind.tolist(), trace.ids.tolist(),
                                                 trace.sizes.tolist())):
        if i == n - last:
            s.record = True
        rec = apply_op(s, program, kind, ident, size)
        if i >= n - last:
            steps.append((s.structure(), explain_step(s, rec)))
    return s, steps


def big_heap(strategy: str, n_free: int = 10_000, *, seed: int = 7, ascending: bool = False,
             max_size: int = 2000, last_request: int = 300):
    """Random sizes, for the tree, buddy and TLSF views: ``2 n_free`` mallocs
    of 1..``max_size`` bytes, every other block freed (none are neighbours, so
    nothing coalesces -- except buddies, which do), then one recorded malloc
    of ``last_request`` so the view has a step to light.  Returns (strategy,
    structure, explained events of that malloc, its record).

    ``ascending=True`` frees in increasing size order: in the splay tree,
    whose frees insert leaves without splaying, that builds a right spine as
    deep as there are distinct sizes."""
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
