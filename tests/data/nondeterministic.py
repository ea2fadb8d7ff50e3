"""A strategy of your own whose addresses change from run to run (tests of
Timeline._same_as_built): a bump allocator leaving a random gap before each
block."""

import random

from heapscope import FREE, USED, UserStrategy, align_up


class RandomGaps(UserStrategy):
    """A bump allocator with a random gap of 0-7992 bytes before each block"""
    name = "random-gaps"

    def __init__(self, **common):
        super().__init__(**common)
        self.blocks = []
        self.entry = {}

    def _malloc(self, size):
        need = align_up(max(size, 1), self.align)
        gap = 8 * random.randrange(1000)      # not seeded: another heap every replay
        addr = self._take_core(gap + need)
        if addr is None:
            return None
        if gap:
            self.blocks.append([addr, gap, None])
        addr += gap
        self._note_alloc(addr, addr, need, size, 0)
        self.entry[addr] = [addr, need, addr]
        self.blocks.append(self.entry[addr])
        return addr

    def _free(self, payload):
        self._note_free(payload)
        self.entry.pop(payload)[2] = None

    def _blocks(self):
        for addr, size, payload in self.blocks:
            yield addr, size, (FREE if payload is None else USED), payload
