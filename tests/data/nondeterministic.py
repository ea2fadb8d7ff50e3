"""A strategy of your own whose addresses change from run to run (tests of
Timeline._same_as_built): misbehaving.py's bump allocator, leaving a random
gap before each block."""

import random

from misbehaving import Misbehaving      # beside this file: a plugin's folder is on sys.path


class RandomGaps(Misbehaving):
    """A bump allocator with a random gap of 0-7992 bytes before each block"""
    name = "random-gaps"
    FAIL_AT = 10 ** 12                    # never misbehaves in Misbehaving's ways

    def _malloc(self, size):
        gap = 8 * random.randrange(1000)  # not seeded: another heap every replay
        if gap:
            addr = self._take_core(gap)
            if addr is None:
                return None
            self.blocks.append([addr, gap, None])
        return super()._malloc(size)
