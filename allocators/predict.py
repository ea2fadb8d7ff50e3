"""Predict-the-block: which free block will a malloc take, and why.

Studies of algorithm animation in teaching (Hundhausen, Douglas & Stasko,
"A Meta-Study of Algorithm Visualization Effectiveness", JVLC 2002; Naps et
al., "Exploring the Role of Visualization and Engagement in Computer Science
Education", ITiCSE 2002) find that students learn from an animation when
they must *respond* to it -- predict the next step, then see it -- far more
than when they only watch.  In predict mode the window stops before each
malloc and asks the student to click the block the policy will choose, or to
say that the heap will grow; :func:`judge` then marks the answer and says why,
in the policy's own terms.

The answer and the reasons are read from the step itself, never from a table
of canned lines: the heap and the free structure just before the step
(:class:`~heapscope.allocators.replay.HeapState`, ``Timeline.before()`` or ``after()``
one position earlier), and the step's events (:mod:`heapscope.allocators.events`):
which blocks the search examined and in which order, where it started (the
rover, the list head), TLSF's ``mapping_search`` class and bitmap probes, the
buddy system's AVAIL probes, the bucket the request went to, a growth of the
heap.  Each kind of free structure (docs/structure.md) has its own way of
saying it, a :class:`Generic` subclass named by the kind's module
(``speaker`` in allocators/structure_kinds/); a kind without one, and any
strategy of your own, gets the generic account of its search.

The block chosen is the free block of the heap before the step that holds
the block malloc placed.  When the heap grew by ``sbrk`` before the block was
placed (a :class:`~heapscope.allocators.events.Grow`, or a failed growth), the right
answer is "the heap grows" (:data:`GROW`).  In a fixed pool, carving fresh
memory from the part of the pool not touched yet also grows the heap as the
gauges measure it (its high-water mark): there both answers count.

No Qt here: the window (``gui/predict_mode.py``) and the tests use the same
judge.
"""

from __future__ import annotations

import bisect
import operator
from dataclasses import dataclass, field

from . import events as ev

#: the answer "the heap will grow": no free block is taken
GROW = "grow"


class InvalidGuess(ValueError):
    """A click that is no answer (a used block, the allocator's own bytes,
    past the break): the question stays open."""


@dataclass(frozen=True)
class Verdict:
    """One answered question."""
    step: int                      # the malloc's step (1-based)
    request: int                   # bytes asked for
    guess: int | str               # the block clicked (its address) or GROW
    answers: tuple                 # what counts as right: block addresses and/or GROW
    correct: bool
    reason: str                    # why, in the policy's words
    skipped: bool = False          # revealed without an answer (not scored)

    @property
    def answer(self):
        """The policy's choice: the block taken (before the step), or GROW."""
        blocks = [a for a in self.answers if a != GROW]
        return blocks[0] if blocks else GROW

    @property
    def headline(self) -> str:
        if self.skipped:
            return f"step {self.step}: malloc({self.request}) took {_what(self.answer)}"
        mark = "✓ Right" if self.correct else "✗ Wrong"
        return f"{mark}: malloc({self.request}) took {_what(self.answer)}"


#: bits of an event class's kind, as Facts reads a step's events (_event_kind)
_KNOWN, _GROW, _FAILED, _VISIT, _PLACED, _SPLIT = 1, 2, 4, 8, 16, 32
_GROWS = _GROW | _FAILED
#: event class -> its bits; a class is looked up with isinstance's rules once
_EVENT_KINDS: dict[type, int] = {}


def _event_kind(cls: type) -> int:
    """The bits of event class ``cls``: what ``isinstance`` says of its events
    (a subclass of Visit is a Visit), worked out once per class rather than
    five times per event -- a walk of a heap of 150 blocks, such as v7 malloc's,
    is 150 events a malloc."""
    k = _KNOWN
    for base, bit in ((ev.Grow, _GROW), (ev.GrowFailed, _FAILED), (ev.Visit, _VISIT),
                      (ev.Placed, _PLACED), (ev.Split, _SPLIT)):
        if issubclass(cls, base):
            k |= bit
    _EVENT_KINDS[cls] = k
    return k


@dataclass
class Facts:
    """What one malloc step shows of its policy: the heap before it and the
    events of its search, up to the heap's growth."""
    step: int
    request: int
    kind: str
    name: str
    blocks: list                      # the heap before: (addr, size, state, ...) in address order
    structure: dict                   # the free structure before
    events: list
    search: list = field(default_factory=list)     # events before the first Grow
    visits: list = field(default_factory=list)     # Visit (not a free's walk), before growth
    placed: ev.Placed | None = None
    split: ev.Split | None = None
    grow: ev.Grow | None = None
    failed: bool = False
    chosen: int | None = None         # the free block (before) holding the placed one
    carved: bool = False              # the heap (high-water mark) grew without sbrk: a pool carve

    def __post_init__(self) -> None:
        self._addrs = list(map(_address, self.blocks))
        grew = False
        kinds = _EVENT_KINDS
        search, visits = self.search, self.visits
        for e in self.events:
            # the isinstance tests of each event's class, made once per class
            k = kinds.get(type(e)) or _event_kind(type(e))
            if k & _GROWS:
                grew = True
                if k & _GROW and self.grow is None:
                    self.grow = e
                if k & _FAILED:
                    self.failed = True
            if not grew:
                search.append(e)
                if k & _VISIT and not e.place:
                    visits.append(e)
            if k & _PLACED:
                self.placed = e
            elif k & _SPLIT and self.split is None and self.placed is None:
                self.split = e
        if self.placed is not None and self.grow is None:
            self.chosen = self.free_block_under(self.placed.addr, self.placed.size)

    # ------------------------------------------------------------ the heap
    def block_index(self, address: int) -> int:
        i = bisect.bisect_right(self._addrs, address) - 1
        if i < 0:
            return -1
        addr, size = self.blocks[i][0], self.blocks[i][1]
        return i if addr <= address < addr + size else -1

    def free_block_under(self, addr: int, size: int) -> int | None:
        """The first free block (before the step) that the range ``addr ..
        addr + size`` lies on: the block a placement was cut from.  Usually
        it holds ``addr``; a block carved from a fixed pool's untouched tail
        may start on the heap's end marker, just before the tail."""
        i = max(self.block_index(addr), 0)
        while i < len(self.blocks) and self.blocks[i][0] < addr + size:
            b = self.blocks[i]
            if b[2] == "free" and b[0] + b[1] > addr:
                return int(b[0])
            i += 1
        return None

    def size_of(self, addr: int) -> int:
        i = self.block_index(addr)
        return int(self.blocks[i][1]) if i >= 0 else 0

    def free_blocks(self) -> list[tuple[int, int]]:
        return [(b[0], b[1]) for b in self.blocks if b[2] == "free"]

    @property
    def need(self) -> int:
        """The block size the request takes (header and rounding included)."""
        if self.split is not None:
            return self.split.taken_size
        if self.placed is not None:
            return self.placed.size
        return self.request

    def visit_index(self, addr: int) -> int:
        for i, v in enumerate(self.visits):
            if v.addr == addr:
                return i
        return -1

    def pointer(self, role: str = "search", name: str | None = None):
        for p in self.structure.get("pointers", ()):
            if (name is None and p.get("role") == role) or p.get("name") == name:
                return p
        return None

    def outside_why(self, addr: int) -> str | None:
        for o in self.structure.get("outside", ()):
            if o["addr"] == addr:
                return o["why"]
        return None


def answers_of(facts: Facts) -> tuple:
    """What counts as right: GROW when the heap grew by sbrk (or could not);
    the block chosen otherwise, and both when a fixed pool's fresh memory was
    carved (the heap's high-water mark grew)."""
    if facts.grow is not None or facts.failed or facts.placed is None:
        return (GROW,)
    if facts.chosen is None:
        return (GROW,)
    if facts.carved:
        return (facts.chosen, GROW)
    return (facts.chosen,)


def judge(step: int, request: int, before, record, guess, strategy_name: str = "",
          heap_before: int | None = None, heap_after: int | None = None) -> Verdict:
    """Mark ``guess`` (a heap address before the step, or :data:`GROW`) for the
    malloc of ``step``: ``before`` is the heap before it (a HeapState, or
    anything with ``blocks`` and ``structure``), ``record`` the step's
    OpRecord with its events.  ``heap_before``/``heap_after`` are the heap
    size H around the step (a fixed pool's carve grows H without sbrk).
    Raises :class:`InvalidGuess` for a click that is no free block."""
    facts = make_facts(step, request, before, record, strategy_name, heap_before, heap_after)
    if guess != GROW:
        guess = normalise_guess(facts, guess)
    answers = answers_of(facts)
    correct = guess in answers
    speaker = speaker_for(facts)
    why = speaker.why_answer()
    if correct:
        reason = why
    elif guess == GROW:
        reason = speaker.why_not_grow() + " " + _sentence(why)
    else:
        reason = speaker.why_not(guess) + " " + _sentence(why)
    return Verdict(step, request, guess, answers, correct, _sentence(reason))


def reveal(step: int, request: int, before, record, strategy_name: str = "",
           heap_before: int | None = None, heap_after: int | None = None) -> Verdict:
    """The answer and its reason without a guess (the student skipped)."""
    facts = make_facts(step, request, before, record, strategy_name, heap_before, heap_after)
    answers = answers_of(facts)
    speaker = speaker_for(facts)
    return Verdict(step, request, None, answers, False, _sentence(speaker.why_answer()), skipped=True)


#: a block's address (its first field), as the sorts and ``Facts._addrs`` read it
_address = operator.itemgetter(0)


def by_address(blocks) -> list:
    """``blocks`` in address order (the sort is stable: blocks at one address
    keep their order).  The key is ``operator.itemgetter`` rather than a
    lambda: a quarter of the time, for every question predict mode asks
    (docs/benchmarks.md)."""
    return sorted(blocks, key=_address)


def make_facts(step, request, before, record, strategy_name="", heap_before=None, heap_after=None) -> Facts:
    blocks = by_address(before.blocks)
    structure = before.structure
    events = list(record.events or ()) if record is not None else []
    facts = Facts(step, int(request), structure.get("kind", "lists"), strategy_name, blocks,
                  structure, events, failed=bool(getattr(record, "failed", False)))
    if heap_before is not None and heap_after is not None and heap_after > heap_before \
            and facts.grow is None:
        facts.carved = True
    return facts


def check_guess(before, address: int) -> int:
    """The free block of the heap ``before`` a step that holds ``address``
    (what a click there answers); :class:`InvalidGuess` for any other click.
    Needs no events: the window checks a click before it plays the step."""
    blocks = by_address(before.blocks)
    return normalise_guess(Facts(0, 0, "", "", blocks, before.structure, []), address)


def normalise_guess(facts: Facts, address: int) -> int:
    """The free block holding ``address`` in the heap before the step."""
    i = facts.block_index(int(address))
    if i < 0:
        raise InvalidGuess(f"0x{int(address):x} is past the break: click a free block, "
                           f"or answer that the heap will grow")
    addr, size, state = facts.blocks[i][:3]
    if state == "used":
        raise InvalidGuess(f"block 0x{addr:x} ({size:,} B) is in use: malloc only hands out free "
                           f"blocks (yellow, or the green top block)")
    if state != "free":
        raise InvalidGuess(f"block 0x{addr:x} is the allocator's own bytes: click a free block")
    return int(addr)


# ====================================================================== words
def _what(answer) -> str:
    return "new memory: the heap grew" if answer == GROW else f"block 0x{answer:x}"


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text[0].upper() + text[1:] if text else text


def hx(a: int | None) -> str:
    return "base" if a is None else f"0x{a:x}"


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


class Generic:
    """How a policy's choice is said from its events alone: the blocks its
    search examined, in order, and the one it took.  Each kind of structure
    refines it in its module (allocators/structure_kinds/, the kind's
    ``speaker``)."""

    policy = ""

    def __init__(self, facts: Facts) -> None:
        self.f = facts
        if not self.policy:
            self.policy = facts.name or "the policy"

    # the answer
    def why_answer(self) -> str:
        f = self.f
        if f.failed:
            return self.why_grow() + " Here it cannot: the heap limit (or the pool) is reached, " \
                                     "so malloc returns NULL."
        if f.grow is not None or f.chosen is None:
            return self.why_grow()
        text = self.why_chosen()
        if f.carved:
            text += (" The block reaches into the part of the fixed pool not touched yet, so the heap "
                     "(the part of the pool touched so far) grows too: both answers count.")
        return text

    def why_chosen(self) -> str:
        f = self.f
        n = len(f.visits)
        if n:
            return (f"{self.policy} examined {plural(n, 'block')} "
                    f"({self._visit_list()}) and took {hx(f.chosen)} ({f.size_of(f.chosen):,} B), "
                    f"the first that fits {f.need:,} B.")
        return f"{self.policy} took {hx(f.chosen)} ({f.size_of(f.chosen):,} B) for {f.need:,} B."

    def why_grow(self) -> str:
        f = self.f
        n = len(f.visits)
        largest = max((s for _, s in f.free_blocks()), default=0)
        text = (f"no free block was taken for {f.request:,} B: "
                + (f"{self.policy} examined {plural(n, 'block')}, none big enough" if n else
                   "nothing in the free structure could serve it"))
        text += f" (the largest free block was {largest:,} B)" if largest else " (nothing was free)"
        return text + self._grow_tail()

    def _grow_tail(self) -> str:
        g = self.f.grow
        return (f", so the heap grows by {g.increment:,} B (sbrk)." if g is not None
                else ", so the heap must grow.")

    # a wrong answer
    def why_not_grow(self) -> str:
        f = self.f
        return (f"the heap does not grow: {hx(f.chosen)} ({f.size_of(f.chosen):,} B) is free and "
                f"big enough for {f.need:,} B.")

    #: how the search went on past a block too small (the end of why_not's
    #: sentence for a block it examined): a ring's search goes on round it
    went_on = "went on"

    def why_not(self, guess: int) -> str:
        """Why the search did not take ``guess``: examined and too small (the
        same words for every first-fit search), or, when nothing was taken,
        :meth:`why_not_none_taken`, else :meth:`why_not_passed`, the two a
        kind's speaker words in its own terms."""
        f = self.f
        i = f.visit_index(guess)
        size = f.size_of(guess)
        if i >= 0 and not f.visits[i].fits:
            return (f"{hx(guess)} ({size:,} B) is too small for {f.need:,} B: the search examined it "
                    f"{ordinal(i + 1)} and {self.went_on}.")
        if f.chosen is None:
            return self.why_not_none_taken(guess, size)
        return self.why_not_passed(guess, size)

    def why_not_none_taken(self, guess: int, size: int) -> str:
        """``guess`` (of ``size`` bytes) not taken, and no block was."""
        f = self.f
        return (f"{hx(guess)} ({size:,} B) is too small for {f.need:,} B." if size < f.need
                else f"{hx(guess)} ({size:,} B) was not taken.")

    def why_not_passed(self, guess: int, size: int) -> str:
        """``guess`` not examined: the search took another block first."""
        return f"{hx(guess)} ({size:,} B) was not examined: the search stopped at {hx(self.f.chosen)}."

    def _not_big_enough_either(self, guess: int, size: int) -> str:
        """A search that went all the way round a ring and took nothing
        examined ``guess`` too: the words of both rings' speakers."""
        return f"{hx(guess)} ({size:,} B) was not big enough either."

    # helpers
    def _visit_list(self, limit: int = 6) -> str:
        vs = self.f.visits
        parts = [f"{hx(v.addr)} {v.size:,} B" for v in vs[:limit]]
        if len(vs) > limit:
            parts.append(f"… {len(vs) - limit:,} more")
        return ", ".join(parts)

    def _too_small_anyway(self, guess: int) -> str:
        size = self.f.size_of(guess)
        return f"; and at {size:,} B it is too small for {self.f.need:,} B anyway" \
            if size < self.f.need else ""


def speaker_for(facts: Facts) -> Generic:
    """The words of the step's policy: by the kind of its structure, for the
    built-in policies; a strategy of your own gets the generic account of its
    search (its tree or lists need not be best fit or segregated)."""
    from . import plugins, structure_kinds
    kind = structure_kinds.get(facts.kind)
    speaker = kind.speaker if kind is not None else None
    cls = Generic if facts.name and plugins.is_user(facts.name) else (speaker or Generic)
    return cls(facts)
