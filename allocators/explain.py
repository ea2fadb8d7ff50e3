"""A step's events in words: what the explain panel lists and ``heapscope
inspect`` prints.

:func:`explain_step` turns the events of one :class:`~heapscope.allocators.events.OpRecord`
into :class:`ExplainedEvent` lines, in order.  Each line carries the event, its
text, and the block addresses it names (so a click on the line can select the
block on the map and in the structure view).

Words come first from the strategy (:meth:`Strategy.explain_events`, which
by default asks :meth:`Strategy.explain_event` for each event: there a policy
says things its own way, "R1: AVAIL[10] empty", "mapping_search(239): rounded
to 240, class (0, 30)"; ``explain_events`` sees the whole step, for the words
that depend on where an event falls, such as Knuth's R2 against S2), then
from the event itself: each event type says what it means in any policy
(its ``describe()`` and ``addresses()``, :mod:`heapscope.allocators.events`).
The phrases for sizes and addresses (:func:`nbytes`, :func:`at`, :func:`count`,
:func:`times`) are :mod:`heapscope.allocators.phrases`, named here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from .phrases import at, count, nbytes, times  # noqa: F401 (named here too, for the strategies' texts)


@dataclass(frozen=True)
class ExplainedEvent:
    """One line of the explain panel."""
    index: int                  # position of the event in the step (0-based)
    event: object               # the event itself
    text: str                   # the line, in the policy's words
    addrs: tuple[int, ...]      # block addresses the line names, the main one first

    @property
    def type(self) -> str:
        return type(self.event).__name__


def explain_step(strategy, record) -> list[ExplainedEvent]:
    """The events of ``record`` (the strategy's record of one operation) in words."""
    if record is None or record.events is None:
        return []
    events = record.events
    texts = strategy.explain_events(events) if strategy is not None else [None] * len(events)
    return [ExplainedEvent(i, event, text or describe_event(event), event_addresses(event))
            for i, (event, text) in enumerate(zip(events, texts))]


def event_addresses(event) -> tuple[int, ...]:
    """Block addresses an event names, the one it is mostly about first:
    its type's ``addresses()`` (:mod:`heapscope.allocators.events`), or for a
    type with none (a user strategy's own event) the values of its fields
    named ``addr``, ``parent``, ``replaced_by`` or ``*_addr``."""
    addresses = getattr(type(event), "addresses", None)
    if addresses is not None:
        return addresses(event)
    out = []
    for f in fields(event):
        if f.name in ("addr", "parent", "replaced_by") or f.name.endswith("_addr"):
            value = getattr(event, f.name)
            if isinstance(value, int):
                out.append(value)
    return tuple(out)


def describe_event(event) -> str:
    """Generic words for an event, true of any policy: its type's
    ``describe()`` (:mod:`heapscope.allocators.events`), or its repr for a
    type with none."""
    describe = getattr(type(event), "describe", None)
    return describe(event) if describe is not None else repr(event)


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def explain_fault(fault, index: int, block_start=None) -> ExplainedEvent:
    """The line that ends the explain panel of the last step a strategy of
    your own reached: the mistake that stopped its replay at the next step
    (a :class:`~heapscope.allocators.user.UserStrategyError`), in its own
    words.  Its blocks are those the message names (``block_start(addr)``:
    the block holding an address, None outside every block), so a click
    on it, and the window when it opens there, selects the offending block."""
    addrs = []
    for text in _ADDRESS.findall(fault.message):
        addr = int(text, 16)
        start = block_start(addr) if block_start is not None else addr
        if start is not None and start not in addrs:
            addrs.append(start)
    what = f" ({fault.operation})" if fault.operation else ""
    text = (f"✖ step {fault.step}{what} stopped the replay: {fault.message}, in {fault.where()}"
            if fault.step is not None else f"✖ the replay stopped: {fault.message}, in {fault.where()}")
    return ExplainedEvent(index, fault, text, tuple(addrs))
