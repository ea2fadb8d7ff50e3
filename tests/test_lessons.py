"""Lessons (issue 23, docs/lessons.md): the file format, its claims checked
against the replay, ``heapscope lesson check`` and the bundled lessons.

Expected values are worked by hand from the policies (K&R 8.7's header
units, Knuth's powers of two) or taken from a Timeline replay done here, not
from the lesson checker."""

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


# ------------------------------------------------------------------ bundled

def test_there_are_bundled_lessons_and_each_loads_with_every_claim_holding():
    paths = bundled_lessons()
    assert {p.stem for p in paths} >= {"roving-pointer", "buddy-splits-and-merges"}
    for path in paths:
        loaded = load_lesson(path)          # raises on any false claim
        assert loaded.claim_count() >= 5, path
        assert all(s.claims for s in loaded.stops[1:]) or loaded.claim_count() > len(loaded.stops)
        # each states its length, and it fits a 50-minute slot
        assert isinstance(loaded.minutes, int) and 0 < loaded.minutes <= 50, path


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
        assert any(s.question for s in load_lesson(path).stops), path


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
