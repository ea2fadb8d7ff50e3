"""A trace's operations as the replay loop reads them, kept packed.

The replay loop (:mod:`heapscope.allocators.op_dispatch`) runs over Python
lists: indexing a numpy array per operation costs more than a fast policy's
whole step.  Turning a whole trace into lists costs, though: three lists of
ten million ints are some 700 MB (a pointer an item and an int object for
every id and size past 256), where the trace's own arrays take 13 bytes an
operation.  So a timeline keeps the trace packed and turns only the span it
replays into lists: a :class:`PackedColumn` answers ``column[i]`` with a
Python int and ``column[a:b]`` with a list, as the lists did.  The build
replays :data:`heapscope.allocators.replay.PROGRESS_EVERY` operations at a
time, so at most that many operations are Python objects at once.
"""

from __future__ import annotations

import numpy as np


class PackedColumn:
    """One column of a trace (kinds, ids or sizes), read like a list."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, at):
        if isinstance(at, slice):
            return self.values[at].tolist()
        return int(self.values[at])

    def __iter__(self):
        # a whole column as Python ints, a block at a time
        values = self.values
        for start in range(0, len(values), 1 << 16):
            yield from values[start:start + (1 << 16)].tolist()


def packed_ops(trace) -> tuple[PackedColumn, PackedColumn, PackedColumn]:
    """The trace's (kinds, ids, sizes), each read like a list of ints."""
    return PackedColumn(trace.kind), PackedColumn(trace.ids), PackedColumn(trace.sizes)

