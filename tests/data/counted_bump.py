"""A bump allocator that counts one visit per block already in its heap on
every malloc: a strategy whose heap, work and growths per step are worked
out by hand in tests/test_experiment_runner.py."""

from heapscope import FREE, USED, UserStrategy, align_up


class CountedBump(UserStrategy):
    """Bump allocator visiting every block it holds on each malloc"""
    name = "counted-bump"

    def __init__(self, **common):
        super().__init__(**common)
        self.blocks = []
        self.entry = {}

    def _malloc(self, size):
        for addr, block_size, payload in self.blocks:
            self._visit(addr, block_size, False)
        need = align_up(max(size, 1), self.align)
        addr = self._take_core(need)
        if addr is None:
            return None
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
