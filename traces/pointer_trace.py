"""From calls on addresses (what a program does) to ops on ids (a .rep trace).

A program frees and reallocates *pointers*; a .rep trace names *ids*.  The
recorder (:mod:`heapscope.traces.record`) and the importers (:mod:`heapscope.traces.ltrace`) see
the former and build the latter with :class:`PointerTrace`:

- an allocation gives its pointer a new id, even when the address was used
  before and freed (each id is one block of the program's life);
- a free or realloc of a pointer that was never seen allocated (a block from
  before recording began, or from an allocator we do not see) is dropped and
  counted, since no strategy could replay it;
- an address handed out again while we still think it live means a free we
  did not see (an allocator path that bypassed us): the old id is freed there
  first, and that is counted too;
- blocks still live at the end are freed there, in the order they were
  allocated, unless the caller keeps them live.

Ops are kept in compact arrays, and a trace past :data:`heapscope.traces.limits.MAX_OPS`
is refused with a message naming the limit.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import numpy as np

from .errors import TraceError
from .limits import MAX_OPS, MAX_SIZE
from .trace import ALLOC, FREE, REALLOC, Trace


@dataclass
class Snapshot:
    """A PointerTrace at one moment: its first ``ops`` ops and what was live."""
    owner: "PointerTrace"
    ops: int
    live: dict
    next_id: int


@dataclass
class Counts:
    """What could not be replayed as the program did it."""
    #: frees of a pointer never seen allocated (dropped)
    unknown_frees: int = 0
    #: reallocs of a pointer never seen allocated (kept as a new allocation)
    unknown_reallocs: int = 0
    #: an address handed out again while still live: a free we never saw
    missed_frees: int = 0
    #: blocks still live at the end, freed there (or kept: see keep_live)
    live_at_end: int = 0
    extra: dict = field(default_factory=dict)


class PointerTrace:
    """Collects alloc/free/realloc calls on addresses and makes a :class:`Trace`.

    ``source`` names the input in error messages; ``line`` arguments are the
    input line (or record) each call came from, kept as the trace's line
    numbers.
    """

    def __init__(self, name: str = "", source: str | None = None, max_ops: int = MAX_OPS) -> None:
        self.name = name
        self.source = source
        self.max_ops = max_ops
        self.kind = array("B")
        self.ids = array("q")
        self.sizes = array("q")
        self.lines = array("i")
        self.live: dict[int, tuple[int, int]] = {}   # pointer -> (id, size)
        self.next_id = 0
        self.counts = Counts()

    def __len__(self) -> int:
        return len(self.kind)

    # --- calls ----------------------------------------------------------------
    def alloc(self, ptr: int, size: int, line: int = 0) -> None:
        """``ptr = malloc(size)`` (or calloc, or an aligned allocation)."""
        self._check_size(size, line)
        if ptr in self.live:
            self.counts.missed_frees += 1
            self._op(FREE, self.live.pop(ptr)[0], 0, line)
        ident = self.next_id
        self.next_id += 1
        self.live[ptr] = (ident, size)
        self._op(ALLOC, ident, size, line)

    def free(self, ptr: int, line: int = 0) -> bool:
        """``free(ptr)``; False (and counted) when ``ptr`` is not live."""
        entry = self.live.pop(ptr, None)
        if entry is None:
            self.counts.unknown_frees += 1
            return False
        self._op(FREE, entry[0], 0, line)
        return True

    def realloc(self, old: int, new: int, size: int, line: int = 0) -> None:
        """``new = realloc(old, size)`` that succeeded, ``old`` not NULL."""
        entry = self.live.pop(old, None)
        if entry is None:
            self.counts.unknown_reallocs += 1
            self.alloc(new, size, line)
            return
        self.moved(entry[0], new, size, line)

    def release(self, ptr: int) -> tuple[int, int] | None:
        """Forget ``ptr`` without an op (a realloc under way: the address may
        be handed out to another thread before the call returns).  Returns
        its (id, size), or None if it was not live."""
        return self.live.pop(ptr, None)

    def restore(self, ptr: int, entry: tuple[int, int]) -> None:
        """A released block stays where it was (the realloc failed or never
        returned)."""
        if ptr not in self.live:
            self.live[ptr] = entry

    def free_id(self, ident: int, line: int = 0) -> None:
        """Free a released block (``realloc(p, 0)`` freed it)."""
        self._op(FREE, ident, 0, line)

    def moved(self, ident: int, new: int, size: int, line: int = 0) -> None:
        """The realloc of id ``ident`` (released before) returned ``new``."""
        self._check_size(size, line)
        if new in self.live:
            self.counts.missed_frees += 1
            self._op(FREE, self.live.pop(new)[0], 0, line)
        self.live[new] = (ident, size)
        self._op(REALLOC, ident, size, line)

    def free_all(self, line: int = 0) -> int:
        """Free every live block, oldest id first; returns how many."""
        entries = sorted(self.live.values())
        self.live.clear()
        for ident, _ in entries:
            self._op(FREE, ident, 0, line)
        return len(entries)

    # --- fork -----------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        return Snapshot(self, len(self.kind), dict(self.live), self.next_id)

    @classmethod
    def continued(cls, snap: Snapshot, name: str = "", source: str | None = None) -> "PointerTrace":
        """A new trace that starts as ``snap.owner`` was at the snapshot: a
        forked child's heap is its parent's heap at the fork."""
        t = cls(name, source, snap.owner.max_ops)
        n = snap.ops
        t.kind = snap.owner.kind[:n]
        t.ids = snap.owner.ids[:n]
        t.sizes = snap.owner.sizes[:n]
        t.lines = array("i", bytes(4 * n))   # no line of its own input
        t.live = dict(snap.live)
        t.next_id = snap.next_id
        return t

    # --- result ---------------------------------------------------------------
    def finish(self, keep_live: bool = False, line: int = 0) -> Trace:
        """The trace; blocks still live are freed at the end unless ``keep_live``."""
        self.counts.live_at_end = len(self.live)
        if not keep_live:
            self.free_all(line)
        kind = np.frombuffer(self.kind, dtype=np.uint8) if len(self.kind) else np.zeros(0, np.uint8)
        ids = np.frombuffer(self.ids, dtype=np.int64) if len(self.ids) else np.zeros(0, np.int64)
        sizes = np.frombuffer(self.sizes, dtype=np.int64) if len(self.sizes) else np.zeros(0, np.int64)
        lines = np.frombuffer(self.lines, dtype=np.int32) if len(self.lines) else np.zeros(0, np.int32)
        return Trace(kind, ids, sizes, self.next_id, name=self.name, source=self.source,
                     line_numbers=lines if lines.any() else None)

    def _op(self, kind: int, ident: int, size: int, line: int) -> None:
        if len(self.kind) >= self.max_ops:
            raise TraceError(f"more than {self.max_ops:,} operations: heapscope reads traces "
                             f"of at most {self.max_ops:,}", self.source, line or None)
        self.kind.append(kind)
        self.ids.append(ident)
        self.sizes.append(size)
        self.lines.append(line)

    def _check_size(self, size: int, line: int) -> None:
        if not 0 <= size <= MAX_SIZE:
            raise TraceError(f"absurd size {size} (more than 2**40 bytes)"
                             if size > 0 else f"negative size {size}", self.source, line or None)
