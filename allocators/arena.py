"""The simulated address space a strategy carves blocks from.

Two modes, as real allocators take memory:

* **grown by sbrk** (Unix malloc, K&R 8.7): the break starts at ``base`` and a
  strategy asks for more with :meth:`Arena.sbrk`.  An optional ``limit`` caps the
  heap; past it ``sbrk`` fails like ENOMEM and the request that needed it fails.
* **fixed pool** (embedded allocators, TLSF's ``tlsf_create_with_pool``): the
  whole pool exists from the start and ``sbrk`` always fails.

A strategy that gives memory back (dlmalloc's ``malloc_trim``, which calls
``sbrk`` with a negative increment) calls :meth:`Arena.shrink`.  H, the break
minus the base, then falls; the measures still report the largest heap
(Sarena, waste, Johnstone & Wilson #3 and #4 take the maximum of H over the
steps, never its last value), and ``peak`` keeps the highest break the arena
ever reached, for a caller that wants it without a series.

Both live in an address space of :data:`ADDRESS_SPACE` bytes (1 TiB, the
largest size a trace or a parameter may state): the heap never grows past
it, so :attr:`Arena.room`, the most bytes the heap may ever span, is the
heap limit, the pool size, or that.  A request larger than the room can
never be granted, and strategies refuse it at once
(``Strategy.largest_request``).

Addresses are plain byte offsets; nothing is ever really allocated.
"""

from __future__ import annotations

from .params import MAX_BYTES

#: bytes of the simulated address space every heap lives in: sizes and
#: addresses stay within the int64 columns of the measures
ADDRESS_SPACE = MAX_BYTES


class Arena:
    """A byte-addressed heap ``[base, brk)``."""

    __slots__ = ("base", "brk", "limit", "fixed", "grow_calls", "peak", "refusals")

    def __init__(self, *, pool_size: int | None = None, limit: int | None = None,
                 base: int = 0) -> None:
        if pool_size is not None and pool_size < 0:
            raise ValueError(f"pool size must be >= 0, got {pool_size}")
        if limit is not None and limit < 0:
            raise ValueError(f"heap limit must be >= 0, got {limit}")
        self.base = base
        self.fixed = pool_size is not None
        self.brk = base + (pool_size or 0)
        # A fixed pool is its own limit.
        self.limit = pool_size if self.fixed else limit
        self.grow_calls = 0
        #: how many times growth was refused (ENOMEM: the limit, or a fixed
        #: pool with nothing left to carve): ``heapscope grade`` accepts a NULL
        #: result only from a request during which this rose, or in a pool
        self.refusals = 0
        #: the highest break so far (the break never falls unless shrink() is called)
        self.peak = self.brk

    @property
    def room(self) -> int:
        """The most bytes the heap may ever span: the pool, the heap limit, or
        the whole address space."""
        return ADDRESS_SPACE if self.limit is None else self.limit

    @property
    def size(self) -> int:
        """H in DESIGN.md: break minus base."""
        return self.brk - self.base

    def sbrk(self, increment: int) -> int | None:
        """Move the break up by ``increment`` bytes; return the old break, or None
        when the pool is fixed or the limit (or the address space) would be
        passed (ENOMEM)."""
        if increment < 0:
            raise ValueError("sbrk takes a non-negative increment here; shrink() gives memory back")
        if (self.fixed and increment) or self.size + increment > (
                ADDRESS_SPACE if self.limit is None else self.limit):
            self.refusals += 1
            return None
        old = self.brk
        self.brk += increment
        self.grow_calls += 1
        if self.brk > self.peak:
            self.peak = self.brk
        return old

    def refuse(self) -> None:
        """Count a refusal the strategy decided without calling :meth:`sbrk`
        (a fixed pool whose uncarved part is too small)."""
        self.refusals += 1

    def shrink(self, decrement: int) -> int:
        """``sbrk(-decrement)``: give the top ``decrement`` bytes back; return
        the new break.  A fixed pool cannot shrink, nor can the break go below
        the base."""
        if self.fixed:
            raise ValueError("a fixed pool cannot shrink")
        if not 0 <= decrement <= self.size:
            raise ValueError(f"cannot shrink a heap of {self.size} bytes by {decrement}")
        self.brk -= decrement
        return self.brk

    def __repr__(self) -> str:
        mode = "pool" if self.fixed else "sbrk"
        return f"Arena({mode}, base={self.base:#x}, brk={self.brk:#x}, limit={self.limit})"
