"""The measures over time as CSV and JSON (allocators/series_io.py): a
three-step series filled by hand, and the files written out by hand."""

import csv
import json


from heapscope.allocators.metrics import SERIES_COLUMNS, MetricSeries
from heapscope.allocators.series_io import FIELDS, rows, step_range, write_csv, write_json


def small_series():
    """Steps 1..3: column k of step t holds 100 * t + k; step 2 is a failed
    malloc, step 3 a free (payload -1)."""
    s = MetricSeries(3)
    for k, name in enumerate(SERIES_COLUMNS):
        getattr(s, name)[:] = [100 + k, 200 + k, 300 + k]
    s.is_malloc[:] = [True, True, False]
    s.failed[:] = [False, True, False]
    s.payload[:] = [16, -1, -1]
    return s


def expected_row(t, is_malloc, failed, payload):
    return [t] + [100 * t + k for k in range(len(SERIES_COLUMNS))] + [is_malloc, failed, payload]


EXPECTED = [expected_row(1, True, False, 16), expected_row(2, True, True, -1), expected_row(3, False, False, -1)]


def test_the_columns_are_step_the_series_then_the_flags():
    assert FIELDS == ("step", "heap", "live", "in_use", "headers", "free", "largest_free", "top_free",
                      "largest_below_top", "search", "work", "rotations", "splits", "merges", "grows",
                      "is_malloc", "failed", "payload")


def test_rows_are_one_per_step_with_plain_values():
    s = small_series()
    got = list(rows(s))
    assert got == EXPECTED
    assert all(type(v) is int for r in got for v in r[:-3] + r[-1:])
    assert all(type(v) is bool for r in got for v in r[-3:-1])
    assert list(rows(s, 2)) == EXPECTED[1:] and list(rows(s, 2, 2)) == EXPECTED[1:2]


def test_step_ranges_are_one_based_inclusive_and_clamped():
    s = small_series()
    assert step_range(s) == range(1, 4)
    assert step_range(s, 0, 99) == range(1, 4)
    assert step_range(s, 2, 3) == range(2, 4)
    assert step_range(s, 3, 1) == range(3, 2)          # empty
    assert step_range(s, "2", "3") == range(2, 4)


def test_csv_has_a_header_and_booleans_as_0_and_1(tmp_path):
    path = tmp_path / "m.csv"
    assert write_csv(small_series(), path, 2) == 2
    text = path.read_text()
    assert "\r" not in text and text.endswith("\n")
    lines = list(csv.reader(text.splitlines()))
    assert lines[0] == list(FIELDS)
    assert lines[1] == [str(v) for v in expected_row(2, 1, 1, -1)]
    assert lines[2] == [str(v) for v in expected_row(3, 0, 0, -1)]
    assert len(lines) == 3


def test_a_csv_written_in_chunks_reports_each_and_is_the_same_file(tmp_path, monkeypatch):
    # the window writes a million rows a chunk at a time, its progress dialog
    # running the event loop between chunks (issue 25)
    from heapscope.allocators import series_io
    whole = tmp_path / "whole.csv"
    write_csv(small_series(), whole)
    monkeypatch.setattr(series_io, "CSV_CHUNK", 2)
    seen = []
    chunked = tmp_path / "chunked.csv"
    assert write_csv(small_series(), chunked, progress=lambda done, total: seen.append((done, total))) == 3
    assert seen == [(2, 3), (3, 3)]
    assert chunked.read_text() == whole.read_text()
    lines = list(csv.reader(chunked.read_text().splitlines()))
    assert lines[1:] == [[str(int(v)) for v in row] for row in EXPECTED]


def test_json_says_what_was_replayed_and_each_step_by_column(tmp_path):
    path = tmp_path / "m.json"
    about = {"trace": "t.rep", "strategy": "next-fit"}
    assert write_json(small_series(), path, 1, 2, about) == 2
    text = path.read_text()
    assert text.endswith("}\n") and text.startswith('{\n "about"')     # indent 1, a final newline
    data = json.loads(text)
    assert data["about"] == about and data["columns"] == list(FIELDS)
    assert data["steps"] == [dict(zip(FIELDS, r)) for r in EXPECTED[:2]]
    assert data["steps"][1]["failed"] is True and data["steps"][1]["step"] == 2
    write_json(small_series(), path, 3)
    assert json.loads(path.read_text())["about"] == {}
    empty = tmp_path / "e.json"
    assert write_json(small_series(), empty, 4) == 0 and json.loads(empty.read_text())["steps"] == []
