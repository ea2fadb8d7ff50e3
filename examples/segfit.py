"""A segregated-fit allocator with boundary tags: the one docs/tutorial.md
writes, finished (step 4).

Free blocks wait on one list per size class, newest last: class k holds
blocks of 2**(k+4) to 2**(k+5) - 1 bytes, the last class everything bigger.
A request searches its class's list, newest first, then the larger classes'
for the first block big enough (CS:APP 9.9.14, "segregated fits"; Wilson,
Johnstone, Neely & Boles 1995, 3.6), splits off the rest, and grows the heap
by at least a chunk when nothing fits.  A freed block is joined at once with
free neighbours: the one after is found from the header, the one before from
its footer (Knuth's boundary tags, TAOCP 1, 2.5; CS:APP 9.9.11).

Step 4 adds what the window's structure view draws (``structure()``), the
fast answer to "which blocks are free?" (``free_blocks()``), the policy's own
invariants (``_check_structure``), its words for the explain panel
(``explain_event``) and two parameters (``-P segfit.classes=8``).
"""

from heapscope import FREE, INT, SIZE, USED, Param, UserStrategy, align_up
from heapscope.allocators.events import Coalesce, ListInsert, ListRemove, Split


class SegFit(UserStrategy):
    """Segregated fit: size-class lists, first fit, boundary tags"""

    name = "segfit"
    citation = "CS:APP 9.9.14 (segregated fits); Knuth, TAOCP 1, 2.5 (boundary tags)"
    params = (
        Param("classes", INT, 12, "size classes: class k holds blocks of 2**(k+4) to "
              "2**(k+5) - 1 bytes, the last one every bigger block", low=1, high=40),
        Param("chunk", SIZE, 4096, "least growth of the heap, in bytes", low=0, high=1 << 30),
    )

    def __init__(self, *, classes=12, chunk=4096, **common):
        super().__init__(**common)
        self.classes = classes
        self.chunk = chunk
        self.hdr = max(self.word, self.align)    # the header, widened so that payloads stay aligned
        self.ftr = self.word                     # the footer: the block's last word
        self.min_block = align_up(self.hdr + self.ftr + 1, self.hdr)
        self.mem = {}                            # header and footer words by address (size | in use)
        self.lists = [{} for _ in range(classes)]   # free blocks of each class, newest last
        self.top = self.arena.base               # end of the last block

    def size_class(self, size):
        return min(max(size.bit_length() - 5, 0), self.classes - 1)

    # ------------------------------------------------------------ the words
    def _tag(self, addr, size, used):
        """Write the header and the footer of the block at addr."""
        self.mem[addr] = self.mem[addr + size - self.ftr] = size | used

    def _link(self, addr, size):
        k = self.size_class(size)
        self.lists[k][addr] = None
        if self.record:                  # events only while the window records them
            self._event(ListInsert(addr, size, (k,)))

    def _unlink(self, addr, size):
        k = self.size_class(size)
        del self.lists[k][addr]
        if self.record:
            self._event(ListRemove(addr, size, (k,)))

    # --------------------------------------------------------------- malloc
    def _malloc(self, size):
        need = max(align_up(self.hdr + max(size, 1) + self.ftr, self.hdr), self.min_block)
        for k in range(self.size_class(need), self.classes):
            for addr in reversed(self.lists[k]):         # newest first
                fits = self.mem[addr] >= need
                self._visit(addr, self.mem[addr], fits)  # one more block examined
                if fits:
                    self._unlink(addr, self.mem[addr])
                    return self._place(addr, need, size)
        addr = self._grow(need)
        if addr is None:
            return None
        return self._place(addr, need, size)

    def _grow(self, need):
        """A free block of at least need bytes at the top of the heap (not on a list)."""
        more = max(need, self.chunk)
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
            self.rec.splits += 1
            if self.record:
                self._event(Split(addr, size, addr, need, addr + need, size - need))
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
            self.rec.merges += 1
            if self.record:
                self._event(Coalesce(addr, size, after, after_size))
            del self.mem[after], self.mem[addr + size - self.ftr]
            size += after_size
            self._tag(addr, size, 0)
        if addr > self.arena.base and not self.mem[addr - self.ftr] & 1:
            before_size = self.mem[addr - self.ftr]
            before = addr - before_size
            self._unlink(before, before_size)
            self.rec.merges += 1
            if self.record:
                self._event(Coalesce(before, before_size, addr, size))
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

    # ------------------------------------------------- what the window reads
    def class_label(self, k):
        low = 16 << k
        return f"class {k}: {low}+ B" if k == self.classes - 1 else f"class {k}: {low}-{2 * low - 1} B"

    def structure(self):
        """The free lists for the structure view, each from its head (the newest block)."""
        return self.lists_structure({self.class_label(k): list(reversed(self.lists[k]))
                                     for k in range(self.classes)})

    def free_blocks(self):
        """(addr, size) of each free block, from the lists: the window asks after every step."""
        for blocks in self.lists:
            for addr in blocks:
                yield addr, self.mem[addr]

    def explain_event(self, event):
        if isinstance(event, (ListInsert, ListRemove)):
            verb = "pushed" if isinstance(event, ListInsert) else "took"
            where = "on" if isinstance(event, ListInsert) else "off"
            return f"{verb} {event.addr:#x} ({event.size} B) {where} {self.class_label(event.where[0])}"
        return None

    def _check_structure(self, blocks):
        listed = {}
        for k, free in enumerate(self.lists):
            for addr in free:
                assert addr not in listed, f"{addr:#x} is on class {listed[addr]} and class {k}"
                listed[addr] = k
        previous_free = False
        for b in blocks:
            if b.state == FREE:
                assert b.addr in listed, f"free block {b.addr:#x} is on no list"
                assert listed.pop(b.addr) == self.size_class(b.size), \
                    f"free block {b.addr:#x} of {b.size} B is on the wrong class's list"
                assert not previous_free, f"free block {b.addr:#x} follows a free block: not coalesced"
            previous_free = b.state == FREE
            footer = self.mem.get(b.addr + b.size - self.ftr)
            assert footer == self.mem[b.addr], f"block {b.addr:#x}: footer {footer} != header"
        assert not listed, f"{[hex(a) for a in listed]} are on a list but are not free blocks"
