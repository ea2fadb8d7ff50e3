"""Claims: the facts a lesson's narration states, checked against the replay.

An ``expect:`` line states one fact about the stop's step (docs/lessons.md,
"Claims"), optionally for one strategy; a claim that names none is claimed of
each of the lesson's strategies::

    expect: next-fit places c at the address a had
    expect: first-fit places c at 0x3f90
    expect: buddy splits 3 times          (also: once, twice, never)
    expect: buddy merges twice
    expect: next-fit grows never          (the heap grew during the step: Grow events)
    expect: splay-best-fit zig-zags once  (also zigs, zig-zigs: splay steps)
    expect: event 5 is a zig-zag          (the step's 5th event: a type or a splay step)
    expect: frag > 0.5                    (measures: see MEASURES)
    expect: buddy heap == 4096
    expect: waste > 1.5                   (over steps 1..t: peak_live, peak_heap, waste, peak_util, mean_search)

Counts are counted from the step's events (K&R's and Vo's ``Split`` and
Knuth's ``BuddySplit`` are splits; ``Coalesce`` and ``BuddyMerge`` merges;
``Grow`` a growth of the heap; a ``Rotation`` of its kind a zig, zig-zig or
zig-zag, Sleator & Tarjan's splay steps), measures read from the Timeline's
series (:class:`heapscope.allocators.metrics.MetricSeries`, row t-1 is the
heap after step t), addresses from the payloads the replay handed out.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Callable

from heapscope.allocators.conditions import ROTATION_KINDS, known_events
from heapscope.allocators.events import BuddyMerge, BuddySplit, Coalesce, Grow, Rotation, Split

__all__ = ["Claim", "ClaimError", "parse_claim", "StepFacts", "MEASURES", "COUNTED", "event_words"]

#: the measures a claim may compare, by the name a lesson uses -> the key of
#: ``MetricSeries.at`` (``frag`` is external fragmentation, 1 - Fmax/F)
MEASURES = {
    "heap": "heap", "live": "live", "in_use": "in_use", "headers": "headers",
    "padding": "padding", "free": "free", "largest_free": "largest_free",
    "top_free": "top_free", "frag": "external", "frag_no_top": "external_no_top",
    "search": "search", "work": "work", "rotations": "rotations",
    # over the steps 1..t, not only step t (checking.run_measures)
    "peak_live": "peak_live", "peak_heap": "peak_heap", "waste": "waste", "peak_util": "peak_util",
    "mean_search": "mean_search",
}


def _of_types(*types):
    return lambda e: isinstance(e, types)


def _rotation(kind: str):
    return lambda e: isinstance(e, Rotation) and e.kind == kind


#: the verbs a count claim may use, and the test of an event each counts
COUNTED: dict[str, Callable[[object], bool]] = {
    "splits": _of_types(Split, BuddySplit),
    "merges": _of_types(Coalesce, BuddyMerge),
    "grows": _of_types(Grow),
    # Sleator & Tarjan's splay steps, by kind: 'zig-zags once'
    **{f"{kind}s": _rotation(kind) for kind in ROTATION_KINDS},
}
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<=": operator.le, ">=": operator.ge,
    "<": operator.lt, ">": operator.gt,
}
_NAME = r"[A-Za-z_0-9]+"
_PLACES = re.compile(rf"places\s+({_NAME})\s+(?:at\s+the\s+address\s+({_NAME})\s+had|where\s+({_NAME})\s+was"
                     rf"|at\s+(0[xX][0-9A-Fa-f]+|[0-9]+))\Z")
# longest verb first: 'zig-zigs' before 'zigs'
_VERBS = "|".join(re.escape(v) for v in sorted(COUNTED, key=len, reverse=True))
_COUNT = re.compile(rf"({_VERBS})\s+(never|once|twice|([0-9]+)\s+times?)\Z")
_EVENT = re.compile(r"event\s+([0-9]+)\s+is\s+(?:an?\s+)?([A-Za-z][A-Za-z-]*)\Z")
_MEASURE = re.compile(rf"({'|'.join(MEASURES)})\s*(==|!=|<=|>=|<|>)\s*([-+]?(?:0[xX][0-9A-Fa-f]+|[0-9]*\.?[0-9]+))\Z")
_WORD_COUNTS = {"never": 0, "once": 1, "twice": 2}


class ClaimError(ValueError):
    """A claim heapscope cannot read, or one that is false (the message says which)."""


@dataclass
class StepFacts:
    """What one strategy's replay shows at a stop's step: the step's events,
    the measures after it, and each block's address up to it."""
    strategy: str
    step: int
    events: list
    measures: dict
    #: id -> the address (payload) it had last, at or before the step
    addresses: dict[int, int]
    #: id -> whether the block is live after the step
    live: dict[int, bool]


@dataclass(frozen=True)
class Claim:
    """One parsed ``expect:`` line: ``strategy`` None means every strategy."""
    text: str
    strategy: str | None
    check: Callable[[StepFacts, Callable[[str], int]], str | None]

    def false_because(self, facts: StepFacts, id_of: Callable[[str], int]) -> str | None:
        """None if the claim holds of ``facts``, else what the replay shows instead."""
        return self.check(facts, id_of)


def _places(name: str, other: str | None, address: int | None):
    def check(f: StepFacts, id_of) -> str | None:
        ident = id_of(name)
        if not f.live.get(ident):
            return f"{name} is not live after step {f.step}"
        got = f.addresses[ident]
        if other is not None:
            want_id = id_of(other)
            if want_id not in f.addresses:
                return f"{other} has no address by step {f.step}"
            want, said = f.addresses[want_id], f"the address {other} had, {f.addresses[want_id]:#x}"
        else:
            want, said = address, f"{address:#x}"
        return None if got == want else f"{f.strategy} places {name} at {got:#x}, not at {said}"
    return check


def _count(verb: str, want: int):
    counts = COUNTED[verb]

    def check(f: StepFacts, id_of) -> str | None:
        got = sum(1 for e in f.events if counts(e))
        return None if got == want else f"{f.strategy} {verb} {got} times in step {f.step}, not {want}"
    return check


def event_words(e) -> str:
    """An event as an ``event N is ...`` claim names it: a splay step by its
    kind, any other event by its type."""
    return e.kind if isinstance(e, Rotation) else type(e).__name__


def _event_is(index: int, what: str):
    def check(f: StepFacts, id_of) -> str | None:
        if not 1 <= index <= len(f.events):
            return f"{f.strategy}'s step {f.step} has {len(f.events)} events, no event {index}"
        e = f.events[index - 1]
        got = event_words(e)
        if got.casefold() == what.casefold():
            return None
        shown = f"a {type(e).__name__} ({got})" if isinstance(e, Rotation) else f"a {got}"
        return f"{f.strategy}'s event {index} of step {f.step} is {shown}, not {what}"
    return check


def _measure(name: str, op: str, value: float):
    key = MEASURES[name]

    def check(f: StepFacts, id_of) -> str | None:
        got = f.measures[key]
        if _COMPARE[op](got, value):
            return None
        shown = f"{got:.3f}" if isinstance(got, float) else str(got)
        return f"{f.strategy}'s {name} after step {f.step} is {shown}, so not {op} {value:g}"
    return check


def parse_claim(text: str, strategies: list[str]) -> Claim:
    """The claim ``text`` states; ClaimError naming what a claim may say."""
    rest, strategy = text.strip(), None
    first, _, after = rest.partition(" ")
    if first in strategies:
        strategy, rest = first, after.strip()
    m = _PLACES.match(rest)
    if m:
        address = None if m.group(4) is None else int(m.group(4), 0)
        return Claim(text, strategy, _places(m.group(1), m.group(2) or m.group(3), address))
    m = _COUNT.match(rest)
    if m:
        want = int(m.group(3)) if m.group(3) else _WORD_COUNTS[m.group(2)]
        return Claim(text, strategy, _count(m.group(1), want))
    m = _EVENT.match(rest)
    if m:
        what = m.group(2)
        # a typo ('Vist') is a mistake in the claim, not a false claim
        known = {k.casefold(): k for k in (*known_events(strategies), *ROTATION_KINDS)}
        if what.casefold() not in known:
            raise ClaimError(f"unknown event type {what!r} in {text!r}; an event is a splay step "
                             f"({', '.join(ROTATION_KINDS)}) or one of: {', '.join(known_events(strategies))}")
        return Claim(text, strategy, _event_is(int(m.group(1)), what))
    m = _MEASURE.match(rest)
    if m:
        value = float(int(m.group(3), 0)) if "x" in m.group(3).lower() else float(m.group(3))
        return Claim(text, strategy, _measure(m.group(1), m.group(2), value))
    hint = ""
    if first not in strategies and " " in rest and (after.split() or [""])[0] in ("places", "event", *COUNTED):
        hint = f" ({first!r} is not one of this lesson's strategies: {', '.join(strategies)})"
    raise ClaimError(f"cannot read the claim {text!r}{hint}; a claim is [STRATEGY] places NAME at the "
                     f"address NAME had | places NAME at ADDRESS | {'|'.join(COUNTED)} N times | "
                     f"event N is TYPE | MEASURE OP NUMBER (measures: {', '.join(MEASURES)})")
