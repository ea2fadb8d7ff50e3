"""What one block is, in one line: the hover text of the heap map and of the
structure view, so both say the same facts about the same block.

Pure Python over :class:`heapscope.gui.heap_cells.BlockArrays` (no Qt): the block's
address, size and state; for a used block its trace id, the size the program
asked for, its payload, header and padding; for a free block where the
strategy keeps it (``allocators.structure.where``: "in AVAIL[7]", "in list
(1, 30)", "outside the structure: wilderness").
"""

from __future__ import annotations

from . import heap_cells


def describe_address(blocks: heap_cells.BlockArrays, address: int, ids: dict | None = None,
                     places=None, names: dict | None = None) -> str:
    """The block holding ``address`` in words (" " for -1: nothing hovered).

    ``ids`` maps a payload address to its trace id, ``names`` a trace id
    to the name the trace gives it; ``places`` maps a free
    block's address to where the strategy keeps it, already in words (or is
    a function giving that map, asked only for a free block: it costs a
    ``structure()``)."""
    if address is None or address < 0:
        return " "
    i = blocks.index_at(address)
    if i < 0:
        return f"0x{address:x}: past the break (heap ends at 0x{blocks.brk:x})"
    addr, size, state = int(blocks.addr[i]), int(blocks.size[i]), int(blocks.state[i])
    head = (f"block 0x{addr:x}, {size:,} B" if address == addr
            else f"0x{address:x} is in block 0x{addr:x}, {size:,} B")
    if state == heap_cells.STATE_USED:
        payload, request, header = int(blocks.payload[i]), int(blocks.request[i]), int(blocks.header[i])
        ident = (ids or {}).get(payload)
        name = (names or {}).get(ident)
        who = (f"{name} (trace id {ident})" if name is not None and name != str(ident)
               else f"trace id {ident}" if ident is not None else "trace id ?")
        return (f"{head}: used · {who} · requested {request:,} B · payload 0x{payload:x} · "
                f"header {header} B · padding {size - header - request} B")
    if state == heap_cells.STATE_FREE:
        text = head + (": free, the top (wilderness) block" if i == blocks.top_index() else ": free")
        if callable(places):
            places = places()
        place = (places or {}).get(addr)
        return text + (f" · {place}" if place else "")
    return head + ": allocator meta (not usable by the program)"


def block_start(blocks: heap_cells.BlockArrays, address: int) -> int | None:
    """The address of the block holding ``address``, or None off the heap."""
    if address is None or address < 0:
        return None
    i = blocks.index_at(address)
    return None if i < 0 else int(blocks.addr[i])
