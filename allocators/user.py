"""The base class for strategies written by users: :class:`UserStrategy`
(``from heapscope import UserStrategy``).

A strategy of your own is a subclass that implements three methods; the rest
is optional and lights up more of the window.  The tutorial
(``docs/tutorial.md``) writes one from nothing; ``docs/user-strategies.md`` is
the reference.  In short:

**What you must write**

``_malloc(self, size) -> int | None``
    Find or make a block for ``size`` bytes; return its payload address, or
    None when the heap cannot grow (``self._take_core`` returned None: a heap
    limit or a fixed pool reached).  A None for any other reason is an error,
    as in the CS:APP malloc lab.
    Book the block with ``self._note_alloc(payload, block_addr, block_size,
    size, header)`` before returning.
``_free(self, payload)``
    Take the block back.  Unbook it with ``self._note_free(payload)``.
``_blocks(self)``
    Yield every block of the heap in address order as ``(addr, size, state,
    payload)``: ``state`` is ``USED``, ``FREE`` or ``META`` (bytes you keep
    for yourself), ``payload`` is the payload address of a used block and
    None otherwise.  The blocks must cover the heap ``[arena.base, arena.brk)``
    with no gap and no overlap.

**Helpers you call**

``self._take_core(n)``
    Grow the heap: ``n`` fresh bytes at the top (``sbrk``, or carved from the
    fixed pool of ``--pool-size``); their address, or None when the heap
    cannot grow (then return None from ``_malloc``).  The only door: never
    call ``self.arena.sbrk`` nor change ``self.arena`` yourself (the guard
    checks the break, the limit and the pool after every operation).
``self._note_alloc(payload, block_addr, block_size, request, header)``
    Book a block you hand out: the measures (live bytes, headers, the heap
    map's colours) and the checks read the books.
``self._note_free(payload)``
    Unbook it in ``_free``; returns the booking (a ``LiveBlock``).
``self._visit(addr, size, fits)``
    Count one block your search examined (the search length gauge), and show
    it numbered on the map.
``self._event(event)``
    Record an event of :mod:`heapscope.allocators.events` for the explain panel and the
    animation (``Split``, ``Coalesce``, ``ListInsert``, ``PointerMove``...).
    ``Placed``, ``Released`` and ``Grow`` are recorded for you.  A step
    holding an event class of your own is drawn on the heap map from a full
    walk, unless the class says ``changes_blocks = False`` or has an
    ``edit(heap)`` method of its own (docs/user-strategies.md, "Events").
``self._copy_payload(src, dst, n)``
    In a ``_realloc`` of your own that moves a block: C's ``memcpy``.

**What you may write**

``_realloc(self, payload, size)``
    The default keeps the block when the payload still fits
    (:meth:`_payload_capacity`), else mallocs, copies and frees.
``_payload_capacity(self, payload)``
    Bytes the program may use at ``payload``: override when your blocks end
    with a footer, or realloc would let the program write over it.
``_check_structure(self, blocks)``
    Your own invariants (free lists sorted, no block on two lists...): raise
    an ``AssertionError`` (``assert``) or :class:`HeapInvariantError` with a
    message.  ``heapscope grade`` runs it.
``structure(self)``
    Your free structure for the window's structure view, in the generic
    ``lists`` shape (:meth:`lists_structure` builds it) or ``tree`` shape of
    ``docs/structure.md``.  The default is one list of every free block.
``free_blocks(self)``
    ``(addr, size)`` of each free block, from your free lists: the window's
    fragmentation gauges call it after every step, and the default walks the
    whole heap.
``params``
    Your own parameters (:class:`~heapscope.allocators.params.Param`), taken by
    ``__init__(self, *, mine=..., **common)``, which must pass ``**common``
    (word, align, heap_limit, pool_size) to ``super().__init__``.  The base
    sets ``self.word``, ``self.align`` and ``self.arena`` from them.

**What the base does for you**

A request past the heap's whole room (the heap limit, the pool, the 1 TiB
address space: :meth:`UserStrategy.largest_request`) fails before your
``_malloc`` sees it, counted as refused growth.

Every call of your methods is watched.  A result the C library's contract
forbids (a payload misaligned, outside the heap, overlapping a live block, the
same block handed out twice, a block not booked or not unbooked, a realloc
that loses the program's bytes, a None result when the heap was never
refused growth, a heap changed other than by ``_take_core``) and any
exception your code raises become a :class:`UserStrategyError` that names your method, the step, the operation and
the line of your file, never an error of heapscope's own.  In a fixed pool the
part you have not carved yet is added to your walk as one free block (and put
``outside`` your structure).  ``heapscope grade`` adds the full heap walk,
your ``_check_structure`` and your ``structure()`` after the operations.

Checkpoints: the window keeps the heap every K steps by pickling your
strategy, so keep only plain data in its attributes (ints, strings, lists,
dicts, sets, tuples, instances of classes defined at the top of a module): no
lambdas, generators, open files, locks or classes defined inside a function.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import re
import sys
import traceback
from time import perf_counter
from typing import Iterable

from . import structure as structure_protocol
from .events import Placed, Released
from .params import BOOL, Param
from .span_index import SpanIndex
from .strategy import (FREE_BLOCK, META, USED, Block, HeapInvariantError, LiveBlock, Strategy,
                       align_up)
from .strategy_state import _new_tuple

FREE = FREE_BLOCK

#: the methods a user may write; each is wrapped so that an exception in it
#: is reported as the user's (see UserStrategy.__init_subclass__)
USER_METHODS = ("__init__", "_malloc", "_free", "_realloc", "_blocks", "_check_structure",
                "structure", "_payload_capacity", "free_blocks", "fragmentation_probe",
                "explain_event", "_policy_signature")

#: a strategy name: what --strategy, -P NAME.param and the picker show
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_+-]*")

_OPS = {"_malloc": "malloc", "_free": "free", "_realloc": "realloc"}
#: the user's method behind each operation
_METHOD_OF_VERB = {verb: method for method, verb in _OPS.items()}


class StopUserCode(BaseException):
    """Raised into a user strategy's code by heapscope itself to stop it (the
    window's watchdog over a seek: allocators/isolation.py); never reported
    as the user's own exception."""


#: what passes through the wrappers of the user's methods untouched: Ctrl-C
#: and heapscope's own stop.  Any other BaseException (SystemExit,
#: GeneratorExit, one of the user's own) is the user's mistake.
PASSED_THROUGH = (KeyboardInterrupt, StopUserCode)


class UserStrategyError(Exception):
    """A mistake in a user strategy, told in terms of the user's code.

    ``method`` is the method of the user's class where it happened
    (``"_malloc"``, ``"_blocks"``...), ``step`` the 1-based operation of the
    replay, ``operation`` the call (``"malloc(24)"``), ``location`` the file
    and line of the user's code (``"segfit.py:42"``) or None, ``message`` what
    went wrong.  A replay (the window, ``compare``, ``grade``) stops there."""

    def __init__(self, message: str, *, method: str, cls_name: str = "", step: int | None = None,
                 operation: str | None = None, location: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.method = method
        self.cls_name = cls_name
        self.step = step
        self.operation = operation
        self.location = location

    def where(self) -> str:
        """``SegFit._malloc (segfit.py:42)``."""
        text = f"{self.cls_name}.{self.method}" if self.cls_name else self.method
        return text + (f" ({self.location})" if self.location else "")

    def __str__(self) -> str:
        head = []
        if self.step is not None:
            head.append(f"step {self.step}")
        if self.operation:
            head.append(self.operation)
        prefix = ", ".join(head)
        return (f"{prefix}: " if prefix else "") + f"{self.message}, in {self.where()}"

    def __reduce__(self):
        # Exception pickling calls cls(*args), which lacks the keyword-only
        # method: rebuild from the message and the attributes instead (a
        # worker process ships these back: allocators/isolation.py).
        return (_rebuilt_error, (type(self), self.message), dict(self.__dict__))


def _rebuilt_error(cls, message: str) -> "UserStrategyError":
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    return error


# --------------------------------------------------------------- where in your code
def _shown_path(path: str) -> str:
    """A path as the user would type it: relative to the current folder when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _user_files(cls) -> frozenset[str]:
    """The source files of ``cls`` and of its user-written bases."""
    files = set()
    for klass in cls.__mro__:
        if klass is UserStrategy:
            break
        module = sys.modules.get(klass.__module__)
        path = getattr(module, "__file__", None)
        if path:
            files.add(os.path.realpath(path))
    return frozenset(files)


def _traceback_location(cls, exc: BaseException) -> str | None:
    """File and line of the deepest frame of the user's code in ``exc``'s traceback."""
    files = _user_files(cls)
    found = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if os.path.realpath(frame.f_code.co_filename) in files:
            found = f"{_shown_path(frame.f_code.co_filename)}:{lineno}"
    return found


def _definition_location(cls, method: str) -> str | None:
    """File and line where the user's class defines ``method`` (its ``def``)."""
    func = getattr(cls, method, None)
    func = getattr(func, "__wrapped__", func)
    code = getattr(func, "__code__", None)
    if code is None or os.path.realpath(code.co_filename) not in _user_files(cls):
        return None
    return f"{_shown_path(code.co_filename)}:{code.co_firstlineno}"


def _caller_location(cls) -> str | None:
    """File and line of the innermost frame of the user's code on the stack."""
    files = _user_files(cls)
    frame = sys._getframe(1)
    while frame is not None:
        if os.path.realpath(frame.f_code.co_filename) in files:
            return f"{_shown_path(frame.f_code.co_filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def _wrap(name: str, func):
    """``func`` (a method the user wrote) with its exceptions told as the user's."""
    if getattr(func, "_heapscope_wrapped", False):
        return func
    if name == "_blocks":
        @functools.wraps(func)
        def wrapper(self):
            walked = self._walked
            if walked:                    # asked again inside walked_once: the same walk
                return walked[0]
            try:
                blocks = list(func(self))
            except UserStrategyError:
                raise
            except PASSED_THROUGH:
                raise
            except BaseException as exc:       # SystemExit, GeneratorExit... are the user's mistakes too
                raise self._user_fault("_blocks", exc) from exc
            # every block a 4-tuple, tested in C first (a walk check of grade
            # walks the heap: a Python test per block cost a fifth of it)
            if blocks and not (set(map(type, blocks)) == {tuple} and set(map(len, blocks)) == {4}):
                for b in blocks:
                    if type(b) is not tuple or len(b) != 4:
                        if isinstance(b, (tuple, list)) and len(b) == 4:
                            continue
                        raise self._walk_mistake(f"your _blocks yielded {_short(b)}; each block is "
                                                 "(addr, size, state, payload), payload None for a "
                                                 "block not in use")
            self._tail = None
            arena = self.arena
            if arena.fixed and self.core_top < arena.brk:
                try:
                    end = blocks[-1][0] + blocks[-1][1] if blocks else arena.base
                except Exception:      # a malformed block: the walk check names it
                    return blocks
                if end == self.core_top:
                    self._tail = (end, arena.brk - end)
                    blocks.append((end, arena.brk - end, FREE_BLOCK, None))
            if walked is not None:
                walked.append(blocks)
            return blocks
    elif name == "free_blocks":
        @functools.wraps(func)
        def wrapper(self):
            try:
                out = list(func(self))
            except UserStrategyError:
                raise
            except PASSED_THROUGH:
                raise
            except BaseException as exc:       # SystemExit, GeneratorExit... are the user's mistakes too
                raise self._user_fault("free_blocks", exc) from exc
            # the pool not carved yet is free memory too (the walk adds it the same way)
            arena, top = self.arena, self.core_top
            if arena.fixed and arena.base < top < arena.brk and not any(a == top for a, _ in out):
                out.append((top, arena.brk - top))
            return out
    elif name == "__init__":
        @functools.wraps(func)
        def wrapper(self, *args, **kwargs):
            try:
                func(self, *args, **kwargs)
            except UserStrategyError:
                raise
            except TypeError as exc:
                if "unexpected keyword argument" in str(exc) and exc.__traceback__.tb_next is None:
                    raise UserStrategyError(
                        f"your __init__ does not take {str(exc).rsplit(' ', 1)[-1]}: write "
                        "def __init__(self, *, your_params=..., **common) and pass **common "
                        "to super().__init__(**common)", method="__init__",
                        cls_name=type(self).__name__,
                        location=_definition_location(type(self), "__init__")) from exc
                raise self._user_fault("__init__", exc) from exc
            except PASSED_THROUGH:
                raise
            except BaseException as exc:       # SystemExit, GeneratorExit... are the user's mistakes too
                raise self._user_fault("__init__", exc) from exc
            if "arena" not in vars(self):
                raise UserStrategyError(
                    "your __init__ did not call super().__init__(**common): the base sets up "
                    "the heap (self.arena), word and align there", method="__init__",
                    cls_name=type(self).__name__,
                    location=_definition_location(type(self), "__init__"))
    elif name == "structure":
        @functools.wraps(func)
        def wrapper(self):
            try:
                answer = func(self)
            except UserStrategyError:
                raise
            except PASSED_THROUGH:
                raise
            except BaseException as exc:       # SystemExit, GeneratorExit... are the user's mistakes too
                raise self._user_fault("structure", exc) from exc
            missing = [k for k in ("kind", "sizes", "pointers", "outside")
                       if not isinstance(answer, dict) or k not in answer]
            if missing or answer["kind"] not in structure_protocol.KINDS:
                raise self._mistake("structure", f"your structure() returned {_short(answer)}, not the "
                                    "shape of docs/structure.md: use self.lists_structure({label: "
                                    "[addrs]}) or the generic tree shape")
            tail = self.uncarved_tail() if self.arena.fixed else None
            if tail is not None and tail[0] not in answer["sizes"]:
                answer["outside"].append(structure_protocol.outside(tail[0], "the pool not carved yet"))
                answer["sizes"][tail[0]] = tail[1]
            return answer
    elif name == "explain_event":
        @functools.wraps(func)
        def wrapper(self, event):
            try:
                text = func(self, event)
            except UserStrategyError:
                raise
            except PASSED_THROUGH:
                raise
            except BaseException as exc:       # SystemExit, GeneratorExit... are the user's mistakes too
                raise self._user_fault("explain_event", exc) from exc
            if text is not None and not isinstance(text, str):
                raise self._mistake("explain_event", f"your explain_event returned {_short(text)}: "
                                    "return a line of text, or None for heapscope's own words")
            return text
    else:
        @functools.wraps(func)
        def wrapper(self, *args, **kwargs):
            try:
                return func(self, *args, **kwargs)
            except UserStrategyError:
                raise
            except PASSED_THROUGH:
                raise
            except BaseException as exc:       # SystemExit, GeneratorExit... are the user's mistakes too
                raise self._user_fault(name, exc) from exc
    wrapper._heapscope_wrapped = True
    return wrapper


def _hex(n) -> str:
    return f"{n:#x}" if isinstance(n, int) else repr(n)


# ----------------------------------------------------------------------- the class
class UserStrategy(Strategy):
    """Base class of a strategy you write; see the module docstring.

    Set ``name`` (what ``--strategy`` and the picker show: lower case, digits,
    ``-``, ``_``; default: the class name in lower case), ``title`` (one line
    for menus; default: the first line of the docstring) and ``citation``."""

    name = ""
    title = ""
    citation = "a user strategy"
    params = (
        Param("check_steps", BOOL, False, "run check() after every operation, so that a replay "
              "stops at the first step that breaks an invariant (the window's Playback > Check "
              "Your Strategy After Every Step)"),
    )

    # -------------------------------------------------------------- set-up
    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("name"):
            cls.name = cls.__name__.lower()
        if not cls.__dict__.get("title"):
            doc = (cls.__doc__ or "").strip().splitlines()
            cls.title = doc[0].strip() if doc else cls.__name__
        for method in USER_METHODS:
            if method in cls.__dict__ and callable(cls.__dict__[method]):
                setattr(cls, method, _wrap(method, cls.__dict__[method]))

    def __init__(self, check_steps: bool = False, **common) -> None:
        super().__init__(**common)
        #: check() after every operation: its mistake stops the replay there
        self.check_steps = bool(check_steps)
        self._step = 0                 # operations so far: the replay's step
        self._doing = None             # the operation under way: ("malloc", size)... (see _op)
        #: the result checks of every operation; heapscope grade switches them off
        #: only to time your strategy, on a trace it has already checked
        self.guarded = True
        # The program's view of the heap, kept apart from your books: every
        # block handed out and not freed, with the step it was handed out and
        # the bytes the program wrote there, and the blocks as address intervals.
        self._spans = SpanIndex()                       # [block, end) of each, for the overlap test
        self._handed: dict[int, tuple[int, int, int, int]] = {}   # payload -> (block, end, step, size)
        self._freed_at: dict[int, int] = {}             # block addr -> step of its last free
        # Payload contents, as a tag per block: (step it was written, bytes);
        # a block handed out by malloc holds what was written at the step it
        # was handed out (its _handed entry), and is here only once a realloc
        # has carried bytes written earlier into it (see _content).
        self._contents: dict[int, tuple[int, int]] = {}
        self._copies: dict[int, tuple[int, int] | None] = {}
        self._tail: tuple[int, int] | None = None     # the pool tail the last walk added
        #: inside walked_once: [] until the heap is walked, then [the walk's blocks]
        self._walked: list | None = None
        # The heap as the guard last left it (see _check_door): the arena,
        # its base, limit and mode, the break and its refusals.  Only
        # _take_core moves it on; anything else that changes it is the
        # strategy growing the heap round the grader's back.
        self._door = self._door_now()
        #: [low, high) of every block handed out and every region carved, by the
        #: guard's own count: H in a fixed pool (see heap_held)
        self._held = [self.arena.brk, self.arena.base]
        #: seconds spent in your malloc/free/realloc while guarded, counted
        #: only when grade sets it to 0.0 (it spends at most as much again on
        #: its walk checks); None elsewhere, so that two replays to the same
        #: step leave the same state (checkpoints, seeks, densified timelines)
        self.own_seconds = None

    # ------------------------------------------------------------ reporting
    @property
    def _op(self) -> str:
        """The operation under way, in words (``malloc(24)``, ``free(0x40)``,
        ``realloc(NULL, 8)``), "" between operations.  Kept as the tuple
        ``_doing`` and put in words only when a message needs them: formatting
        it at every operation cost the check pass a tenth of a fast
        allocator's own time."""
        doing = self._doing
        if not doing:
            return ""
        verb = doing[0]
        if verb == "malloc":
            return f"malloc({doing[1]})"
        if verb == "free":
            return f"free({_hex(doing[1])})"
        payload, size = doing[1], doing[2]
        return f"realloc(NULL, {size})" if payload is None else f"realloc({_hex(payload)}, {size})"

    def _user_fault(self, method: str, exc: BaseException) -> UserStrategyError:
        """``exc`` raised inside the user's ``method``, as a UserStrategyError."""
        cls = type(self)
        text = str(exc)
        what = type(exc).__name__ + (f": {text}" if text else "")
        if method == "_check_structure" and isinstance(exc, AssertionError):
            message = f"your _check_structure found a problem: {text or 'an assert failed'}"
        else:
            message = f"your {method} raised {what}"
        return UserStrategyError(message, method=method, cls_name=cls.__name__,
                                 step=getattr(self, "_step", None) or None,
                                 operation=getattr(self, "_op", "") or None,
                                 location=_traceback_location(cls, exc))

    def _mistake(self, method: str, message: str, at_call: bool = False) -> UserStrategyError:
        """A wrong result of the user's ``method``: point at its ``def``, or,
        ``at_call``, at the line of the user's code that called us (a helper
        called with wrong arguments)."""
        cls = type(self)
        location = _caller_location(cls) if at_call else None
        return UserStrategyError(message, method=method, cls_name=cls.__name__,
                                 step=self._step or None, operation=self._op or None,
                                 location=location or _definition_location(cls, method))

    def _live_text(self, payload: int, payload_shown: bool = True) -> str:
        """The live block the program holds at ``payload``, in words."""
        block_addr, end, step, _ = self._handed[payload]
        if payload_shown and payload != block_addr:
            return (f"the live block at {block_addr:#x} of {end - block_addr} bytes "
                    f"(payload {payload:#x}), handed out at step {step}")
        return f"the live block at {block_addr:#x} of {end - block_addr} bytes, handed out at step {step}"

    def largest_request(self) -> int:
        """Your blocks may take no bytes beside the request: only a request
        past the heap's whole room (the heap limit, the pool, the 1 TiB address
        space) fails before your ``_malloc`` sees it."""
        return self.arena.room

    # ----------------------------------------------------------- public API
    # Each guarded operation is: note the step, call the user's method (timed),
    # check the door, then check what it returned (_malloc_result,
    # _free_result, _realloc_result).  grade's check pass makes the same calls
    # through allocators/checked_calls.py, which tests the common case inline
    # and hands anything else to the same _*_result methods.
    def malloc(self, size: int) -> int | None:
        payload = self._guarded_malloc(size)
        if self.check_steps:
            self.check()
        return payload

    def free(self, payload: int | None) -> None:
        self._guarded_free(payload)
        if self.check_steps:
            self.check()

    def realloc(self, payload: int | None, size: int) -> int | None:
        new = self._guarded_realloc(payload, size)
        if self.check_steps:
            self.check()
        return new

    def _guarded_malloc(self, size: int) -> int | None:
        self._step += 1
        if not self.guarded:
            return Strategy.malloc(self, size)
        self._doing = ("malloc", size)
        before = len(self.live)
        refusals = self.arena.refusals
        t0 = perf_counter()
        payload = Strategy.malloc(self, size)
        if self.own_seconds is not None:
            self.own_seconds += perf_counter() - t0
        self._check_door("_malloc")
        return self._malloc_result(payload, size, "_malloc", before, refusals)

    def _guarded_free(self, payload: int | None) -> None:
        self._step += 1
        if not self.guarded or payload is None:
            return Strategy.free(self, payload)
        self._doing = ("free", payload)
        self._still_booked(payload, "_free")
        before = len(self.live)
        lb = self.live[payload]
        t0 = perf_counter()
        Strategy.free(self, payload)
        if self.own_seconds is not None:
            self.own_seconds += perf_counter() - t0
        self._check_door("_free")
        self._free_result(payload, before, lb)

    def _guarded_realloc(self, payload: int | None, size: int) -> int | None:
        self._step += 1
        if not self.guarded:
            return Strategy.realloc(self, payload, size)
        method = self._realloc_method()
        if payload is None:
            self._doing = ("realloc", None, size)
            before = len(self.live)
            refusals = self.arena.refusals
            t0 = perf_counter()
            new = Strategy.realloc(self, None, size)
            if self.own_seconds is not None:
                self.own_seconds += perf_counter() - t0
            self._check_door(method)
            return self._malloc_result(new, size, method, before, refusals)
        self._doing = ("realloc", payload, size)
        self._still_booked(payload, "_realloc")
        old = self.live[payload]
        content = self._content(payload)
        tag = self._step if content is None else content[0]
        before = len(self.live)
        self._copies = {}
        refusals = self.arena.refusals
        t0 = perf_counter()
        new = Strategy.realloc(self, payload, size)
        if self.own_seconds is not None:
            self.own_seconds += perf_counter() - t0
        self._check_door(method)
        return self._realloc_result(payload, new, size, method, old, tag, before, refusals)

    def _realloc_method(self) -> str:
        """Whose mistake a wrong realloc result is: the default _realloc builds
        on _malloc, so a wrong new block is _malloc's doing."""
        return "_realloc" if type(self)._realloc is not UserStrategy._realloc else "_malloc"

    # ------------------------------------------- what an operation returned
    def _malloc_result(self, payload, size: int, method: str, before: int, refusals: int):
        """Check what a malloc (or a ``realloc(NULL, size)``, ``method`` being
        whose result it is) returned, ``before`` the live blocks and
        ``refusals`` the arena's refusals before the call; the payload as an
        int, or None."""
        if payload is None:
            if len(self.live) != before:
                raise self._mistake("_malloc", "your _malloc returned None (out of memory) but "
                                    "booked a block with _note_alloc")
            self._null_allowed("_malloc", refusals, size)
            return None
        payload = self._accept(payload, size, method, before + 1)
        self.rec.payload = payload
        self._placed(payload)
        return payload

    def _free_result(self, payload: int, before: int, lb: LiveBlock) -> None:
        """Check that the user's _free took back the block of ``payload``
        (booked as ``lb``; ``before`` live blocks before), and forget it."""
        if payload in self.live:
            raise self._mistake("_free", f"your _free({payload:#x}) did not unbook the block: call "
                                f"self._note_free({payload:#x}) for the block you take back")
        if len(self.live) != before - 1:
            raise self._mistake("_free", f"your _free({payload:#x}) unbooked "
                                f"{before - len(self.live)} blocks; it must unbook that one only")
        self._forget(payload, freed=True)
        self._contents.pop(payload, None)
        self._released(lb)

    def _realloc_result(self, payload: int, new, size: int, method: str, old: LiveBlock,
                        tag: int, before: int, refusals: int):
        """Check what ``realloc(payload, size)`` returned: ``old`` was the
        block's booking, ``tag`` the step its bytes were written, ``before``
        the live blocks and ``refusals`` the arena's before the call."""
        kept = min(old.request, size)
        if new is None:
            if self.live.get(payload) != old or len(self.live) != before:
                raise self._mistake("_realloc", f"your _realloc returned None (out of memory) but "
                                    f"changed the books: a failed realloc must leave the block at "
                                    f"{payload:#x} as it was")
            self._null_allowed(method, refusals, size)
            return None
        if new == payload:
            lb = self.live.get(payload)
            if lb is None:
                raise self._mistake("_realloc", f"your _realloc returned the same payload {payload:#x} "
                                    "but unbooked its block")
            if lb.request != size:
                raise self._mistake("_realloc", f"your _realloc kept the block at {payload:#x} but its "
                                    f"booking still says {lb.request} bytes: call "
                                    f"self._rebook({payload:#x}, {size}) when a block stays in place")
            if lb.header > lb.block_size - size:
                raise self._mistake("_realloc", f"your _realloc kept the block at {payload:#x} in "
                                    f"place for {size} bytes, but its {lb.block_size} bytes hold "
                                    f"{lb.header} header bytes too: if your blocks end with a "
                                    "footer, override _payload_capacity to leave it out")
            self._forget(payload, freed=False)
            self._accept(payload, size, "_realloc", before)
            self._contents[payload] = (tag, size)
            return payload
        if payload in self.live:
            raise self._mistake("_realloc", f"your _realloc moved the block from {payload:#x} to "
                                f"{_hex(new)} but did not free the old one (the program no longer "
                                "holds it: it would leak)")
        self._forget(payload, freed=True)
        new = self._accept(new, size, method, before)
        self.rec.payload = new
        copy = self._copies.get(new, "none")
        if kept:
            if copy == "none":
                raise self._mistake("_realloc", f"your _realloc moved the block from {payload:#x} to "
                                    f"{new:#x} without copying the program's {kept} bytes: call "
                                    f"self._copy_payload(old, new, {kept}) before freeing the old "
                                    "block, as C's realloc calls memcpy")
            if copy is None or copy[0] != tag:
                raise self._mistake("_realloc", f"your _realloc copied into {new:#x} from a block "
                                    f"that no longer held the program's bytes (copy before you "
                                    f"free the old block at {payload:#x})")
            if copy[1] < kept:
                raise self._mistake("_realloc", f"your _realloc moved the block from {payload:#x} to "
                                    f"{new:#x} and copied only {copy[1]} of the {kept} bytes "
                                    "realloc must keep (the smaller of the old and the new size)")
        self._contents.pop(payload, None)
        self._contents[new] = (tag, size)
        self._placed(new)
        self._released(old, first=False)
        return new

    # ------------------------------------------------------- result checks
    def _still_booked(self, payload: int, method: str) -> None:
        if payload in self._handed and payload not in self.live:
            raise self._mistake(method, f"the block of payload {payload:#x} ({self._live_text(payload)}) "
                                "is no longer booked, though the program has not freed it: "
                                "something called _note_free for it")

    def _accept(self, payload, size: int, method: str, expected_live: int) -> int:
        """Check a payload the user's ``method`` handed out, then add it to the
        program's view; the payload as an int.  The order of the checks gives
        each mistake its own message."""
        if isinstance(payload, bool) or not hasattr(payload, "__index__"):
            raise self._mistake(method, f"your {method} returned {payload!r}, which is "
                                "neither an address (an int) nor None")
        payload = payload.__index__()
        if payload in self._handed:
            raise self._mistake(method, f"your {method} returned {payload:#x}, which is already the "
                                f"payload of {self._live_text(payload, payload_shown=False)} and "
                                "not freed since: the same block was handed out twice")
        if payload % self.align:
            raise self._mistake(method, f"your {method} returned {payload:#x}, which is not a "
                                f"multiple of the alignment {self.align} (align={self.align}): "
                                f"round addresses up, e.g. with align_up(addr, self.align)")
        base, brk = self.arena.base, self.arena.brk
        if not (base <= payload and payload + size <= brk):
            raise self._mistake(method, f"your {method} returned {payload:#x} for {size} bytes, "
                                f"outside the heap [{base:#x}, {brk:#x}): grow the heap with "
                                "self._take_core(n) first")
        lb = self.live.get(payload)
        if lb is None:
            other = [p for p in self.live if p not in self._handed]
            hint = (f" (it booked {_hex(other[0])}: the first argument of _note_alloc is the payload "
                    "address you return)" if other else "")
            raise self._mistake(method, f"your {method} returned {payload:#x} but did not book it: "
                                f"call self._note_alloc(payload, block_addr, block_size, request, "
                                f"header) for every block you hand out{hint}")
        block, bsize, request, header = lb
        if request != size:
            raise self._mistake(method, f"your {method} booked {payload:#x} with a request of "
                                f"{request} bytes, but the program asked for {size} (the fourth "
                                "argument of _note_alloc)")
        end = block + bsize
        if not (block <= payload and payload + size <= end):
            raise self._mistake(method, f"your {method} booked the block at {_hex(block)} of {bsize} "
                                f"bytes, which does not hold the {size} bytes at {payload:#x}")
        if block < base or end > brk:
            raise self._mistake(method, f"your {method} booked the block at {block:#x} of {bsize} "
                                f"bytes, which reaches outside the heap [{base:#x}, {brk:#x})")
        if header < 0 or header > bsize - size:
            raise self._mistake(method, f"your {method} booked {header} header bytes in a block of "
                                f"{bsize} bytes holding {size}: header bytes are the block's bytes "
                                "that are neither payload nor padding")
        if len(self.live) != expected_live:
            raise self._mistake(method, f"your {method} booked {len(self.live) - expected_live + 1} "
                                "blocks with _note_alloc for one request")
        # A block of 0 bytes holds no byte to overlap (the next walk names it:
        # a walk has no empty blocks).
        other = self._spans.place(block, end, add=False) if bsize else None
        if other is not None:
            o_payload = self._payload_of_block(other)
            o_end = self._handed[o_payload][1]
            if other <= payload < o_end:
                what = f"{payload:#x}, which is inside {self._live_text(o_payload)}"
            elif payload < other < payload + size:
                what = f"{payload:#x} for {size} bytes, which run into {self._live_text(o_payload)}"
            else:
                what = (f"{payload:#x} in a block booked at {block:#x} of {bsize} bytes, "
                        f"which overlaps {self._live_text(o_payload)}")
            raise self._mistake(method, f"your {method} returned {what}")
        self._hand_out(payload, block, end, size)
        return payload

    def _hand_out(self, payload: int, block: int, end: int, size: int) -> None:
        """Add a block that passed the checks to the program's view."""
        if end > block:
            self._spans.place(block, end)
        held = self._held
        if block < held[0]:
            held[0] = block
        if end > held[1]:
            held[1] = end
        self._handed[payload] = (block, end, self._step, size)

    def _payload_of_block(self, block: int) -> int:
        """The payload the program holds in the block at ``block`` (for a
        message: a search of every live block)."""
        return next(p for p, entry in self._handed.items() if entry[0] == block)

    def _content(self, payload: int) -> tuple[int, int] | None:
        """(the step the program's bytes at ``payload`` were written, how
        many), or None for a payload the program does not hold."""
        content = self._contents.get(payload)
        if content is None:
            entry = self._handed.get(payload)
            if entry is not None:
                return entry[2], entry[3]
        return content

    def _forget(self, payload: int, freed: bool) -> None:
        """The program gave ``payload`` back (or realloc is about to re-check
        it): drop it from the program's view."""
        block, end, _, _ = self._handed.pop(payload)
        if end > block:
            self._spans.remove(block)
        if freed:
            self._freed_at[block] = self._step

    def _placed(self, payload: int) -> None:
        """Record Placed for the map if the user's code did not."""
        events = self.rec.events
        if events is not None and not any(type(e) is Placed for e in events):
            lb = self.live[payload]
            events.append(Placed(lb.block_addr, lb.block_size, payload, lb.request))

    def _released(self, lb: LiveBlock, first: bool = True) -> None:
        """Record Released for the map if the user's code did not: first in a
        free (the release comes before the joins and pushes it leads to)."""
        events = self.rec.events
        if events is not None and not any(type(e) is Released for e in events):
            events.insert(0 if first else len(events), Released(lb.block_addr, lb.block_size))

    def _note_alloc(self, payload: int, block_addr: int, block_size: int, request: int,
                    header: int) -> None:
        args = (payload, block_addr, block_size, request, header)
        if not all(type(v) is int for v in args):
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in args):
                raise self._mistake(self._current_method(), "self._note_alloc("
                                    + ", ".join(_short(v) for v in args) + ") was called: every "
                                    "argument is an int (payload, block_addr, block_size, request, "
                                    "header)", at_call=True)
            args = tuple(int(v) for v in args)
        super()._note_alloc(*args)

    def _note_free(self, payload: int) -> LiveBlock:
        if payload not in self.live:
            raise self._mistake(self._current_method(), f"self._note_free({_hex(payload)}) was called, "
                                "but no block is booked at that payload (its argument is the payload "
                                "address, as given to _note_alloc)", at_call=True)
        return super()._note_free(payload)

    # ---------------------------------------------- what every strategy writes
    def _malloc(self, size: int) -> int | None:
        raise self._mistake("_malloc", f"{type(self).__name__} has no _malloc: write "
                            "def _malloc(self, size) returning the payload address or None")

    def _free(self, payload: int) -> None:
        raise self._mistake("_free", f"{type(self).__name__} has no _free: write "
                            "def _free(self, payload)")

    def _blocks(self):
        raise self._mistake("_blocks", f"{type(self).__name__} has no _blocks: write def "
                            "_blocks(self) yielding (addr, size, state, payload) for every block")

    # ------------------------------------------------------------- helpers
    def _copy_payload(self, src: int, dst: int, nbytes: int) -> None:
        """C's ``memcpy(dst, src, nbytes)`` between payloads, in a ``_realloc``
        that moves a block (the default ``_realloc`` calls it for you).  The
        simulated heap has no bytes; what is checked is that the program's
        bytes reach the new block before the old one is freed."""
        if not self.guarded:
            return
        content = self._content(src)
        self._copies[dst] = None if content is None or src not in self.live else \
            (content[0], min(nbytes, content[1]))

    def _realloc(self, payload: int, size: int) -> int | None:
        """Keep the block when the payload still fits (:meth:`_payload_capacity`),
        else malloc, copy the smaller of the two sizes, free (the old block
        stays if malloc fails): what a C realloc without in-place growth does."""
        if size <= self._payload_capacity(payload):
            self._rebook(payload, size)
            return payload
        new = self._malloc(size)
        if new is None:
            return None
        self._copy_payload(payload, new, min(self.live[payload].request, size))
        self._free(payload)
        return new

    def _take_core(self, size: int) -> int | None:
        """``size`` fresh bytes at the top of the heap: ``sbrk``, or carved from
        a fixed pool; their address, or None when the heap cannot grow."""
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise self._mistake(self._current_method(), f"self._take_core({_short(size)}) was "
                                "called: it takes a number of bytes, an int >= 0", at_call=True)
        if not self.guarded:
            return super()._take_core(size)
        self._check_door(self._current_method(), at_call=True)
        addr = super()._take_core(size)
        self._door = self._door_now()
        if addr is not None and size:
            held = self._held
            if addr < held[0]:
                held[0] = addr
            if addr + size > held[1]:
                held[1] = addr + size
        return addr

    def _refuse_request(self, size: int) -> None:
        # The base refuses a request past largest_request() itself, counting a
        # refusal: that is the arena's door too, so the guard takes it as its own.
        super()._refuse_request(size)
        if self.guarded:
            self._door = self._door_now()

    # --------------------------------------------------- the arena's one door
    def _door_now(self) -> tuple:
        a = self.arena
        return (a, a.base, a.limit, a.fixed, a.brk, a.refusals)

    def _check_door(self, method: str, at_call: bool = False) -> None:
        """The heap changes only through :meth:`_take_core`: the break, the
        limit, the base, the mode and the refusals are as the guard left
        them (a tuple compare per operation)."""
        a = self.arena
        door = self._door
        if (a, a.base, a.limit, a.fixed, a.brk, a.refusals) == door:
            return
        was_arena, base, limit, fixed, brk, refusals = door
        if a is not was_arena:
            what = ("self.arena was replaced by another object: the heap is the one the base "
                    "set up")
        elif a.brk != brk:
            what = f"the break moved from {_hex(brk)} to {_hex(a.brk)} without self._take_core"
        elif a.limit != limit:
            what = (f"self.arena.limit changed from {limit} to {a.limit}: the heap limit is the "
                    "grader's (--heap-limit), not the strategy's")
        elif a.base != base:
            what = f"self.arena.base changed from {_hex(base)} to {_hex(a.base)}"
        elif a.fixed != fixed:
            what = (f"self.arena.fixed changed from {fixed} to {a.fixed}: the pool is the "
                    "grader's (--pool-size), not the strategy's")
        else:
            what = (f"self.arena.refusals changed from {refusals} to {a.refusals} without "
                    "self._take_core")
        raise self._mistake(method, f"{what}: grow the heap only with self._take_core(n), which "
                            "keeps to the heap limit and the pool", at_call=at_call)

    def _null_allowed(self, method: str, refusals: int, size: int) -> None:
        """A None result is out of memory only if the heap was refused growth
        during this request (``arena.refusals`` rose: the limit, or a full
        pool) or the heap is a fixed pool; any other NULL is an error, as the
        CS:APP driver counts every NULL ("mm_malloc failed").  A request of 0
        bytes may have None, as C allows (and CS:APP's own mm_malloc gives)."""
        arena = self.arena
        if size == 0 or arena.fixed or arena.refusals > refusals:
            return
        raise self._mistake(method, f"your {method} returned None (out of memory) but the heap "
                            "was never refused growth during this request: return None only "
                            "when self._take_core(n) returned None (the heap limit or the pool "
                            "is reached); a NULL for any other reason is an error, as in the "
                            "CS:APP malloc lab")

    @property
    def heap_held(self) -> int:
        """H as ``heapscope grade`` counts it, from the guard's own books: the
        break minus the base in a heap grown by sbrk (the break moves only
        through :meth:`_take_core`), the span of what was carved or handed
        out in a fixed pool."""
        arena = self.arena
        if arena.fixed:
            low, high = self._held
            return max(0, high - low)
        return arena.brk - arena.base

    def _current_method(self) -> str:
        doing = self._doing
        return _METHOD_OF_VERB[doing[0]] if doing else "_malloc"

    def uncarved_tail(self) -> tuple[int, int] | None:
        """(addr, size) of the part of a fixed pool not carved yet by
        :meth:`_take_core` when your walk stops where the carving stops, else
        None: the base adds it to your walk as one free block and to your
        structure's ``outside``."""
        self._blocks()
        return self._tail

    def lists_structure(self, lists: dict[str, Iterable[int]], pointers: Iterable[dict] = ()) -> dict:
        """Your free lists in the protocol's generic ``lists`` shape, for
        :meth:`structure`: ``lists`` maps a label (``"class 3: 64-127 B"``) to
        the block addresses on that list, in list order; ``pointers`` are
        :func:`heapscope.allocators.structure.pointer` values.  Sizes are read from your
        walk, the uncarved pool tail goes ``outside``."""
        free = {b[0]: b[1] for b in self._blocks() if b[2] == FREE_BLOCK}
        tail = self._tail
        lists = {str(label): list(addrs) for label, addrs in lists.items()}
        named = [a for addrs in lists.values() for a in addrs]
        out = []
        if tail is not None and tail[0] not in named:
            out.append(structure_protocol.outside(tail[0], "the pool not carved yet"))
        sizes = {a: free.get(a, 0) for a in named}
        sizes.update({o["addr"]: free.get(o["addr"], 0) for o in out})
        return structure_protocol.make("lists", sizes, pointers=pointers, outside_blocks=out,
                                       lists=lists)

    def structure(self) -> dict:
        """The default: every free block on one list, in address order."""
        free = [b[0] for b in self._blocks() if b[2] == FREE_BLOCK]
        if self._tail is not None:
            free.remove(self._tail[0])
        return self.lists_structure({"free blocks": free})

    # ------------------------------------------------------------ the walk
    def walk_tuples(self) -> list[tuple]:
        live = self.live
        out = []
        for addr, size, state, payload in self._blocks():   # shapes checked by the wrapper
            lb = live.get(payload) if state == USED else None
            out.append((addr, size, state, payload, lb[2], lb[3]) if lb is not None
                       else (addr, size, state, payload, 0, 0))
        return out

    def walk(self) -> list[Block]:
        # walk_tuples made Blocks at once: one tuple a block, not two (grade's walk checks)
        if type(self).walk_tuples is not UserStrategy.walk_tuples:
            return super().walk()
        live = self.live
        new = _new_tuple
        out = []
        append = out.append
        for addr, size, state, payload in self._blocks():   # shapes checked by the wrapper
            if state == USED:
                lb = live.get(payload)
                if lb is not None:
                    append(new(Block, (addr, size, state, payload, lb[2], lb[3])))
                    continue
            append(new(Block, (addr, size, state, payload, 0, 0)))
        return out

    def _walk_mistake(self, message: str) -> UserStrategyError:
        cls = type(self)
        return UserStrategyError(message, method="_blocks", cls_name=cls.__name__,
                                 step=self._step or None, operation=self._op or None,
                                 location=_definition_location(cls, "_blocks"))

    @contextlib.contextmanager
    def walked_once(self):
        """Within it your ``_blocks`` runs once: every later call returns that
        walk again (heapscope grade's walk check reads the heap in ``check``
        and again in your ``structure()``, through :meth:`lists_structure`;
        nothing may change the heap between the two)."""
        self._walked = []
        try:
            yield
        finally:
            self._walked = None

    def check(self) -> list[Block]:
        """The heap walk against the heap and the books, then your
        ``_check_structure`` with the blocks of your walk (the uncarved pool
        tail left out); :class:`UserStrategyError` names what is wrong."""
        blocks = self.walk()
        if self.guarded:
            self._check_door("_blocks")     # a walk that moved the break says so first
        self._check_heap(blocks)
        self._check_structure(blocks[:-1] if self._tail is not None else blocks)
        return blocks

    def _check_heap(self, blocks: list[Block]) -> None:
        """Every block of your walk in order, covering ``[base, brk)`` exactly;
        used blocks are the live ones, as booked."""
        if _walk_agrees(blocks, self.arena.base, self.arena.brk, self.live):
            return                  # the common case; the loop below finds what is wrong and says it
        fail = self._walk_mistake
        after = f" after {self._op}" if self._op else ""
        base, brk = self.arena.base, self.arena.brk
        pos = base
        live = self.live
        seen = set()
        for b in blocks:
            addr, size, state, payload = b.addr, b.size, b.state, b.payload
            if not isinstance(addr, int) or not isinstance(size, int):
                raise fail(f"your _blocks yielded {tuple(b)[:4]!r}: addr and size must be ints")
            if size <= 0:
                raise fail(f"your _blocks yielded a block at {addr:#x} of {size} bytes{after}")
            if addr != pos:
                if addr > pos:
                    raise fail(f"your _blocks left a gap{after}: nothing covers {pos:#x}..{addr:#x} "
                               f"(the walk must cover the heap [{base:#x}, {brk:#x}) block after block)")
                raise fail(f"your _blocks yielded a block at {addr:#x} that overlaps the one before, "
                           f"which ends at {pos:#x}{after}")
            pos = addr + size
            if state == USED:
                lb = live.get(payload)
                if lb is None:
                    block_freed = self._freed_at.get(addr)
                    why = (f": it was freed at step {block_freed}" if block_freed is not None else "")
                    raise fail(f"your _blocks reports a used block at {addr:#x} (payload "
                               f"{_hex(payload)}){after}, but no block is booked at that payload{why}")
                if lb.block_addr != addr or lb.block_size != size:
                    raise fail(f"your _blocks reports a used block at {addr:#x} of {size} bytes, but "
                               f"payload {payload:#x} was booked as a block at {lb.block_addr:#x} of "
                               f"{lb.block_size} bytes{after}")
                seen.add(payload)
            elif state == FREE_BLOCK or state == META:
                if payload is not None:
                    raise fail(f"your _blocks reports a {state} block at {addr:#x} with payload "
                               f"{_hex(payload)}: only used blocks have a payload")
            else:
                raise fail(f"your _blocks reports a block at {addr:#x} in state {state!r}: use "
                           "USED, FREE or META")
        if pos != brk:
            if pos < brk:
                raise fail(f"your _blocks stops at {pos:#x}{after}, but the heap reaches {brk:#x}: "
                           f"the walk must cover the heap up to the break")
            raise fail(f"your _blocks runs to {pos:#x}, past the end of the heap {brk:#x}{after}")
        if len(seen) != len(live):
            missing = sorted(set(live) - seen)[0]
            what = self._live_text(missing) if missing in self._handed else f"payload {missing:#x}"
            raise fail(f"{what} is in no used block of your walk{after}")

    # -------------------------------------------------------- checkpoints
    def copy_state(self, copier) -> "UserStrategy":
        """Through pickle, as a checkpoint: a strategy of yours may hold
        whatever pickles, and a copy must replay exactly as a restored
        checkpoint does."""
        twin = pickle.loads(pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL))
        copier.memo[id(self)] = twin
        return twin

    def pickling_error(self, exc: BaseException) -> UserStrategyError:
        """Why pickling failed, in terms of the attribute that holds the culprit."""
        for attr, value in vars(self).items():
            try:
                pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as inner:
                culprit = f"self.{attr} holds {type(value).__name__} {_short(value)} ({inner})"
                break
        else:
            culprit = f"{type(exc).__name__}: {exc}"
        return UserStrategyError(
            f"your strategy cannot be pickled: {culprit}. The window keeps checkpoints of the heap "
            "by pickling your strategy: keep only plain data in its attributes (ints, strings, "
            "lists, dicts, sets, tuples, instances of classes defined at the top of a module); "
            "no lambdas, generators, open files, locks or classes defined inside a function",
            method="__init__", cls_name=type(self).__name__, step=self._step or None,
            location=_definition_location(type(self), "__init__"))


def _walk_agrees(blocks: list[Block], base: int, brk: int, live: dict) -> bool:
    """True only when :meth:`UserStrategy._check_heap` would find nothing
    wrong with ``blocks``: each at the end of the one before from ``base``
    to ``brk``, its size an int > 0, a used one booked in ``live`` at its
    address with its size, any other FREE or META with no payload, and every
    booked block in the walk (as many used blocks as booked ones: each
    matched a booking by its address, and the addresses rise).  One loop of
    a few tests a block, a third of the loop that names what is wrong: a walk
    check of ``heapscope grade`` runs it over the whole heap."""
    pos = base
    used = 0
    get = live.get
    for addr, size, state, payload, _, _ in blocks:
        if addr != pos or type(addr) is not int or type(size) is not int or size <= 0:
            return False
        pos = addr + size
        if state == USED:
            lb = get(payload)
            if lb is None or lb[0] != addr or lb[1] != size:
                return False
            used += 1
        elif payload is not None or (state != FREE and state != META):
            return False
    return pos == brk and used == len(live)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["FREE", "META", "USED", "UserStrategy", "UserStrategyError", "align_up",
           "HeapInvariantError"]
