"""The TLSF view's rows and columns laid out for the room it has
(gui/structure_views/tlsf_layout.py), worked by hand."""

from heapscope.gui.structure_views.tlsf_layout import CELL_H, ROW_FOLD_H, lay_rows


def test_rows_that_fit_with_their_lines_are_all_drawn():
    # 3 rows and the fold of rows 3-24: 3 * 28 + 24 = 108, two lines 56: 164 <= 170
    rows, lines = lay_rows(25, 2, {0, 1}, {1}, 170.0, [28.0, 28.0])
    assert rows.kept == {0, 1, 2} and rows.folds == [(3, 24)]
    assert rows.height == 3 * CELL_H + ROW_FOLD_H and lines == 56.0


def test_rows_fold_round_the_named_one_the_non_empty_nearest_first():
    """Rows 0..12 in a room of 200 with two lines of 28.  Row 5 alone: fold
    0-4, row 5, fold 6-24 = 76; the lines get min(56, 200 - 76, 0.45 * 200)
    = 56, the rows 144.  Then, non-empty rows nearest 5 first: 3 fits (fold
    0-2, 3, fold 4, 5, fold = 128); 1 would make 180, 0 156, 12 180; then the
    empty ones: 4 joins 3 and 5 (132), 6 would make 160, 7 184, and so on."""
    rows, lines = lay_rows(25, 12, {0, 1, 3, 5, 12}, {5}, 200.0, [28.0, 28.0])
    assert lines == 56.0
    assert rows.kept == {3, 4, 5}
    assert rows.folds == [(0, 2), (6, 24)]
    assert rows.height == 24 + 3 * 28 + 24
    # where each row is drawn: the folds stand for their runs
    assert [rows.top(fl) for fl in (0, 2, 3, 4, 5, 6, 24)] == [0, 0, 24, 52, 80, 108, 108]
    assert rows.fl_at(52) == 4 and rows.fl_at(0) is None


def test_the_named_rows_stay_when_nothing_else_fits():
    """A room too small for the named rows and a line: the rows are kept,
    the line gets nothing."""
    rows, lines = lay_rows(25, 8, {0, 8}, {0, 8}, 90.0, [40.0])
    assert rows.kept == {0, 8} and lines == 0.0
    assert rows.folds == [(1, 7), (9, 24)] and rows.height == 28 + 24 + 28 + 24 > 90
