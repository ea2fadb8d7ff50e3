"""Segregated fit, step 1 of docs/tutorial.md: the smallest that passes.

Free blocks wait on one list per size class.  A request takes the first
block big enough on its class's list (or a larger class's), whole, or a new
block from the top of the heap.  No splitting and no coalescing yet.

Each block starts with a header word holding its size, with bit 0 set while
the block is in use (CS:APP 9.9.6).  ``self.mem`` holds the words that
matter, by address.
"""

from heapscope import FREE, USED, UserStrategy, align_up

CLASSES = 12            # class k holds blocks of 2**(k+4) to 2**(k+5) - 1 bytes; the last, the rest


def size_class(size):
    return min(max(size.bit_length() - 5, 0), CLASSES - 1)


class SegFit1(UserStrategy):
    """Segregated fit, step 1: size classes, no splitting nor coalescing"""

    def __init__(self, **common):
        super().__init__(**common)
        self.hdr = max(self.word, self.align)    # the header, widened so that payloads stay aligned
        self.mem = {}                            # block address -> header word (size | in use)
        self.lists = [{} for _ in range(CLASSES)]   # free blocks of each class, newest last
        self.top = self.arena.base               # end of the last block

    def _malloc(self, size):
        need = align_up(self.hdr + max(size, 1), self.hdr)
        for k in range(size_class(need), CLASSES):
            for addr in reversed(self.lists[k]):         # newest first
                if self.mem[addr] >= need:
                    del self.lists[k][addr]
                    return self._place(addr, size)
        addr = self._take_core(need)                     # none fits: grow the heap
        if addr is None:
            return None
        self.mem[addr] = need
        self.top = addr + need
        return self._place(addr, size)

    def _place(self, addr, request):
        size = self.mem[addr]
        self.mem[addr] = size | 1
        payload = addr + self.hdr
        self._note_alloc(payload, addr, size, request, self.hdr)
        return payload

    def _free(self, payload):
        self._note_free(payload)
        addr = payload - self.hdr
        size = self.mem[addr] & ~1
        self.mem[addr] = size
        self.lists[size_class(size)][addr] = None

    def _blocks(self):
        addr = self.arena.base
        while addr < self.top:
            size = self.mem[addr] & ~1
            if self.mem[addr] & 1:
                yield addr, size, USED, addr + self.hdr
            else:
                yield addr, size, FREE, None
            addr += size
