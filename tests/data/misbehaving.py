"""User strategies that misbehave at their FAIL_AT-th operation (tests of
allocators/isolation.py): a bump allocator until then, and then an endless
loop, sys.exit(0), os._exit(0) or a BaseException that is no Exception."""

import os
import sys

from heapscope import FREE, USED, UserStrategy, align_up


class Misbehaving(UserStrategy):
    """A bump allocator that misbehaves at its FAIL_AT-th operation"""
    name = "misbehaving"
    FAIL_AT = 5

    def __init__(self, **common):
        super().__init__(**common)
        self.blocks = []
        self.entry = {}

    def misbehave(self):
        pass

    def _malloc(self, size):
        if self._step >= self.FAIL_AT:
            self.misbehave()
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


class Loops(Misbehaving):
    """Loops forever at its 5th operation"""
    name = "loops"

    def misbehave(self):
        while True:
            pass


class SysExits(Misbehaving):
    """Calls sys.exit(0) at its 5th operation"""
    name = "sys-exits"

    def misbehave(self):
        sys.exit(0)


class HardExits(Misbehaving):
    """Calls os._exit(0) at its 5th operation"""
    name = "hard-exits"

    def misbehave(self):
        os._exit(0)


class RaisesGeneratorExit(Misbehaving):
    """Raises GeneratorExit at its 5th operation"""
    name = "raises-generator-exit"

    def misbehave(self):
        raise GeneratorExit("from _malloc")


class LoopsInStructure(Misbehaving):
    """Replays well, but its structure() (which the views draw) loops forever"""
    name = "loops-in-structure"
    FAIL_AT = 10 ** 9

    def structure(self):
        while True:
            pass


class KillsItself(Misbehaving):
    """Sends itself SIGKILL at its 5th operation (as the out-of-memory killer would)"""
    name = "kills-itself"

    def misbehave(self):
        import signal
        os.kill(os.getpid(), signal.SIGKILL)


class LoopsInTheWindow(Misbehaving):
    """Replays well in a worker process, but loops from its 50th operation in a
    process that has Qt loaded: a seek in the window's own process"""
    name = "loops-in-the-window"
    FAIL_AT = 50

    def misbehave(self):
        while "PySide6" in sys.modules:
            pass


class RefusesThree(Misbehaving):
    """A bump allocator whose check() refuses a third live block: the window's
    Check Your Strategy After Every Step stops at the first step with three"""
    name = "refuses-three"
    FAIL_AT = 10 ** 9

    def _check_structure(self, blocks):
        used = [b.addr for b in blocks if b.state == USED]
        assert len(used) < 3, f"three blocks live; the first is {used[0]:#x}"


class LoopsWhenExplained(Misbehaving):
    """Loops from its 50th operation when a step is replayed with its events
    (a Find walk, a step shown), never in a replay without them (a build)"""
    name = "loops-when-explained"
    FAIL_AT = 50

    def misbehave(self):
        while self.record:
            pass
