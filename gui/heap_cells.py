"""The heap as an image of cells: pure numpy, no Qt.

The heap map draws the whole heap in address order, wrapped into rows.  One
*cell* covers ``bytes_per_cell`` bytes and shows the kind of byte at its middle
(payload, header, padding, free, top, meta: the codes of :mod:`heapscope.gui.palette`).
With 100 000 blocks a per-block loop in Python is far too slow for a 16 ms
frame, so everything here is vectorised:

1. :func:`~heapscope.allocators.block_list.block_arrays` (in the core, named
   here too) turns ``strategy.walk()`` into parallel numpy columns (the one
   Python-level pass, over tuples, in C where possible);
2. :func:`segments` cuts each block into five runs (front header, front
   padding, payload, back padding, footer; a free or meta block is one run);
3. :func:`paint_cells` counts, for each run, how many cell midpoints fall in
   it and expands the run codes with one ``np.repeat``: O(cells + runs).

A :class:`Scratch` passed from frame to frame keeps the big work arrays.

Placement inside a used block: the bytes before the payload are header (up to
``Block.header`` bytes; any more is front alignment padding); the header bytes
not in front sit at the end of the block (a footer / boundary tag); the bytes
between the payload's end and the footer are padding.  That matches every
layout the strategies use (K&R: one header unit in front; boundary tags:
header in front and footer at the back; TLSF: one header word in front).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import palette
from heapscope.allocators.block_list import (STATE_FREE, STATE_META, STATE_USED,  # noqa: F401 (names of this module)
                                     WILDERNESS_POINTERS, BlockArrays, block_arrays, top_of)

#: Cells in the image at most (a 1024 x 1024 picture is finer than the screen).
MAX_CELLS = 1 << 20
#: Row widths in cells stay within these, whatever the heap's size.
MIN_COLS, MAX_COLS = 16, 4096
#: a typical block is drawn about this many times wider than tall
BLOCK_SHAPE = 2.0


class Scratch:
    """Work arrays kept from one frame to the next.

    A fresh array of megabytes comes from mmap, and touching its pages for the
    first time cost more than the arithmetic itself (7.6 ms instead of 3.8 ms
    per frame at 100 000 blocks); reusing the last frame's arrays avoids it.
    """

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def array(self, name: str, n: int, dtype) -> np.ndarray:
        a = self._arrays.get(name)
        if a is None or a.size < n or a.dtype != dtype:
            a = self._arrays[name] = np.empty(n + n // 4, dtype)
        return a[:n]


def segments(b: BlockArrays, scratch: Scratch | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The runs of one kind of byte, in address order: ``(bounds, codes)``
    where run i covers ``[bounds[i], bounds[i+1])`` and shows ``codes[i]``
    (so ``bounds`` has one entry more, the break).

    Five runs per block: front header, front padding, payload, back padding,
    footer; a free or meta block fills the first and leaves the other four
    empty.  Empty runs are kept: they cover no cell, and dropping them would
    cost a copy of every column."""
    scratch = scratch or Scratch()
    n = len(b)
    bounds = scratch.array("bounds", 5 * n + 1, np.int64)
    bounds[-1] = b.brk
    codes = scratch.array("codes", 5 * n, np.uint8)
    if n == 0:
        return bounds, codes
    runs = bounds[:-1].reshape(n, 5)
    addr, payload = b.addr, b.payload
    # run starts of a used block: addr | front header | front padding |
    # payload | back padding | footer | end
    runs[:, 0] = addr
    np.add(addr, b.size, out=runs[:, 4])          # the block's end, for now
    front = payload - addr
    np.minimum(b.header, front, out=front)        # header bytes in front
    np.add(addr, front, out=runs[:, 1])
    runs[:, 2] = payload
    np.add(payload, b.request, out=runs[:, 3])
    np.subtract(b.header, front, out=front)       # header bytes at the back: the footer
    runs[:, 4] -= front
    not_used = np.flatnonzero(b.state != STATE_USED)
    if len(not_used):
        # one run, the whole block: the other four start (and end) at its end
        runs[not_used, 1:] = (addr[not_used] + b.size[not_used])[:, None]
    kinds = codes.reshape(n, 5)
    kinds[:] = _USED_BLOCK_CODES
    kinds[b.state == STATE_FREE, 0] = palette.FREE
    kinds[b.state == STATE_META, 0] = palette.META
    top = b.top_index()     # only a policy with a wilderness names one
    if top >= 0:
        kinds[top, 0] = palette.TOP
    return bounds, codes


_USED_BLOCK_CODES = np.array([palette.HEADER, palette.PADDING, palette.PAYLOAD, palette.PADDING,
                              palette.HEADER], np.uint8)


@dataclass(frozen=True)
class HeapLayout:
    """How bytes map to cells and cells to rows."""
    heap: int             # bytes shown: [0, heap)
    bytes_per_cell: int   # a power of two
    cols: int             # cells per row
    rows: int

    @property
    def row_bytes(self) -> int:
        return self.bytes_per_cell * self.cols

    def cell_of(self, address: int) -> tuple[int, int]:
        """(row, col) of the cell holding ``address``."""
        c = address // self.bytes_per_cell
        return c // self.cols, c % self.cols

    def point_of(self, address: int) -> tuple[float, int]:
        """(x = byte within its row, y = row) where ``address`` is drawn."""
        return address % self.row_bytes, address // self.row_bytes


def choose_layout(heap: int, aspect: float = 2.0, max_cells: int = MAX_CELLS,
                  block_bytes: float | None = None) -> HeapLayout:
    """Cells as fine as ``max_cells`` (and at most :data:`MAX_COLS` cells a
    row) allow, and rows a power-of-two number of bytes (row addresses then
    read as round hex numbers).

    The row length is picked so that a block of ``block_bytes`` (the typical
    block; default one cell) is drawn about :data:`BLOCK_SHAPE` times wider
    than tall when the picture fills a view ``aspect`` (width / height) wide:
    with H bytes in rows of R bytes, a block of s bytes is s/R of the width
    and 1/(H/R) of the height, so s/R * aspect = k * R/H gives
    R = sqrt(H * s * aspect / k), rounded to a power of two.

    The layout is a function of its arguments alone -- no memory of the
    layout before -- so a step is drawn the same whichever way it was
    reached.  The map passes a ``block_bytes`` fixed for the whole trace, so
    the row length changes only when the heap size crosses a power of four,
    not from step to step.
    """
    heap = max(int(heap), 0)
    bpc = 1
    while heap > bpc * max_cells:
        bpc *= 2
    unit = max(float(block_bytes) / BLOCK_SHAPE, bpc) if block_bytes else bpc
    want_row = math.sqrt(max(heap, 1) * unit * max(aspect, 0.1))
    row_bytes = 1 << max(0, round(math.log2(max(want_row, 1.0))))
    row_bytes = max(row_bytes, bpc * MIN_COLS)
    # A row wider than MAX_COLS cells gets coarser cells, not a wider image:
    # the raster engine cannot draw images tens of thousands of pixels wide.
    bpc = max(bpc, row_bytes // MAX_COLS)
    cols = row_bytes // bpc
    rows = max(1, -(-heap // row_bytes))
    return HeapLayout(heap, bpc, cols, rows)


def paint_cells(bounds: np.ndarray, codes: np.ndarray, layout: HeapLayout,
                scratch: Scratch | None = None) -> np.ndarray:
    """The (rows, cols) uint8 image of the runs ``(bounds, codes)`` of
    :func:`segments`: each cell takes the code of the run holding its middle
    byte; cells past the heap are :data:`palette.BEYOND`."""
    scratch = scratch or Scratch()
    bpc = layout.bytes_per_cell
    total = layout.rows * layout.cols
    if len(codes) == 0:
        return np.full((layout.rows, layout.cols), palette.BEYOND, np.uint8)
    # index of the first cell whose middle byte (c * bpc + bpc // 2) is at or
    # after each run boundary: ceil((x - bpc // 2) / bpc), with a shift
    # because bpc is a power of two (floor division is 5x slower)
    first = scratch.array("first_cell", len(bounds), np.int64)
    np.add(bounds, bpc - 1 - bpc // 2, out=first)
    np.right_shift(first, bpc.bit_length() - 1, out=first)
    counts = scratch.array("counts", len(codes), np.int64)
    np.subtract(first[1:], first[:-1], out=counts)
    cells = np.repeat(codes, counts)
    start = int(first[0])
    if start == 0 and len(cells) == total:
        out = cells
    else:
        out = np.empty(total, np.uint8)
        out[:start] = palette.BEYOND
        out[start:start + len(cells)] = cells
        out[start + len(cells):] = palette.BEYOND
    return out.reshape(layout.rows, layout.cols)


def repaint(image: np.ndarray, blocks: BlockArrays, layout: HeapLayout, lo: int, hi: int) -> None:
    """Paint again, in place, the cells of ``image`` (drawn with ``layout``)
    whose middle byte lies in ``[lo, hi)``, from ``blocks``: after a step
    changed only those bytes, the rest of the image stays right.  The cells
    come out as :func:`paint_cells` would paint them."""
    bpc = layout.bytes_per_cell
    half = bpc // 2
    total = layout.rows * layout.cols
    shift = bpc.bit_length() - 1
    c0 = min(max(0, (lo - half + bpc - 1) >> shift), total)   # first cell whose middle is >= lo
    c1 = min(max(0, (hi - half + bpc - 1) >> shift), total)   # ... >= hi
    if c0 >= c1:
        return
    cells = image.reshape(-1)
    first_mid, last_mid = c0 * bpc + half, (c1 - 1) * bpc + half
    n = len(blocks)
    if n == 0 or first_mid >= blocks.brk:
        cells[c0:c1] = palette.BEYOND
        return
    i0 = max(0, int(np.searchsorted(blocks.addr, first_mid, side="right")) - 1)
    i1 = max(i0 + 1, int(np.searchsorted(blocks.addr, last_mid, side="right")))
    end = int(blocks.addr[i1 - 1] + blocks.size[i1 - 1]) if i1 < n else blocks.brk
    part = BlockArrays(blocks.addr[i0:i1], blocks.size[i0:i1], blocks.state[i0:i1], blocks.payload[i0:i1],
                       blocks.request[i0:i1], blocks.header[i0:i1], end, blocks.top)
    bounds, codes = segments(part)
    first = (bounds + (bpc - 1 - half)) >> shift            # first cell at or after each bound
    runs = np.repeat(codes, np.diff(first))
    start = int(first[0])
    stop = start + len(runs)
    a, b = max(c0, start), min(c1, stop)
    if a < b:
        cells[a:b] = runs[a - start:b - start]
    if stop < c1:                                           # past the break
        cells[max(c0, stop):c1] = palette.BEYOND


def heap_image(blocks: BlockArrays, aspect: float = 2.0, max_cells: int = MAX_CELLS,
               layout: HeapLayout | None = None,
               scratch: Scratch | None = None) -> tuple[np.ndarray, HeapLayout]:
    """The cell image of a heap and the layout it was drawn with."""
    if layout is None:
        layout = choose_layout(blocks.brk, aspect, max_cells, blocks.mean_size())
    bounds, codes = segments(blocks, scratch)
    return paint_cells(bounds, codes, layout, scratch), layout


def range_rects(address: int, size: int, row_bytes: int) -> list[tuple[int, int, int, int]]:
    """The byte range [address, address+size) in heap-map coordinates, as at
    most three rectangles (x, row, width, rows): the piece of the first row,
    the full rows in between, the piece of the last row."""
    if size <= 0:
        return []
    end = address + size
    r0, x0 = divmod(address, row_bytes)
    r1, x1 = divmod(end, row_bytes)
    if r0 == r1:
        return [(x0, r0, x1 - x0, 1)]
    out = []
    if x0:
        out.append((x0, r0, row_bytes - x0, 1))
        r0 += 1
    if r1 > r0:
        out.append((0, r0, row_bytes, r1 - r0))
    if x1:
        out.append((0, r1, x1, 1))
    return out
