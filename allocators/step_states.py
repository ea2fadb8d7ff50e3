"""The whole free structure after each event of a step: what a structure view
draws at a micro-step, and the two ends of each transition it animates.

:class:`~heapscope.allocators.structure_replay.StructureReplay` rebuilds, event by
event, the part of ``structure()`` that the events promise to say
(docs/structure.md, "Events a view can rely on").  A view draws the whole
answer, so :class:`StepStates` completes each replayed state into one:

* keys that never change within a step (TLSF's ``fl_count``, ``row_floor``;
  the buckets' ``block_sizes``; the buddy's ``min_order``) come from the
  structure after the step;
* ``pointers`` follow the replayed pointers (K&R's rover, Kruse's head, the
  splay wilderness, dlmalloc's last remainder and top), and so do the blocks
  kept ``outside`` under them;
* the buddy system's ``blocks`` and ``chunks`` -- not replayed, the heap walk
  has them -- follow Knuth's algorithms from the events: a ``BuddySplit``
  halves a block (R3), a ``BuddyMerge`` joins two (S2), a ``ListInsert`` of a
  block no chunk holds is a new chunk; a block is used from its ``Placed``
  to its ``Released`` (so the half a split cuts off, or a block being freed,
  is free before R4 or S3 puts it on its list);
* the uncarved part of a fixed pool (``outside`` of buddy and buckets, which a
  ``Note`` says is carved) is the one before the step until the step grows,
  carves or notes something, the one after from then on;
* phkmalloc's chunk pages follow their replayed free chunks (the free count
  and the bitmap with them; the rest of a ``pginfo`` is as before or after
  the step), and every size's list is there, empty or not, as in
  ``structure()``; so are GNU malloc's fragment lists;
* a size the events have not said yet (mid-step, Vmbest names a new
  wilderness before examining it) is the size before or after the step.

What is the kind's own (its pointers and kept-apart blocks, the buddy's
orders and chunks, the lists shown whole, phkmalloc's pages) is said by the
kind's module in :mod:`heapscope.allocators.structure_kinds`
(``pointer_keys``, ``apart``, ``start_step``, ``follow``, ``complete``); this
class does what every kind shares.

The state after the last event is ``structure()`` after the step, key for key
(tests/test_step_states.py checks it on every step of random programs).
States are computed on demand, once each, and shared by the events that do
not change the structure (a search's visits, a bitmap probe).  Pure Python.
"""

from __future__ import annotations

from . import events as ev
from . import structure_kinds
from .structure_replay import ReplayError, StructureReplay

#: events that change nothing a structure view draws of the structure
_LOOKS = (ev.Visit, ev.WalkStep, ev.AvailProbe, ev.BitmapProbe, ev.MappingSearch, ev.Note,
          ev.InsertionPoint, ev.GrowFailed)


class StepStates:
    """The structure after each event of one step, from the structure before
    and after it and the step's events.

    ``at(i)`` is the structure after event ``i`` (0-based); ``at(-1)`` the
    structure before the step; ``at(None)`` the structure after it.  For a
    kind the events do not describe (a user strategy's ``lists``), or events
    that do not fit the structure, :attr:`available` is False and every
    index gives the structure after the step (views then only light the
    events)."""

    def __init__(self, before: dict | None, after: dict, events) -> None:
        self.before, self.after = before, after
        self.events = list(events or ())
        self.kind = after["kind"]
        #: the step's kind (allocators/structure_kinds/): its mid-step rules
        self.kind_rules = structure_kinds.get(self.kind) or structure_kinds.StructureKind()
        self.available = (before is not None and self.kind_rules.follower is not None
                          and before.get("kind") == self.kind)
        self._states: list[dict] = []
        self._replay: StructureReplay | None = None
        self._carved = False
        #: what the kind follows beside the replay (the buddy's orders and chunks)
        self.kind_state = None
        if self.available:
            try:
                self._replay = StructureReplay(before)
            except (ReplayError, KeyError, ValueError):
                self.available = False
        if self.available:
            self.kind_state = self.kind_rules.start_step(before)

    def __len__(self) -> int:
        return len(self.events)

    def at(self, index: int | None) -> dict:
        """The structure after event ``index`` (see the class)."""
        if index is None or not self.available:
            return self.after
        if index < 0:
            return self.before
        index = min(index, len(self.events) - 1)
        try:
            while len(self._states) <= index:
                self._advance()
        except (ReplayError, KeyError, ValueError, IndexError, TypeError):
            # events that lie: say so by drawing the step as a whole
            self.available = False
            return self.after
        return self._states[index]

    def changes(self, index: int) -> bool:
        """Whether event ``index`` changes the structure (a view animates it)."""
        if not self.available or index < 0 or index >= len(self.events):
            return False
        return not isinstance(self.events[index], _LOOKS)

    # ------------------------------------------------------------------
    def _advance(self) -> None:
        i = len(self._states)
        event = self.events[i]
        self._replay.apply(event)
        new_chunk = self.kind_rules.follow(self.kind_state, event)
        was_carved = self._carved
        if isinstance(event, (ev.Grow, ev.BucketRefill, ev.Note)) or i == len(self.events) - 1 or new_chunk:
            # (a fixed pool is carved under a Note; by the last event it is as after the step)
            self._carved = True
        if i and isinstance(event, _LOOKS) and self._carved == was_carved:
            self._states.append(self._states[-1])
        else:
            self._states.append(self._complete(self._replay.result(strict=False)))

    def _complete(self, replayed: dict) -> dict:
        after, before = self.after, self.before
        rules = self.kind_rules
        out = dict(after)
        out.update(replayed)
        out.pop("sizes", None)
        # the pool not carved yet: as before the step until the step carves
        apart_from = after if self._carved else before
        apart = rules.apart
        whys = {why for _, why in apart}
        # blocks kept apart under a pointer follow it (the splay wilderness,
        # dlmalloc's last remainder and top); the uncarved pool as said above
        out["outside"] = [{"addr": replayed[key], "why": why} for key, why in apart
                          if replayed.get(key) is not None]
        out["outside"] += [dict(o) for o in apart_from.get("outside", ()) if o["why"] not in whys]
        names = rules.pointer_keys
        if names:
            out["pointers"] = [dict(p, addr=replayed.get(names[p["name"]])) if p.get("name") in names
                               else dict(p) for p in after.get("pointers", ())]
        rules.complete(self, out, replayed)
        a_sizes, b_sizes, apart_sizes = after["sizes"], before["sizes"], apart_from["sizes"]
        sizes = {}
        for a, n in replayed["sizes"].items():
            sizes[a] = n if n is not None else a_sizes.get(a, b_sizes.get(a, 0))
        for o in out["outside"]:
            a = o["addr"]
            if a not in sizes:
                sizes[a] = apart_sizes.get(a, a_sizes.get(a, b_sizes.get(a, 0)))
        out["sizes"] = sizes
        return out
