"""Stepping back through a timeline: the step-back cache (``BackCache`` in
allocators/replay.py, copies from allocators/state_copy.py) gives exactly the
heap a plain seek gives, and consecutive steps back replay a short span each.

"Exactly" is checked on the whole state: every attribute of strategy and
program (dict order included: :func:`canonical`), the walk, the structure,
the measures the build records, and the shown step's record with its events;
the reference is a plain replay: a timeline never built, with no checkpoints
and no copies, seeked forward once over every position a walk visits
(:func:`forward`, :func:`plain_states`), or, where seeks are counted, a
timeline whose cache keeps nothing (each seek back restores a checkpoint and
replays, as before the cache)."""

import pickle
import random
from itertools import chain, repeat
from pathlib import Path

import pytest

from tests.depth import pick, some_in_quick

from heapscope import traces
from heapscope.allocators import plugins
from heapscope.allocators.free_index import FreeSizeIndex
from heapscope.allocators.registry import strategy_names
from heapscope.allocators.replay import COUNTERS, BackCache, Timeline
from heapscope.allocators.state_copy import copy_state
from heapscope.traces import default_trace_path, read_rep

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def random_trace(seed: int, n: int = 420):
    """Mallocs of small and large sizes, frees and reallocs of live ids."""
    rng = random.Random(seed)
    ops, live, nid = [], [], 0
    for _ in range(n):
        r = rng.random()
        if live and r < 0.4:
            ops.append(("f", live.pop(rng.randrange(len(live)))))
        elif live and r < 0.5:
            ops.append(("r", rng.choice(live), rng.choice([rng.randint(1, 64), rng.randint(1, 3000)])))
        else:
            ops.append(("a", nid, rng.choice([rng.randint(0, 64), rng.randint(1, 3000), rng.randint(1, 40000)])))
            live.append(nid)
            nid += 1
    return traces.Trace.from_ops(ops)


def record_facts(rec):
    if rec is None:
        return None
    return (rec.kind, rec.request, rec.payload, rec.old_payload, rec.failed,
            tuple(getattr(rec, c) for c in COUNTERS), tuple(rec.events or ()))


#: attributes left out: the record of the last operation (checkpoints leave it
#: out too), and what a strategy keeps for the measures' probe (buddy's block
#: at the break, and its upper bound on the highest non-empty AVAIL list, which
#: only the probe lowers), which, like the FreeSizeIndex's heap below, depends
#: on whether the probe ran (the build probes after every step, a seek's replay
#: does not)
PROBE_CACHES = {"rec", "_last_block", "avail_high"}


#: values that stand for themselves (a container of only these is compared as it is)
PLAIN = {int, float, str, bytes, bool, type(None)}


def all_plain(values) -> bool:
    """Only plain values, or tuples of them: compared as they are (a list
    among them is not plain, so a list and a tuple never compare equal)."""
    kinds = set(map(type, values))
    if kinds <= PLAIN:
        return True
    return kinds <= PLAIN | {tuple} and all(set(map(type, v)) <= PLAIN for v in values if type(v) is tuple)


def plain_rows(values) -> bool:
    """Only tuples (named tuples too: the live blocks) of plain values."""
    values = list(values)
    return (all(map(isinstance, values, repeat(tuple)))
            and set(map(type, chain.from_iterable(values))) <= PLAIN)


def unshared(items, seen: dict) -> bool:
    """Whether no item of ``items`` appears twice, nor anywhere before in the
    walk; if so each is noted as seen, in order, as :func:`canonical` notes
    them one by one (so a state whose lists share a dict still differs
    from one whose lists do not)."""
    ids = list(map(id, items))
    if len(set(ids)) != len(ids) or not seen.keys().isdisjoint(ids):
        return False
    for i in ids:
        seen[i] = len(seen)
    return True


def canonical(value, seen=None):
    """Every attribute, in order, of an object graph (the record of the last
    operation left out, as checkpoints leave it out).

    One part is compared by what it holds: a :class:`FreeSizeIndex` by its
    blocks (``by_end``) and total, not its lazy max-heap, whose stale entries
    are popped by the measures' probe; the build probes after every step and
    a seek's replay does not, so even plain seeks reach one position with
    different stale entries in it, depending on where they started."""
    seen = {} if seen is None else seen
    if isinstance(value, (int, float, str, bytes, type(None))):
        return value
    if id(value) in seen:
        return ("seen", seen[id(value)])
    seen[id(value)] = len(seen)
    if isinstance(value, FreeSizeIndex):
        extra = tuple((n, canonical(getattr(value, n), seen)) for n in ("addrs", "bytes") if hasattr(value, n))
        return (type(value).__name__, value.total, tuple(value.by_end.items()), extra)
    if isinstance(value, dict):
        if set(map(type, value)) <= PLAIN:
            if all_plain(value.values()):
                return ("dict", tuple(value.items()))       # the common case, at C speed
            if plain_rows(value.values()):
                # the live blocks: named tuples of ints, compared with their
                # types (immutable, so whether two are one object cannot matter)
                return ("dict", tuple(value.items()), tuple(map(type, value.values())))
        return ("dict", tuple((canonical(k, seen), canonical(v, seen)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        if all_plain(value):
            return (type(value).__name__, tuple(value))
        if (set(map(type, value)) == {dict} and set(map(type, chain.from_iterable(value))) <= PLAIN
                and all_plain(chain.from_iterable(map(dict.values, value))) and unshared(value, seen)):
            # TLSF's matrix of free lists: hundreds of plain dicts, each
            # what canonical() makes of it, without a Python frame a dict
            return (type(value).__name__, tuple(zip(repeat("dict"), map(tuple, map(dict.items, value)))))
        return (type(value).__name__, tuple(canonical(v, seen) for v in value))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(map(repr, value))))
    attrs = [(n, v) for n, v in getattr(value, "__dict__", {}).items() if n not in PROBE_CACHES]
    for c in type(value).__mro__:
        for n in c.__dict__.get("__slots__", ()):
            if n not in ("__dict__", "__weakref__") and hasattr(value, n):
                attrs.append((n, getattr(value, n)))
    return (type(value).__name__, tuple((n, canonical(v, seen)) for n, v in attrs))


def state_of(tl: Timeline) -> dict:
    s = tl.strategy
    return {
        "position": tl.position,
        "state": canonical((s, tl.program)),
        "walk": s.walk_tuples(),
        "structure": s.structure(),
        "measures": (s.arena.brk, s.in_use, s.header_in_use, s.fragmentation_probe(), len(s.live),
                     tl.program.live_bytes, sorted(tl.program.failed_ids)),
        "record": record_facts(tl.last_record),
        "describe": tl.describe(),
    }


def moves(start: int, n: int, count: int, rng: random.Random) -> list[int]:
    """The positions of a walk back from ``start``: mostly single steps back,
    now and then a step forward, a longer move back or a jump."""
    t, out = start, []
    for _ in range(count):
        r = rng.random()
        if r < 0.75:
            t = t - 1
        elif r < 0.85:
            t = t + 1
        elif r < 0.95:
            t = t - rng.randint(2, 60)
        else:
            t = rng.randint(0, n)
        t = min(max(t, 0), n)
        out.append(t)
    return out


def plain_states(ref: Timeline, positions) -> dict:
    """:func:`state_of` the plain timeline ``ref`` at each of ``positions``,
    from one pass forward over them (each state noted once: a seek forward
    replays from where the timeline stands, restoring nothing)."""
    states = {}
    for t in sorted(set(positions)):
        ref.seek(t)
        states[t] = state_of(ref)
    return states


def forward(trace, name, params=None) -> Timeline:
    """The plain reference of a walk (:func:`walk_back`): a timeline never
    built, with no checkpoints and no copies, seeked forward only -- each
    heap the trace's operations replayed from the start, in one pass."""
    tl = Timeline(trace, name, params, checkpoints=False)
    tl.back_cache = BackCache(states=0)
    return tl


def walk_back(tl: Timeline, ref: Timeline, start: int, count: int, rng: random.Random) -> None:
    """Mostly single steps back, now and then a step forward, a longer move
    back or a jump (:func:`moves`); after each, the heap equals the plain
    seek's (``ref``'s, noted at every position of the walk beforehand)."""
    walk = moves(start, tl.n, count, rng)
    wanted = plain_states(ref, walk)
    tl.seek(start)
    for i, t in enumerate(walk):
        tl.seek(t)
        got, want = state_of(tl), wanted[t]
        for part in want:
            assert got[part] == want[part], f"{tl.strategy_name} at {t} (move {i}): {part} differs"


PARAMS = [{}, {"word": 4}, {"pool_size": 60_000}, {"heap_limit": 50_000}]


def params_id(params: dict) -> str:
    return "-".join(f"{k}={v}" for k, v in params.items()) or "default"


def strategy_and_params_pairs(params_list):
    """(strategy, params) pairs: every pair in the deep suite; in the quick
    one each strategy with the defaults (``params_list[0]``, ``{}``) and with
    one of the others in turn (strategy i with params j >= 1 when i + j is a
    multiple of ``len(params_list) - 1``), so every strategy meets a
    parameter and every parameter a share of the strategies; the other
    pairs marked ``deep`` (tests/depth.py; docs/testing.md's table)."""
    others = len(params_list) - 1
    return [pytest.param(name, params, id=f"{name}-{params_id(params)}",
                         marks=() if j == 0 or (i + j) % others == 0 else pytest.mark.deep)
            for i, name in enumerate(strategy_names()) for j, params in enumerate(params_list)]


@pytest.mark.parametrize("name, params", strategy_and_params_pairs(PARAMS))
def test_steps_back_give_the_heap_a_plain_seek_gives(name, params):
    for seed in pick((1,), (1, 2)):
        trace = random_trace(seed)
        tl = Timeline(trace, name, params, checkpoint_every=150).build()
        # 70 moves in the quick suite, 140 with --deep
        walk_back(tl, forward(trace, name, params), len(trace), pick(70, 140), random.Random(seed))
        assert tl.copies_taken >= 30, "the steps back did not start from the cache's copies"


@pytest.mark.parametrize("name", some_in_quick(strategy_names()))
def test_a_small_cache_still_gives_the_same_heaps(name):
    """Two copies at most: the cache is refilled often, never wrong."""
    trace = random_trace(5)
    tl = Timeline(trace, name, checkpoint_every=200).build()
    tl.back_cache = BackCache(states=2)
    walk_back(tl, forward(trace, name), len(trace), 120, random.Random(5))
    assert len(tl.back_cache) <= 2


@pytest.fixture(scope="module")
def default_trace():
    return read_rep(default_trace_path())


@pytest.fixture(scope="module")
def built_once(default_trace):
    """``built_once(name, every)``: a fresh timeline of the bundled trace
    built with checkpoints every ``every`` steps, positioned at its end as a
    build leaves it -- the build done once a module (pickled, as a worker
    ships it: :meth:`Timeline.export`), each test given its own timeline
    (:meth:`Timeline.from_built`, as the window takes a worker's build), with
    its own counters, cache and copies of everything a seek changes."""
    blobs = {}

    def built(name: str, every: int) -> Timeline:
        if (name, every) not in blobs:
            tl = Timeline(default_trace, name, checkpoint_every=every).build()
            blobs[name, every] = pickle.dumps(tl.export(), protocol=pickle.HIGHEST_PROTOCOL)
        return Timeline.from_built(default_trace, pickle.loads(blobs[name, every]))

    return built


#: the quick suite walks the bundled trace with the four strategies of
#: tests/depth.py (a ring, a tree, bitmaps, buddies); every strategy's copies
#: are checked on the random traces in both suites (and by
#: test_a_copy_is_the_heap_itself), and every strategy walks the bundled
#: trace in the deep one
@pytest.mark.parametrize("name", some_in_quick(strategy_names()))
def test_steps_back_on_the_bundled_trace(default_trace, built_once, name):
    tl = built_once(name, 1500)
    walk_back(tl, forward(default_trace, name), 9_000, pick(30, 80), random.Random(3))


def test_a_user_strategy_steps_back_as_it_seeks():
    """A strategy of one's own is copied through pickle (its state may be anything that pickles)."""
    plugins.load_file(f"{EXAMPLES / 'segfit.py'}:SegFit")
    try:
        trace = random_trace(7)
        tl = Timeline(trace, "segfit", checkpoint_every=150).build()
        walk_back(tl, forward(trace, "segfit"), len(trace), 100, random.Random(7))
        assert tl.copies_taken > 30
    finally:
        plugins.forget("segfit")


@pytest.mark.parametrize("name", strategy_names())
def test_a_copy_is_the_heap_itself(name):
    """copy_state: the same pickle (every attribute, dict order, sharing), a
    fresh record, and replaying on the copy leaves the original as it was."""
    trace = random_trace(11)
    tl = Timeline(trace, name, checkpoints=False).build()
    blob = pickle.dumps((tl.strategy, tl.program), protocol=pickle.HIGHEST_PROTOCOL)
    twin, prog, size = copy_state(tl.strategy, tl.program)
    assert pickle.dumps((twin, prog), protocol=pickle.HIGHEST_PROTOCOL) == blob
    assert twin.rec is not tl.strategy.rec and twin.rec.events is None
    assert size > 0
    for addr in list(prog.live.values())[:5]:
        twin.free(addr[0])
    twin.malloc(100)
    assert pickle.dumps((tl.strategy, tl.program), protocol=pickle.HIGHEST_PROTOCOL) == blob


# ------------------------------------------------------------ replay counts
def back_steps(tl: Timeline, start: int, steps: int) -> list[int]:
    """Operations each of ``steps`` steps back from ``start`` replayed."""
    tl.seek(start)
    counts = []
    for _ in range(steps):
        before = tl.replayed_ops
        tl.step_back()
        counts.append(tl.replayed_ops - before)
    return counts


def test_consecutive_steps_back_replay_a_short_span_each(built_once):
    tl = built_once("tlsf", 4000)
    counts = back_steps(tl, 11_900, 200)
    # the jump back from the end keeps no copies; the first step back
    # replays from the checkpoint at 8000 to 11 898 and the shown step, and
    # keeps copies every isqrt(3898) = 62 steps below 11 898 ...
    assert counts[0] == 11_899 - 8000
    assert tl.copies_kept == 8
    # ... and each next step back starts from the nearest copy: at most 62
    # steps and the shown one (plain seeks: 3700-3900 each, below)
    assert max(counts[1:]) <= 63
    assert sum(counts[1:]) <= 199 * 34       # half the spacing on average, and the step shown
    assert tl.restores == 2                   # the jump and the first step back
    plain_tl = built_once("tlsf", 4000)
    plain_tl.back_cache = BackCache(states=0)
    # each of them the same long replay from the checkpoint (200 of them
    # in the deep suite, the first 20 in the quick one: the same at every step)
    plain_steps = pick(20, 200)
    plain_counts = back_steps(plain_tl, 11_900, plain_steps)
    assert min(plain_counts) > 3000 and plain_tl.restores == plain_steps + 1


def test_a_jump_back_keeps_no_copies(built_once):
    tl = built_once("tlsf", 4000)
    for t in (15_000, 11_900, 9000, 8500):
        tl.seek(t)
    assert tl.copies_kept == 0 and len(tl.back_cache) == 0
    tl.seek(8500 - 16)          # a short move back: stepping back
    assert tl.copies_kept > 0


def test_the_cache_is_refilled_below_its_lowest_copy(built_once):
    """Past the copies' window (8 x 62 steps), one more long replay keeps
    the next window; steps back stay short on both sides of it."""
    tl = built_once("next-fit", 4000)
    counts = back_steps(tl, 11_900, 700)
    long = [i for i, c in enumerate(counts) if c > 63]
    # the first step back, and one past 8 x 62 steps below it
    assert long == [0, 497], long
    assert tl.restores <= 3
    assert len(tl.back_cache) <= 8


def test_the_cache_holds_at_most_its_states_and_bytes(built_once):
    tl = built_once("splay-best-fit", 4000)
    tl.seek(11_700)
    one = copy_state(tl.strategy, tl.program)[2]      # what one copy holds about there
    tl.seek(tl.n)
    tl.back_cache = BackCache(states=8, max_bytes=int(3.5 * one))
    back_steps(tl, 11_900, 150)
    cache = tl.back_cache
    assert 1 <= len(cache) <= 3
    assert cache.bytes <= cache.max_bytes and cache.peak_bytes <= cache.max_bytes
    tl.back_cache = BackCache(states=3)
    back_steps(tl, 11_900, 150)
    assert len(tl.back_cache) == 3


def test_forward_seeks_keep_no_copies(built_once):
    tl = built_once("tlsf", 4000)
    for t in (0, 100, 5000, 5001, 9000, 12_000, tl.n):     # 0: back from the end, replaying nothing
        tl.seek(t)
    assert tl.copies_kept == 0 and len(tl.back_cache) == 0


def test_a_rebuild_forgets_the_copies(built_once):
    tl = built_once("tlsf", 4000)
    back_steps(tl, 11_900, 3)
    assert len(tl.back_cache)
    tl.build()
    assert len(tl.back_cache) == 0


def test_before_uses_the_copies(built_once):
    """The heap before the shown step (micro-steps, animations) starts from
    a copy when one is nearer than the checkpoint, and is the same heap."""
    tl = built_once("tlsf", 4000)
    back_steps(tl, 11_900, 5)
    restores, replayed = tl.restores, tl.replayed_ops
    before = tl.before()
    assert tl.restores == restores and tl.replayed_ops - replayed <= 63
    ref = built_once("tlsf", 4000)
    ref.back_cache = BackCache(states=0)
    ref.seek(tl.position)
    want = ref.before()
    assert (before.blocks, before.structure, before.ids) == (want.blocks, want.structure, want.ids)


@pytest.mark.parametrize("name", strategy_names())
def test_flat_state_holds_immutable_items(built_once, name):
    """What a strategy declares ``flat_state`` (copied without looking at
    the items) holds ints, None and tuples of them only, along the trace."""
    tl = built_once(name, 1500)
    cls = type(tl.strategy)
    for t in range(0, tl.n + 1, 2500):
        s = tl.seek(t)
        containers = [(attr, getattr(s, attr)) for attr in cls.flat_state]
        for attr in cls.flat_lists:
            assert type(getattr(s, attr)) is list
            containers += [(attr, c) for c in getattr(s, attr)]
        for attr, value in containers:
            assert type(value) in (dict, list, set), f"{name}.{attr} is a {type(value).__name__}"
            items = list(value.items()) if isinstance(value, dict) else list(value)
            flat_items = [x for item in items for x in (item if isinstance(item, tuple) else (item,))]
            nested = [x for item in flat_items if isinstance(item, tuple) for x in item]
            assert all(isinstance(x, (int, type(None))) for x in
                       [x for x in flat_items if not isinstance(x, tuple)] + nested), f"{name}.{attr} at {t}"


def test_short_moves_forward_after_steps_back_take_no_copy(built_once):
    """Moving forward again by a few steps passes the copies kept above:
    replaying a few steps costs less than copying the heap."""
    tl = built_once("tlsf", 4000)
    back_steps(tl, 11_900, 150)
    taken = tl.copies_taken
    for _ in range(30):
        before = tl.replayed_ops
        tl.seek(tl.position + 5)
        assert tl.replayed_ops - before == 5
    assert tl.copies_taken == taken
