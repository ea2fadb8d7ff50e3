"""dlmalloc's words for its events, in malloc.c 2.6's names (``frontlink``,
``unlink``, ``binblocks``, the last remainder, top, ``malloc_extend_top``,
``malloc_trim``, ``mmap_chunk``): :class:`DlmallocWords`, the explain-text part
of :class:`heapscope.allocators.dlmalloc.Dlmalloc`.
"""

from __future__ import annotations

from .dlmalloc_bins import BINBLOCKWIDTH, MAX_SMALLBIN_SIZE, bin_index, bin_words
from .dlmalloc_events import BinmapChange, BinmapProbe, BinProbe, BinWalkStep, Mapped, Trim, Unmapped
from .events import Grow, ListInsert, ListRemove, PointerMove, Split, Visit
from .strategy_words import StrategyWords


class DlmallocWords(StrategyWords):
    """What a dlmalloc step did, in the words of malloc.c 2.6."""

    search_unit = ("bin, bitmap bit or chunk", "bins, bitmap bits and chunks")
    search_verb = "looking at"

    def explain_events(self, events: list) -> list[str | None]:
        """Words for a step's events; a chunk examined is named as top, the
        last remainder or a bin's chunk.  Which chunk was top and which the
        last remainder at each event follows from the state after the step
        (this strategy's) by undoing the step's PointerMoves backwards."""
        n = len(events)
        top, lr = self.top, self.last_remainder
        tops: list[int | None] = [None] * n
        lrs: list[int | None] = [None] * n
        for i in range(n - 1, -1, -1):
            e = events[i]
            if isinstance(e, PointerMove):
                if e.name == "top":
                    top = e.old
                elif e.name == "last_remainder":
                    lr = e.old
            tops[i], lrs[i] = top, lr
        out = []
        for i, e in enumerate(events):
            if isinstance(e, Visit):
                if e.addr == tops[i]:
                    out.append(f"top {e.addr:#x} ({e.size} B): " + (
                        "big enough, and it keeps MINSIZE after the cut" if e.fits else
                        "too small (it must keep MINSIZE after the cut)"))
                elif e.addr == lrs[i]:
                    out.append(f"the last remainder {e.addr:#x} ({e.size} B): "
                               + ("it fits" if e.fits else "too small"))
                else:
                    out.append(f"chunk {e.addr:#x} ({e.size} B) in bin {bin_index(e.size)}: "
                               + ("it fits" if e.fits else "too small"))
            elif isinstance(e, Split) and e.addr == tops[i]:
                out.append(f"split top: {e.taken_size} B at {e.taken_addr:#x} for the request, "
                           f"{e.rest_size} B at {e.rest_addr:#x} stay top")
            elif isinstance(e, Grow) and tops[i] is not None:
                out.append(f"malloc_extend_top: sbrk({e.increment}) returned {e.old_brk:#x}, the end "
                           "of top, so the new memory joins top")
            else:
                out.append(self.explain_event(e))
        return out

    def explain_event(self, event) -> str | None:
        if isinstance(event, BinProbe):
            what = bin_words(event.bin)
            if event.last is None:
                return f"bin {event.bin} ({what}) is empty"
            return f"bin {event.bin} ({what}): its last chunk {event.last:#x} is looked at first"
        if isinstance(event, BinmapProbe):
            lo = event.block * BINBLOCKWIDTH
            if event.marked:
                return f"binblocks bit {event.block} is set: bins {lo}-{lo + 3} may hold chunks"
            return f"binblocks bit {event.block} is clear: bins {lo}-{lo + 3} are skipped"
        if isinstance(event, BinmapChange):
            lo = event.block * BINBLOCKWIDTH
            if event.marked:
                return f"set binblocks bit {event.block}: bins {lo}-{lo + 3} now hold a chunk"
            return f"cleared binblocks bit {event.block}: bins {lo}-{lo + 3} are all empty"
        if isinstance(event, BinWalkStep):
            return (f"frontlink passed {event.addr:#x} ({event.size} B) in bin {event.bin}: "
                    "larger chunks stay in front")
        if isinstance(event, ListInsert) and event.where:
            b = event.where[0]
            place = "at the front of" if event.size < MAX_SMALLBIN_SIZE else "in size order into"
            return f"frontlink put {event.addr:#x} ({event.size} B) {place} bin {b} ({bin_words(b)})"
        if isinstance(event, ListRemove) and event.where:
            return f"unlinked {event.addr:#x} ({event.size} B) from bin {event.where[0]}"
        if isinstance(event, PointerMove) and event.name == "last_remainder":
            if event.new is None:
                return f"the last remainder {event.old:#x} is no longer kept apart"
            return f"{event.new:#x} is now the last remainder (tried first by the next malloc that misses its bin)"
        if isinstance(event, PointerMove) and event.name == "top":
            if event.old is None:
                return f"top starts at {event.new:#x}: the first sbrk'd memory"
            return f"top moved from {event.old:#x} to {event.new:#x}"
        if isinstance(event, Trim):
            return (f"malloc_trim: top reached the trim threshold, so sbrk(-{event.extra}) gave "
                    f"{event.extra} bytes back; the break is now {event.old_brk - event.extra:#x}")
        if isinstance(event, Mapped):
            return (f"mmap_chunk: the request ({event.request} B) got a region of its own, "
                    f"{event.size} B at {event.addr:#x}, apart from the heap")
        if isinstance(event, Unmapped):
            return f"munmap_chunk: the region at {event.addr:#x} ({event.size} B) went back to the system"
        return None

