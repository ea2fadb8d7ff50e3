"""TLSF's fused bulk path: malloc, free and realloc with the verbs of
:class:`heapscope.allocators.tlsf.TLSF` inlined into one function each, for
bulk replay (``Strategy.bulk_ops``; ``TLSF.bulk_ops`` hands these out while
events are off).  ``tests/test_fused_paths.py`` runs them in lockstep with the
readable verbs; ``benchmarks/bench_replay.py`` shows both (``readable``).

Every step here is named after the verb it stands in for (``# block_split``);
the rare paths (growing the heap, a request TLSF refuses, a realloc in place
or refused) call the readable verbs themselves, and the mapping is the
readable verbs' own, tabled (:func:`fused_tables`).  The list edits stay
written out where they occur (``block_remove`` twice in free, the insert in
malloc and free): as local functions they cost the bare replay 4-11% more
instructions, as only ``block_remove`` 3-4% (docs/benchmarks.md, "The
Strategy base split"), above the 3% this path may give for reading shorter.
"""

from __future__ import annotations

from .strategy_state import LiveBlock
from .tlsf import FREE_BIT, PREV_FREE_BIT, SL_INDEX_COUNT

#: the fused path maps requests of up to this many bytes, and files free
#: blocks below FUSED_FREE_TABLE bytes, by table
FUSED_REQUEST_TABLE = 4096
FUSED_FREE_TABLE = 1 << 16
#: those tables, made once per (word, zero_returns_null) from the readable verbs
_fused_tables: dict[tuple[int, bool], tuple[list[tuple[int, int]], list[int]]] = {}


def fused_tables(tlsf) -> tuple[list[tuple[int, int]], list[int]]:
    """For the fused path: ``(adjust_request_size(n), the list index of
    mapping_search of it)`` for every request n up to FUSED_REQUEST_TABLE,
    and the list index of ``mapping_insert(s)`` for every size s below
    FUSED_FREE_TABLE (by ``s // ALIGN_SIZE``); made from the readable
    verbs, once per word size."""
    key = (tlsf.word, tlsf.zero_returns_null)
    tables = _fused_tables.get(key)
    if tables is None:
        def index(fl: int, sl: int) -> int:
            return fl * SL_INDEX_COUNT + sl
        adjusted = [tlsf.adjust_request_size(n) for n in range(FUSED_REQUEST_TABLE + 1)]
        search = [(a, index(*tlsf.mapping_search(a)) if a else 0) for a in adjusted]
        filed = [index(*tlsf.mapping_insert(s)) for s in range(0, FUSED_FREE_TABLE, tlsf.word)]
        tables = _fused_tables[key] = (search, filed)
    return tables


def fused_ops(tlsf) -> tuple:
    """Fused malloc, free and realloc for bulk replay (``Strategy.bulk_ops``):
    the verbs of ``TLSF`` inlined into one function each, on local names, with
    no events, counting ``rec.probes``, ``visits``, ``splits`` and
    ``merges`` as the readable path does (``tests/test_fused_paths.py``
    runs both in lockstep).  The rare paths (growing the heap, a request
    TLSF refuses, a realloc in place or refused) call the readable verbs.

    Where a readable verb sets a bit that ``tlsf_check`` says is already
    set, the fused code leaves it: a block on a free list has FREE_BIT set
    and PREV_FREE_BIT clear (the heap is coalesced), the block after a free
    block has PREV_FREE_BIT set, and list (fl, sl) is non-empty exactly when
    its bit of ``sl_bitmap[fl]`` is set.

    A list is named by one index, ``fl * 32 + sl``.  Requests up to
    FUSED_REQUEST_TABLE bytes and free blocks below FUSED_FREE_TABLE bytes
    find theirs in tables (:func:`fused_tables`); for a larger size s,
    with ``f = fls(s)``, ``mapping_insert`` gives ``fl = f - (FL_INDEX_SHIFT
    - 1)`` and ``sl = (s >> (f - 5)) ^ 32`` (``s >> (f - 5)`` is 32 to 63),
    so the index is ``(f - FL_INDEX_SHIFT) * 32 + (s >> (f - 5))``."""
    rec = tlsf.rec
    W = tlsf.word
    log2_align = W.bit_length() - 1
    fl_shift = tlsf.fl_index_shift
    list_count = tlsf.fl_index_count * SL_INDEX_COUNT
    header_size = tlsf.block_header_size
    size_max = tlsf.block_size_max
    size_word = tlsf._size_word
    prev_phys = tlsf._prev_phys
    lists = tlsf._lists
    sl_bitmap = tlsf.sl_bitmap
    live = tlsf.live
    new_tuple = tuple.__new__
    slow_malloc = tlsf._malloc
    slow_realloc = tlsf._realloc
    grow = tlsf._grow
    fixed = tlsf.arena.fixed
    searched, insert_index = fused_tables(tlsf)
    table_request = FUSED_REQUEST_TABLE
    table_free = FUSED_FREE_TABLE

    def malloc(size: int) -> int | None:
        """``tlsf_malloc``: adjust_request_size, block_locate_free
        (_search_rounding and mapping_insert, search_suitable_block, the
        head of the list, remove_free_block), block_prepare_used
        (block_trim_free: block_can_split, block_split, block_mark_as_free,
        block_link_next, block_insert: mapping_insert, insert_free_block;
        block_mark_as_used; _note_alloc).  When no list holds a block big
        enough: the readable _grow, then this again (as tlsf_malloc does
        block_locate_free again)."""
        # adjust_request_size, mapping_search
        if size <= table_request:
            adjust, i = searched[size]
            if not adjust:
                return slow_malloc(size)    # malloc(0) with zero_returns_null: NULL
        else:
            adjust = (size + W - 1) & -W
            if adjust >= size_max:
                return slow_malloc(size)    # NULL: no block is that big
            rounded = adjust + (1 << (adjust.bit_length() - 6)) - 1
            f = rounded.bit_length() - 1
            i = ((f - fl_shift) << 5) + (rounded >> (f - 5))
            if i >= list_count:
                return slow_malloc(size)    # NULL: past the last first level
        # search_suitable_block: the search cell's own list, if it holds a
        # block (its bit is the first one the sl probe finds), else the bitmaps
        free_list = lists[i]
        if free_list:
            rec.probes += 1
            rec.visits += 2                 # the probe and the block taken
        else:
            fl = i >> 5
            row = sl_bitmap[fl] & (-1 << (i & 31))
            if row:
                rec.probes += 1
                rec.visits += 2
            else:
                fl_map = tlsf.fl_bitmap & (-2 << fl)
                if not fl_map:
                    rec.probes += 2
                    rec.visits += 2
                    if fixed or not grow(adjust):
                        return None
                    return malloc(size)
                fl = (fl_map & -fl_map).bit_length() - 1
                row = sl_bitmap[fl]
                rec.probes += 3
                rec.visits += 4
            i = (fl << 5) + (row & -row).bit_length() - 1
            free_list = lists[i]
        # the head of the list; remove_free_block
        block = free_list.popitem()[0]
        if not free_list:
            fl = i >> 5
            row = sl_bitmap[fl] & ~(1 << (i & 31))
            sl_bitmap[fl] = row
            if not row:
                tlsf.fl_bitmap &= ~(1 << fl)
        # block_prepare_used: block_trim_free, block_mark_as_used
        bsize = size_word[block] & -4
        if bsize >= header_size + adjust:
            # block_split; block_mark_as_free(remaining): the block after
            # it followed a free block, so its PREV_FREE_BIT is set already
            remaining = block + W + adjust
            remain_size = bsize - adjust - W
            size_word[remaining] = remain_size | FREE_BIT
            prev_phys[block + W + bsize] = remaining
            # block_link_next(block), as block_trim_free does: the word it
            # writes is payload once the block is used, but it is state
            prev_phys[remaining] = block
            size_word[block] = adjust
            rec.splits += 1
            # block_insert(remaining): mapping_insert, insert_free_block
            if remain_size < table_free:
                i = insert_index[remain_size >> log2_align]
            else:
                f = remain_size.bit_length() - 1
                i = ((f - fl_shift) << 5) + (remain_size >> (f - 5))
            free_list = lists[i]
            if not free_list:
                fl = i >> 5
                sl_bitmap[fl] |= 1 << (i & 31)
                tlsf.fl_bitmap |= 1 << fl
            free_list[remaining] = None
            block_bytes = W + adjust
        else:
            size_word[block] = bsize
            block_bytes = W + bsize
            size_word[block + block_bytes] &= ~PREV_FREE_BIT
        # the lists lost the block and got its remainder back
        tlsf._free_bytes -= block_bytes
        # _note_alloc
        payload = block + W
        live[payload] = new_tuple(LiveBlock, (block, block_bytes, size, W))
        tlsf.in_use += block_bytes
        tlsf.header_in_use += W
        if block < tlsf.touched_low:
            tlsf.touched_low = block
        if block + block_bytes > tlsf.touched_high:
            tlsf.touched_high = block + block_bytes
        return payload

    def free(payload: int) -> None:
        """``tlsf_free``: _note_free, block_mark_as_free, block_merge_prev
        (block_remove: mapping_insert, remove_free_block; block_absorb),
        block_merge_next (the same), block_insert (mapping_insert,
        insert_free_block).  The lists gain the freed block's bytes: the
        neighbours it absorbs leave them and come back inside it."""
        # _note_free: every TLSF block books one word of header
        block, block_bytes, _, _ = live.pop(payload)
        tlsf.in_use -= block_bytes
        tlsf.header_in_use -= W
        tlsf._free_bytes += block_bytes
        size = block_bytes - W
        nxt = block + block_bytes
        merges = 0
        # block_merge_prev
        if size_word[block] & PREV_FREE_BIT:
            prev = prev_phys.pop(block)
            prev_size = size_word[prev] & -4
            if prev_size < table_free:
                i = insert_index[prev_size >> log2_align]
            else:
                f = prev_size.bit_length() - 1
                i = ((f - fl_shift) << 5) + (prev_size >> (f - 5))
            free_list = lists[i]
            del free_list[prev]
            if not free_list:
                fl = i >> 5
                row = sl_bitmap[fl] & ~(1 << (i & 31))
                sl_bitmap[fl] = row
                if not row:
                    tlsf.fl_bitmap &= ~(1 << fl)
            del size_word[block]
            size += prev_size + W
            block = prev
            merges = 1
        # block_merge_next
        next_word = size_word[nxt]
        if next_word & FREE_BIT:
            next_size = next_word & -4
            if next_size < table_free:
                i = insert_index[next_size >> log2_align]
            else:
                f = next_size.bit_length() - 1
                i = ((f - fl_shift) << 5) + (next_size >> (f - 5))
            free_list = lists[i]
            del free_list[nxt]
            if not free_list:
                fl = i >> 5
                row = sl_bitmap[fl] & ~(1 << (i & 31))
                sl_bitmap[fl] = row
                if not row:
                    tlsf.fl_bitmap &= ~(1 << fl)
            del size_word[nxt]
            prev_phys.pop(nxt, None)
            size += next_size + W
            nxt = block + W + size
            next_word = size_word[nxt]
            merges += 1
        if merges:
            rec.merges += merges
        # block_mark_as_free of the block the merges left, block_link_next
        size_word[block] = size | FREE_BIT
        size_word[nxt] = next_word | PREV_FREE_BIT
        prev_phys[nxt] = block
        # block_insert: mapping_insert, insert_free_block
        if size < table_free:
            i = insert_index[size >> log2_align]
        else:
            f = size.bit_length() - 1
            i = ((f - fl_shift) << 5) + (size >> (f - 5))
        free_list = lists[i]
        if not free_list:
            fl = i >> 5
            sl_bitmap[fl] |= 1 << (i & 31)
            tlsf.fl_bitmap |= 1 << fl
        free_list[block] = None

    def realloc(payload: int, size: int) -> int | None:
        """``tlsf_realloc`` when the block must move: adjust_request_size,
        the test of the next block, then the fused malloc and free.  In
        place, or refused, it is the readable _realloc."""
        block = payload - W
        cursize = size_word[block] & -4
        adjust = ((size or 1) + W - 1) & -W
        if cursize < adjust < size_max:
            next_word = size_word[block + W + cursize]
            if not next_word & FREE_BIT or adjust > cursize + (next_word & -4) + W:
                new = malloc(size)
                if new is not None:
                    free(payload)
                return new
        return slow_realloc(payload, size)

    return malloc, free, realloc
