"""What the window shows, as one model that every view subscribes to.

The window used to call each view by hand on every step; with a structure
view, an explain panel and (next) one row per strategy in compare mode, that
does not scale.  As in napari, where a layer is a model of plain state that
emits an event on every change and each Qt view connects to the events it
draws (``napari.layers.Layer.events``, ``napari._qt.layer_controls``), a
:class:`ShowModel` holds the state and emits a signal when a part of it
changes; the views (:mod:`heapscope.gui.subscriber`) redraw what they show from it.

The state:

* the **trace** (and the file or label it came from);
* the **timelines** built from it, kept per ``(strategy, parameters)`` while
  the trace is open, so showing a strategy again costs no replay and compare
  mode can hold several;
* which strategies are **shown** (a list of timeline keys; one row today);
* the **position** (the heap after that many operations), shared by all rows;
* the **event** within the shown step (None: the whole step; micro-steps
  move it);
* the **selection** (a block address, or None) and the **hover** (the block
  under the mouse in any view).

What a view derives from the shown step -- the heap's blocks as columns, the
step's events in words (:func:`heapscope.allocators.explain.explain_step`), the
strategy's structure (``Strategy.structure()``), where each free block lives
-- is computed by :class:`ShownStep` on first use and kept until the step
changes, so each is computed at most once per shown step, whichever views ask.

The blocks are not walked on every step: each shown timeline has a
:class:`~heapscope.allocators.heap_tracker.HeapTracker` that edits the blocks with each
step's events (a short move forward is replayed one step at a time for
that, one step back undoes the last edit), and walks the heap only after a
jump (``allocators/heap_tracker.py``).
"""

from __future__ import annotations

import os
from functools import cached_property

from PySide6.QtCore import QObject, Signal

from heapscope.allocators import structure as structure_protocol
from heapscope.allocators.explain import explain_fault, explain_step
from heapscope.allocators.replay import BACK_CACHE_BYTES, apply_op
from heapscope.allocators.state_copy import copy_state
from heapscope.allocators.step_states import StepStates
from heapscope.allocators.user import StopUserCode, UserStrategyError

from . import heap_cells
from .block_facts import block_start, describe_address
from heapscope.allocators.heap_edits import TrackedHeap
from heapscope.allocators.heap_tracker import STEPWISE_MAX, HeapTracker, seek_tracked
from .step_measures import StepMeasures
from .turns import turns

#: a timeline's key: (strategy name, its parameters as sorted pairs)
TimelineKey = tuple


#: compare mode on a trace this long makes a jump a row at a time (ShowModel.seek)
STAGED_FROM_OPS = 50_000


def timeline_key(strategy: str, params: dict | None = None) -> TimelineKey:
    """The key a timeline is kept under: the strategy and its parameters."""
    return (strategy, tuple(sorted((params or {}).items())))


class CallCounts:
    """How often the shown steps computed their costly parts (tests count them)."""

    def __init__(self) -> None:
        self.explain = 0
        self.structure = 0


class ShownStep:
    """One shown strategy at the shown position, and what views derive from it.

    Valid only while the model shows this position: the model makes a new one
    on every step (the strategy object is replayed in place).  It holds no
    reference to the model, so that no reference cycle holds a Qt object (a
    cycle collected by a garbage collection in the replay thread would delete
    Qt objects off the GUI thread)."""

    def __init__(self, key: TimelineKey, timeline, measures: StepMeasures, trace=None,
                 source: str | None = None, counts: CallCounts | None = None,
                 tracker: HeapTracker | None = None, names: dict | None = None) -> None:
        self.key = key
        #: {trace id: the user's name} of a trace written by hand (the sandbox), or None
        self.names = names
        self.tracker = tracker if tracker is not None else HeapTracker()
        self.trace, self.source = trace, source
        self.counts = counts or CallCounts()
        self.timeline = timeline
        self.measures = measures
        self.position = timeline.position
        self.strategy = timeline.strategy
        self.strategy_name = timeline.strategy_name
        #: the strategy's record of the shown step (None at step 0)
        self.record = timeline.last_record if self.position else None

    @cached_property
    def heap(self) -> TrackedHeap:
        """The heap's blocks and the policy's pointers (what the heap map
        draws), from the timeline's tracker: edited in from the step's events,
        or walked after a jump."""
        return self.tracker.heap_at(self.strategy, self.position, lambda: self.structure["pointers"])

    @property
    def blocks(self) -> heap_cells.BlockArrays:
        """The heap walk as columns."""
        return self.heap.blocks

    @cached_property
    def heap_before(self) -> TrackedHeap | None:
        """The heap before the shown step (None at step 0): undone from the
        tracker's last edit when it made this step, else rebuilt by
        ``Timeline.before()``."""
        if not self.position:
            return None
        if self.tracker.position == self.position:
            before = self.tracker.before()
            if before is not None:
                return before
        state = self.timeline.before()
        return TrackedHeap.of(state.blocks, None, state.structure["pointers"])

    @cached_property
    def ids(self) -> dict:
        """{payload address: trace id} of the live blocks."""
        return self.timeline.program.id_of_payload()

    def ids_source(self) -> dict:
        return self.ids

    @cached_property
    def explained(self) -> list:
        """The step's events in the policy's words, in order."""
        self.counts.explain += 1
        return explain_step(self.strategy, self.record)

    @cached_property
    def fault_line(self):
        """The mistake that stopped a strategy of your own at the next step,
        as an explain line (``explain_fault``), when this is the last step
        its build reached; else None."""
        fault = getattr(self.timeline, "fault", None)
        if fault is None or self.position != self.timeline.n:
            return None
        return explain_fault(fault, len(self.explained), self.block_start)

    @cached_property
    def structure(self) -> dict:
        """The strategy's free structure (docs/structure.md)."""
        self.counts.structure += 1
        return self.strategy.structure()

    @property
    def event_count(self) -> int:
        """How many events the shown step has (0 at step 0)."""
        events = self.record.events if self.record is not None else None
        return len(events) if events else 0

    @cached_property
    def states(self) -> StepStates:
        """The structure after each event of the step (micro-steps and
        animations draw them).  The structure before the step is rebuilt from
        a checkpoint (``Timeline.before()``) the first time this is asked at
        a position, never while merely stepping."""
        if not self.position or not self.event_count:
            return StepStates(None, self.structure, ())
        before = self.timeline.before().structure
        return StepStates(before, self.structure, self.record.events)

    def structure_at(self, index: int | None) -> dict:
        """The structure after event ``index`` (None: after the whole step)."""
        if index is None:
            return self.structure
        return self.states.at(index)

    @cached_property
    def places(self) -> dict[int, str]:
        """{free block address: where the structure keeps it, in words}."""
        s = self.structure
        apart = {o["addr"] for o in s.get("outside", ())}
        return {addr: (f"outside the structure: {where}" if addr in apart else f"in {where}")
                for addr, where in structure_protocol.where(s).items()}

    @cached_property
    def measures_row(self) -> dict | None:
        """What the gauges show (None at step 0)."""
        return self.measures.at(self.position)

    def describe(self) -> str:
        """The step in one line, with the trace file's line number when known."""
        text = self.timeline.describe()     # the trace's names in it (Trace.names)
        lines = getattr(self.trace, "line_numbers", None)
        if self.position and lines is not None and self.source:
            text += f"   [{os.path.basename(self.source)} line {int(lines[self.position - 1])}]"
        return text

    def describe_address(self, address: int) -> str:
        """The hover facts of the block holding ``address``."""
        return describe_address(self.blocks, address, self.ids, lambda: self.places, self.names)

    def block_start(self, address: int) -> int | None:
        return block_start(self.blocks, address)


class ShowModel(QObject):
    """The trace, its timelines, what is shown, the position, the event within
    the step, the selection and the hover; a signal for each change.

    Order on a new timeline: :attr:`shown_changed` then :attr:`step_changed`;
    views reset what depends on the whole replay on the first and redraw the
    step on the second.  Setting a value to what it already is emits nothing."""

    #: a new trace (views drop what they knew of the old one)
    trace_changed = Signal()
    #: the shown timelines changed (another strategy, a new trace, or nothing)
    shown_changed = Signal()
    #: the position changed (argument: the new position), or the shown timelines did
    step_changed = Signal(int)
    #: the event within the step: an index, or None for the whole step
    event_changed = Signal(object)
    #: the selected block address, or None
    selection_changed = Signal(object)
    #: the block address under the mouse in any view, or None
    hover_changed = Signal(object)
    #: a strategy of your own failed while a seek replayed it here (its name,
    #: the message): not deterministic, or a mistake only this replay makes
    user_fault = Signal(str, str)
    #: a shown timeline built in the background has more steps built, or is
    #: done (:attr:`ready` says how far a seek goes now)
    built_changed = Signal()
    #: a seek past the built part waits for it (argument: its position), or
    #: no longer waits (None)
    waiting_changed = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.trace = None
        #: the file the trace was read from, or None
        self.source: str | None = None
        self.label = ""
        self._timelines: dict[TimelineKey, object] = {}
        self._measures: dict[TimelineKey, StepMeasures] = {}
        self._shown: list[TimelineKey] = []
        self._steps: dict[TimelineKey, ShownStep] = {}
        self._trackers: dict[TimelineKey, HeapTracker] = {}
        self.position = 0
        self.event_index: int | None = None
        #: how long the views take to move to the next event shown, in ms (0:
        #: jump).  Set by the step animator (gui/step_animator.py) while it
        #: plays a step event by event; a view reads it when event_changed
        #: arrives, and animates from what it shows to the new event over that
        #: time (never longer: the next event may follow right after).
        self.transition_ms = 0
        self.selection: int | None = None
        self.hover: int | None = None
        #: the player is running: views may skip costly redraws between frames
        self.playing = False
        #: how often the shown steps' explain_step() and structure() ran
        self.counts = CallCounts()
        #: the timelines being built in the background (gui/background_build.py)
        self._building: set[TimelineKey] = set()
        #: the position a seek past the built part waits for, or None
        self.waiting: int | None = None
        #: a jump made a row at a time: (position, event, {key: (heap, tracker)})
        self._staged: tuple | None = None

    @property
    def names(self) -> dict | None:
        """{trace id: the name a person gave it} of the shown trace (a
        readable file's, the sandbox's), or None (a .rep)."""
        return getattr(self.trace, "names", None)

    # ------------------------------------------------------------------ trace
    def set_trace(self, trace, source: str | None = None, label: str = "", names: dict | None = None) -> None:
        """A new trace: forget every timeline of the old one and show nothing;
        ``names``: {trace id: name} (a lesson's trace, by the names it gives)."""
        if names and getattr(trace, "names", None) is None:
            trace.names = dict(names)       # the names travel on the trace (Trace.names)
        self.trace, self.source = trace, source
        self.label = label or (os.path.basename(source) if source else getattr(trace, "name", "") or "trace")
        self.cancel_staged()
        self._timelines.clear()
        self._measures.clear()
        self._trackers.clear()
        self._building.clear()
        self._set_waiting(None)
        self._shown = []
        self._steps = {}
        self.position = 0
        self.event_index = None
        self._set_selection(None)
        self._set_hover(None)
        self.trace_changed.emit()
        self.shown_changed.emit()
        self.step_changed.emit(0)

    def replace_trace(self, trace, timelines, position: int, names: dict | None = None) -> None:
        """An edited trace (the sandbox, gui/sandbox_edits.py): its
        ``timelines``, built already, take the place of every timeline of
        the old trace and show in its rows at ``position``; the file and the
        label stay; ``names``: {trace id: the user's name}, for a trace that
        does not carry its own (:attr:`~heapscope.traces.trace.Trace.names`).
        Views redraw as for a new trace."""
        if names and getattr(trace, "names", None) is None:
            trace.names = dict(names)
        self.trace = trace
        self.cancel_staged()
        self._timelines.clear()
        self._measures.clear()
        self._trackers.clear()
        self._building.clear()
        self._steps = {}
        keys = [self.add_timeline(tl) for tl in timelines]
        self.trace_changed.emit()
        self.show(keys, position)

    def set_source(self, source: str | None, label: str = "") -> None:
        """The shown trace now comes from ``source`` (it was saved there)."""
        self.source = source
        self.label = label or (os.path.basename(source) if source else self.label)

    # -------------------------------------------------------------- timelines
    def add_timeline(self, timeline, building: bool = False) -> TimelineKey:
        """Keep a built timeline of the current trace; its key.  ``building``:
        it is being built in the background, ``timeline.built`` steps so far
        (:meth:`grown` as more are, :meth:`built_all` at the end)."""
        if timeline.trace is not self.trace:
            raise ValueError("the timeline replays another trace than the model's")
        key = timeline_key(timeline.strategy_name, timeline.params)
        self._timelines[key] = timeline
        self._measures[key] = StepMeasures(timeline.series, timeline.built if building else None)
        self._trackers[key] = HeapTracker()
        if building:
            self._building.add(key)
        else:
            self._building.discard(key)
        return key

    # ------------------------------------------------ built in the background
    def building(self, key: TimelineKey | None = None) -> bool:
        """``key``'s timeline (default: any shown one) is still being built."""
        if key is None:
            return any(k in self._building for k in self._shown)
        return key in self._building

    def built_steps(self, key: TimelineKey) -> int:
        """How many of ``key``'s steps can be shown: all of them once built;
        while it builds, the steps its measures have taken in
        (:meth:`grown`).  A chunk's rows reach ``timeline.built`` first, up
        to :data:`~heapscope.gui.background_build.GROW_EVERY` before the
        measures take them: a step shown in between had no gauges."""
        if key in self._building:
            return min(self._timelines[key].built, self._measures[key].n)
        return self._timelines[key].n

    @property
    def ready(self) -> int:
        """The last position a seek reaches now: every shown timeline is
        built that far (:attr:`n` when none is being built)."""
        return min((self.built_steps(k) for k in self._shown), default=0)

    def grown(self, key: TimelineKey, done: bool = False) -> None:
        """``key``'s timeline has more steps built (``done``: all of them,
        or the build stopped and the timeline ends where it did): its
        measures grow, and a seek waiting for those steps is made."""
        timeline = self._timelines.get(key)
        if timeline is None:
            return
        if done:
            self._building.discard(key)
            if self._measures[key].n > timeline.n:      # stopped: fewer steps than it had
                self._measures[key] = StepMeasures(timeline.series)
        self._measures[key].grow(timeline.built if key in self._building else timeline.n)
        if key not in self._shown:
            return
        if done:
            self.position = self._clamp(self.position)
        self.built_changed.emit()
        waiting = self.waiting
        if waiting is not None and (waiting <= self.ready or not self.building()):
            self._set_waiting(None)
            self.seek(waiting)

    def cancel_wait(self) -> None:
        """The seek waiting for the build is not made."""
        self._set_waiting(None)

    def _set_waiting(self, position) -> None:
        if position != self.waiting:
            self.waiting = position
            self.waiting_changed.emit(position)

    def forget_timeline(self, key: TimelineKey) -> None:
        """Drop a kept timeline that is not shown (one whose heap a stopped
        seek left half-done: gui/user_code_watch.py)."""
        if key in self._shown:
            raise ValueError(f"{key!r} is shown")
        self._building.discard(key)
        self._timelines.pop(key, None)
        self._measures.pop(key, None)
        self._trackers.pop(key, None)
        self._steps.pop(key, None)

    def timeline_for(self, strategy: str, params: dict | None = None):
        """The timeline already built for ``strategy`` with ``params``, or None."""
        return self._timelines.get(timeline_key(strategy, params))

    def timelines(self) -> dict:
        """Every timeline kept for the current trace, by key."""
        return dict(self._timelines)

    @property
    def shown(self) -> list[TimelineKey]:
        """The keys of the shown timelines, one per row."""
        return list(self._shown)

    def show(self, keys, position: int | None = None) -> None:
        """Show the timelines of ``keys`` (kept ones) at ``position`` (default:
        the current one, clamped to the shortest)."""
        keys = list(keys)
        for k in keys:
            if k not in self._timelines:
                raise KeyError(f"no timeline kept for {k!r}")
        self.cancel_staged()
        self._shown = keys
        self._set_waiting(None)
        self._share_back_caches()
        self.event_index = None
        self._set_hover(None)
        self._set_selection(None)
        wanted = self._clamp(self.position if position is None else position)
        self.position = self.position_for(keys, wanted)
        self._seek_shown()
        if wanted > self.position:
            self._set_waiting(wanted)       # shown once built that far
        self.shown_changed.emit()
        self.step_changed.emit(self.position)

    def _share_back_caches(self) -> None:
        """The step-back caches' memory bound (``BACK_CACHE_BYTES``) is the
        model's, not each timeline's: the shown rows share it (compare mode
        may show seven), and a timeline no longer shown drops its copies."""
        shown = set(self._shown)
        share = BACK_CACHE_BYTES // max(1, len(shown))
        for key, tl in self._timelines.items():
            cache = getattr(tl, "back_cache", None)
            if cache is None:
                continue
            cache.max_bytes = share
            if key not in shown or cache.bytes > share:
                cache.clear()

    def timeline(self, row: int = 0):
        """The timeline shown in ``row`` (None when nothing is shown there)."""
        return self._timelines[self._shown[row]] if row < len(self._shown) else None

    def measures(self, row: int = 0) -> StepMeasures | None:
        return self._measures[self._shown[row]] if row < len(self._shown) else None

    @property
    def n(self) -> int:
        """The last position every shown timeline reaches (0 when nothing is shown)."""
        return min((self._timelines[k].n for k in self._shown), default=0)

    def step(self, row: int = 0) -> ShownStep | None:
        """The shown step of ``row`` (None when nothing is shown there)."""
        if row >= len(self._shown):
            return None
        key = self._shown[row]
        s = self._steps.get(key)
        if s is None:
            s = self._steps[key] = ShownStep(key, self._timelines[key], self._measures[key],
                                             self.trace, self.source, self.counts,
                                             self._trackers.get(key), self.names)
        return s

    @property
    def explain_calls(self) -> int:
        return self.counts.explain

    @property
    def structure_calls(self) -> int:
        return self.counts.structure

    # --------------------------------------------------------------- position
    def _clamp(self, position: int) -> int:
        return min(max(int(position), 0), self.n)

    def seek(self, position: int, event: int | None = None, at_once: bool = False) -> None:
        """Show the heap after ``position`` operations (clamped to 0..n), up to
        its event ``event`` (None: the whole step; -1 its last event; clamped
        to the step's events, None when it has none).

        A new position emits :attr:`step_changed` with :attr:`event_index`
        already set, so a view draws the right event at once; when that is not
        None, :attr:`event_changed` follows with it, for the views that only
        follow events (drawing the same event twice must cost nothing).

        In compare mode on a big trace a jump is made a row at a time
        (:meth:`_stage`); ``at_once``: in one go, as on a small trace (an
        export reads the step it asked for at once)."""
        if not self._shown:
            return
        position = self._clamp(position)
        if self._staged is not None:
            if self._staged[0] == position and not at_once:
                self._staged = (position, event, self._staged[2])
                return
            self.cancel_staged()
        if position > self.ready:
            # not built that far yet: made when it is (grown), the view stays
            self._set_waiting(position)
            return
        self._set_waiting(None)
        if position == self.position:
            self.set_event(event)
            return
        if not at_once and self._stage(position, event):
            return
        self._move(position, event)

    def _move(self, position: int, event, staged: dict | None = None) -> None:
        self.position = position
        self._seek_shown(staged or {})
        self.event_index = self._event_in_step(event)
        self.step_changed.emit(position)
        if self.event_index is not None:
            self.event_changed.emit(self.event_index)

    # ------------------------------------------------- a jump, row by row
    @property
    def staging(self) -> int | None:
        """The position a jump made a row at a time is going to, or None."""
        return self._staged[0] if self._staged is not None else None

    def _stage(self, position: int, event) -> bool:
        """Compare mode on a big trace: a jump restores each row's heap (a
        checkpoint unpickled, the steps from it replayed, the heap walked)
        in an event-loop turn of its own, apart from the heap the row shows,
        and moves every row at once when all are ready.  Made in one go, the
        seven rows' seeks held the event loop 1-2 s (issue 25's stall probe)."""
        if (len(self._shown) < 2 or self.playing or self.trace is None
                or len(self.trace) < STAGED_FROM_OPS or abs(position - self.position) <= STEPWISE_MAX
                or position == 0):
            return False
        self._staged = (position, event, {})
        turns().call_soon(self._stage_next, self)
        return True

    def cancel_staged(self) -> None:
        """The jump under way is not made (another was asked, or other rows shown)."""
        self._staged = None

    def _stage_next(self) -> None:
        """One row's heap at the jump's position, made apart; the jump once all are."""
        if self._staged is None:
            return
        position, event, ready = self._staged
        key = next((k for k in self._shown if k not in ready), None)
        if key is None:
            self._staged = None
            self._move(position, event, ready)
            return
        timeline = self._timelines[key]
        try:
            before = timeline.heap_at(position - 1)
            twin, program, _ = copy_state(*before)      # the one the row replays on
            # the heap after the step, walked on the original
            apply_op(before[0], before[1], *timeline.op(position))
            tracker = HeapTracker()
            tracker.rebuild(before[0], position, before[0].structure()["pointers"])
            ready[key] = ((twin, program), tracker)
        except Exception:           # noqa: BLE001 -- a strategy of your own: the move says it
            ready[key] = None
        turns().call_soon(self._stage_next, self)

    def _seek_shown(self, staged: dict | None = None) -> None:
        """Every shown row to :attr:`position`; ``staged``: {key: (heap,
        tracker)} made apart for it (the heap before the step, the tracker at it)."""
        self._steps = {}
        for key in self._shown:
            try:
                self._seek_row(key, self.position, (staged or {}).get(key))
            except UserStrategyError as exc:
                # the window drops that heap (a queued slot); this seek and
                # whatever drew it end here, quietly (the user-code watch)
                self.user_fault.emit(key[0], str(exc))
                raise StopUserCode(str(exc)) from None

    def _seek_row(self, key: TimelineKey, position: int, made=None) -> None:
        """``key``'s timeline and tracker to ``position``; ``made``: (heap,
        tracker) made apart for it (:meth:`_stage_next`)."""
        tl = self._timelines[key]
        if made is not None:
            tl.adopt(position - 1, *made[0])
            self._trackers[key] = made[1]
            tl.seek(position)          # the shown step, with its events
        else:
            seek_tracked(tl, self._trackers.setdefault(key, HeapTracker()), position)
        rec = tl.last_record
        if position and (rec is None or rec.events is None):
            # Left at the end by its build, which records no events: replay
            # the shown step once more with its events on.
            tl.seek(position - 1)
            tl.seek(position)

    def position_for(self, keys, position: int | None = None) -> int:
        """The step :meth:`show` of ``keys`` at ``position`` shows now (the
        current one, clamped to the trace and to the steps built of each)."""
        wanted = self._clamp(self.position if position is None else position)
        return min([wanted] + [self.built_steps(k) for k in keys])

    def prepare(self, key: TimelineKey, position: int) -> bool:
        """Make ``key``'s heap at ``position`` (a kept timeline, shown or
        not) and walk it, apart from what the rows show, so that a
        :meth:`show` that follows finds it there: restoring a checkpoint,
        replaying the steps from it and walking the heap took 30-40 ms a
        row on gcc-cc1, seven rows at once held the event loop (issue 25's
        stall probe).  False when nothing was left to make.  A strategy of
        your own that fails here fails again in the show, which says so.
        A shown row's heap is left alone: it moves with the others."""
        if key in self._shown or self.prepared(key, position):
            return False
        tl = self._timelines[key]
        tracker = self._trackers.setdefault(key, HeapTracker())
        try:
            self._seek_row(key, position)
            tracker.heap_at(tl.strategy, position, lambda: tl.strategy.structure()["pointers"])
        except Exception:           # noqa: BLE001 -- user code: the show says what went wrong
            tracker.invalidate()
        return True

    def prepared(self, key: TimelineKey, position: int) -> bool:
        """``key``'s timeline stands at ``position`` with its heap walked there."""
        tl, tracker = self._timelines[key], self._trackers.get(key)
        return (tl.position == position and tracker is not None and tracker.position == position
                and tracker.heap is not None)

    @property
    def event_count(self) -> int:
        """How many events the shown step has: in compare mode, the most any
        row's step has (the rows move through their events in lockstep, and
        a row whose step has fewer shows its whole step once past them)."""
        return max((self.step(r).event_count for r in range(len(self._shown))), default=0)

    def script_events(self) -> list:
        """The events an animated step plays: those of the row whose step has
        the most (one strategy: its step's)."""
        best = None
        for r in range(len(self._shown)):
            step = self.step(r)
            if step.event_count and (best is None or step.event_count > best.event_count):
                best = step
        return list(best.record.events) if best is not None else []

    def event_in_row(self, row: int) -> int | None:
        """The event ``row`` shows: the model's event, clamped to that row's
        step (None: the whole step, or a step without events)."""
        index = self.event_index
        step = self.step(row) if index is not None else None
        n = step.event_count if step is not None else 0
        if not n:
            return None
        return min(index, n - 1)

    def _event_in_step(self, index: int | None) -> int | None:
        if index is None:
            return None
        n = self.event_count
        if n == 0:
            return None
        index = int(index)
        return min(max(n + index if index < 0 else index, 0), n - 1)

    def set_event(self, index: int | None) -> None:
        """Show the step up to its event ``index`` (None: the whole step; -1
        its last event)."""
        index = self._event_in_step(index)
        if index != self.event_index:
            self.event_index = index
            self.event_changed.emit(index)

    # -------------------------------------------------------- selection, hover
    def select(self, addr) -> None:
        """Select the block at ``addr`` (None or a negative value clears)."""
        self._set_selection(None if addr is None or addr < 0 else int(addr))

    def set_hover(self, addr) -> None:
        """The block under the mouse in some view (None or -1: none)."""
        self._set_hover(None if addr is None or addr < 0 else int(addr))

    def _set_selection(self, addr) -> None:
        if addr != self.selection:
            self.selection = addr
            self.selection_changed.emit(addr)

    def _set_hover(self, addr) -> None:
        if addr != self.hover:
            self.hover = addr
            self.hover_changed.emit(addr)
