"""A copy of a strategy's state, to replay on apart from the original: what
the timeline's step-back cache keeps (``allocators/replay.py``,
:class:`~heapscope.allocators.replay.BackCache`; docs/timeline.md).

A checkpoint is a pickle: restoring one of a 100 000-block heap makes every
int and tuple of the heap again, 100-250 ms (the garbage collector's passes
over half a million new objects included), and dropping the heap it replaced
costs 15-40 ms more.  Stepping back one step at a time cannot afford that per
step.  Nearly all of a strategy's state is containers of immutable items
(``{addr: size}`` dicts, lists of ints, ``{payload: LiveBlock}``): this copies
the containers and shares their items, so a copy costs what ``dict.copy()``
costs (about 10 ms for a 100 000-block heap), and dropping one frees only its
containers.

The copy is exact in the sense the timeline needs: the same attributes in the
same order, dicts in the same order, shared objects still shared, and the
strategy's record reset as :meth:`Strategy.__setstate__` resets it, so a copy
replays exactly as the checkpoint restored at the same position would
(``tests/test_step_back.py`` compares them for every registered strategy).
Anything this module does not know how to copy by hand -- an object with its
own pickling or copying hooks, a container subclass, a C type -- goes through
:func:`copy.deepcopy`, which honours those hooks.
"""

from __future__ import annotations

import copy
import sys
from itertools import chain
from types import BuiltinFunctionType, FunctionType

from .events import OpRecord

#: types whose values never change: shared by the copy, not copied
ATOMIC = frozenset({int, bool, float, complex, str, bytes, type(None), range, type,
                    FunctionType, BuiltinFunctionType})

#: the hooks that make a class copy or pickle other than attribute by attribute
_HOOKS = ("__reduce_ex__", "__reduce__", "__copy__", "__deepcopy__", "__getnewargs__",
          "__getnewargs_ex__", "__getstate__", "__setstate__")
_plain_classes: dict[type, bool] = {}


def _plain(cls: type) -> bool:
    """Whether instances of ``cls`` are their attributes and nothing else: a
    Python class made by ``object.__new__`` with no hook of its own."""
    known = _plain_classes.get(cls)
    if known is None:
        known = cls.__new__ is object.__new__ and all(
            getattr(cls, h, None) is getattr(object, h, None) for h in _HOOKS)
        _plain_classes[cls] = known
    return known


def _slot_names(cls: type) -> list[str]:
    names = []
    for c in reversed(cls.__mro__):
        slots = c.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else [s for s in slots
                                                           if s not in ("__dict__", "__weakref__")]
    return names


def _all_atomic(items) -> bool:
    """Every item immutable (tuples of immutable items included), looked at
    by C loops: ``set(map(type, ...))``."""
    types = set(map(type, items))
    if types <= ATOMIC:
        return True
    if all(issubclass(t, tuple) for t in types):
        # tuples (LiveBlock, (payload, size)...): immutable if their items are
        return set(map(type, chain.from_iterable(items))) <= ATOMIC
    return False


class StateCopier:
    """One copy of an object graph; ``bytes`` adds up the size of what it made
    (the containers and objects: their items are shared), the memory a copy
    holds."""

    def __init__(self) -> None:
        self.memo: dict[int, object] = {}
        self.bytes = 0

    def copy(self, value):
        cls = type(value)
        if cls in ATOMIC:
            return value
        done = self.memo.get(id(value))
        if done is not None:
            return done
        if cls is dict:
            out = value.copy() if _all_atomic(value) and _all_atomic(value.values()) else None
            if out is None:
                out = {}
                self.memo[id(value)] = out
                for k, v in value.items():
                    out[self.copy(k)] = self.copy(v)
        elif cls is list:
            out = value.copy() if _all_atomic(value) else None
            if out is None:
                out = []
                self.memo[id(value)] = out
                out.extend(map(self.copy, value))
        elif cls is set:
            out = value.copy() if _all_atomic(value) else {self.copy(v) for v in value}
        elif cls is tuple:
            if _all_atomic(value):
                return value
            out = tuple(map(self.copy, value))
        elif _plain(cls):
            out = self._object(value, cls)
        elif hasattr(value, "__setstate__") and hasattr(value, "__getstate__") and cls.__new__ is object.__new__:
            # A class with its own state (phkmalloc's PageInfo): what pickle does.
            out = cls.__new__(cls)
            self.memo[id(value)] = out
            out.__setstate__(self.copy(value.__getstate__()))
            self.bytes += sys.getsizeof(out)
            return out
        else:
            out = copy.deepcopy(value, {})
            self.memo[id(value)] = out
            return out
        self.memo[id(value)] = out
        self.bytes += sys.getsizeof(out)
        return out

    def _object(self, value, cls: type):
        out = cls.__new__(cls)
        self.memo[id(value)] = out
        self.bytes += sys.getsizeof(out)
        # One attribute at a time, in the original's order: CPython (3.11+)
        # keeps the attributes of an instance whose __dict__ was never asked
        # for inline and reads them faster (as Strategy.__setstate__ does).
        attrs = getattr(value, "__dict__", None)
        if attrs is not None:
            for name, v in attrs.items():
                setattr(out, name, self.copy(v))
        for name in _slot_names(cls):
            try:
                v = object.__getattribute__(value, name)
            except AttributeError:
                continue
            object.__setattr__(out, name, self.copy(v))
        return out


def copy_state(strategy, program=None) -> tuple:
    """(a copy of ``strategy``, a copy of ``program`` or None, bytes the two
    hold).  Reading the original's attributes asks for its ``__dict__``, which
    makes it slower to replay on (CPython 3.11): replay on the copy, keep the
    original."""
    copier = StateCopier()
    twin = strategy.copy_state(copier)
    prog = None
    if program is not None:
        prog = type(program)(live=program.live.copy(), failed_ids=set(program.failed_ids),
                             live_bytes=program.live_bytes)
        copier.bytes += sys.getsizeof(prog.live) + sys.getsizeof(prog.failed_ids)
    return twin, prog, copier.bytes


def copy_strategy(strategy, copier: StateCopier):
    """The default of ``Strategy.copy_state``: the strategy's attributes
    copied one by one (those its class names in ``flat_state`` by their
    ``copy()``, unlooked at, and each container of those in ``flat_lists``
    too), the record of the last operation reset as a
    restored checkpoint has it."""
    cls = type(strategy)
    out = cls.__new__(cls)
    copier.memo[id(strategy)] = out
    copier.bytes += sys.getsizeof(out)
    flat, nested = set(cls.flat_state), set(cls.flat_lists)
    for name, v in strategy.__dict__.items():
        if name == "rec":
            v = OpRecord()
        elif name in flat:
            v = v.copy()
            copier.memo[id(strategy.__dict__[name])] = v
            copier.bytes += sys.getsizeof(v)
        elif name in nested:
            original = v
            v = [c.copy() for c in original]
            for c, twin in zip(original, v):
                copier.memo[id(c)] = twin
            copier.memo[id(original)] = v
            copier.bytes += sys.getsizeof(v) + sum(map(sys.getsizeof, v))
        else:
            v = copier.copy(v)
        setattr(out, name, v)
    return out
