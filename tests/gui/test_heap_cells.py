"""The heap map's cell image, worked out by hand on tiny heaps."""

import numpy as np
import pytest

from heapscope.allocators.strategy import Block
from heapscope.gui import heap_cells as hc
from heapscope.gui import palette as P

# A used block at 0 (32 bytes: a 16-byte header, 10 requested bytes at 16,
# 6 bytes of padding), a used block at 32 with boundary tags (8-byte header
# and 8-byte footer, 4 requested bytes, 12 bytes of padding), a free block at
# 64 (64 bytes), a meta block at 128 (16 bytes) and a used block at 144 (an
# 8-byte header and 8 requested bytes).  The free block is followed by a used
# block, so it is not the top.
HEAP = [
    Block(0, 32, "used", 16, 10, 16),
    Block(32, 32, "used", 40, 4, 16),
    Block(64, 64, "free"),
    Block(128, 16, "meta"),
    Block(144, 16, "used", 152, 8, 8),
]
BRK = 160


def byte_codes(blocks, brk):
    """Code of every byte, with one byte per cell."""
    arrays = hc.block_arrays(blocks, brk)
    layout = hc.HeapLayout(brk, 1, brk, 1)
    img, _ = hc.heap_image(arrays, layout=layout)
    return img[0]


def test_every_byte_of_a_small_heap_gets_its_kind():
    codes = byte_codes(HEAP, BRK)
    expected = np.array(
        [P.HEADER] * 16 + [P.PAYLOAD] * 10 + [P.PADDING] * 6             # block 0
        + [P.HEADER] * 8 + [P.PAYLOAD] * 4 + [P.PADDING] * 12 + [P.HEADER] * 8  # block 32
        + [P.FREE] * 64 + [P.META] * 16                                   # 64, 128
        + [P.HEADER] * 8 + [P.PAYLOAD] * 8, dtype=np.uint8)                # block 144
    assert codes.tolist() == expected.tolist()


def test_a_free_last_block_is_free_unless_the_policy_names_it_its_top():
    # K&R, Kruse, TLSF, buddy, buckets: the last free block is a free block
    blocks = [Block(0, 32, "used", 16, 16, 16), Block(32, 96, "free")]
    assert set(byte_codes(blocks, 128)[32:].tolist()) == {P.FREE}
    assert hc.block_arrays(blocks).top_index() == -1
    # Vmbest names its wilderness with a marker pointer: that block is the top
    wild = hc.top_of([{"name": "wilderness", "addr": 32, "role": "marker"}])
    arrays = hc.block_arrays(blocks, 128, top=wild)
    assert arrays.top_index() == 1
    img, _ = hc.heap_image(arrays, layout=hc.HeapLayout(128, 1, 128, 1))
    assert set(img[0, 32:].tolist()) == {P.TOP}


def test_only_a_wilderness_or_top_marker_names_a_top_block():
    assert hc.top_of([{"name": "rover", "addr": 32, "role": "search"}]) == -1
    assert hc.top_of([{"name": "last_remainder", "addr": 32, "role": "search"},
                      {"name": "top", "addr": 64, "role": "marker"}]) == 64
    assert hc.top_of([{"name": "wilderness", "addr": None, "role": "marker"}]) == -1
    # a named top that is not a free block (dlmalloc's top after it was used up) is no top
    blocks = [Block(0, 32, "used", 16, 16, 16), Block(32, 96, "free")]
    assert hc.block_arrays(blocks, 128, top=0).top_index() == -1


def test_coarse_cells_take_the_kind_at_their_middle_byte():
    # 8 bytes per cell: middles at 4, 12, 20, 28, 36, ...  Block 0: header
    # (4, 12), payload (20), padding (28).  Block 32: header (36: bytes 32-39),
    # payload at 40-43 has no middle (44 is padding), padding (44, 52),
    # footer (60).  Free 64-127: cells 8-15.  Meta: cells 16, 17.  Block 144:
    # header (148), payload (156).  Then 4 cells past the break.
    arrays = hc.block_arrays(HEAP, BRK)
    layout = hc.HeapLayout(BRK, 8, 6, 4)
    img, _ = hc.heap_image(arrays, layout=layout)
    assert img.ravel().tolist() == [
        P.HEADER, P.HEADER, P.PAYLOAD, P.PADDING,
        P.HEADER, P.PADDING, P.PADDING, P.HEADER,
        P.FREE, P.FREE, P.FREE, P.FREE, P.FREE, P.FREE, P.FREE, P.FREE,
        P.META, P.META, P.HEADER, P.PAYLOAD] + [P.BEYOND] * 4


def test_cells_past_the_break_are_marked_beyond():
    arrays = hc.block_arrays(HEAP, BRK)
    layout = hc.HeapLayout(BRK, 16, 4, 3)     # 12 cells, the heap fills 10
    img, _ = hc.heap_image(arrays, layout=layout)
    assert img.ravel()[10:].tolist() == [P.BEYOND] * 2
    assert P.BEYOND not in img.ravel()[:10].tolist()


def test_lut_gives_the_palette_colour_of_each_code():
    assert tuple(P.LUT[P.PAYLOAD]) == P.rgba(P.BLUE)
    assert tuple(P.LUT[P.FREE]) == P.rgba(P.YELLOW)
    assert len({tuple(P.LUT[c]) for c, _, _ in P.CELL_KINDS}) == len(P.CELL_KINDS)


def test_block_lookup_by_address():
    arrays = hc.block_arrays(HEAP, BRK)
    assert [arrays.index_at(a) for a in (0, 31, 32, 64, 127, 128, 143, 144, 159, 160, -1)] == \
        [0, 0, 1, 2, 2, 3, 3, 4, 4, -1, -1]
    assert arrays.payload.tolist() == [16, 40, -1, -1, 152]
    assert arrays.top_index() == -1


@pytest.mark.parametrize("address,size,row_bytes,expected", [
    (10, 4, 16, [(10, 0, 4, 1)]),                               # inside one row
    (10, 10, 16, [(10, 0, 6, 1), (0, 1, 4, 1)]),                # 10..16 | 16..20
    (8, 64, 16, [(8, 0, 8, 1), (0, 1, 16, 3), (0, 4, 8, 1)]),   # part, 3 full rows, part
    (16, 32, 16, [(0, 1, 16, 2)]),                              # exactly rows 1 and 2
    (5, 0, 16, []),
])
def test_range_rects_cut_a_byte_range_at_row_ends(address, size, row_bytes, expected):
    assert hc.range_rects(address, size, row_bytes) == expected


def test_layout_keeps_the_image_under_max_cells():
    lay = hc.choose_layout(3 << 20, aspect=2.0, max_cells=1 << 20)
    assert lay.bytes_per_cell == 4                   # 3 MiB / 4 B = 786 432 cells
    assert lay.cols * lay.rows >= (3 << 20) // 4
    assert lay.row_bytes & (lay.row_bytes - 1) == 0  # rows start at round addresses
    assert lay.cell_of(lay.row_bytes + 9) == (1, 9 // 4)


def test_layout_depends_on_its_arguments_alone():
    # no memory of the layout before: the same heap is laid out the same
    # whatever was shown before it
    first = hc.choose_layout(360_000, 2.4, block_bytes=450)
    hc.choose_layout(5_000_000, 1.2, block_bytes=90)
    assert hc.choose_layout(360_000, 2.4, block_bytes=450) == first
    # with the block size fixed (the map fixes it per trace) the row length
    # changes only when the heap crosses a power of four
    rows = {hc.choose_layout(h, 2.4, block_bytes=450).row_bytes for h in range(300_000, 400_000, 1000)}
    assert len(rows) == 1


def test_repainting_pieces_gives_the_image_painted_whole():
    # the map paints again only the bytes a step changed: piece by piece,
    # whatever the pieces, the image must come out as a whole painting
    import random
    rng = random.Random(2)
    blocks = []
    addr = 0
    for i in range(400):
        size = rng.choice([16, 24, 48, 200, 1000, 4096])
        state = rng.choice(["used", "free", "meta"])
        if state == "used":
            request = rng.randint(1, size - 8)
            blocks.append(Block(addr, size, "used", addr + 8, request, 8))
        else:
            blocks.append(Block(addr, size, state))
        addr += size
    arrays = hc.block_arrays(blocks, addr, top=blocks[-2].addr if blocks[-2].state == "free" else -1)
    for max_cells in (1 << 20, 1 << 14, 1 << 11):
        lay = hc.choose_layout(addr + 3000, 1.7, max_cells, arrays.mean_size())
        whole, _ = hc.heap_image(arrays, layout=lay)
        img = np.full_like(whole, 255)
        cuts = sorted(rng.randrange(0, lay.rows * lay.row_bytes) for _ in range(40))
        edges = [0] + cuts + [lay.rows * lay.row_bytes]
        for lo, hi in zip(edges, edges[1:]):
            hc.repaint(img, arrays, lay, lo, hi)
        assert np.array_equal(img, whole), lay


def test_a_moved_wilderness_is_painted_again_where_it_was_and_where_it_is():
    from heapscope.allocators.heap_edits import top_spans
    blocks = [Block(0, 32, "free"), Block(32, 32, "used", 40, 16, 8), Block(64, 64, "free")]
    before = hc.block_arrays(blocks, 128, top=0)
    after = hc.block_arrays(blocks, 128, top=64)
    assert top_spans(before, after) == [(0, 32), (64, 128)]
    assert top_spans(after, after) == []
