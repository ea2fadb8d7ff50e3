"""A bump allocator that counts one visit per block already in its heap on
every malloc: a strategy whose heap, work and growths per step are worked
out by hand in tests/test_experiment_runner.py (misbehaving.py's bump
allocator, which never misbehaves here)."""

from misbehaving import Misbehaving      # beside this file: a plugin's folder is on sys.path


class CountedBump(Misbehaving):
    """Bump allocator visiting every block it holds on each malloc"""
    name = "counted-bump"
    FAIL_AT = 10 ** 12

    def _malloc(self, size):
        for addr, block_size, _ in self.blocks:
            self._visit(addr, block_size, False)
        return super()._malloc(size)
