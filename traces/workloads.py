"""Synthetic workloads from the seed benchmarks, as deterministic generators.

Each generator returns a :class:`~traces.trace.Trace` and is deterministic
given its ``seed`` (numpy's ``default_rng``).  Every malloc gets a fresh id, so
``num_ids`` is the number of mallocs and an id is never reused.  The trace's
name is the workload spec that rebuilds it, e.g. ``"vo1989:seed=3"`` (only
parameters that differ from the defaults are listed), which
:func:`traces.load_trace` accepts.
"""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

from .errors import TraceError
from .trace import ALLOC, FREE, Trace


def _spec_name(name: str, func: Callable, params: dict) -> str:
    """``name:k=v,...`` listing the parameters that differ from the defaults."""
    defaults = {k: p.default for k, p in inspect.signature(func).parameters.items()}
    changed = [f"{k}={v}" for k, v in params.items() if defaults.get(k) != v]
    return f"{name}:{','.join(changed)}" if changed else name


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _lifetime_trace(sizes: np.ndarray, lifetimes: np.ndarray, name: str) -> Trace:
    """Block i is malloc'ed at step i and freed at the start of step
    ``i + lifetimes[i]``, before that step's malloc; blocks freed at the same
    step go in allocation order; blocks still live after the last step are
    freed at the end, in allocation order.
    """
    n = len(sizes)
    ids = np.arange(n, dtype=np.int64)
    free_step = np.minimum(ids + lifetimes, n)  # n: after the last step
    step = np.concatenate([ids, free_step])
    phase = np.concatenate([np.ones(n, np.int8), np.zeros(n, np.int8)])  # frees first
    who = np.concatenate([ids, ids])
    order = np.lexsort((who, phase, step))  # last key is the primary one
    kind = np.where(phase[order] == 1, ALLOC, FREE)
    all_sizes = np.concatenate([sizes, np.zeros(n, np.int64)])
    return Trace(kind, who[order], all_sizes[order], n, name=name)


def vo1989(steps: int = 10000, min_size: int = 1, max_size: int = 1000,
           min_life: int = 100, max_life: int = 1000, seed: int = 1989) -> Trace:
    """Phong Vo's simulation (Usenet, 10 May 1989; seed 000).

    "This simulation runs 10000 steps. At each step, a malloc request of a
    size varying uniformly between 1 to 1000 bytes is performed ... Each
    malloced block is given a life time ranging uniformly between 100 to 1000
    steps. When a block's time is up, it is freed. ... at the end of the
    simulation, any block that hasn't been freed is freed."  Vo measured
    Salloc = 304921 (max live bytes) with his generator.

    Parameters: ``steps`` (one malloc each); sizes uniform in
    [``min_size``, ``max_size``] bytes; lifetimes uniform in
    [``min_life``, ``max_life``] steps (``min_life`` >= 1); ``seed``.  The
    blocks whose time is up are freed at the start of their step, before its
    malloc, in allocation order.
    """
    _check(steps >= 0, "steps must be >= 0")
    _check(0 <= min_size <= max_size, "need 0 <= min_size <= max_size")
    _check(1 <= min_life <= max_life, "need 1 <= min_life <= max_life")
    rng = np.random.default_rng(seed)
    sizes = rng.integers(min_size, max_size, size=steps, endpoint=True)
    lifetimes = rng.integers(min_life, max_life, size=steps, endpoint=True)
    name = _spec_name("vo1989", vo1989, dict(steps=steps, min_size=min_size, max_size=max_size,
                                             min_life=min_life, max_life=max_life, seed=seed))
    return _lifetime_trace(sizes, lifetimes, name)


def korn_vo1985(steps: int = 15000, seed: int = 1985, word: int = 8) -> Trace:
    """Korn & Vo, "In Search of a Better Malloc", USENIX Summer 1985.

    The paper Vo's 1989 posting (seed 000) points to ("the '85 USENIX
    paper"); its simulation as recorded in the design notes: ``steps``
    steps, each a malloc of ``rnd(500) + 2`` words (``rnd(n)`` uniform in
    ``[0, n)``; a word is ``word`` bytes) with a lifetime of
    ``rnd(1000) + 1`` steps; same structure as :func:`vo1989` (expired
    blocks freed at the start of a step, the rest at the end).  ``seed``
    seeds the generator.
    """
    _check(steps >= 0, "steps must be >= 0")
    _check(word >= 1, "word must be >= 1")
    rng = np.random.default_rng(seed)
    sizes = (rng.integers(0, 500, size=steps) + 2) * word
    lifetimes = rng.integers(0, 1000, size=steps) + 1
    name = _spec_name("korn-vo1985", korn_vo1985, dict(steps=steps, seed=seed, word=word))
    return _lifetime_trace(sizes, lifetimes, name)


def plotnick1983(n: int = 20000, m: int = 20, giant_first: bool = False, seed: int = 0) -> Trace:
    """Mark Plotnick, "In Search Of... fast malloc" (net.unix, 1983; seed 002).

    "it just allocated n blocks of m bytes each ... It will optionally
    allocate, and immediately free, n*m bytes upon startup; this greatly
    reduces the number of sbrk() system calls."  Runs in the posting:
    n=20000 with m=20 and m=100, each with and without the giant block.

    Parameters: ``n`` blocks of ``m`` bytes; ``giant_first`` adds the initial
    ``free(malloc(n*m))`` (id 0).  All blocks are freed at the end, in
    allocation order (the original just exited).  ``seed`` is accepted for a
    uniform interface; the workload has no randomness.
    """
    _check(n >= 0 and m >= 0, "n and m must be >= 0")
    # (kind, id, size) of the optional giant free(malloc(n*m)), then n mallocs
    # and n frees of ids first .. first+n-1.
    head = [(ALLOC, 0, n * m), (FREE, 0, 0)] if giant_first else []
    head_ops = np.array(head, dtype=np.int64).reshape(-1, 3)
    first = len(head_ops) // 2
    ids = np.arange(first, first + n, dtype=np.int64)
    kind = np.concatenate([head_ops[:, 0], np.full(n, ALLOC), np.full(n, FREE)])
    all_ids = np.concatenate([head_ops[:, 1], ids, ids])
    sizes = np.concatenate([head_ops[:, 2], np.full(n, m), np.zeros(n, np.int64)])
    name = _spec_name("plotnick1983", plotnick1983,
                      dict(n=n, m=m, giant_first=giant_first, seed=seed))
    return Trace(kind, all_ids, sizes, first + n, name=name)


def djgpp1997(actions: int = 10000, slots: int = 1024, max_size: int = 128 * 1024,
              seed: int = 1997) -> Trace:
    """Salvador E. Tropea's test on the djgpp list (October 1997; seed 001).

    "10000 pseudo-aleatory numbers, the numbers indicates if we will delete
    or allocate a block, the index in a 1024 elements array and the size of
    the block (0-128Kb)."  Here each of ``actions`` actions picks a random
    one of ``slots`` slots: an empty slot gets a malloc of a size uniform in
    [0, ``max_size``] bytes, a full one is freed.  At the end every slot still
    holding a block is freed, in slot order.  (The original drew the
    alloc/delete choice separately and freed a full slot before refilling it;
    John Machin's "touch the memory" option does not change the trace.)
    ``seed`` seeds the generator.
    """
    _check(actions >= 0, "actions must be >= 0")
    _check(slots >= 1, "slots must be >= 1")
    _check(max_size >= 0, "max_size must be >= 0")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, slots, size=actions).tolist()
    sizes = rng.integers(0, max_size, size=actions, endpoint=True).tolist()
    holder = [-1] * slots  # id held by each slot, -1 when empty
    ops: list[tuple[int, int, int]] = []
    next_id = 0
    for slot, size in zip(picks, sizes):
        if holder[slot] < 0:
            holder[slot] = next_id
            ops.append((ALLOC, next_id, size))
            next_id += 1
        else:
            ops.append((FREE, holder[slot], 0))
            holder[slot] = -1
    ops += [(FREE, ident, 0) for ident in holder if ident >= 0]
    kinds, ids, op_sizes = zip(*ops) if ops else ((), (), ())
    name = _spec_name("djgpp1997", djgpp1997,
                      dict(actions=actions, slots=slots, max_size=max_size, seed=seed))
    return Trace(kinds, ids, op_sizes, next_id, name=name)


#: Workload name -> generator.
WORKLOADS: dict[str, Callable[..., Trace]] = {
    "vo1989": vo1989,
    "korn-vo1985": korn_vo1985,
    "plotnick1983": plotnick1983,
    "djgpp1997": djgpp1997,
}


def _type_word(t: type) -> str:
    return {int: "a whole number", float: "a number", bool: "true or false", str: "text"}.get(t, t.__name__)


def make_workload(name: str, **params) -> Trace:
    """Run the workload ``name`` with ``params``; TraceError for an unknown
    name, an unknown parameter or a bad value."""
    func = WORKLOADS.get(name)
    if func is None:
        raise TraceError(f"unknown workload {name!r} (known: {', '.join(WORKLOADS)})")
    known = inspect.signature(func).parameters
    for key, value in params.items():
        if key not in known:
            raise TraceError(f"workload {name!r} has no parameter {key!r} "
                             f"(it takes: {', '.join(known)})")
        # Each parameter must have the type of its default (an int where an int
        # is expected; bool is an int to Python, so it is checked apart).
        default = known[key].default
        expected = type(default)
        if default is not inspect.Parameter.empty and default is not None and not (
                isinstance(value, expected) and (expected is bool) == isinstance(value, bool)
                or expected is float and isinstance(value, int) and not isinstance(value, bool)):
            raise TraceError(f"workload {name!r}: {key} must be {_type_word(expected)}, got {value!r}")
    try:
        return func(**params)
    except (TypeError, ValueError) as e:
        raise TraceError(f"workload {name!r}: {e}") from None
