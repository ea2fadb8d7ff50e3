"""Lessons (issue 23, docs/lessons.md): the file format, its claims checked
against the replay, ``heapscope lesson check`` and the bundled lessons.

Expected values are worked by hand from the policies (K&R 8.7's header
units, Knuth's powers of two) or taken from a Timeline replay done here, not
from the lesson checker."""

import functools
import re
import textwrap

import pytest

from heapscope.allocators.replay import Timeline
from heapscope.cli import main
from heapscope.lessons import LessonError, bundled_lessons, lesson_path, load_lesson, load_lesson_text
from heapscope.traces.readable import parse_readable

BUDDY_TRACE = """\
a = malloc(100)
b = malloc(100)
free(a)
free(b)
"""


def lesson(body: str, front: str = 'strategy = "buddy"\n[params]\nmax_order = 10') -> str:
    """A lesson of the buddy trace above with ``body`` as its stops; the
    trace's first line is file line 4."""
    return f'+++\ntrace = """\n{BUDDY_TRACE}"""\n{front}\n+++\n{textwrap.dedent(body)}'


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


@functools.lru_cache(maxsize=None)
def bundled(name: str):
    """A bundled lesson loaded once for the whole module (vo1989-table
    replays 20 000 operations three times)."""
    return load_lesson(lesson_path(name))


def claims_at(loaded, step: int, event=None) -> list[str]:
    return [c.text for s in loaded.stops if s.step == step and s.event == event for c in s.claims]


def step_events(timeline, step: int) -> list:
    timeline.seek(step)
    return list(timeline.last_record.events or [])


# ------------------------------------------------------------------ bundled

def test_there_are_bundled_lessons_and_each_loads_with_every_claim_holding():
    paths = bundled_lessons()
    # the seven of issue 23, one for each policy of the design card and the seeds
    assert {p.stem for p in paths} >= {"roving-pointer", "buddy-splits-and-merges", "tlsf-bins",
                                       "free-list-rotation", "splay-tree-rebalancing", "vo1989-table",
                                       "malloc-lab-utilisation"}
    for path in paths:
        loaded = bundled(path.stem)          # raises on any false claim
        assert loaded.claim_count() >= 5, path
        assert all(s.claims for s in loaded.stops[1:]) or loaded.claim_count() > len(loaded.stops)
        # each states its length, and it fits a 50-minute slot
        assert isinstance(loaded.minutes, int) and 0 < loaded.minutes <= 50, path
        # ... and says so to the class, in its introduction
        assert re.search(rf"\b{loaded.minutes}\s+minutes", loaded.text.intro), path
    for name in ("free-list-rotation", "splay-tree-rebalancing", "vo1989-table", "malloc-lab-utilisation"):
        assert 6 <= len(bundled(name).stops) <= 12, name


def test_roving_pointer_places_are_where_a_replay_of_its_trace_puts_them():
    loaded = load_lesson(lesson_path("roving-pointer"))
    trace = parse_readable(loaded.text.front["trace"])
    names = "a x b y c z - - - d e f g".split()   # the trace's ops, freed ones as '-'

    def payload_of(strategy: str, name: str) -> int:
        timeline = Timeline(trace, strategy, {"nalloc": 1})
        timeline.seek(names.index(name) + 1)
        return timeline.last_record.payload

    # K&R 8.7 with NALLOC 1: each block is its header unit (16 bytes) plus
    # the request rounded up to units, laid out from 0 in request order:
    # a 0..0xe0 (224), x 0xe0..0x100 (32), b 0x100..0x1e0 ...; a payload is
    # just past its header
    assert payload_of("first-fit", "a") == 0x10 and payload_of("first-fit", "b") == 0x110
    assert payload_of("first-fit", "c") == 0x210
    # d (40 bytes: 4 units, 64 bytes) is cut from the top of a's hole by
    # first fit, of c's hole (where free left the roving pointer) by next fit
    assert payload_of("first-fit", "d") == 0xe0 - 64 + 16 == 0xb0
    assert payload_of("next-fit", "d") == 0x2e0 - 64 + 16 == 0x2b0
    # the exact fit: g takes b's hole under first fit, a's under next fit
    assert payload_of("first-fit", "g") == payload_of("first-fit", "b")
    assert payload_of("next-fit", "g") == payload_of("next-fit", "a")
    claims = [c.text for s in loaded.stops for c in s.claims]
    assert "first-fit places g at the address b had" in claims
    assert "next-fit places g at the address a had" in claims


def test_buddy_lesson_counts_are_knuths():
    loaded = load_lesson(lesson_path("buddy-splits-and-merges"))
    by_step = {s.step: [c.text for c in s.claims] for s in loaded.stops}
    # 100 bytes + an 8-byte header need 2**7; a chunk of 2**10 is halved 10 - 7 times
    assert "splits 3 times" in by_step[1]
    # freeing d (0x0) finds b's block (0x0 ^ 0x80) free, then 0x100 (0x0 ^ 0x100): two merges
    assert "merges twice" in by_step[7]


def _tlsf_classes(size: int, search: bool) -> tuple[int, int]:
    """Conte's mapping_insert / mapping_search on LP64 (FL_INDEX_SHIFT 8,
    32 second-level lists), worked here from tlsf.c's formulas."""
    if search and size >= 256:
        size += (1 << (size.bit_length() - 1 - 5)) - 1
    if size < 256:
        return 0, size // 8
    f = size.bit_length() - 1
    return f - 7, (size >> (f - 5)) ^ 32


def test_tlsf_lesson_classes_are_conte_mapping():
    from heapscope.allocators.events import ListInsert, MappingSearch
    loaded = load_lesson(lesson_path("tlsf-bins"))
    timeline = loaded.timelines["tlsf"]

    def events(step):
        timeline.seek(step - 1)
        timeline.seek(step)
        return list(timeline.last_record.events)

    # b (520 bytes) freed goes to (2, 0); d asking 520 searches from (2, 1), above it
    assert _tlsf_classes(520, search=False) == (2, 0)
    assert _tlsf_classes(520, search=True) == (2, 1)
    assert _tlsf_classes(504, search=True) == (1, 31)      # e: 500 aligned to 504
    assert [e.where for e in events(6) if isinstance(e, ListInsert)] == [(2, 0)]
    assert [(e.fl, e.sl) for e in events(8) if isinstance(e, MappingSearch)] == [(2, 1)]
    assert [(e.fl, e.sl) for e in events(9) if isinstance(e, MappingSearch)] == [(1, 31)]
    texts = {s.step: [c.text for c in s.claims] for s in loaded.stops}
    assert "places e at the address b had" in texts[9] and "search == 2" in texts[7]


def test_free_list_rotation_places_are_kruses_ring_order():
    loaded = bundled("free-list-rotation")
    # Knuth's boundary tags on LP64: a block is the request + a header and a
    # footer word, rounded to 8 bytes: 200 -> 216, 16 -> 32, 40 -> 56.
    # a at 0, x at 0xd8, b at 0xf8, y at 0x1d0, c at 0x1f0, z at 0x2c8.
    hole = {"a": 0x0, "b": 0xf8, "c": 0x1f0}
    # LIFO pushes make the ring c, b, a; each 40-byte request is cut from the
    # upper end of the head's hole (Knuth A4) and the head moves on to the
    # successor: c, b, a, c, b, a.  A payload is one word into its block.
    left = {"a": 216, "b": 216, "c": 216}
    places = {}
    for name, at in zip("defghi", "cbacba"):
        left[at] -= 56
        places[name] = hole[at] + left[at] + 8
    assert places["d"] == 0x298 and places["g"] == 0x260
    for step, name in ((10, "d"), (11, "e"), (12, "f"), (13, "g")):
        assert f"rotating-list places {name} at {places[name]:#x}" in claims_at(loaded, step)
    # every hole is down to 104 bytes, too small for j's 120 (100 + 16)
    assert set(left.values()) == {104} and "rotating-list largest_free == 104" in claims_at(loaded, 15)
    assert "rotating-list grows once" in claims_at(loaded, 16)
    # first fit (K&R units of 16 bytes): 40 -> 4 units, cut from the top of a's
    # 224-byte hole (0x0..0xe0) three times, leaving a 32-byte splinter
    assert [0xe0 - 64 * k + 16 for k in (1, 2, 3)] == [0xb0, 0x70, 0x30]
    assert "first-fit places f at 0x30" in claims_at(loaded, 12)
    assert "first-fit search == 2" in claims_at(loaded, 13)      # past the splinter


def _splay_kinds(order: list[int], needs: list[int]) -> list[list[str]]:
    """Sleator & Tarjan's bottom-up splay, worked independently of the
    strategy on a plain dict tree: keys inserted as leaves in ``order``;
    each request takes the least key >= need (stopping at an exact key),
    splays it to the root, removes it and joins its subtrees by splaying
    the right subtree's least key to its top.  The splay-step kinds of each
    request, in order."""
    left, right, up = {}, {}, {}
    root = None
    for k in order:
        if root is None:
            root, up[k] = k, None
        else:
            x = root
            while True:
                side = left if k < x else right
                if side.get(x) is None:
                    side[x], up[k] = k, x
                    break
                x = side[x]

    def rotate(x):
        p, g = up[x], up[up[x]]
        if left.get(p) == x:
            left[p], right[x] = right.get(x), p
            inner = left[p]
        else:
            right[p], left[x] = left.get(x), p
            inner = right[p]
        if inner is not None:
            up[inner] = p
        up[p], up[x] = x, g
        if g is not None:
            if left.get(g) == p:
                left[g] = x
            else:
                right[g] = x

    def splay(x, kinds):
        while up[x] is not None:
            p = up[x]
            g = up[p]
            if g is None:
                kinds.append("zig")
                rotate(x)
            elif (left.get(g) == p) == (left.get(p) == x):
                kinds.append("zig-zig")
                rotate(p)
                rotate(x)
            else:
                kinds.append("zig-zag")
                rotate(x)
                rotate(x)

    out = []
    for need in needs:
        kinds: list[str] = []
        x, best = root, None
        while x is not None:
            if x >= need:
                best = x
                if x == need:
                    break
                x = left.get(x)
            else:
                x = right.get(x)
        splay(best, kinds)
        lo, hi = left.pop(best, None), right.pop(best, None)
        if lo is None or hi is None:
            root = hi if lo is None else lo
            if root is not None:
                up[root] = None
        else:
            up[hi] = up[lo] = None
            least = hi
            while left.get(least) is not None:
                least = left[least]
            splay(least, kinds)
            left[least], up[lo], root = lo, least, least
        out.append(kinds)
    return out


def test_splay_lesson_rotations_are_sleator_and_tarjans():
    loaded = bundled("splay-tree-rebalancing")
    # the lesson frees holes of 512, 256, 768, 128, 384, 640, 896, 320 bytes,
    # then asks for blocks of 320, 128 and 512 (requests + an 8-byte header)
    expected = _splay_kinds([512, 256, 768, 128, 384, 640, 896, 320], [320, 128, 512])
    assert expected == [["zig-zag", "zig", "zig"], ["zig-zig"], ["zig-zig", "zig"]]
    from heapscope.allocators.events import Rotation
    timeline = loaded.timelines["splay-best-fit"]
    for step, kinds in zip((25, 26, 27), expected):
        assert [e.kind for e in step_events(timeline, step) if isinstance(e, Rotation)] == kinds
    assert "event 5 is a zig-zag" in claims_at(loaded, 25, event=5)
    assert "event 6 is a zig" in claims_at(loaded, 25, event=6)
    assert {"zig-zags once", "zigs twice", "rotations == 4"} <= set(claims_at(loaded, 25))
    assert {"zig-zigs once", "zigs never", "rotations == 2"} <= set(claims_at(loaded, 26))
    # lesson check names the event a stop inside a step shows
    index = next(i for i, s in enumerate(loaded.stops) if s.event == 5)
    assert any("splay step zig-zag on the node of size 320" in line for line in loaded.describe(index))


def _bsd_block(request: int, header: int = 4, page: int = 1024) -> int:
    """4.3BSD malloc.c's bucket for a request (up to page - header bytes): the
    least 2**k >= 8 holding the request and its header; morecore gives a
    bucket of a page or more one page more ("2**n+pagesize")."""
    block = 8
    while block - header < request:
        block *= 2
    return block + page if block >= page else block


def test_vo1989_lesson_numbers_are_the_bucket_rule_worked_by_hand():
    text = lesson_path("vo1989-table").read_text()
    blocks = [_bsd_block(r) for r in range(1, 1001)]     # Vo's sizes, U[1, 1000]
    mean_block, mean_request = sum(blocks) / 1000, 500.5
    assert blocks.count(2048) == 492 and _bsd_block(508) == 512 and _bsd_block(509) == 2048
    for figure in (f"{mean_block:.1f}", f"{mean_block / mean_request:.2f}",
                   f"{mean_block - mean_request:.1f}", f"{492 * 1024 / 1000:.1f}", "492"):
        assert figure in text, figure                     # 1182.4, 2.36, 681.9, 503.8
    loaded = bundled("vo1989-table")
    assert f"bsd-buckets in_use == {_bsd_block(735)}" in claims_at(loaded, 1)   # malloc(735)
    # at the peak the live blocks cost what the rule predicts, within 1%
    peak = claims_at(loaded, 17712)
    in_use = next(int(c.split("== ")[1]) for c in peak if c.startswith("bsd-buckets in_use"))
    live = next(int(c.split("== ")[1]) for c in peak if c.startswith("live =="))
    assert abs(in_use / live - mean_block / mean_request) < 0.01 * mean_block / mean_request
    # Vo's waste, (max H - max L) / max L, from metrics.summarize: inside the
    # bounds the last stop claims
    from heapscope.allocators.metrics import summarize
    end = claims_at(loaded, 20000)
    for name, timeline in loaded.timelines.items():
        row = summarize(timeline.series)
        waste = (row["max_heap"] - row["max_live"]) / row["max_live"]
        low = float(next(c for c in end if c.startswith(f"{name} waste >")).split("> ")[1])
        high = float(next(c for c in end if c.startswith(f"{name} waste <")).split("< ")[1])
        assert low < waste < high, name
        assert row["search_mean"] == pytest.approx(timeline.series.search[timeline.series.is_malloc].mean())


def test_malloc_lab_lesson_utilisation_is_what_grade_computes():
    from heapscope.allocators.grading import trace_peak_live, utilisation
    loaded = bundled("malloc-lab-utilisation")
    text = lesson_path("malloc-lab-utilisation").read_text()
    # grade's U: the trace's own peak payload (from its ops alone) over the final heap
    peak = trace_peak_live(loaded.trace)
    assert f"peak_live == {peak}" in claims_at(loaded, len(loaded.trace))
    for name, timeline in loaded.timelines.items():
        u = utilisation(peak, int(timeline.series.heap[-1]), 0)
        end = claims_at(loaded, len(loaded.trace))
        low = float(next(c for c in end if c.startswith(f"{name} peak_util >")).split("> ")[1])
        high = float(next(c for c in end if c.startswith(f"{name} peak_util <")).split("< ")[1])
        assert low < u < high, name
    first_fit = utilisation(peak, int(loaded.timelines["first-fit"].series.heap[-1]), 0)
    assert f"{first_fit:.3f}" == "0.701" and "0.701" in text
    # the doubling realloc to 131,080 bytes: K&R grows by the request in
    # 16-byte units plus a header unit; the buddy needs 131,088 > 2**17: 2**18
    def heap_claim(name, step):
        return next(int(c.split("== ")[1]) for c in claims_at(loaded, step) if c.startswith(f"{name} heap =="))
    assert heap_claim("first-fit", 12977) - heap_claim("first-fit", 12976) == (-(-131080 // 16) + 1) * 16
    assert heap_claim("buddy", 12977) - heap_claim("buddy", 12976) == 2 ** 18


# ------------------------------------------------------------------ claims

def test_a_claim_that_holds_and_its_false_twin():
    # a 128-byte block from a 1024 chunk: 3 splits (Knuth R3), by hand
    good = lesson("""
        ## a
        step: 1
        expect: buddy splits 3 times
        expect: heap == 1024
        """)
    assert load_lesson_text(good, "good.md").claim_count() == 2
    bad = good.replace("splits 3 times", "splits 2 times")
    with pytest.raises(LessonError) as info:
        load_lesson_text(bad, "bad.md")
    assert str(info.value).startswith(f"bad.md:{line_of(bad, 'splits 2 times')}: claim is false")
    assert "3 times" in str(info.value)


def test_a_false_place_claim_is_reported_with_its_line():
    text = lesson("""
        ## b sits beside a
        step: 2
        expect: places b at the address a had
        """)
    with pytest.raises(LessonError) as info:
        load_lesson_text(text, "place.md")
    assert info.value.line == line_of(text, "places b at") and info.value.path == "place.md"
    # b is a's buddy: 0x80 past it (2**7), payloads 8 bytes past the header
    assert "0x88" in str(info.value) and "0x8" in str(info.value)


def test_merges_and_measures_are_checked():
    text = lesson("""
        ## a freed, b busy
        step: 3
        expect: merges never
        ## b freed
        step: 4
        expect: merges 3 times
        expect: largest_free == 1024
        expect: frag < 0.01
        """)
    loaded = load_lesson_text(text)
    assert [s.step for s in loaded.stops] == [3, 4]
    for wrong, line in (("merges 3 times", "merges 2 times"), ("frag < 0.01", "frag > 0.5"),
                        ("largest_free == 1024", "largest_free == 512")):
        bad = text.replace(wrong, line)
        with pytest.raises(LessonError) as info:
            load_lesson_text(bad, "m.md")
        assert info.value.line == line_of(bad, line)


def test_a_claim_naming_no_strategy_must_hold_for_each():
    roving = lesson_path("roving-pointer").read_text()
    front = roving[:roving.index("+++", 3) + 3]
    # d's place: 0xb0 under first fit, 0x2b0 under next fit (worked above)
    text = front + "\n## d\nstep: 10\nexpect: first-fit places d at 0xb0\nexpect: splits once\n"
    assert load_lesson_text(text).claim_count() == 2
    unqualified = text.replace("first-fit places d", "places d")
    with pytest.raises(LessonError) as info:
        load_lesson_text(unqualified, "r.md")
    assert "next-fit places d at 0x2b0, not at 0xb0" in str(info.value)
    assert info.value.line == line_of(unqualified, "places d at")


SPLAY_TRACE = """\
h512 = malloc(504)
s0 = malloc(8)
h256 = malloc(248)
s1 = malloc(8)
h384 = malloc(376)
s2 = malloc(8)
free(h512)
free(h256)
free(h384)
a = malloc(376)
"""


def test_splay_step_and_event_claims_and_their_false_twins():
    # leaf insertion: 512 the root, 256 its left child, 384 256's right child.
    # a's block of 384 is the right child of a left child: one zig-zag (two
    # rotations) raises it; the join then finds 512, the right subtree's
    # least node, at its top already: no more rotations.  Events: three
    # visits, then the zig-zag.
    text = f'+++\ntrace = """\n{SPLAY_TRACE}"""\nstrategy = "splay-best-fit"\n+++\n' + textwrap.dedent("""
        ## a
        step: 10
        expect: zig-zags once
        expect: zigs never
        expect: zig-zigs never
        expect: rotations == 2
        expect: event 1 is a Visit
        expect: event 4 is a zig-zag
        expect: splay-best-fit event 3 is Visit
        """)
    assert load_lesson_text(text).claim_count() == 7
    for good, bad, words in (
            ("zigs never", "zigs once", "zigs 0 times in step 10, not 1"),
            ("zig-zags once", "zig-zags twice", "zig-zags 1 times in step 10, not 2"),
            ("rotations == 2", "rotations == 3", "rotations after step 10 is 2"),
            ("event 4 is a zig-zag", "event 4 is a zig", "event 4 of step 10 is a Rotation (zig-zag), not zig"),
            ("event 1 is a Visit", "event 1 is a Split", "event 1 of step 10 is a Visit, not Split"),
            ("event 1 is a Visit", "event 40 is a Visit", "no event 40")):
        wrong = text.replace(f"expect: {good}\n", f"expect: {bad}\n")
        with pytest.raises(LessonError) as info:
            load_lesson_text(wrong, "splay.md")
        assert info.value.line == line_of(wrong, f"expect: {bad}"), bad
        assert str(info.value).startswith(f"splay.md:{info.value.line}: claim is false")
        assert words in str(info.value), str(info.value)
    # a misspelt type is a claim heapscope cannot read, at its line, not a false one
    typo = text.replace("expect: event 1 is a Visit\n", "expect: event 1 is a Vist\n")
    with pytest.raises(LessonError) as info:
        load_lesson_text(typo, "splay.md")
    assert info.value.line == line_of(typo, "is a Vist") and "unknown event type 'Vist'" in str(info.value)
    assert "TreeJoin" in str(info.value)


RUN_TRACE = """\
a = malloc(100)
b = malloc(50)
free(a)
c = malloc(200)
"""


def test_run_measure_claims_over_the_steps_so_far():
    # first fit with NALLOC 1 (K&R units of 16 bytes, one of them the header):
    # a takes 8 units (128 bytes), b 5 (80): H = 208 after step 2, L = 150.
    # free(a) leaves L = 50; c needs 14 units (224): a's hole is too small, the
    # heap grows to 432 and L = 250.  Searches: 1, 1 (each takes the new
    # memory) and 2 (a's hole, then the new memory).
    text = f'+++\ntrace = """\n{RUN_TRACE}"""\nstrategy = "first-fit"\n[params]\nnalloc = 1\n+++\n' + \
        textwrap.dedent("""
        ## after free(a)
        step: 3
        expect: live == 50
        expect: peak_live == 150
        expect: peak_heap == 208
        expect: waste > 0.3866
        expect: waste < 0.3867
        expect: peak_util > 0.7211
        expect: peak_util < 0.7212
        expect: mean_search == 1
        ## c
        step: 4
        expect: peak_live == 250
        expect: heap == 432
        expect: peak_util > 0.5787
        expect: peak_util < 0.5788
        expect: mean_search > 1.3333
        expect: mean_search < 1.3334
        """)
    # (208 - 150) / 150 = 0.38667, 150 / 208 = 0.72115, 250 / 432 = 0.57870, 4 / 3
    assert load_lesson_text(text).claim_count() == 14
    for good, bad in (("peak_live == 150", "peak_live == 50"), ("peak_heap == 208", "peak_heap > 208"),
                      ("waste > 0.3866", "waste > 0.4"), ("peak_util < 0.5788", "peak_util < 0.5"),
                      ("mean_search == 1", "mean_search == 2")):
        wrong = text.replace(f"expect: {good}\n", f"expect: {bad}\n")
        with pytest.raises(LessonError) as info:
            load_lesson_text(wrong, "run.md")
        assert info.value.line == line_of(wrong, f"expect: {bad}"), bad
        assert "claim is false" in str(info.value)


# ------------------------------------------------------------------ bad lessons

@pytest.mark.parametrize("body, needle, words", [
    ("## s\nstpe: 2\n", "stpe:", "unknown directive 'stpe'"),
    ("## s\nstep: 9\n", "step: 9", "outside 0..4"),
    ("## s\nstep: two\n", "step: two", "not a whole number"),
    ("## s\nstep: 1\nselect: q\n", "select: q", "no block named 'q'"),
    ("## s\nstep: 3\nselect: a\n", "select: a", "not live"),
    ("## s\nshow: map, sidebar\n", "show:", "unknown panel 'sidebar'"),
    ("## s\nstep: 1\nevent: 99\n", "event: 99", "events"),
    ("## s\nexpect: buddy wobbles\n", "wobbles", "cannot read the claim"),
    ("## s\nexpect: places nobody at 0x8\n", "nobody", "no block named 'nobody'"),
    ("## s\nstep: 1\nstep: 2\n", "step: 2", "one 'step'"),
    ("step: 1\n## s\n", "step: 1", "before the first stop"),
    ("## s\nask: how many?\nchoices: 1 | 2\nanswer: 3\n", "answer: 3", "not one of the choices"),
    ("## s\nask: how many?\n", "ask:", "needs its 'answer:'"),
    ("## s\nchoices: 1 | 2\n", "choices:", "no 'ask:'"),
    ("## s\nask: how many?\nchoices: 1\nanswer: 1\n", "choices: 1", "at least two"),
])
def test_a_bad_directive_names_its_line(body, needle, words):
    text = lesson(body)
    with pytest.raises(LessonError) as info:
        load_lesson_text(text, "x.md")
    assert info.value.line == line_of(text, needle), str(info.value)
    assert words in str(info.value)


def test_a_directive_inside_a_code_fence_is_narration():
    text = lesson("## s\n```\nstpe: 2\n```\nstep: 1\n")
    assert "stpe: 2" in load_lesson_text(text).stops[0].stop.narration


def test_front_matter_mistakes_name_their_lines():
    # an inline trace's bad line: file line 3 + its line in the trace
    text = lesson("## s\n").replace("free(b)", "free(q)")
    with pytest.raises(LessonError) as info:
        load_lesson_text(text, "t.md")
    assert info.value.line == line_of(text, "free(q)") and "q" in info.value.message
    broken = "+++\ntitle = 'x'\nstrategy = = 'buddy'\n+++\n## s\n"
    with pytest.raises(LessonError) as info:
        load_lesson_text(broken, "toml.md")
    assert info.value.line == 3
    for front, words in (('strategy = "nosuch"', "unknown strategy"),
                         ('strategy = "buddy"\n[params]\nmax_order = 99', "max_order"),
                         ('strategy = "buddy"\ncolour = 1', "unknown key 'colour'"),
                         ('strategy = "buddy"\nminutes = "ten"', "minutes is a whole number"),
                         ('strategies = "buddy"', "a list of strategy names"),
                         ('strategy = "buddy"\n[params.tlsf]\nsl_bits = 2', "names no strategy")):
        with pytest.raises(LessonError, match=words):
            load_lesson_text(lesson("## s\n", front=front))
    with pytest.raises(LessonError, match="front matter"):
        load_lesson_text("## just a stop\nstep: 1\n")


def test_a_trace_spec_names_a_workload():
    text = '+++\ntrace = "vo1989:steps=40"\nstrategy = "first-fit"\n+++\n## s\nstep: 40\nexpect: heap > 0\n'
    assert load_lesson_text(text).stops[0].step == 40


# ------------------------------------------------------------------ CLI

def test_lesson_check_prints_one_group_per_stop(capsys):
    path = lesson_path("buddy-splits-and-merges")
    assert main(["lesson", "check", str(path)]) == 0
    out = capsys.readouterr().out
    groups = out.strip().split("\n\n")
    loaded = load_lesson(path)
    assert len(groups) == 1 + len(loaded.stops)
    assert groups[0].startswith(f"{path}: OK, {len(loaded.stops)} stops")
    for k, group in enumerate(groups[1:], 1):
        lines = group.split("\n")
        assert lines[0].startswith(f"stop {k} (line "), lines[0]
        # the step in the timeline's words, with the block's own name
        assert any(line.strip().startswith(f"buddy: step {loaded.stops[k - 1].step}") for line in lines)
    assert "malloc(100) for a (id 0) -> 0x8" in groups[1]


def test_lesson_check_of_a_false_claim_exits_2_with_file_and_line(tmp_path, capsys):
    text = lesson("## s\nstep: 1\nexpect: splits once\n")
    path = tmp_path / "false.md"
    path.write_text(text)
    assert main(["lesson", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line_of(text, 'splits once')}: claim is false" in err
    assert "Traceback" not in err
    assert main(["lesson", "check", str(tmp_path / "missing.md")]) == 2


def test_lesson_list_names_each_bundled_lesson_with_its_length(capsys):
    assert main(["lesson", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == [p.stem for p in bundled_lessons()]
    assert all("min)" in line for line in out)


def test_the_example_of_docs_lessons_md_is_a_lesson_whose_claims_hold():
    import pathlib
    doc = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "lessons.md").read_text()
    start = doc.index("```markdown\n") + len("```markdown\n")
    example = doc[start:doc.index("\n```\n", start)] + "\n"
    loaded = load_lesson_text(example, "docs/lessons.md example")
    assert [s.step for s in loaded.stops] == [3, 4] and loaded.claim_count() == 3
    assert loaded.stops[1].question.answer == "a's hole"
    assert loaded.stops[1].select == "c" and loaded.stops[1].show == ("map", "explain")


def test_a_question_keeps_its_choices_answer_and_explanation():
    text = lesson("""
        ## before a's split
        step: 1
        ask: How many times is the chunk halved?
        choices: 1 | 2 | 3
        answer: 3
        explain: 1024 / 128 = 2**3
        expect: splits 3 times
        """)
    q = load_lesson_text(text).stops[0].question
    assert q.choices == ("1", "2", "3") and q.answer == "3" and q.explain == "1024 / 128 = 2**3"
    assert q.is_right(" 3") and not q.is_right("2")
    for path in bundled_lessons():     # each bundled lesson asks at least once
        assert any(s.question for s in bundled(path.stem).stops), path


def test_a_trace_file_is_read_relative_to_the_lesson(tmp_path, monkeypatch):
    (tmp_path / "demo.heap").write_text(BUDDY_TRACE)
    (tmp_path / "l.md").write_text('+++\ntrace = "demo.heap"\nstrategy = "buddy"\n+++\n'
                                   '## s\nstep: 1\nselect: a\nexpect: splits 8 times\n')
    monkeypatch.chdir("/")
    # a 108-byte block from the default 4096 chunk (max_order 12): 12 - 7 splits
    with pytest.raises(LessonError, match="splits 5 times in step 1, not 8"):
        load_lesson(tmp_path / "l.md")


def test_a_trace_line_spelt_like_a_key_is_not_taken_for_it():
    # 'minutes = malloc(3)' inside the trace is a block named minutes; the
    # bad 'minutes' key is the one below the trace
    text = ('+++\nstrategy = "buddy"\ntrace = """\nminutes = malloc(3)\n"""\nminutes = 0\n+++\n'
            '## s\nstep: 1\n')
    with pytest.raises(LessonError) as info:
        load_lesson_text(text)
    assert info.value.line == 6
