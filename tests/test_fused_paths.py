"""The fused bulk paths (``Strategy.bulk_ops``) in lockstep with the readable
policy methods.

A policy written one verb per function, as its original is, may hand bulk
replay fused versions of malloc, free and realloc for speed (TLSF, buddy).
They must be invisible: the same payload for every operation, the same
counters after every operation (search length, probes, splits, merges,
grows: the work units), and the same state of the heap -- every attribute of
the strategy, dicts compared in their order, since free lists are LIFO and
kept as ordered dicts.

Both sides run through the real ``replay_ops`` (``fused=True`` and
``fused=False``), so the bulk record and the replay loop are the ones a
timeline uses.  The kinds are fed through a generator that takes a note of
the heap after each operation before handing over the next one."""

from __future__ import annotations

from itertools import chain, compress
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from heapscope.allocators.registry import make_strategy
from heapscope.allocators.replay import COUNTERS, Program, bulk_record, policy_ops, replay_ops
from heapscope.allocators.strategy import Strategy
from heapscope.traces import load_trace

from .heap_harness import op_sequences
from tests.depth import walked_examples

BUNDLED = Path(__file__).resolve().parent.parent / "traces" / "bundled"
#: the quick suite leaves out the longest (tests/depth.py)
REAL_TRACES = sorted(ex.file for ex in walked_examples() if ex.file.endswith(".rep.gz"))
#: the operations of each real trace run in lockstep: the fused paths reach
#: the same branches in the first 12 000 of each as in the whole traces
#: (docs/testing.md; gcc-cc1's 63 678 were two thirds of the file's CPU)
BUNDLED_OPS = 12_000

#: strategies with a fused path, and the parameters to run them under: both
#: word sizes, a fixed pool, a heap limit (requests fail), alignment, growth
FUSED = {
    "tlsf": [{}, {"word": 4}, {"align": 4}, {"pool_size": 9000}, {"pool_size": 9000, "word": 4},
             {"heap_limit": 12_000}, {"chunk": 0}, {"chunk": 64, "word": 4},
             {"zero_returns_null": True}],
    "buddy": [{}, {"word": 4}, {"align": 16}, {"align": 64, "word": 4}, {"pool_size": 9000},
              {"heap_limit": 12_000}, {"max_order": 6}, {"min_order": 6, "max_order": 9}],
}
CASES = [(name, params) for name, sets in FUSED.items() for params in sets]
CASE_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in params.items()) or 'default'}"
            for name, params in CASES]


#: values that stand for themselves: a container of only these is copied at C speed
PLAIN = {int, float, str, bytes, bool, type(None)}


def plain_items(containers) -> bool:
    """Whether every item of every container (dicts: their values) is plain."""
    return set(map(type, chain.from_iterable(containers))) <= PLAIN


def frozen(value):
    """A comparable copy of a piece of strategy state, dict order included.

    Two states are equal exactly when their copies are; the common shapes
    are copied at C speed (this runs after every operation, on both sides:
    it was most of this file's CPU)."""
    if isinstance(value, dict):
        kinds = set(map(type, value.values()))
        if kinds <= PLAIN:
            return ("dict", tuple(value.items()))
        if len(kinds) == 1 and issubclass(next(iter(kinds)), tuple) and plain_items(value.values()):
            # the live blocks: payload -> LiveBlock, a tuple of ints
            return ("dict of " + next(iter(kinds)).__name__, tuple(value), tuple(value.values()))
        return ("dict", tuple((k, frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        kinds = set(map(type, value))
        if kinds <= PLAIN:
            return (type(value).__name__, tuple(value))
        if len(kinds) == 1 and issubclass(next(iter(kinds)), tuple) and plain_items(value):
            # buddy's chunks: tuples of ints
            return (type(value).__name__ + " of " + next(iter(kinds)).__name__, tuple(value))
        if kinds == {dict}:
            # TLSF's matrix of free lists: a list of hundreds of dicts, most
            # of them empty: which ones are not, and their items in order
            # (all empty dicts are equal), found without a Python frame a dict
            full = tuple(compress(range(len(value)), value))
            dicts = tuple(map(value.__getitem__, full))
            if plain_items(map(dict.values, dicts)):
                return (type(value).__name__ + " of plain dicts", len(value), full,
                        tuple(map(tuple, map(dict.items, dicts))))
        return (type(value).__name__, tuple(frozen(v) for v in value))
    if hasattr(value, "__slots__"):
        return (type(value).__name__, tuple((n, frozen(getattr(value, n))) for n in value.__slots__))
    return value


def heap_state(s: Strategy) -> dict:
    """Every attribute of the strategy but the record of the last operation."""
    return {name: frozen(v) for name, v in vars(s).items() if name != "rec"}


def lockstep_log(name: str, params: dict, ops, fused: bool, state_every: int) -> list:
    """Replay ``ops`` through ``replay_ops``; after each operation note its
    result (the id's payload, or None when it failed), the running counters
    and, every ``state_every`` operations and after the last, the whole state."""
    s = make_strategy(name, **params)
    program = Program()
    log = []

    def note(t: int) -> None:
        ident = ops[t][1]
        entry = program.live.get(ident)
        counts = tuple(getattr(s.rec, c) for c in COUNTERS)
        state = heap_state(s) if (t + 1) % state_every == 0 or t == len(ops) - 1 else None
        log.append((t, ops[t], entry, ident in program.failed_ids, counts, state))

    def kinds():
        # zip() asks for the next kind after each operation: the note of the
        # one before is taken then, while the bulk record is still in place.
        for t, (kind, _, _) in enumerate(ops):
            if t:
                note(t - 1)
            yield kind
        if ops:
            note(len(ops) - 1)

    replay_ops(s, program, kinds(), [op[1] for op in ops], [op[2] for op in ops], fused=fused)
    s.check()
    return log, s, program


def assert_lockstep(name: str, params: dict, ops, state_every: int = 1) -> None:
    want, plain, plain_program = lockstep_log(name, params, ops, False, state_every)
    got, fused, fused_program = lockstep_log(name, params, ops, True, state_every)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if g != w:
            t, op = w[0], w[1]
            for what, i in (("payload", 2), ("failed", 3), ("counters " + ",".join(COUNTERS), 4)):
                assert g[i] == w[i], f"op {t} {op}: {what}: fused {g[i]}, readable {w[i]}"
            diff = sorted(k for k in w[5] if g[5].get(k) != w[5][k])
            raise AssertionError(f"op {t} {op}: the state differs in {diff}")
    assert heap_state(fused) == heap_state(plain)
    assert fused_program.live == plain_program.live
    assert fused_program.failed_ids == plain_program.failed_ids


@pytest.mark.parametrize("name", sorted(FUSED))
def test_the_fused_path_is_in_use(name):
    """Bulk replay gets the fused functions, not the readable methods (else
    the lockstep tests below would compare a path with itself)."""
    s = make_strategy(name)
    bulk_record(s)          # events off, as bulk replay asks
    fused = policy_ops(s, fused=True)
    readable = policy_ops(s, fused=False)
    assert all(f != r for f, r in zip(fused, readable))


@pytest.mark.parametrize("name,params", CASES, ids=CASE_IDS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=op_sequences(max_ops=150, max_size=3000))
def test_random_traces_in_lockstep(name, params, ops):
    assert_lockstep(name, params, ops)


@pytest.mark.parametrize("name,params", CASES, ids=CASE_IDS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=op_sequences(max_ops=60, max_size=200_000))
def test_large_requests_in_lockstep(name, params, ops):
    """Requests past the fused path's tables, past a chunk, past the pool."""
    assert_lockstep(name, params, ops)


@pytest.mark.parametrize("trace", REAL_TRACES)
@pytest.mark.parametrize("name,params", [(n, p) for n, p in CASES if not p or p in (
    {"word": 4}, {"pool_size": 9000})],
    ids=lambda v: v if isinstance(v, str) else ("-".join(f"{k}={x}" for k, x in v.items()) or "default"))
def test_bundled_traces_in_lockstep(trace, name, params):
    """Real recorded traces, op by op, their first BUNDLED_OPS operations;
    the whole heap compared every 1000 ops."""
    t = load_trace(str(BUNDLED / trace))
    ops = list(zip(t.kind.tolist(), t.ids.tolist(), t.sizes.tolist()))[:BUNDLED_OPS]
    assert_lockstep(name, params, ops, state_every=1000)


@pytest.mark.parametrize("name", sorted(FUSED))
def test_a_subclass_replays_with_its_own_methods(name):
    """The fused path stands in for the class's own methods: a subclass
    that changes one (a user strategy built on TLSF, say) is replayed with
    its methods, not the fused copy of its parent's."""
    calls = []

    class Counting(type(make_strategy(name))):
        def _malloc(self, size):
            calls.append(size)
            return super()._malloc(size)

    replay_ops(Counting(), Program(), [0, 0, 1], [0, 1, 0], [10, 20, 0])
    assert calls == [10, 20]


def test_grade_times_the_reference_through_its_readable_methods(monkeypatch):
    """``heapscope grade`` sets a user strategy (plain Python methods) against
    TLSF's throughput: TLSF must run the same way, not through its fused
    path, which would double T_ref and halve every student's score."""
    from heapscope.allocators import grading, plugins
    from heapscope.traces import make_workload

    timed = []
    real = grading.replay_ops

    def watched(strategy, program, kinds, ids, sizes, fused=True):
        timed.append((strategy.name, fused))
        return real(strategy, program, kinds, ids, sizes, fused)

    monkeypatch.setattr(grading, "replay_ops", watched)
    klass = plugins.load_file(str(Path(__file__).resolve().parent.parent / "examples" / "bump.py") + ":Bump")
    try:
        grading.grade(klass, [("vo", make_workload("vo1989", steps=200, seed=1))])
    finally:
        plugins.forget(klass.name)
    reference = [fused for name, fused in timed if name == grading.REFERENCE]
    assert reference and not any(reference)
