"""A broken strategy, on purpose: step 1 of docs/tutorial.md with one line
left out.  ``heapscope grade examples/broken.py:Broken`` finds it; the
tutorial shows what it says.  (The bug: a block taken for a request stays on
its free list, so a later request can be given it again while it is in use.)
"""

from heapscope import FREE, USED, UserStrategy, align_up

CLASSES = 12            # class k holds blocks of 2**(k+4) to 2**(k+5) - 1 bytes; the last, the rest


def size_class(size):
    return min(max(size.bit_length() - 5, 0), CLASSES - 1)


class Broken(UserStrategy):
    """Segregated fit with a bug: a reused block stays on its list"""

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
                    return self._place(addr, size)       # forgot: del self.lists[k][addr]
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
