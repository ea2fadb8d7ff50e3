"""Claims: the facts a lesson's narration states, checked against the replay.

An ``expect:`` line states one fact about the stop's step (docs/lessons.md,
"Claims"), optionally for one strategy; a claim that names none is claimed of
each of the lesson's strategies::

    expect: next-fit places c at the address a had
    expect: first-fit places c at 0x3f90
    expect: buddy splits 3 times          (also: once, twice, never)
    expect: buddy merges twice
    expect: next-fit grows never          (the heap grew during the step: Grow events)
    expect: frag > 0.5                    (measures: see MEASURES)
    expect: buddy heap == 4096

Counts are counted from the step's events (K&R's and Vo's ``Split`` and
Knuth's ``BuddySplit`` are splits; ``Coalesce`` and ``BuddyMerge`` merges;
``Grow`` a growth of the heap), measures read from the Timeline's series
(:class:`heapscope.allocators.metrics.MetricSeries`, row t-1 is the heap
after step t), addresses from the payloads the replay handed out.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Callable

from heapscope.allocators.events import BuddyMerge, BuddySplit, Coalesce, Grow, Split

__all__ = ["Claim", "ClaimError", "parse_claim", "StepFacts", "MEASURES", "COUNTED"]

#: the measures a claim may compare, by the name a lesson uses -> the key of
#: ``MetricSeries.at`` (``frag`` is external fragmentation, 1 - Fmax/F)
MEASURES = {
    "heap": "heap", "live": "live", "in_use": "in_use", "headers": "headers",
    "padding": "padding", "free": "free", "largest_free": "largest_free",
    "top_free": "top_free", "frag": "external", "frag_no_top": "external_no_top",
    "search": "search", "work": "work",
}
#: the verbs a count claim may use, and the event types each counts
COUNTED = {
    "splits": (Split, BuddySplit),
    "merges": (Coalesce, BuddyMerge),
    "grows": (Grow,),
}
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<=": operator.le, ">=": operator.ge,
    "<": operator.lt, ">": operator.gt,
}
_NAME = r"[A-Za-z_0-9]+"
_PLACES = re.compile(rf"places\s+({_NAME})\s+(?:at\s+the\s+address\s+({_NAME})\s+had|where\s+({_NAME})\s+was"
                     rf"|at\s+(0[xX][0-9A-Fa-f]+|[0-9]+))\Z")
_COUNT = re.compile(rf"({'|'.join(COUNTED)})\s+(never|once|twice|([0-9]+)\s+times?)\Z")
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
    types = COUNTED[verb]

    def check(f: StepFacts, id_of) -> str | None:
        got = sum(isinstance(e, types) for e in f.events)
        return None if got == want else f"{f.strategy} {verb} {got} times in step {f.step}, not {want}"
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
    m = _MEASURE.match(rest)
    if m:
        value = float(int(m.group(3), 0)) if "x" in m.group(3).lower() else float(m.group(3))
        return Claim(text, strategy, _measure(m.group(1), m.group(2), value))
    hint = ""
    if first not in strategies and " " in rest and (after.split() or [""])[0] in ("places", *COUNTED):
        hint = f" ({first!r} is not one of this lesson's strategies: {', '.join(strategies)})"
    raise ClaimError(f"cannot read the claim {text!r}{hint}; a claim is [STRATEGY] places NAME at the "
                     f"address NAME had | places NAME at ADDRESS | {'|'.join(COUNTED)} N times | "
                     f"MEASURE OP NUMBER (measures: {', '.join(MEASURES)})")
