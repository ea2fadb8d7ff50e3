"""A strategy's words: how the explain panel, ``heapscope inspect`` and the
one-line description of a step (``Timeline.describe``) word what it did.

:class:`StrategyWords` is one of the parts :class:`~heapscope.allocators.strategy.Strategy`
is made of (the policy's contract is the rest): the defaults below, which a
policy overrides with its original's words, in a module of its own beside
the policy (``heapscope.allocators.tlsf_explain``,
``heapscope.allocators.dlmalloc_explain``) or in its class.
"""

from __future__ import annotations

from .events import FREE, REALLOC, OpRecord
from .phrases import count, times


class StrategyWords:
    """The explain texts of a policy (a part of every ``Strategy``)."""

    #: what one unit of a step's search is, singular and plural: the one-line
    #: description of a step counts in it ("after examining 12 free blocks",
    #: "after 3 bitmap probes", "after looking at 2 AVAIL lists")
    search_unit = ("free block", "free blocks")
    #: the words before that count ("" for none)
    search_verb = "examining"

    def explain_event(self, event) -> str | None:
        """This policy's own words for one of its events, or None for the
        generic words of :func:`heapscope.allocators.explain.describe_event`.  Override to
        say what an event means in the original's terms."""
        return None

    def explain_events(self, events: list) -> list[str | None]:
        """Words for every event of one step, in order (None: the generic
        words).  The default asks :meth:`explain_event` for each; a policy
        overrides this where an event's words depend on the events around it
        (Knuth's R2 and S2 both take a block off an AVAIL list)."""
        return [self.explain_event(e) for e in events]

    def search_units(self, rec: OpRecord) -> int:
        """How many :attr:`search_unit` the operation's search took: the visits
        by default; TLSF counts its bitmap probes."""
        return rec.visits

    def describe_record(self, rec: OpRecord) -> list[str]:
        """What an operation did, as the clauses that follow the call and its
        result in the one-line description of a step (``Timeline.describe``):
        ``["after examining 12 free blocks", "split once"]``.  Policies with
        their own words override it (buddy's "merged with its buddy twice")."""
        out = []
        n = self.search_units(rec)
        if rec.kind == FREE:
            if n:
                out.append(f"walked {count(n, self.search_unit)}")
        elif n or not (rec.kind == REALLOC and rec.payload == rec.old_payload):
            verb = f"{self.search_verb} " if self.search_verb else ""
            out.append(f"after {verb}{count(n, self.search_unit)}")
        if rec.splits:
            out.append(f"split {times(rec.splits)}")
        if rec.merges:
            out.append(f"coalesced {times(rec.merges)}")
        if rec.rotations:
            out.append(count(rec.rotations, "rotation"))
        if rec.grows:
            out.append(f"grew the heap {times(rec.grows)}")
        return out

