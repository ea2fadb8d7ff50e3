"""The quick and deep suites (tests/depth.py): what the quick one thins is
what docs/testing.md says, worked by hand."""

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from tests import depth


def test_quick_example_counts_are_a_quarter_at_least_five():
    # (max_examples, quick): 100 // 4; 20 // 4 = 5; 12 // 4 = 3 -> 5; fewer than 5 kept
    for written, quick in [(100, 25), (20, 5), (12, 5), (5, 5), (3, 3), (1, 1)]:
        assert depth.quick_examples(written) == quick, written


def test_some_in_quick_marks_all_but_the_kept_parameters_deep():
    params = depth.some_in_quick(["a", "b", "c", "d", "e"], every=2)
    assert params[0] == "a" and params[2] == "c" and params[4] == "e"
    for p in (params[1], params[3]):
        assert p.marks == (pytest.mark.deep,)
    assert [p.values for p in (params[1], params[3])] == [("b",), ("d",)]
    named = depth.some_in_quick(["next-fit", "first-fit", "tlsf"])
    assert named[0] == "next-fit" and named[2] == "tlsf" and named[1].values == ("first-fit",)
    pairs = depth.some_in_quick([("x", 1), ("y", 2)], every=2)
    assert pairs[0] == ("x", 1) and pairs[1].values == ("y", 2)      # two argument names


#: the examples test_twenty_examples_run_as_the_suite_says has drawn
DRAWN = []


@settings(max_examples=20, database=None, phases=[Phase.generate])
@given(st.integers())
def test_twenty_examples_run_as_the_suite_says(n):
    """Written for 20 examples: the quick suite (tests/conftest.py) cuts them to 5."""
    DRAWN.append(n)
    assert len(DRAWN) <= depth.pick(5, 20)


def test_the_collected_hypothesis_tests_are_thinned():
    own = test_twenty_examples_run_as_the_suite_says._hypothesis_internal_use_settings
    assert own.max_examples == depth.pick(5, 20)
