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
(:class:`~allocators.replay.HeapState`, ``Timeline.before()`` or ``after()``
one position earlier), and the step's events (:mod:`allocators.events`):
which blocks the search examined and in which order, where it started (the
rover, the list head), TLSF's ``mapping_search`` class and bitmap probes, the
buddy system's AVAIL probes, the bucket the request went to, a growth of the
heap.  Each kind of free structure (docs/structure.md) has its own way of
saying it; a structure of another kind (a strategy of your own) gets the
generic account of its search.

The block chosen is the free block of the heap before the step that holds
the block malloc placed.  When the heap grew by ``sbrk`` before the block was
placed (a :class:`~allocators.events.Grow`, or a failed growth), the right
answer is "the heap grows" (:data:`GROW`).  In a fixed pool, carving fresh
memory from the part of the pool not touched yet also grows the heap as the
gauges measure it (its high-water mark): there both answers count.

No Qt here: the window (``gui/predict_mode.py``) and the tests use the same
judge.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from . import events as ev
from .structure import parse_tlsf_key

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
        self._addrs = [b[0] for b in self.blocks]
        grew = False
        for e in self.events:
            if isinstance(e, (ev.Grow, ev.GrowFailed)):
                grew = True
                if isinstance(e, ev.Grow) and self.grow is None:
                    self.grow = e
                if isinstance(e, ev.GrowFailed):
                    self.failed = True
            if not grew:
                self.search.append(e)
                if isinstance(e, ev.Visit) and not e.place:
                    self.visits.append(e)
            if isinstance(e, ev.Placed):
                self.placed = e
            elif isinstance(e, ev.Split) and self.split is None and self.placed is None:
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


def make_facts(step, request, before, record, strategy_name="", heap_before=None, heap_after=None) -> Facts:
    blocks = sorted(before.blocks, key=lambda b: b[0])
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
    blocks = sorted(before.blocks, key=lambda b: b[0])
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


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


class Generic:
    """How a policy's choice is said from its events alone: the blocks its
    search examined, in order, and the one it took.  Each kind of structure
    refines it below."""

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

    def why_not(self, guess: int) -> str:
        f = self.f
        i = f.visit_index(guess)
        size = f.size_of(guess)
        if i >= 0 and not f.visits[i].fits:
            return (f"{hx(guess)} ({size:,} B) is too small for {f.need:,} B: the search examined it "
                    f"{ordinal(i + 1)} and went on.")
        if f.chosen is None:
            return (f"{hx(guess)} ({size:,} B) is too small for {f.need:,} B." if size < f.need
                    else f"{hx(guess)} ({size:,} B) was not taken.")
        return f"{hx(guess)} ({size:,} B) was not examined: the search stopped at {hx(f.chosen)}."

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


class AddressRing(Generic):
    """K&R 8.7 next fit (the rover) and first fit (from K&R's base)."""

    def __init__(self, facts: Facts) -> None:
        super().__init__(facts)
        p = facts.pointer("search")
        self.rover = p["addr"] if p is not None else None
        self.next_fit = p is not None and p.get("name") == "rover"
        self.policy = "next fit" if self.next_fit else "first fit"

    def _start(self) -> str:
        if self.next_fit:
            return (f"next fit starts its search just after the rover (freep = {hx(self.rover)})"
                    if self.rover is not None else
                    "next fit's rover is at base, so this search starts from the lowest block")
        return "first fit searches from the start of the list (the lowest address) every time"

    def why_chosen(self) -> str:
        f = self.f
        n = len(f.visits)
        head = self._start()
        size = f.size_of(f.chosen)
        if n <= 1:
            return f"{head}, and the first block it meets, {hx(f.chosen)} ({size:,} B), fits {f.need:,} B."
        return (f"{head} and takes the first block that fits: it examined {plural(n, 'block')} "
                f"({self._visit_list()}); the first big enough for {f.need:,} B was "
                f"{hx(f.chosen)} ({size:,} B).")

    def why_grow(self) -> str:
        f = self.f
        n = len(f.visits)
        largest = max((s for _, s in f.free_blocks()), default=0)
        text = (f"{self._start()}, and went all the way round the ring: {plural(n, 'block')} examined, "
                f"none big enough for {f.need:,} B" + (f" (the largest was {largest:,} B)" if largest else ""))
        g = f.grow
        return text + (f", so morecore asks sbrk for {g.increment:,} B." if g is not None else ".")

    def why_not(self, guess: int) -> str:
        f = self.f
        i = f.visit_index(guess)
        size = f.size_of(guess)
        if i >= 0 and not f.visits[i].fits:
            return (f"{hx(guess)} ({size:,} B) is too small for {f.need:,} B: "
                    f"the search examined it {ordinal(i + 1)} and went on.")
        if f.chosen is None:
            return f"{hx(guess)} ({size:,} B) was not big enough either."
        if not self.next_fit:
            return (f"{hx(guess)} lies above {hx(f.chosen)}: first fit takes the first block that fits "
                    f"from the start of the list" + self._too_small_anyway(guess) + ".")
        rover = self.rover if self.rover is not None else -1
        if guess <= rover < f.chosen:
            return (f"next fit starts at the rover ({hx(self.rover)}), not at the start of the list: "
                    f"{hx(guess)} lies below the rover, so this search reaches it only after wrapping "
                    f"round, and it stopped at {hx(f.chosen)} first" + self._too_small_anyway(guess) + ".")
        return (f"{hx(guess)} comes after {hx(f.chosen)} on the ring from the rover: the search stops at "
                f"the first block that fits" + self._too_small_anyway(guess) + ".")


class RotatingRing(Generic):
    """Kruse's rotating first fit: the ring from its head, LIFO order."""

    policy = "Kruse's rotating list"

    def __init__(self, facts: Facts) -> None:
        super().__init__(facts)
        p = facts.pointer("search")
        self.head = p["addr"] if p is not None else None

    def _start(self) -> str:
        return (f"Kruse's list searches first fit from its head ({hx(self.head)}), which rotated past "
                f"the block used last time; the ring is in LIFO order, not address order")

    def why_chosen(self) -> str:
        f = self.f
        n = len(f.visits)
        size = f.size_of(f.chosen)
        if n <= 1:
            return f"{self._start()}, and the head itself, {hx(f.chosen)} ({size:,} B), fits {f.need:,} B."
        return (f"{self._start()}: it examined {plural(n, 'block')} ({self._visit_list()}) and took "
                f"{hx(f.chosen)} ({size:,} B), the first big enough for {f.need:,} B.")

    def why_grow(self) -> str:
        f = self.f
        g = f.grow
        return (f"{self._start()}: a whole round ({plural(len(f.visits), 'block')}) found none big enough "
                f"for {f.need:,} B" + (f", so sbrk gives {g.increment:,} B of new memory." if g else "."))

    def why_not(self, guess: int) -> str:
        f = self.f
        i = f.visit_index(guess)
        size = f.size_of(guess)
        if i >= 0 and not f.visits[i].fits:
            return (f"{hx(guess)} ({size:,} B) is too small for {f.need:,} B: the search examined it "
                    f"{ordinal(i + 1)} and went on round the ring.")
        if f.chosen is None:
            return f"{hx(guess)} ({size:,} B) was not big enough either."
        return (f"{hx(guess)} comes after {hx(f.chosen)} round the ring from the head ({hx(self.head)}): "
                f"the search stops at the first block that fits" + self._too_small_anyway(guess) + ".")


class SplayTree(Generic):
    """Vo's best fit on a splay tree of sizes, the wilderness kept apart."""

    policy = "best fit"

    def __init__(self, facts: Facts) -> None:
        super().__init__(facts)
        self.wild = facts.structure.get("wilderness")
        self.tree_visits = [v for v in facts.visits if v.addr != self.wild]

    def _path(self) -> str:
        sizes = [f"{v.size:,}" for v in self.tree_visits[:8]]
        if len(self.tree_visits) > 8:
            sizes.append("…")
        return ", ".join(sizes)

    def _largest_in_tree(self) -> int:
        nodes = self.f.structure.get("nodes", ())
        return max((n["key"] for n in nodes), default=0)

    def why_chosen(self) -> str:
        f = self.f
        size = f.size_of(f.chosen)
        if f.chosen == self.wild:
            largest = self._largest_in_tree()
            return (f"best fit looks in the tree first: no block there fits {f.need:,} B"
                    + (f" (the largest size in it is {largest:,} B)" if largest else " (it is empty)")
                    + f", so it cuts the request from the front of the wilderness {hx(self.wild)} "
                      f"({size:,} B).")
        path = self._path()
        return (f"best fit takes the smallest block that fits {f.need:,} B: the search went down the "
                f"tree from the root" + (f" (sizes {path})" if path else "")
                + f" and the smallest size at least {f.need:,} B was {size:,} B, the node "
                  f"{hx(f.chosen)}.")

    def why_grow(self) -> str:
        f = self.f
        largest = self._largest_in_tree()
        wild_size = f.size_of(self.wild) if self.wild is not None else 0
        g = f.grow
        return (f"no block in the tree fits {f.need:,} B"
                + (f" (the largest size in it is {largest:,} B)" if largest else "")
                + (f" and the wilderness is too small ({wild_size:,} B)" if self.wild is not None
                   else " and there is no wilderness")
                + (f", so sbrk extends the wilderness by {g.increment:,} B." if g else "."))

    def why_not(self, guess: int) -> str:
        f = self.f
        size = f.size_of(guess)
        if f.chosen is None:
            return f"{hx(guess)} ({size:,} B) is too small for {f.need:,} B."
        chosen_size = f.size_of(f.chosen)
        if guess == self.wild:
            return (f"the wilderness {hx(guess)} is kept out of the tree and used only when no block in "
                    f"the tree fits; here {hx(f.chosen)} ({chosen_size:,} B) does.")
        if size < f.need:
            return f"{hx(guess)} ({size:,} B) is too small for {f.need:,} B."
        if f.chosen == self.wild:
            return f"{hx(guess)} ({size:,} B) is too small for {f.need:,} B."
        if size > chosen_size:
            return (f"{hx(guess)} ({size:,} B) fits but is bigger than {hx(f.chosen)} ({chosen_size:,} B): "
                    f"best fit compares sizes and takes the smallest block that fits, not the first one "
                    f"nor the lowest.")
        return (f"{hx(guess)} has the same size ({size:,} B) but hangs in the size list of node "
                f"{hx(f.chosen)}: the search ends at the node, and the node is taken first.")


class Tlsf(Generic):
    """TLSF: mapping_search's class, the bitmaps' find-first-set, the list's head."""

    policy = "TLSF"

    def __init__(self, facts: Facts) -> None:
        super().__init__(facts)
        self.mapping = next((e for e in facts.search if isinstance(e, ev.MappingSearch)), None)
        probes = [e for e in facts.search if isinstance(e, ev.BitmapProbe)]
        self.found = probes[-1].found if probes else None
        self.class_of: dict[int, tuple[int, int]] = {}
        self.heads: dict[tuple[int, int], int] = {}
        for key, addrs in facts.structure.get("lists", {}).items():
            cls = parse_tlsf_key(key)
            for a in addrs:
                self.class_of[a] = cls
            if addrs:
                self.heads[cls] = addrs[0]

    def _searched(self) -> tuple[int, int] | None:
        m = self.mapping
        return (m.fl, m.sl) if m is not None else None

    def _mapping_words(self) -> str:
        m = self.mapping
        if m is None:
            return "TLSF"
        return (f"TLSF's mapping_search rounds {m.request if m.request is not None else m.size:,} B up "
                f"to {m.rounded:,} B, class ({m.fl}, {m.sl}), so that every block of that class and "
                f"above fits")

    def why_chosen(self) -> str:
        f = self.f
        searched, found = self._searched(), self.found
        size = f.size_of(f.chosen)
        if found is None or searched is None:
            return f"TLSF took {hx(f.chosen)} ({size:,} B), the head of its list."
        if found == searched:
            where = f"list ({found[0]}, {found[1]}) is not empty"
        elif found[0] == searched[0]:
            where = (f"list ({searched[0]}, {searched[1]}) is empty, and sl_bitmap[{searched[0]}] gives "
                     f"the next non-empty list of that first level, list ({found[0]}, {found[1]})")
        else:
            where = (f"sl_bitmap[{searched[0]}] has no list at or above ({searched[0]}, {searched[1]}), "
                     f"so fl_bitmap gives the next first level with a block: list ({found[0]}, {found[1]})")
        return (f"{self._mapping_words()}; {where}, and TLSF takes its head, {hx(f.chosen)} "
                f"({size:,} B).")

    def why_grow(self) -> str:
        f = self.f
        searched = self._searched()
        g = f.grow
        text = self._mapping_words()
        if searched is not None:
            text += f"; the bitmaps have no list at or above ({searched[0]}, {searched[1]})"
        lower = [(a, s) for a, s in f.free_blocks() if s >= f.need and a in self.class_of]
        if lower:
            a, s = max(lower, key=lambda x: x[1])
            cls = self.class_of[a]
            text += (f" ({hx(a)}, {s:,} B, would fit, but it is filed in ({cls[0]}, {cls[1]}), below the "
                     f"class searched)")
        return text + (f", so the pool grows by {g.increment:,} B." if g else ".")

    def why_not(self, guess: int) -> str:
        f = self.f
        size = f.size_of(guess)
        cls = self.class_of.get(guess)
        searched, found = self._searched(), self.found
        if cls is None or searched is None:
            return super().why_not(guess)
        if cls < searched:
            would = " (this one would have fit: that is the price of a search in constant time)" \
                if size >= f.need else ""
            return (f"{hx(guess)} ({size:,} B) is in list ({cls[0]}, {cls[1]}), below the class searched, "
                    f"({searched[0]}, {searched[1]}): TLSF never looks below the rounded class{would}.")
        if found is not None and cls > found:
            return (f"{hx(guess)} ({size:,} B) is in list ({cls[0]}, {cls[1]}), above ({found[0]}, "
                    f"{found[1]}): TLSF takes the first non-empty list at or above ({searched[0]}, "
                    f"{searched[1]}) -- a find-first-set on the bitmaps -- not the closest fit.")
        if found is not None and cls == found:
            return (f"{hx(guess)} is in the right list, ({cls[0]}, {cls[1]}), but not at its head: TLSF "
                    f"takes the head (each list is LIFO: the block freed last).")
        return super().why_not(guess)


class Buddy(Generic):
    """Knuth's binary buddy system, algorithm R."""

    policy = "the buddy system"

    def __init__(self, facts: Facts) -> None:
        super().__init__(facts)
        self.probes = [e for e in facts.search if isinstance(e, ev.AvailProbe)]
        self.k = self.probes[0].order if self.probes else None
        hit = next((p for p in self.probes if p.first is not None), None)
        self.j = hit.order if hit is not None else None
        self.order_of: dict[int, int] = {}
        self.front: dict[int, int] = {}
        for k, addrs in facts.structure.get("avail", {}).items():
            for a in addrs:
                self.order_of[a] = int(k)
            if addrs:
                self.front[int(k)] = addrs[0]

    def _needs(self) -> str:
        k = self.k
        return (f"the request needs a block of order {k}, 2^{k} = {1 << k:,} B with its header"
                if k is not None else "the request needs a block")

    def why_chosen(self) -> str:
        f, k, j = self.f, self.k, self.j
        if k is None or j is None:
            return super().why_chosen()
        if j == k:
            return f"{self._needs()}; AVAIL[{k}] is not empty, so R2 takes its first block, {hx(f.chosen)}."
        empty = f"AVAIL[{k}]" if j == k + 1 else f"AVAIL[{k}] to AVAIL[{j - 1}]"
        return (f"{self._needs()}; {empty} {'is' if j == k + 1 else 'are'} empty, so R1 goes up to "
                f"AVAIL[{j}] and takes its first block, {hx(f.chosen)} (2^{j} B), which R3 halves "
                f"{_times(j - k)} down to 2^{k}.")

    def why_grow(self) -> str:
        f, k = self.f, self.k
        top = self.probes[-1].order if self.probes else None
        g = f.grow
        lists = (f"AVAIL[{k}] to AVAIL[{top}] are all empty" if k is not None and top is not None and top > k
                 else f"AVAIL[{k}] is empty" if k is not None else "no AVAIL list can serve it")
        return (f"{self._needs()}; {lists}" +
                (f", so a new chunk of {g.increment:,} B comes from sbrk." if g else "."))

    def why_not(self, guess: int) -> str:
        f, k, j = self.f, self.k, self.j
        o = self.order_of.get(guess)
        if o is None or k is None:
            return super().why_not(guess)
        if o < k:
            return f"{hx(guess)} is in AVAIL[{o}]: a block of 2^{o} = {1 << o:,} B is too small."
        if j is not None and o > j:
            return (f"{hx(guess)} is in AVAIL[{o}]: R1 takes the smallest non-empty AVAIL[j] with j ≥ {k}, "
                    f"here AVAIL[{j}], and splits it rather than a bigger block.")
        if j is not None and o == j:
            return f"{hx(guess)} is in AVAIL[{j}] but not at its front: R2 takes the first block of the list."
        return super().why_not(guess)


class Buckets(Generic):
    """Kingsley's power-of-two buckets (4.2/4.3BSD malloc)."""

    policy = "4.3BSD malloc"

    def __init__(self, facts: Facts) -> None:
        super().__init__(facts)
        self.bucket_of: dict[int, int] = {}
        for k, addrs in facts.structure.get("buckets", {}).items():
            for a in addrs:
                self.bucket_of[a] = int(k)
        self.sizes = {int(k): v for k, v in facts.structure.get("block_sizes", {}).items()}
        self.k = None
        for e in facts.events:
            if isinstance(e, (ev.ListRemove, ev.BucketRefill)):
                self.k = e.where[0] if isinstance(e, ev.ListRemove) else e.bucket
                break

    def _bucket(self) -> str:
        k = self.k
        if k is None:
            return "its bucket"
        return f"nextf[{k}] (blocks of {self.sizes.get(k, 0):,} B)"

    def why_chosen(self) -> str:
        f = self.f
        return (f"4.3BSD malloc rounds {f.request:,} B plus its header up to a power of two: "
                f"{self._bucket()}; it takes the head of that list, {hx(f.chosen)}, and never looks at "
                f"another bucket.")

    def why_grow(self) -> str:
        f = self.f
        refill = next((e for e in f.events if isinstance(e, ev.BucketRefill)), None)
        g = f.grow
        text = (f"4.3BSD malloc rounds {f.request:,} B plus its header up to {self._bucket()}, and that "
                f"list is empty")
        if g is not None:
            text += f", so morecore gets {g.increment:,} B from sbrk"
            if refill is not None:
                text += f" and carves it into {plural(refill.count, 'block')} of {refill.block_size:,} B"
        return text + "."

    def why_not(self, guess: int) -> str:
        o = self.bucket_of.get(guess)
        if o is None or self.k is None:
            return super().why_not(guess)
        if o != self.k:
            return (f"{hx(guess)} is in nextf[{o}] (blocks of {self.sizes.get(o, 0):,} B): malloc takes "
                    f"only from {self._bucket()}; buckets are never split nor joined.")
        return (f"{hx(guess)} is in the right bucket but not at its head: nextf[{o}] is LIFO, the head "
                f"goes first.")


def speaker_for(facts: Facts) -> Generic:
    """The words of the step's policy: by the kind of its structure, for the
    built-in policies; a strategy of your own gets the generic account of its
    search (its tree or lists need not be best fit or segregated)."""
    from . import plugins
    cls = Generic if facts.name and plugins.is_user(facts.name) else _SPEAKERS.get(facts.kind, Generic)
    return cls(facts)


_SPEAKERS = {"address-ring": AddressRing, "ring": RotatingRing, "tree": SplayTree, "tlsf": Tlsf,
             "buddy": Buddy, "buckets": Buckets}
