"""A heap of simulated memory words, for the strategies that keep their
bookkeeping inside the blocks (Kruse's boundary tags, Vo's Vmbest headers).

Every block starts with a one-word header holding its size, with flag bits in
the low bits.  The payload starts one word in, so blocks start at -W modulo
the grain (the alignment, at least a word) and the bytes before the first
block are a META prologue.  ``mem`` holds only the words that matter: headers,
and whatever each policy keeps in its blocks (footers, links, tree fields).
Subclasses say which bits are flags (``size_mask``) and how a header tells a
used block (``_in_use``).
"""

from __future__ import annotations

from .events import Grow, GrowFailed
from .strategy import FREE_BLOCK, META, USED, HeapInvariantError, Strategy, align_up


class WordHeap(Strategy):
    """The layout shared by word-tagged strategies; not a policy itself."""

    #: dicts and lists of ints only: a copy of the heap copies them without looking (state_copy.py)
    flat_state = Strategy.flat_state + ('mem',)
    #: header bits that are size (the others are flags)
    size_mask = -2

    def __init__(self, *, chunk: int, **common) -> None:
        super().__init__(**common)
        #: block sizes are multiples of this: whole words, whole alignment units
        self.grain = max(self.align, self.word)
        #: least sbrk increment
        self.chunk = align_up(chunk, self.grain)
        #: first block: the payload (one word in) is then aligned
        self.start = self.arena.base + (-self.word) % self.grain
        #: end of the last block (the break, in sbrk mode, once the heap exists)
        self.top = self.start
        #: simulated memory words that matter, by address
        self.mem: dict[int, int] = {}

    def _in_use(self, header: int) -> bool:
        raise NotImplementedError

    def _pool_bytes(self) -> int:
        """Bytes of a fixed pool that make whole blocks after the prologue."""
        return (self.arena.brk - self.start) // self.grain * self.grain

    def _grow(self, increment: int) -> int | None:
        """sbrk ``increment`` more bytes after the last block (the first time
        also the prologue that aligns the first payload) and move ``top`` past
        them; the old top, where the new memory starts, or None (ENOMEM)."""
        prologue = max(0, self.start - self.arena.brk)   # first growth only
        old = self.arena.sbrk(prologue + increment)
        if old is None:
            self._event(GrowFailed(prologue + increment))
            return None
        self.rec.grows += 1
        self._event(Grow(old, prologue + increment))
        start = self.top
        self.top += increment
        return start

    def _blocks(self):
        base, brk = self.arena.base, self.arena.brk
        if brk == base:
            return
        if self.start > base:
            yield base, min(self.start, brk) - base, META, None
        mem, word, mask = self.mem, self.word, self.size_mask
        a, top = self.start, self.top
        while a < top:
            header = mem.get(a)
            if header is None:
                raise HeapInvariantError(f"{self.name}: no header at {a:#x} (heap walk lost)")
            size = header & mask
            if self._in_use(header):
                yield a, size, USED, a + word
            else:
                yield a, size, FREE_BLOCK, None
            if size <= 0:
                return      # _check_heap reports the bad size; do not loop
            a += size
        if self.start <= top < brk:
            yield top, brk - top, META, None
