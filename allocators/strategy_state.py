"""A strategy's state as data: its books of live blocks, the checkpoints the
timeline keeps (pickles), the cheap copies of its step-back cache and the
signature tests compare.

:class:`StrategyState` is one of the parts
:class:`~heapscope.allocators.strategy.Strategy` is made of.
"""

from __future__ import annotations

import pickle
from itertools import chain, repeat
from typing import TYPE_CHECKING, NamedTuple

from .events import OpRecord

if TYPE_CHECKING:
    from .strategy import Strategy


_new_tuple = tuple.__new__


class LiveBlock(NamedTuple):
    """The books of one live block (``Strategy.live[payload]``): where its
    block is, how big, what the program asked for and its header bytes."""
    block_addr: int
    block_size: int
    request: int
    header: int


class StrategyState:
    """Checkpoints and copies of a heap (a part of every ``Strategy``)."""

    #: attributes that are dicts, lists or sets of immutable items only (ints,
    #: None, tuples of ints: ``live`` holds LiveBlocks), by construction: a
    #: copy of the heap (``copy_state``) copies them without looking at their
    #: items, which costs a third of the copy at 100 000 blocks
    flat_state: tuple[str, ...] = ("live",)
    #: attributes that are lists of such containers (TLSF's free lists, one
    #: dict per (fl, sl) cell)
    flat_lists: tuple[str, ...] = ()

    def __getstate__(self) -> dict:
        # The live blocks go into pickles (the timeline's checkpoints) as two
        # flat lists: pickling a NamedTuple costs a Python call per block,
        # which made checkpoints cost more than the replay itself.  The record
        # of the last operation is no part of the heap and stays out.
        state = self.__dict__.copy()
        live = state["live"]
        state["live"] = (list(live), list(chain.from_iterable(live.values())))
        state["rec"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        payloads, flat = state["live"]
        fields = iter(flat)
        blocks = map(_new_tuple, repeat(LiveBlock), zip(fields, fields, fields, fields))
        state["live"] = dict(zip(payloads, blocks))
        state["rec"] = OpRecord()
        # One by one, not __dict__.update(): CPython (3.11+) keeps the
        # attributes of an instance whose __dict__ was never asked for inline,
        # and reads them faster; a restored heap replays at full speed.
        for name, value in state.items():
            setattr(self, name, value)

    def copy_state(self, copier) -> "Strategy":
        """A copy of this heap to replay on apart (the timeline's step-back
        cache, :mod:`heapscope.allocators.state_copy`): containers copied, their
        immutable items shared, much cheaper than a pickle round trip.  A
        strategy whose state is not plain data may override this; it must
        replay exactly as a restored checkpoint would."""
        from .state_copy import copy_strategy
        return copy_strategy(self, copier)

    def snapshot(self) -> bytes:
        """The whole state as bytes, for the timeline's checkpoints."""
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def restore(data: bytes) -> "Strategy":
        return pickle.loads(data)

    def state_signature(self) -> tuple:
        """A value equal for equal heaps: used by tests comparing seek with replay."""
        return (self.arena.brk, tuple(self.walk()), self._policy_signature())

    def _policy_signature(self) -> tuple:
        """Policy state not visible in walk() (rover, list order); override."""
        return ()

