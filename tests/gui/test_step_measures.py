"""The measures the gauges read, per position, on series written by hand."""

import math

import numpy as np
import pytest

from heapscope.allocators.metrics import MetricSeries
from heapscope.gui.step_measures import StepMeasures


def series_of(**columns) -> MetricSeries:
    n = len(next(iter(columns.values())))
    s = MetricSeries(n)
    for name, values in columns.items():
        setattr(s, name, np.array(values, dtype=getattr(s, name).dtype))
    return s


def test_the_running_mean_search_counts_only_mallocs_that_succeeded():
    # Steps: malloc (search 3), malloc that failed (9), free (0), malloc (5),
    # malloc that failed (7).  Over the mallocs that succeeded so far the mean is
    # 3, 3, 3, (3 + 5) / 2, (3 + 5) / 2.
    s = series_of(search=[3, 9, 0, 5, 7], is_malloc=[True, True, False, True, True],
                  failed=[False, True, False, False, True], heap=[64] * 5, live=[8] * 5)
    m = StepMeasures(s)
    assert [m.at(t)["search_mean"] for t in range(1, 6)] == pytest.approx([3, 3, 3, 4, 4])
    assert [m.at(t)["mallocs_so_far"] for t in range(1, 6)] == [1, 1, 1, 2, 2]
    assert m.at(0) is None


def test_the_running_mean_is_undefined_until_a_malloc_succeeds():
    s = series_of(search=[6, 2], is_malloc=[True, True], failed=[True, False],
                  heap=[0, 64], live=[0, 8])
    m = StepMeasures(s)
    assert math.isnan(m.at(1)["search_mean"])
    assert m.at(2)["search_mean"] == 2


def test_utilisation_and_waste_over_the_prefix():
    # Over the first t steps: Vo's waste (max H - max L) / max L, and the
    # mdriver's utilisation max L / max H (its final heap is its largest; here
    # the heap shrinks at step 3 and keeps its peak in both).
    s = series_of(live=[10, 40, 20], heap=[100, 160, 120], is_malloc=[True] * 3)
    m = StepMeasures(s)
    assert [m.at(t)["utilisation"] for t in (1, 2, 3)] == pytest.approx([10 / 100, 40 / 160, 40 / 160])
    assert [m.at(t)["waste"] for t in (1, 2, 3)] == pytest.approx([90 / 10, 120 / 40, 120 / 40])
