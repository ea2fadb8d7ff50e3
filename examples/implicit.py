"""The textbook implicit free list: CS:APP 9.9.6-9.9.12, written from the
book's description (not its code).

Every block has a header word holding its size and whether it is in use, and
a footer that repeats it (Knuth's boundary tags, CS:APP 9.9.11).  The heap
starts with a prologue block that is always in use and ends with an
epilogue header of size 0, so that joining a freed block with its neighbours
needs no test for the ends.  A request is placed in the **first** block big
enough, found by walking every block of the heap from the start (the "list"
is implicit: a block's size leads to the next one); the rest is split off
when it can hold a block.  When nothing fits the heap grows by at least a
chunk; the old epilogue becomes the header of the new free block, which is
joined with a free block before it.  A freed block is joined at once with
free neighbours, found through the header after it and the footer before it.

It is slow on purpose: each malloc visits every block before the fit, so a
heap of n blocks costs O(n) a request (``benchmarks/bench_grade.py`` grades
it on a trace built to make it crawl).

    heapscope grade examples/implicit.py:Implicit
"""

from heapscope import FREE, META, SIZE, USED, Param, UserStrategy, align_up


class Implicit(UserStrategy):
    """Implicit free list: first fit over every block, boundary tags"""

    name = "implicit"
    citation = "CS:APP 9.9.6-9.9.12 (implicit free list, first fit, boundary tags)"
    params = (
        Param("chunk", SIZE, 4096, "least growth of the heap, in bytes", low=0, high=1 << 30),
    )

    def __init__(self, *, chunk=4096, **common):
        super().__init__(**common)
        self.chunk = chunk
        self.hdr = max(self.word, self.align)     # the header, widened so that payloads stay aligned
        self.ftr = self.word                      # the footer: the block's last word
        self.min_block = align_up(self.hdr + self.ftr + 1, self.hdr)
        self.prologue = align_up(self.hdr + self.ftr, self.hdr)
        self.mem = {}            # header and footer words by address: size | 1 when in use
        self.first = None        # the first block after the prologue, once the heap is set up

    # ------------------------------------------------------------ the words
    def _tag(self, addr, size, used):
        """Write the header and the footer of the block at addr."""
        self.mem[addr] = self.mem[addr + size - self.ftr] = size | used

    def _start(self):
        """The prologue block and the epilogue header; False when the heap cannot grow."""
        base = self._take_core(self.prologue + self.hdr)
        if base is None:
            return False
        self._tag(base, self.prologue, 1)
        self.first = base + self.prologue
        self.mem[self.first] = 1                   # the epilogue: size 0, in use
        return True

    # ------------------------------------------------------------- malloc
    def _malloc(self, size):
        if self.first is None and not self._start():
            return None
        need = max(self.min_block, align_up(size + self.hdr + self.ftr, self.hdr))
        mem = self.mem
        addr = self.first
        while True:                                # first fit, over every block
            word = mem[addr]
            bsize = word & ~1
            if bsize == 0:                         # the epilogue: nothing fits
                break
            fits = not word & 1 and bsize >= need
            self._visit(addr, bsize, fits)
            if fits:
                return self._place(addr, bsize, need, size)
            addr += bsize
        addr = self._extend(max(need, self.chunk))
        if addr is None:
            return None
        return self._place(addr, self.mem[addr] & ~1, need, size)

    def _extend(self, grow):
        """Grow the heap by ``grow`` bytes: a free block where the epilogue was,
        joined with a free block before it; its address, or None."""
        grow = align_up(grow, self.hdr)
        new = self._take_core(grow)
        if new is None:
            return None
        block = new - self.hdr                     # the old epilogue becomes its header
        self._tag(block, grow, 0)
        self.mem[block + grow] = 1                 # the new epilogue
        return self._coalesce(block, grow)

    def _place(self, addr, bsize, need, size):
        """Use the free block at addr for the request, splitting off the rest."""
        if bsize - need >= self.min_block:
            self._tag(addr, need, 1)
            self._tag(addr + need, bsize - need, 0)
            bsize = need
        else:
            self._tag(addr, bsize, 1)
        payload = addr + self.hdr
        self._note_alloc(payload, addr, bsize, size, self.hdr + self.ftr)
        return payload

    # --------------------------------------------------------------- free
    def _free(self, payload):
        self._note_free(payload)
        addr = payload - self.hdr
        size = self.mem[addr] & ~1
        self._tag(addr, size, 0)
        self._coalesce(addr, size)

    def _coalesce(self, addr, size):
        """Join the free block at addr with free neighbours (CS:APP's four
        cases); the address of the block that results."""
        mem = self.mem
        before = mem[addr - self.ftr]              # the footer of the block before
        after = mem[addr + size]                   # the header of the block after
        if not after & 1:
            nsize = after & ~1
            del mem[addr + size - self.ftr], mem[addr + size]
            size += nsize
        if not before & 1:
            psize = before & ~1
            del mem[addr - self.ftr], mem[addr]
            addr -= psize
            size += psize
        self._tag(addr, size, 0)
        return addr

    def _payload_capacity(self, payload):
        return (self.mem[payload - self.hdr] & ~1) - self.hdr - self.ftr

    # --------------------------------------------------------------- walk
    def _blocks(self):
        if self.first is None:
            return
        base = self.first - self.prologue
        yield base, self.prologue, META, None
        mem = self.mem
        addr = self.first
        while True:
            word = mem[addr]
            size = word & ~1
            if size == 0:
                yield addr, self.hdr, META, None     # the epilogue header
                return
            if word & 1:
                yield addr, size, USED, addr + self.hdr
            else:
                yield addr, size, FREE, None
            addr += size

    def _check_structure(self, blocks):
        for b in blocks:
            if b.state != META:
                assert self.mem[b.addr] == self.mem[b.addr + b.size - self.ftr], \
                    f"header and footer of the block at {b.addr:#x} disagree"
                assert b.state == FREE or self.mem[b.addr] & 1
        for a, b in zip(blocks, blocks[1:]):
            assert not (a.state == FREE and b.state == FREE), \
                f"free blocks at {a.addr:#x} and {b.addr:#x} were not joined"
