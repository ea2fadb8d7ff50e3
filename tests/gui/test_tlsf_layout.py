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
    """A room too small for a named row and a line: the row is kept, the
    line gets nothing."""
    rows, lines = lay_rows(25, 8, {0, 1}, {8}, 60.0, [40.0])
    assert rows.kept == {8} and lines == 0.0
    assert rows.folds == [(0, 7), (9, 24)] and rows.height == 24 + 28 + 24 > 60


def test_named_rows_that_do_not_fit_fold_the_least_important_first():
    """Issue 24: step 250 of the default trace in presenter mode named five
    rows in 135 px; all were kept and the bottom of the matrix (its labels,
    its fl_bitmap bits) was cut off by the view.  Now the named rows are kept
    in the order given while they fit: {8, 0} in 90 px is 28 + 24 (rows 1-7
    folded) ... row 8 first: 24 (0-7) + 28 + 24 (9-24) = 76; adding row 0:
    28 + 24 + 28 + 24 = 104 > 90, so row 0 folds."""
    rows, lines = lay_rows(25, 8, {0, 8}, [8, 0], 90.0, [40.0])
    assert rows.kept == {8} and lines == 0.0
    assert rows.height == 76 <= 90
    # in the other order row 0 is the one kept (and row 1 beside it fits:
    # 28 + 28 + 24 = 80)
    rows, _ = lay_rows(25, 8, {0, 8}, [0, 8], 90.0, [40.0])
    assert 8 not in rows.kept and rows.kept == {0, 1} and rows.height == 80


def test_a_count_too_wide_for_its_cell_is_written_in_thousands(qtbot):
    """At 10 000 free blocks a folded column (26 px wide) cut "1234" to "23".
    A count is written whole when it fits in bold of at least 16 px, else
    in thousands, rounded, else as "…"; what is written always fits (2 px
    of slack: three bold digits take 33.4 px of a 32 px cell)."""
    from PySide6.QtGui import QFontMetricsF
    from heapscope.gui.structure_views.scene_view import fitted_font
    from heapscope.gui.structure_views.tlsf_layout import COUNT_SLACK, FOLD_W, LABEL_PX, count_text
    for n, width, allowed in ((45, 28, {"45"}), (929, FOLD_W, {"929"}), (1234, FOLD_W, {"1k"}),
                              (9600, FOLD_W, {"10k"}), (123456, FOLD_W, {"\u2026"}), (123456, 60, {"123k"})):
        text = count_text(n, width)
        assert text in allowed, (n, text)
        f = fitted_font(text, width, LABEL_PX, True)
        assert f.pixelSize() >= LABEL_PX and QFontMetricsF(f).horizontalAdvance(text) <= width + COUNT_SLACK
