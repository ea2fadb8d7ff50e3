"""``heapscope lesson export FILE -o DIR`` (heapscope/lesson_export.py): one
PNG per stop drawn by render's windows, the narration as Markdown linking
them; a stop's selection and panels set in the window; a broken lesson or
an unwritable folder writes nothing (exit 2)."""

import re

import numpy as np
import pytest
from PIL import Image

from heapscope.cli import main
from heapscope.lesson_export import set_stop
from heapscope.lessons import lesson_path, load_lesson

SIZE = (1000, 640)
PAYLOAD_BLUE = (0, 114, 178)     # the heap map's payload and free colours (gui/palette.py)
FREE_YELLOW = (240, 228, 66)


def colour_count(pixels: np.ndarray, colour) -> int:
    return int((np.abs(pixels.astype(int) - colour).sum(axis=2) == 0).sum())


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The bundled roving-pointer lesson (two strategies, four stops) exported once."""
    out = tmp_path_factory.mktemp("export") / "slides"
    assert main(["lesson", "export", "roving-pointer", "-o", str(out),
                 "--size", f"{SIZE[0]}x{SIZE[1]}"]) == 0
    return out


def headings():
    """The lesson file's stop headings, read here with a regex of the test's own."""
    text = lesson_path("roving-pointer").read_text()
    body = text[text.index("+++", 3) + 3:]
    return re.findall(r"^## (.+?)\s*$", body, re.M)


def test_one_png_per_stop_each_a_window_pair_showing_the_heap(exported):
    titles = headings()
    assert len(titles) == 4
    pngs = sorted(exported.glob("*.png"))
    assert [p.name for p in pngs] == [f"stop-{i:02d}.png" for i in range(1, len(titles) + 1)]
    for path in pngs:
        image = Image.open(path)
        image.load()                                  # decodes the whole file
        assert image.size == (2 * SIZE[0], SIZE[1])   # next-fit and first-fit side by side
        pixels = np.asarray(image.convert("RGB"))
        packed = pixels.astype(np.int32) @ np.array([1 << 16, 1 << 8, 1], dtype=np.int32)
        assert len(np.unique(packed)) > 200, path.name      # not blank: many distinct colours
        assert colour_count(pixels, PAYLOAD_BLUE) > 500, path.name
        assert colour_count(pixels, FREE_YELLOW) > 500, path.name
    # the stops differ: each picture is its own step
    arrays = [np.asarray(Image.open(p).convert("RGB")) for p in pngs]
    assert all(not np.array_equal(a, b) for a, b in zip(arrays, arrays[1:]))


def test_the_markdown_names_every_stop_and_links_its_png(exported):
    md = (exported / "lesson.md").read_text()
    lesson_text = lesson_path("roving-pointer").read_text()
    title = re.search(r'^title = "(.+)"$', lesson_text, re.M).group(1)
    assert md.startswith(f"# {title}\n")
    at = 0
    for i, heading in enumerate(headings(), 1):
        found = md.index(f"\n## {heading}\n", at)          # in order
        link = re.compile(rf"!\[[^\]]*\]\(stop-{i:02d}\.png\)")
        assert link.search(md, found), heading
        at = found + 1
    # no directive line is left in the narration
    assert not re.search(r"^(step|select|show|expect|ask|answer|explain|choices):", md, re.M)
    # the question comes before its stop's picture, the answer and explanation after it
    ask = re.search(r"^ask: (.+)$", lesson_text, re.M).group(1)
    explain = re.search(r"^explain: (.+)$", lesson_text, re.M).group(1)
    q = md.index(ask)
    picture = md.index("](stop-02.png)")
    assert q < picture < md.index(explain)
    assert "- c's" in md[q:picture]


def test_a_stop_sets_its_selection_and_panels(window, qtbot):
    lesson = load_lesson(lesson_path("roving-pointer"))
    ids = {name: ident for ident, name in lesson.names.items()}
    window.show_built(lesson.trace, lesson.timelines["next-fit"], None, 0, "roving")
    first, second = lesson.stops[0], lesson.stops[1]
    set_stop(window, first, ids)          # step 9, show: map, structure
    assert window.model.position == 9
    assert window.model.selection is None
    assert not window.act_explain.isChecked() and not window.act_plots.isChecked()
    assert window.act_structure.isChecked()
    set_stop(window, second, ids)         # step 10, select d, show: map, structure, explain
    assert window.model.position == 10
    # next fit cuts d's 64 bytes from the tail of c's hole at 0x200..0x2e0: payload
    # 0x2e0 - 64 + 16 (the header) = 0x2b0 (worked in tests/test_lessons.py too)
    assert window.model.selection == 0x2b0
    assert window.act_explain.isChecked() and not window.act_plots.isChecked()


BROKEN = '''+++
title = "broken"
strategy = "first-fit"
trace = """
a = malloc(100)
free(a)
"""
+++

## a is freed

step: 2
expect: heap == 12345
'''


def test_a_broken_lesson_writes_nothing_and_exits_2(tmp_path, capsys):
    path = tmp_path / "broken.md"
    path.write_text(BROKEN)
    out = tmp_path / "slides"
    assert main(["lesson", "export", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{BROKEN.splitlines().index('expect: heap == 12345') + 1}:" in err
    assert "claim is false" in err and "Traceback" not in err
    assert not out.exists()


def test_an_output_folder_that_cannot_be_made_is_refused_before_work(tmp_path, capsys):
    assert main(["lesson", "export", "roving-pointer", "-o", str(tmp_path / "no" / "such")]) == 2
    assert "does not exist" in capsys.readouterr().err
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert main(["lesson", "export", "roving-pointer", "-o", str(a_file)]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert a_file.read_text() == "x"


def test_a_stop_inside_a_step_shows_its_event(window, qtbot):
    from heapscope.lessons import load_lesson_text
    text = BROKEN.replace("expect: heap == 12345", "event: 1\n")
    lesson = load_lesson_text(text.replace("step: 2", "step: 1"), "event.md")
    window.show_built(lesson.trace, lesson.timelines["first-fit"], None, 0, "event")
    set_stop(window, lesson.stops[0], {})
    assert (window.model.position, window.model.event_index) == (1, 0)   # event 1 is index 0


def test_exporting_over_the_lesson_itself_is_refused_and_draws_nothing(tmp_path, capsys):
    own = tmp_path / "lesson.md"            # the name the narration's file takes
    own.write_text(lesson_path("roving-pointer").read_text())
    assert main(["lesson", "export", str(own), "-o", str(tmp_path)]) == 2
    assert "would overwrite its input" in capsys.readouterr().err
    assert own.read_text() == lesson_path("roving-pointer").read_text()
    assert not list(tmp_path.glob("*.png"))


def test_a_size_too_small_for_the_window_leaves_no_folder_behind(tmp_path, capsys):
    out = tmp_path / "slides"
    assert main(["lesson", "export", "roving-pointer", "-o", str(out), "--size", "400x330"]) == 2
    assert "smaller than the window can be drawn" in capsys.readouterr().err
    assert not out.exists()
