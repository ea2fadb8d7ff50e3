"""TLSF's words for its events, in the reference's names (mattconte/tlsf,
``tlsf.c``): ``mapping_search``, the bitmaps' find-first-set,
``insert_free_block`` / ``remove_free_block`` on the (fl, sl) lists,
``block_split``, ``block_absorb`` and which of ``block_merge_prev`` /
``block_merge_next`` it was.

:class:`TLSFWords` is the explain-text part of
:class:`heapscope.allocators.tlsf.TLSF` (the policy reads it through the
class's bases); it only reads the policy's mapping (``mapping_insert``,
``fl_index_count``) and the heap's base.
"""

from __future__ import annotations

from .events import (BitmapProbe, Coalesce, Grow, ListInsert, ListRemove, MappingSearch, Placed, Released,
                     Split, Visit)
from .strategy_words import StrategyWords


class TLSFWords(StrategyWords):
    """What a TLSF step did, in the words of mattconte/tlsf."""

    search_unit = ("bitmap probe", "bitmap probes")
    search_verb = ""

    def search_units(self, rec) -> int:
        """TLSF's search is its bitmap probes (the block taken is the head of
        the list they found, no search of its own)."""
        return rec.probes

    def _cell(self, block_bytes: int) -> tuple[int, int]:
        """mapping_insert of a whole block of ``block_bytes`` (size word included)."""
        return self.mapping_insert(block_bytes - self.word)

    def explain_event(self, e) -> str | None:
        """The reference's words: mapping_search, the bitmaps' find-first-set,
        the (fl, sl) lists, block_split and block_absorb."""
        if isinstance(e, MappingSearch):
            asked = e.size if e.request is None else e.request
            rounded = f": rounded to {e.rounded}," if asked != e.rounded else ":"
            text = f"mapping_search({asked}){rounded} class ({e.fl}, {e.sl})"
            if e.fl >= self.fl_index_count:
                text += ", past the last first level: no list holds blocks that big"
            return text
        if isinstance(e, BitmapProbe):
            if e.level == "fl":
                if e.found is None:
                    return f"fl_bitmap has no bit at or above {e.fl}: no free block is big enough"
                return f"fl_bitmap: next class {e.found[0]}"
            if e.found is None:
                return f"sl_bitmap[{e.fl}] has no bit at or above {e.sl}"
            if e.sl == 0:
                return f"sl_bitmap[{e.fl}]: lowest bit {e.found[1]}: list {e.found}"
            return f"sl_bitmap[{e.fl}]: first bit at or above {e.sl} is {e.found[1]}: list {e.found}"
        if isinstance(e, Visit):
            return f"took the head of list {self._cell(e.size)}, {e.size} B"
        if isinstance(e, Split):
            return (f"split off {e.rest_size} B into {self._cell(e.rest_size)}; "
                    f"{e.taken_size} B at {e.taken_addr:#x} stay")
        if isinstance(e, ListInsert):
            return f"insert_free_block: {e.addr:#x} ({e.size} B) at the head of list {tuple(e.where)}"
        if isinstance(e, ListRemove):
            return f"remove_free_block: {e.addr:#x} ({e.size} B) off list {tuple(e.where)}"
        if isinstance(e, Coalesce):
            return (f"block_absorb: {e.low_addr:#x} ({e.low_size} B) takes in its next neighbour "
                    f"{e.high_addr:#x} ({e.high_size} B): {e.size} B")
        if isinstance(e, Grow):
            return (f"no list can serve: the heap grows by {e.increment} B at {e.old_brk:#x} "
                    "(the end sentinel becomes a free block)")
        if isinstance(e, Released):
            return f"free: {e.addr:#x} ({e.size} B) marked free"
        if isinstance(e, Placed):
            return f"block_prepare_used: {e.addr:#x} ({e.size} B) is used; payload {e.payload:#x}"
        return None

    def explain_events(self, events: list) -> list[str | None]:
        """Which neighbour free() absorbs (block_merge_prev or _next), and the
        first growth, which lays out the pool (tlsf_add_pool)."""
        out = [self.explain_event(e) for e in events]
        current = None              # the block free() is working on
        for i, e in enumerate(events):
            if isinstance(e, Released):
                current = e.addr
            elif isinstance(e, Coalesce) and current is not None:
                if e.high_addr == current:
                    out[i] = (f"block_merge_prev: the previous block {e.low_addr:#x} ({e.low_size} B) "
                              f"is free: it absorbs {current:#x}, {e.size} B")
                else:
                    out[i] = (f"block_merge_next: the next block {e.high_addr:#x} ({e.high_size} B) "
                              f"is free: {e.low_addr:#x} absorbs it, {e.size} B")
                current = e.low_addr
            elif isinstance(e, Grow) and e.old_brk == self.arena.base:
                out[i] = (f"the first pool: sbrk({e.increment}) at {e.old_brk:#x}, laid out by "
                          "tlsf_add_pool as one free block and the end sentinel")
        return out

