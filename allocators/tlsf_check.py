"""TLSF's invariants: the reference's ``tlsf_check`` and ``tlsf_check_pool``
(mattconte/tlsf, ``tlsf.c``) and more, for
:class:`heapscope.allocators.tlsf.TLSF` (its ``_check_structure``, which
``Strategy.check`` calls after the invariants every heap shares).
"""

from __future__ import annotations

from .strategy import FREE_BLOCK, META, Block
from .tlsf import FLAG_BITS, FREE_BIT, PREV_FREE_BIT, SL_INDEX_COUNT


def tlsf_check(tlsf, blocks: list[Block]) -> None:
    """``tlsf_check`` and ``tlsf_check_pool`` of the reference, and more:
    bitmaps against lists for every (fl, sl), each listed block free,
    coalesced and filed where ``mapping_insert`` says, prev-free bits and
    ``prev_phys`` links along the heap, the sentinel at the end, and every
    free block on exactly one list.  Messages are only built on failure."""
    def broken(message: str) -> None:
        tlsf._fail(False, message)

    W = tlsf.word
    size_word = tlsf._size_word
    prev_phys = tlsf._prev_phys
    fl_count = tlsf.fl_index_count
    if tlsf.fl_bitmap >> fl_count:
        broken(f"fl_bitmap {tlsf.fl_bitmap:#x} has bits at or above fl {fl_count}")
    on_lists: dict[int, tuple[int, int]] = {}
    for fl in range(fl_count):
        row = tlsf.sl_bitmap[fl]
        if row >> SL_INDEX_COUNT:
            broken(f"sl_bitmap[{fl}] = {row:#x} has bits at or above sl {SL_INDEX_COUNT}")
        for sl in range(SL_INDEX_COUNT):
            free_list = tlsf._lists[fl * SL_INDEX_COUNT + sl]
            bit = row >> sl & 1
            if bool(bit) != bool(free_list):
                broken(f"sl_bitmap[{fl}] bit {sl} is {bit} but free list ({fl}, {sl}) "
                       + (f"holds {len(free_list)} blocks" if free_list else "is empty"))
            for block in free_list:
                if block in on_lists:
                    broken(f"block {block:#x} is on list ({fl}, {sl}) and on list {on_lists[block]}")
                on_lists[block] = (fl, sl)
                word = size_word.get(block)
                if word is None:
                    broken(f"list ({fl}, {sl}) holds {block:#x}, which is no block of the heap")
                size = word & ~FLAG_BITS
                if not word & FREE_BIT:
                    broken(f"block {block:#x} on list ({fl}, {sl}) is not marked free")
                if word & PREV_FREE_BIT:
                    broken(f"free block {block:#x} on list ({fl}, {sl}) follows a free block: not coalesced")
                if size < tlsf.block_size_min:
                    broken(f"free block {block:#x} of size {size} is below the minimum {tlsf.block_size_min}")
                if tlsf.mapping_insert(size) != (fl, sl):
                    broken(f"free block {block:#x} of size {size} belongs on list "
                           f"{tlsf.mapping_insert(size)} but is on list ({fl}, {sl})")
                nxt = block + W + size
                next_word = size_word.get(nxt)
                if next_word is None:
                    broken(f"free block {block:#x} is followed by no block at {nxt:#x}")
                if next_word & FREE_BIT:
                    broken(f"free blocks {block:#x} and {nxt:#x} are neighbours: not coalesced")
                if not next_word & PREV_FREE_BIT:
                    broken(f"block {nxt:#x} follows free block {block:#x} but its prev-free bit is clear")
                if prev_phys.get(nxt) != block:
                    broken(f"prev_phys of {nxt:#x} is {prev_phys.get(nxt)!r}, not the free block {block:#x}")
        if bool(tlsf.fl_bitmap >> fl & 1) != bool(row):
            broken(f"fl_bitmap bit {fl} is {tlsf.fl_bitmap >> fl & 1} but sl_bitmap[{fl}] = {row:#x}")

    # tlsf_check_pool: walk the physical blocks.
    previous_free = False
    previous = -1
    seen = free_in_heap = 0
    for b in blocks:
        if b.state == META:
            continue
        seen += 1
        word = size_word.get(b.addr)
        if word is None:
            broken(f"walk() reports a block at {b.addr:#x} that has no size word")
        if b.size <= W or b.size % W:
            broken(f"block {b.addr:#x} has TLSF size {b.size - W}, not a positive multiple of {W}")
        if bool(word & PREV_FREE_BIT) != previous_free:
            broken(f"block {b.addr:#x} has its prev-free bit {'set' if word & PREV_FREE_BIT else 'clear'} "
                   f"but the previous block is {'free' if previous_free else 'used'}")
        if previous_free and prev_phys.get(b.addr) != previous:
            broken(f"prev_phys of {b.addr:#x} is {prev_phys.get(b.addr)!r}, not {previous:#x}")
        is_free = bool(word & FREE_BIT)
        if is_free != (b.state == FREE_BLOCK):
            broken(f"block {b.addr:#x}: its free bit and its walk state {b.state!r} disagree")
        if is_free:
            if previous_free:
                broken(f"free blocks {previous:#x} and {b.addr:#x} are neighbours: not coalesced")
            if b.addr not in on_lists:
                broken(f"free block {b.addr:#x} of size {b.size - W} is on no free list "
                       f"(it belongs on {tlsf.mapping_insert(b.size - W)})")
            free_in_heap += 1
        elif b.payload != b.addr + W:
            broken(f"used block {b.addr:#x} has payload {b.payload!r}, not {b.addr + W:#x}")
        previous_free = is_free
        previous = b.addr
    if free_in_heap != len(on_lists):
        broken(f"{len(on_lists)} blocks are on free lists but the heap has {free_in_heap} free blocks")
    free_bytes = sum(b.size for b in blocks if b.state == FREE_BLOCK)
    if free_bytes != tlsf._free_bytes:
        broken(f"free blocks add up to {free_bytes} bytes but {tlsf._free_bytes} are booked")

    sentinel = tlsf._sentinel
    if sentinel is None:
        if size_word or tlsf._first is not None:
            broken(f"the heap has no sentinel but {len(size_word)} size words")
        return
    if size_word.get(sentinel, 1) & ~PREV_FREE_BIT:
        broken(f"sentinel {sentinel:#x} has size word {size_word.get(sentinel)!r}, "
               "not a zero-size used block")
    if bool(size_word[sentinel] & PREV_FREE_BIT) != previous_free:
        broken(f"the sentinel's prev-free bit disagrees with the last block {previous:#x}")
    if previous_free and prev_phys.get(sentinel) != previous:
        broken(f"prev_phys of the sentinel is {prev_phys.get(sentinel)!r}, not {previous:#x}")
    if len(size_word) != seen + 1:
        broken(f"{len(size_word)} size words are kept but the walk reaches {seen} blocks and the sentinel")
    slack = tlsf.arena.brk - sentinel - W
    if tlsf.arena.fixed:
        if not 0 <= slack < W:
            broken(f"sentinel {sentinel:#x} ends {slack} bytes before the pool end")
    elif slack:
        broken(f"sentinel {sentinel:#x} does not end at the break {tlsf.arena.brk:#x}")
