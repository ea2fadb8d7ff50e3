"""Segregated fit, step 2 of docs/tutorial.md: splitting and coalescing.

A block bigger than the request is split and the rest goes back on a list;
a freed block is joined at once with free neighbours on either side.  The
block after is found from the header (address + size); the block before
from its footer, a copy of its header in its last word: Knuth's boundary
tags (TAOCP 1, 2.5; CS:APP 9.9.11).  The heap grows by at least a chunk,
and new memory joins a free block at the top.
"""

from heapscope import FREE, USED, UserStrategy, align_up

CLASSES = 12            # class k holds blocks of 2**(k+4) to 2**(k+5) - 1 bytes; the last, the rest
CHUNK = 4096            # least growth of the heap


def size_class(size):
    return min(max(size.bit_length() - 5, 0), CLASSES - 1)


class SegFit2(UserStrategy):
    """Segregated fit, step 2: splitting and coalescing with boundary tags"""

    def __init__(self, **common):
        super().__init__(**common)
        self.hdr = max(self.word, self.align)    # the header, widened so that payloads stay aligned
        self.ftr = self.word                     # the footer: the block's last word
        self.min_block = align_up(self.hdr + self.ftr + 1, self.hdr)
        self.mem = {}                            # header and footer words by address (size | in use)
        self.lists = [{} for _ in range(CLASSES)]   # free blocks of each class, newest last
        self.top = self.arena.base               # end of the last block

    # ------------------------------------------------------------ the words
    def _tag(self, addr, size, used):
        """Write the header and the footer of the block at addr."""
        self.mem[addr] = self.mem[addr + size - self.ftr] = size | used

    def _link(self, addr, size):
        self.lists[size_class(size)][addr] = None

    def _unlink(self, addr, size):
        del self.lists[size_class(size)][addr]

    # --------------------------------------------------------------- malloc
    def _malloc(self, size):
        need = max(align_up(self.hdr + max(size, 1) + self.ftr, self.hdr), self.min_block)
        for k in range(size_class(need), CLASSES):
            for addr in reversed(self.lists[k]):         # newest first
                if self.mem[addr] >= need:
                    self._unlink(addr, self.mem[addr])
                    return self._place(addr, need, size)
        addr = self._grow(need)
        if addr is None:
            return None
        return self._place(addr, need, size)

    def _grow(self, need):
        """A free block of at least need bytes at the top of the heap (not on a list)."""
        more = max(need, CHUNK)
        addr = self._take_core(more)
        if addr is None and more > need:                 # near a limit: just what is needed
            more = need
            addr = self._take_core(more)
        if addr is None:
            return None
        self.top = addr + more
        self._tag(addr, more, 0)
        return self._coalesce(addr, more)[0]

    def _place(self, addr, need, request):
        """Hand out the free block at addr for need bytes, splitting off the rest."""
        size = self.mem[addr]
        if size - need >= self.min_block:
            self._tag(addr + need, size - need, 0)
            self._link(addr + need, size - need)
            size = need
        self._tag(addr, size, 1)
        payload = addr + self.hdr
        self._note_alloc(payload, addr, size, request, self.hdr + self.ftr)
        return payload

    def _payload_capacity(self, payload):
        """The footer is not the program's: realloc in place must stop before it."""
        addr = payload - self.hdr
        return (self.mem[addr] & ~1) - self.hdr - self.ftr

    # ----------------------------------------------------------------- free
    def _free(self, payload):
        self._note_free(payload)
        addr = payload - self.hdr
        size = self.mem[addr] & ~1
        self._tag(addr, size, 0)
        addr, size = self._coalesce(addr, size)
        self._link(addr, size)

    def _coalesce(self, addr, size):
        """Join the free block at addr (on no list) with free neighbours."""
        after = addr + size
        if after < self.top and not self.mem[after] & 1:
            after_size = self.mem[after]
            self._unlink(after, after_size)
            del self.mem[after], self.mem[addr + size - self.ftr]
            size += after_size
            self._tag(addr, size, 0)
        if addr > self.arena.base and not self.mem[addr - self.ftr] & 1:
            before_size = self.mem[addr - self.ftr]
            before = addr - before_size
            self._unlink(before, before_size)
            del self.mem[addr], self.mem[addr - self.ftr]
            addr, size = before, before_size + size
            self._tag(addr, size, 0)
        return addr, size

    # ----------------------------------------------------------------- walk
    def _blocks(self):
        addr = self.arena.base
        while addr < self.top:
            size = self.mem[addr] & ~1
            if self.mem[addr] & 1:
                yield addr, size, USED, addr + self.hdr
            else:
                yield addr, size, FREE, None
            addr += size
