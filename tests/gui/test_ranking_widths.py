"""The texts compare mode's table sizes its columns for before the first
jump (gui/ranking.py's widest_texts): the widest each measure shows at the
steps read, failed only where a request failed."""

from heapscope.gui.ranking import EARLY_STEPS, WIDEST_SAMPLES, widest_texts


class Made:
    """A summary whose measures at step t are given by ``values(t)``."""

    def __init__(self, n, values):
        self.n, self.values, self.asked = n, values, []

    def at(self, t):
        self.asked.append(t)
        return self.values(t)


def row(waste, failed=0, heap=100):
    return {"ops": 1, "waste": waste, "utilisation": 0.5, "search_mean": 1.0, "work_per_op": 2.0,
            "max_heap": heap, "max_live": 50, "failed": failed}


def test_the_widest_text_of_each_measure_is_taken_by_the_width_given():
    n = 10_000
    # waste is widest at step 1 (a heap just begun)
    a = Made(n, lambda t: row(123.456 if t == 1 else 0.05, heap=t * 100))
    b = Made(n, lambda t: row(0.2, failed=3 if t > n // 2 else 0))
    widest = widest_texts([a, b], len)
    assert widest["waste"] == "12345.6 %"              # 100 * 123.456, one decimal
    assert widest["failed"] == "3"
    assert widest["utilisation"] == "50.0 %"
    # the first steps and samples spread to the last are read, no more
    assert set(range(1, EARLY_STEPS + 1)) <= set(a.asked) and n in a.asked
    assert len(a.asked) <= EARLY_STEPS + WIDEST_SAMPLES


def test_no_failed_text_where_nothing_failed_and_none_for_an_empty_summary():
    assert "failed" not in widest_texts([Made(500, lambda t: row(0.1))], len)
    assert widest_texts([Made(0, lambda t: row(0.1))], len) == {}


def test_the_width_decides_not_the_length():
    # a width function that finds "1.0 %" wider than "99.0 %" (its own font)
    values = {1: 0.01, 2: 0.99}
    s = Made(2, lambda t: row(values[t]))
    assert widest_texts([s], lambda text: 100 if text.startswith("1.0") else len(text))["waste"] == "1.0 %"
