"""The calls of ``heapscope grade``'s check pass: a user strategy's
malloc/free/realloc with every result check of its guard, one closure each.

:class:`~heapscope.allocators.user.UserStrategy`'s public methods check every
result (aligned, inside the heap, overlapping no live payload, booked as
returned, realloc keeping the program's bytes, the heap grown only through
``_take_core``) through a few layers of calls, each reading the strategy's
attributes again, plus a fresh :class:`OpRecord` per call.  On a fast
allocator (the tutorial's segregated fit, ``examples/segfit.py``) that cost
more than the allocator itself (docs/benchmarks.md, ``bench_grade.py``).

:func:`checked_calls` gives the same calls as closures with everything they
read bound once: the user's ``_malloc``/``_free``/``_realloc`` called
directly with the bulk record in place (as the bare replay calls them), and
the guard's tests of the common case written inline, in the guard's order,
on its own books (``_handed``, ``_spans``, ``_freed_at``, ``_contents``).
Whatever the inline test does not pass (a wrong result, a None, anything
unusual) goes to the guard's own ``_malloc_result``/``_free_result``/
``_realloc_result`` on the same state, which raise the guard's exact message
or, when all is well after all, do the booking themselves.  So both paths
accept the same results, book them the same way and say the same things
(tests/test_checked_calls.py replays misbehaving strategies through both).

A strategy that replaces what these closures stand in for (its own public
``malloc``/``free``/``realloc`` or ``largest_request``), or records events
(the window's build), gets its public methods instead (:func:`fused`).
"""

from __future__ import annotations

from time import perf_counter
from typing import Callable

from .op_dispatch import Calls
from .user import PASSED_THROUGH, UserStrategy, UserStrategyError

#: what passes through the user's methods as it is (their wrapper's rule, allocators/user.py)
PASSED = (UserStrategyError,) + PASSED_THROUGH

#: set in a worker process by allocators/isolation.py (``_watch_calls``), as
#: the public operations it wraps there would note: [the one-item list whose
#: item is the strategy the replay calls (its answering thread reads that
#: strategy's step), the RawValue each operation writes the step it starts
#: in (the parent reads it when the worker dies between two answers)];
#: Nones in-process
WATCH: list = [None, None]


def fused(strategy: UserStrategy) -> bool:
    """Whether :func:`checked_calls` may stand in for the strategy's public
    calls: events off, guarded, and nothing of what it inlines replaced."""
    cls = type(strategy)
    return (not strategy.record and strategy.guarded and strategy.own_seconds is not None
            and not strategy.check_steps           # check() after every operation: the public path
            and cls.malloc is UserStrategy.malloc and cls.free is UserStrategy.free
            and cls.realloc is UserStrategy.realloc
            and cls.largest_request is UserStrategy.largest_request)


def checked_calls(s: UserStrategy, results: list, refused: Callable[[int], None]) -> Calls:
    """The checked (malloc, free, realloc, realloc_null, free_null) of ``s``
    for :func:`~heapscope.allocators.op_dispatch.run_ops`, with ``s.rec`` the
    bulk record (:func:`~heapscope.allocators.replay.bulk_record`): each
    appends what it returned to ``results`` (a free, the payload it freed),
    calls ``refused(size)`` for a request that failed, and adds the time
    spent in the user's methods to ``s.own_seconds``.  Only where
    :func:`fused` says so."""
    live = s.live
    handed = s._handed
    spans = s._spans
    place, remove_span = spans.place, spans.remove
    freed_at = s._freed_at
    contents = s._contents
    held = s._held
    pool = s.arena.fixed                 # cannot change either (the door)
    align = s.align
    bound = s.largest_request()          # the arena's room: its limit cannot move (the door)
    user_malloc, user_free, user_realloc = _unwrapped(s, "_malloc"), _unwrapped(s, "_free"), \
        _unwrapped(s, "_realloc")
    fault = s._user_fault
    realloc_method = s._realloc_method()
    current, shared = WATCH
    if current is not None:
        current[0] = s
    clock = perf_counter
    append = results.append

    def malloc(size: int):
        step = s._step = s._step + 1
        if shared is not None:
            shared.value = step
        s._doing = ("malloc", size)
        if not 0 <= size <= bound:
            s._step -= 1
            return _public(UserStrategy.malloc, size)
        before = len(live)
        a = s.arena
        refusals = a.refusals
        t0 = clock()
        try:
            payload = user_malloc(size)
        except PASSED:
            raise
        except BaseException as exc:        # as the wrapper of the user's method says it
            raise fault("_malloc", exc) from exc
        s.own_seconds += clock() - t0
        a = s.arena
        if (a, a.base, a.limit, a.fixed, a.brk, a.refusals) != s._door:
            s._check_door("_malloc")
        # The guard's _accept, when every test passes (in its order); any
        # other result goes to the guard itself, which names what is wrong.
        lb = live.get(payload) if type(payload) is int else None
        if lb is not None and payload not in handed and not payload % align \
                and len(live) == before + 1:
            block, bsize, request, header = lb
            end = block + bsize
            if request == size and a.base <= block <= payload and payload + size <= end <= a.brk \
                    and 0 <= header <= bsize - size and bsize and place(block, end) is None:
                if pool:                # H of a fixed pool: the span handed out (heap_held)
                    if block < held[0]:
                        held[0] = block
                    if end > held[1]:
                        held[1] = end
                handed[payload] = (block, end, step, size)
                append(payload)
                return payload
        payload = s._malloc_result(payload, size, "_malloc", before, refusals)
        append(payload)
        if payload is None and size:
            refused(size)
        return payload

    def free(payload: int):
        step = s._step = s._step + 1
        if shared is not None:
            shared.value = step
        s._doing = ("free", payload)
        lb = live.get(payload)
        if lb is None:            # the program holds it, the books do not: the guard says why
            s._still_booked(payload, "_free")
            s._step -= 1
            return UserStrategy.free(s, payload)     # (raises too: not even handed out)
        before = len(live)
        t0 = clock()
        try:
            user_free(payload)
        except PASSED:
            raise
        except BaseException as exc:
            raise fault("_free", exc) from exc
        s.own_seconds += clock() - t0
        a = s.arena
        if (a, a.base, a.limit, a.fixed, a.brk, a.refusals) != s._door:
            s._check_door("_free")
        entry = handed.get(payload)
        if payload in live or len(live) != before - 1 or entry is None or entry[1] == entry[0]:
            s._free_result(payload, before, lb)
        else:
            del handed[payload]
            block = entry[0]
            remove_span(block)
            freed_at[block] = step
            if contents:
                contents.pop(payload, None)
        append(payload)

    def realloc(payload: int, size: int):
        step = s._step = s._step + 1
        if shared is not None:
            shared.value = step
        s._doing = ("realloc", payload, size)
        old = live.get(payload)
        if old is None or not 0 <= size <= bound:
            s._still_booked(payload, "_realloc")
            s._step -= 1
            return _public(UserStrategy.realloc, payload, size)
        tag = s._content(payload)[0]       # held: the program holds payload's block
        before = len(live)
        s._copies = {}
        a = s.arena
        refusals = a.refusals
        t0 = clock()
        try:
            new = user_realloc(payload, size)
        except PASSED:
            raise
        except BaseException as exc:
            raise fault("_realloc", exc) from exc
        s.own_seconds += clock() - t0
        a = s.arena
        if (a, a.base, a.limit, a.fixed, a.brk, a.refusals) != s._door:
            s._check_door(realloc_method)
        new = s._realloc_result(payload, new, size, realloc_method, old, tag, before, refusals)
        append(new)
        if new is None and size:
            refused(size)
        return new

    def realloc_null(size: int):
        step = s._step = s._step + 1
        if shared is not None:
            shared.value = step
        s._doing = ("realloc", None, size)
        if not 0 <= size <= bound:
            s._step -= 1
            return _public(UserStrategy.realloc, None, size)
        before = len(live)
        a = s.arena
        refusals = a.refusals
        t0 = clock()
        try:
            new = user_malloc(size)
        except PASSED:
            raise
        except BaseException as exc:
            raise fault("_malloc", exc) from exc
        s.own_seconds += clock() - t0
        a = s.arena
        if (a, a.base, a.limit, a.fixed, a.brk, a.refusals) != s._door:
            s._check_door(realloc_method)
        new = s._malloc_result(new, size, realloc_method, before, refusals)
        append(new)
        if new is None and size:
            refused(size)
        return new

    def free_null():
        step = s._step = s._step + 1
        if shared is not None:
            shared.value = step
        append(None)

    def _public(method, *args):
        """A malloc or realloc the inline path does not take (a size past
        the heap's room, or a block not booked: the guard names it): the
        public method, with its own record."""
        rec = s.rec
        try:
            result = method(s, *args)
        finally:
            s.rec = rec
        append(result)
        if result is None and args[-1]:
            refused(args[-1])
        return result

    return Calls(malloc, free, realloc, realloc_null, free_null)


def _unwrapped(s: UserStrategy, name: str):
    """The user's method ``name`` of ``s`` without the wrapper that tells its
    exceptions as the user's (allocators/user.py ``_wrap``): the closures
    above do that themselves, saving a call per operation.  The wrapped one
    where there is no plain function under it."""
    method = getattr(type(s), name)
    func = getattr(method, "__wrapped__", None)
    if name in vars(s) or func is None or not getattr(method, "_heapscope_wrapped", False):
        return getattr(s, name)
    return func.__get__(s, type(s))


__all__ = ["WATCH", "checked_calls", "fused"]
