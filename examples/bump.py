"""The smallest strategy heapscope takes: a bump allocator (docs/tutorial.md,
step 0).  Every request gets fresh memory at the top of the heap; a freed
block is never used again."""

from heapscope import FREE, USED, UserStrategy, align_up


class Bump(UserStrategy):
    """Bump allocator: fresh memory for every request, never reused"""

    def __init__(self, **common):
        super().__init__(**common)          # word, align, heap_limit, pool_size
        self.blocks = []                    # [addr, size, payload or None], in address order
        self.entry = {}                     # payload -> its entry in blocks

    def _malloc(self, size):
        need = align_up(max(size, 1), self.align)
        addr = self._take_core(need)        # grow the heap; None when it cannot
        if addr is None:
            return None
        self._note_alloc(addr, addr, need, size, 0)   # payload, block, block size, request, header
        self.entry[addr] = [addr, need, addr]
        self.blocks.append(self.entry[addr])
        return addr

    def _free(self, payload):
        self._note_free(payload)
        self.entry.pop(payload)[2] = None   # the block stays where it is, free

    def _blocks(self):
        for addr, size, payload in self.blocks:
            yield addr, size, (FREE if payload is None else USED), payload
