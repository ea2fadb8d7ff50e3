"""The heap's block list as numpy columns: what the heap map draws, what the
heap tracker edits (:mod:`heapscope.allocators.heap_edits`) and what the
block facts read.  Pure numpy, no Qt.

:func:`block_arrays` turns ``strategy.walk_tuples()`` (tuples of addr, size,
state, payload, request, header, in address order) into parallel columns in
one Python-level pass; :class:`BlockArrays` holds them with the break and the
policy's top (wilderness) block.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter

import numpy as np

STATE_USED, STATE_FREE, STATE_META = 0, 1, 2
_STATE_CODES = {"used": STATE_USED, "free": STATE_FREE, "meta": STATE_META}


@dataclass
class BlockArrays:
    """``walk()`` as columns; ``payload`` is -1 for free and meta blocks.

    ``top`` is the address of the policy's top (wilderness) block, -1 when
    the policy keeps none: only a policy that names its top block with a
    marker pointer (:data:`WILDERNESS_POINTERS`: Vmbest's ``wilderness``,
    dlmalloc's ``top``) has one.  Next fit, first fit, Kruse, TLSF, the
    buddy system and the BSD buckets treat their last free block as any
    other, and the map colours it as any other free block."""
    addr: np.ndarray
    size: np.ndarray
    state: np.ndarray     # STATE_USED / STATE_FREE / STATE_META, int8
    payload: np.ndarray
    request: np.ndarray
    header: np.ndarray
    brk: int              # end of the heap
    top: int = -1         # the top (wilderness) block's address, or -1

    def __len__(self) -> int:
        return len(self.addr)

    def index_at(self, address: int) -> int:
        """Index of the block holding ``address``, or -1 outside the heap."""
        if not len(self.addr) or address < self.addr[0] or address >= self.brk:
            return -1
        return int(np.searchsorted(self.addr, address, side="right")) - 1

    def mean_size(self) -> float:
        """Bytes per block on average (the heap size when there is none)."""
        return self.brk / len(self.addr) if len(self.addr) else float(self.brk)

    def top_index(self) -> int:
        """Index of the top (wilderness) block the policy names (:attr:`top`),
        or -1 when it names none or that block is not free."""
        if self.top < 0:
            return -1
        i = self.index_at(self.top)
        return i if i >= 0 and self.addr[i] == self.top and self.state[i] == STATE_FREE else -1


#: names of the marker pointers (docs/structure.md) that name a policy's top
#: (wilderness) block: Vo's Vmbest ``wilderness``, dlmalloc's ``top``
WILDERNESS_POINTERS = ("wilderness", "top")


def top_of(pointers) -> int:
    """The top block's address named by a structure's ``pointers`` (dicts
    with name, addr, role), or -1."""
    for p in pointers:
        if p["role"] == "marker" and p["name"] in WILDERNESS_POINTERS and p["addr"] is not None:
            return int(p["addr"])
    return -1


def block_arrays(blocks, brk: int | None = None, top: int = -1) -> BlockArrays:
    """Columns of a ``walk()`` list (Blocks or plain 6-tuples in address
    order); ``top`` as in :class:`BlockArrays`."""
    n = len(blocks)
    if n == 0:
        z = np.zeros(0, dtype=np.int64)
        return BlockArrays(z, z, np.zeros(0, np.int8), z, z, z, brk or 0, top)
    col = [map(itemgetter(i), blocks) for i in range(6)]
    addr = np.fromiter(col[0], np.int64, n)
    size = np.fromiter(col[1], np.int64, n)
    state = np.fromiter(map(_STATE_CODES.__getitem__, col[2]), np.int8, n)
    payload = np.fromiter((-1 if p is None else p for p in col[3]), np.int64, n)
    request = np.fromiter(col[4], np.int64, n)
    header = np.fromiter(col[5], np.int64, n)
    end = int(addr[-1] + size[-1])
    return BlockArrays(addr, size, state, payload, request, header, end if brk is None else brk, top)
