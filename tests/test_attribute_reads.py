"""Every strategy keeps fewer than 30 instance attributes.

CPython 3.11 keeps an instance's attribute values inline (no dict of its own)
only while its class's shared keys hold at most 29 names; the 30th name gives
every instance a real dict, and every ``self.x`` in the policy's hot paths is
then read through a dict lookup with a hint instead of at a fixed index
(``LOAD_ATTR_WITH_HINT`` for ``LOAD_ATTR_INSTANCE_VALUE``).  TLSF had 30
attributes and replayed 2-5% slower for it, dlmalloc 32 (7-8%), GNU malloc 35
(2-4%); the per-word constants became properties (TLSF, GNU malloc) and
dlmalloc's mallopt values one named tuple.

The count is checked after construction under several parameter sets and
after a replay and a build (which goes on from a twin of the heap after each
checkpoint, ``replay._go_on_after``): a policy that adds an attribute late
would cross the line there.  On CPython 3.11 the specialisation itself is
checked too."""

from __future__ import annotations

import dis
import sys
from pathlib import Path

import pytest

from heapscope.allocators.registry import make_strategy, strategy_names
from heapscope.allocators.replay import Timeline, replay_bare
from heapscope.traces import load_trace

#: the most names a class's shared keys hold in CPython 3.11 and 3.12
INLINE_ATTRIBUTES_MAX = 29

TRACE = Path(__file__).resolve().parent.parent / "traces" / "bundled" / "perl-words.rep.gz"
PARAMS = [{}, {"word": 4}, {"pool_size": 1 << 20}, {"heap_limit": 1 << 20}]


@pytest.mark.parametrize("name", strategy_names())
@pytest.mark.parametrize("params", PARAMS, ids=["default", "word4", "pool", "limit"])
def test_a_new_strategy_has_fewer_than_30_attributes(name, params):
    s = make_strategy(name, **params)
    assert len(vars(s)) <= INLINE_ATTRIBUTES_MAX, (
        f"{name} has {len(vars(s))} instance attributes: CPython 3.11 then reads them "
        f"through a dict ({sorted(vars(s))})")


@pytest.mark.parametrize("name", strategy_names())
def test_replay_and_build_add_no_attribute_past_29(name):
    trace = load_trace(str(TRACE))
    s = make_strategy(name)
    replay_bare(trace, s)
    assert len(vars(s)) <= INLINE_ATTRIBUTES_MAX, sorted(vars(s))
    timeline = Timeline(trace, name, checkpoint_every=500).build()
    for strategy in (timeline.strategy, timeline.seek(1234)):
        assert len(vars(strategy)) <= INLINE_ATTRIBUTES_MAX, sorted(vars(strategy))


def _read_attribute_kind(obj, attr: str) -> str:
    """The instruction CPython 3.11 has specialised ``obj.<attr>`` into."""
    namespace: dict = {}
    exec(f"def read(o):\n    for _ in range(64):\n        o.{attr}\n", namespace)
    read = namespace["read"]
    read(obj)
    for ins in dis.get_instructions(read, adaptive=True):
        if ins.argval == attr and ins.opname.startswith("LOAD_ATTR"):
            return ins.opname
    raise AssertionError(f"no attribute read of {attr} found")


@pytest.mark.skipif(sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11),
                    reason="the specialised instruction names are CPython 3.11's")
@pytest.mark.parametrize("name", strategy_names())
def test_attribute_reads_are_specialised_inline(name):
    s = make_strategy(name)
    assert _read_attribute_kind(s, "in_use") == "LOAD_ATTR_INSTANCE_VALUE"


@pytest.mark.skipif(sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11),
                    reason="the specialised instruction names are CPython 3.11's")
def test_the_thirtieth_attribute_is_what_turns_reads_into_dict_lookups():
    """The line the other tests hold, seen on a plain class: 29 names read
    inline, 30 through a dict -- if a later CPython moves it, this says so."""
    def instance(n: int):
        cls = type(f"C{n}", (), {})
        obj = cls()
        for i in range(n):
            setattr(obj, f"a{i}", i)
        return obj
    assert _read_attribute_kind(instance(INLINE_ATTRIBUTES_MAX), "a0") == "LOAD_ATTR_INSTANCE_VALUE"
    assert _read_attribute_kind(instance(INLINE_ATTRIBUTES_MAX + 1), "a0") == "LOAD_ATTR_WITH_HINT"
