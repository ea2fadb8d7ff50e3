"""Bulk replay's entry into a policy: the callables the replay loops call
(``heapscope.allocators.op_dispatch``, ``heapscope.allocators.replay``).

:class:`BulkReplay` is one of the parts
:class:`~heapscope.allocators.strategy.Strategy` is made of.  A policy's
fused fast path lives beside it (``heapscope.allocators.tlsf_fast``).
"""

from __future__ import annotations


class BulkReplay:
    """What bulk replay calls (a part of every ``Strategy``)."""

    def bulk_ops(self) -> tuple:
        """The (malloc, free, realloc) callables bulk replay calls
        (:mod:`heapscope.allocators.replay`: ``replay_ops`` and the timeline's build),
        taking the arguments of ``_malloc``, ``_free`` and ``_realloc``.

        By default those three methods themselves.  A policy written one verb
        per function, as its original is, may return *fused* versions instead:
        the same operations with the verbs inlined into one function each, for
        speed.  A fused operation must leave the heap, the books and the
        counters of ``self.rec`` exactly as the readable one does (tests run
        the two in lockstep); it makes no events, so it is only given while
        events are off, and it may hold on to the record and the strategy's
        containers: bulk replay asks for it after putting its bulk record in
        place and uses it only until the end of that replay."""
        return self._malloc, self._free, self._realloc

