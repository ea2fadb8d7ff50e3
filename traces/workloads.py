"""Synthetic workloads from the seed benchmarks, as deterministic generators.

Each generator returns a :class:`~heapscope.traces.trace.Trace` and is deterministic
given its ``seed`` (numpy's ``default_rng``).  Every malloc gets a fresh id, so
``num_ids`` is the number of mallocs and an id is never reused.  The trace's
name is the workload spec that rebuilds it, e.g. ``"vo1989:seed=3"`` (only
parameters that differ from the defaults are listed), which
:func:`heapscope.traces.load_trace` accepts.

Each generator declares its parameters as strategies declare theirs
(:class:`~heapscope.allocators.params.Param`: kind, range, default, one line of help),
with :func:`workload`; the declarations are the single source for checking a
value (:func:`make_workload`), for reading one from text (a spec such as
``djgpp1997:max_size=8K``) and for the window's workload dialog.  Ranges keep
every accepted trace within :data:`heapscope.traces.limits.MAX_OPS` operations and
:data:`heapscope.traces.trace.MAX_SIZE` bytes a request.  ``presets`` name the runs the
seed itself made (Plotnick's four, Machin's smaller blocks...).
"""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

from heapscope.allocators.params import BOOL, INT, SIZE, Param, ParamError
from .errors import TraceError
from .limits import MAX_OPS
from .trace import ALLOC, FREE, MAX_SIZE, Trace

#: Workload name -> generator, in the order the seeds are numbered.
WORKLOADS: dict[str, Callable[..., Trace]] = {}

#: every seed is a whole number a spin box can hold
MAX_SEED = 2**31 - 1


def workload(name: str, *params: Param, presets: dict[str, dict] | None = None):
    """Register a generator as workload ``name`` with its declared parameters
    (one :class:`Param` per argument, in the signature's order, defaults
    equal) and the seed's own runs as ``presets`` (label -> parameters)."""
    def register(func: Callable[..., Trace]) -> Callable[..., Trace]:
        signature = inspect.signature(func).parameters
        assert [p.name for p in params] == list(signature), (name, list(signature))
        assert all(signature[p.name].default == p.default for p in params), name
        func.workload_name = name
        func.params = params
        func.presets = dict(presets or {})
        WORKLOADS[name] = func
        return func
    return register


def declared_workload(name: str) -> dict[str, Param]:
    """The parameters workload ``name`` takes, by name; TraceError if unknown."""
    func = WORKLOADS.get(name)
    if func is None:
        raise TraceError(f"unknown workload {name!r} (known: {', '.join(WORKLOADS)})")
    return {p.name: p for p in func.params}


def parse_workload_params(name: str, raw: dict[str, str]) -> dict:
    """``{'steps': '500', 'max_size': '8K'}`` -> values read by each parameter's
    declaration; TraceError naming the workload and the parameter."""
    params = declared_workload(name)
    out = {}
    for key, text in raw.items():
        p = params.get(key)
        if p is None:
            raise TraceError(f"workload {name!r} has no parameter {key!r} "
                             f"(it takes: {', '.join(params)})")
        try:
            out[key] = p.parse(text, f"workload {name!r}")
        except ParamError as exc:
            raise TraceError(str(exc)) from None
    return out


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


@workload(
    "vo1989",
    Param("steps", INT, 10000, "steps, one malloc each", low=0, high=MAX_OPS // 2),
    Param("min_size", SIZE, 1, "smallest request in bytes", low=0, high=MAX_SIZE),
    Param("max_size", SIZE, 1000, "largest request in bytes", low=0, high=MAX_SIZE),
    Param("min_life", INT, 100, "shortest lifetime in steps", low=1, high=MAX_OPS),
    Param("max_life", INT, 1000, "longest lifetime in steps", low=1, high=MAX_OPS),
    Param("seed", INT, 1989, "seed of the random numbers", low=0, high=MAX_SEED),
    presets={"Vo's run (10 000 steps)": {}},
)
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


@workload(
    "korn-vo1985",
    Param("steps", INT, 15000, "steps, one malloc each", low=0, high=MAX_OPS // 2),
    Param("seed", INT, 1985, "seed of the random numbers", low=0, high=MAX_SEED),
    Param("word", INT, 8, "bytes in a word (sizes are rnd(500)+2 words)", low=1, high=64),
    presets={"the paper's 15 000 steps, VAX words": {"word": 4}},
)
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


@workload(
    "plotnick1983",
    Param("n", INT, 20000, "blocks allocated", low=0, high=MAX_OPS // 2 - 1),
    Param("m", SIZE, 20, "bytes in each block", low=0, high=1 << 30),
    Param("giant_first", BOOL, False, "first free(malloc(n*m)), to make one large free block"),
    Param("seed", INT, 0, "unused: the workload has no randomness", low=0, high=MAX_SEED),
    presets={"20000 x 20": {}, "20000 x 20, giant free(malloc()) first": {"giant_first": True},
             "20000 x 100": {"m": 100},
             "20000 x 100, giant free(malloc()) first": {"m": 100, "giant_first": True}},
)
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


@workload(
    "djgpp1997",
    Param("actions", INT, 10000, "random actions, each a malloc or a free", low=0,
          high=MAX_OPS // 2),
    Param("slots", INT, 1024, "slots of the program's array", low=1, high=1 << 20),
    Param("max_size", SIZE, 128 * 1024, "largest request in bytes (sizes are uniform from 0)",
          low=0, high=MAX_SIZE),
    Param("seed", INT, 1997, "seed of the random numbers", low=0, high=MAX_SEED),
    presets={"Tropea's program (sizes 0-128 KiB)": {},
             "Machin's smaller blocks (max 8192 bytes)": {"max_size": 8192}},
)
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


def _size_classes(min_size: int, max_size: int) -> list[int]:
    """min_size, 2 min_size, 4 min_size ... up to max_size."""
    out = []
    s = min_size
    while s <= max_size:
        out.append(s)
        s *= 2
    return out


@workload(
    "dowdeswell1999",
    Param("regions", INT, 4096, "regions malloc'ed in each phase (the seed's column)",
          low=1, high=1 << 20),
    Param("min_size", SIZE, 16, "the smallest size class in bytes", low=1, high=1 << 30),
    Param("max_size", SIZE, 8192, "the largest size class is the largest min_size x 2^k up "
          "to this", low=1, high=1 << 30),
    Param("seed", INT, 1999, "seed of the random numbers", low=0, high=MAX_SEED),
    presets={f"{n} regions": {"regions": n}
             for n in (512, 1024, 2048, 4096, 8192, 12288, 14336, 16384)},
)
def dowdeswell1999(regions: int = 4096, min_size: int = 16, max_size: int = 8192,
                   seed: int = 1999) -> Trace:
    """Roland Dowdeswell's test of NetBSD's, FreeBSD's, GNU's and Doug Lea's
    mallocs (tech-userlevel, 5 February 1999; seed 003).

    The seed gives the program's region counts (its columns: 512 to 16384)
    and says they are "number of malloc(3)'ed regions of various sizes"; the
    program itself was an attachment the list did not keep.  This is our
    re-creation, chosen to fit what the tables show (docs/experiments.md):
    one phase per size class s = ``min_size``, 2 ``min_size``, 4 ``min_size``
    ... up to ``max_size`` (16 B to 8 KiB by default: ten phases), each
    malloc'ing ``regions`` regions of sizes uniform in (s/2, s] and then
    freeing them all, in allocation order.  An allocator that coalesces
    serves every phase from the memory the phases before it gave back (its
    heap is about ``regions`` x 6 KiB); one that keeps a free list per size
    and never coalesces (the BSD buckets, NetBSD's malloc of 1999) keeps every
    phase's blocks (about ``regions`` x 16 KiB): it runs out of memory first,
    as NetBSD's did.  ``seed`` seeds the sizes.
    """
    _check(1 <= min_size <= max_size, "need 1 <= min_size <= max_size")
    _check(regions >= 1, "regions must be >= 1")
    classes = _size_classes(min_size, max_size)
    _check(2 * regions * len(classes) <= MAX_OPS,
           f"{regions} regions x {len(classes)} size classes x 2 ops is more than "
           f"{MAX_OPS:,} operations")
    rng = np.random.default_rng(seed)
    n = regions
    kinds, ids, sizes = [], [], []
    for k, s in enumerate(classes):
        low = s // 2 + 1                       # (s/2, s]: 1 for s = 1
        first = k * n
        phase_ids = np.arange(first, first + n, dtype=np.int64)
        kinds += [np.full(n, ALLOC, np.int8), np.full(n, FREE, np.int8)]
        ids += [phase_ids, phase_ids]
        sizes += [rng.integers(low, s, size=n, endpoint=True), np.zeros(n, np.int64)]
    name = _spec_name("dowdeswell1999", dowdeswell1999,
                      dict(regions=regions, min_size=min_size, max_size=max_size, seed=seed))
    return Trace(np.concatenate(kinds), np.concatenate(ids), np.concatenate(sizes),
                 n * len(classes), name=name)


def make_workload(name: str, **params) -> Trace:
    """Run the workload ``name`` with ``params``; TraceError for an unknown
    name, an unknown parameter or a value its declaration does not accept
    (the message names the workload, the parameter and what it accepts)."""
    declared = declared_workload(name)
    for key, value in params.items():
        p = declared.get(key)
        if p is None:
            raise TraceError(f"workload {name!r} has no parameter {key!r} "
                             f"(it takes: {', '.join(declared)})")
        try:
            p.check(value, f"workload {name!r}")
        except ParamError as exc:
            raise TraceError(str(exc)) from None
    try:
        return WORKLOADS[name](**params)
    except (TypeError, ValueError) as e:
        raise TraceError(f"workload {name!r}: {e}") from None
