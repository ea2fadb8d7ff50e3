"""File > Export (gui/export.py, gui/export_dialog.py): every format exists
and holds what was on screen -- PNG and GIF decoded, SVG parsed with the
heap map's blocks as rectangles, CSV and JSON with one row per step and the
core's series as columns -- and long exports can be cancelled."""

import csv
import json
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PIL import Image
from PySide6.QtWidgets import QApplication, QDialog

from heapscope.allocators.metrics import SERIES_COLUMNS
from heapscope.allocators.series_io import FIELDS
from heapscope.gui import export, heap_cells
from heapscope.gui.export_dialog import ExportDialog
from tests.depth import pick

SVG = "{http://www.w3.org/2000/svg}"


def settle(qtbot):
    QApplication.processEvents()
    qtbot.wait(20)


def png_pixels(path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"))


def heap_runs(image: np.ndarray) -> dict[int, int]:
    """Runs of equal cells per row of the heap map's image, counted by cell code."""
    out: dict[int, int] = {}
    for line in image:
        starts = np.flatnonzero(np.r_[True, line[1:] != line[:-1]])
        for s in starts:
            out[int(line[s])] = out.get(int(line[s]), 0) + 1
    return out


# ------------------------------------------------------------------ pictures
@pytest.mark.parametrize("part", ["map", "structure", "gauges", "plots", "window"])
def test_png_of_each_part_is_the_widgets_pixels(qtbot, loaded, tmp_path, part):
    w = loaded
    w.seek(300)
    settle(qtbot)
    widget = export.part_widget(w, part)
    on_screen = export.rgb_array(widget.grab().toImage())
    path = tmp_path / f"{part}.png"
    text = w.run_export(export.ExportRequest(part, str(path)))
    assert text and "step 300" in text
    pixels = png_pixels(path)
    assert pixels.shape[:2] == (widget.height(), widget.width())
    assert np.array_equal(pixels, on_screen)


def test_png_of_the_map_shows_the_heaps_colours_where_the_blocks_are(qtbot, loaded, tmp_path):
    w = loaded
    w.seek(300)
    settle(qtbot)
    hm = w.heap_map
    path = tmp_path / "map.png"
    export.save_png(hm, path)
    pixels = png_pixels(path)
    # the biggest used block's payload, and the biggest free block, at the
    # byte nearest its middle that no label stands over (the search's
    # numbers stand beside their blocks, perhaps over another one)
    labels = [rect.adjusted(-3, -3, 3, 3) for rect in label_rects(hm)]
    b = hm.blocks
    for state in (heap_cells.STATE_USED, heap_cells.STATE_FREE):
        sizes = np.where(b.state == state, b.size, 0)
        i = int(np.argmax(sizes))
        if sizes[i] == 0:
            continue
        addr, size = int(b.addr[i]), int(b.size[i])
        step = hm.layout_.bytes_per_cell
        near_middle = sorted(range(addr, addr + size, step), key=lambda a: abs(a - (addr + size // 2)))
        clear = [a for a in near_middle if not any(r.contains(hm.scene_pos_of(a)) for r in labels)]
        assert clear, "every byte of the block is under a label"
        pos = hm.plot_widget.mapTo(hm, hm.plot_widget.mapFromScene(hm.scene_pos_of(clear[0])))
        assert tuple(int(v) for v in pixels[pos.y(), pos.x()]) == hm.cell_colour(clear[0])[:3]


def label_rects(hm) -> list:
    """The scene rectangles of the labels shown on the heap map."""
    labels = hm.labels
    out = []
    for item in labels.numbers + [labels.skip] + labels.pointer_names:
        if item is not None and item.isVisible():
            item.updateTransform()
            out.append(item.mapRectToScene(item.boundingRect()))
    return out


def test_svg_of_the_map_holds_its_blocks_as_rectangles(qtbot, loaded, tmp_path):
    w = loaded
    w.seek(300)
    settle(qtbot)
    hm = w.heap_map
    path = tmp_path / "map.svg"
    w.run_export(export.ExportRequest("map", str(path)))
    root = ET.parse(path).getroot()            # well-formed XML
    assert root.tag == SVG + "svg"
    lut = hm.image_item.lut
    colour_of = {"#%02x%02x%02x" % tuple(int(v) for v in lut[code][:3]): code
                 for code in np.unique(hm.image)}
    counted: dict[int, int] = {}
    for group in root.iter(SVG + "g"):
        code = colour_of.get(group.get("fill", "").lower())
        a, _, _, d, *_ = map(float, group.get("transform", "matrix(1,0,0,1,0,0)")[7:-1].split(","))
        if code is None or (a, d) == (1, 1):
            continue          # not in the map's coordinates (bytes, rows): the legend's swatches
        rects = [r for r in group if r.tag == SVG + "rect"]
        counted[code] = counted.get(code, 0) + len(rects)
    # one rectangle per run of equal cells in a row, in the cell's colour
    assert counted == heap_runs(hm.image)
    assert sum(counted.values()) > len(hm.blocks)
    # the outlines of the step and the text are there too, as vectors
    assert any(t.text and "0x" in t.text for t in root.iter(SVG + "text"))
    # the map on screen is an image again afterwards
    assert hm.image_item.isVisible()


def test_svg_of_the_window_and_of_a_structure_view_parse(qtbot, loaded, tmp_path):
    w = loaded
    w.seek(300)
    settle(qtbot)
    for part in ("window", "structure", "gauges"):
        path = tmp_path / f"{part}.svg"
        assert w.run_export(export.ExportRequest(part, str(path)))
        root = ET.parse(path).getroot()
        texts = " ".join(t.text or "" for t in root.iter(SVG + "text"))
        if part == "gauges":
            assert "External" in texts and w.gauges.frag.value_label.text().split()[0] in texts
        elif part == "structure":
            assert any(f"0x{a:x}" in texts for a in w.model.step().structure["sizes"])
        else:
            assert "step 300" in texts


# ------------------------------------------------------------------ measures
def test_csv_has_a_row_per_step_and_the_cores_series_as_columns(qtbot, loaded, tmp_path):
    w = loaded
    path = tmp_path / "m.csv"
    steps = export.StepRange(10, 59)
    w.run_export(export.ExportRequest("measures", str(path), steps))
    with open(path) as f:
        rows = list(csv.reader(f))
    assert rows[0] == list(FIELDS) and rows[0][1:1 + len(SERIES_COLUMNS)] == list(SERIES_COLUMNS)
    body = rows[1:]
    assert len(body) == len(steps) == 50
    s = w.timeline.series
    for row in body:
        t = int(row[0])
        assert int(row[FIELDS.index("heap")]) == s.heap[t - 1]
        assert int(row[FIELDS.index("search")]) == s.search[t - 1]
        assert int(row[FIELDS.index("is_malloc")]) == int(s.is_malloc[t - 1])
    assert [int(r[0]) for r in body] == list(range(10, 60))


def test_json_has_the_same_rows(qtbot, loaded, tmp_path):
    w = loaded
    path = tmp_path / "m.json"
    w.run_export(export.ExportRequest("measures", str(path)))
    data = json.loads(path.read_text())
    assert data["columns"] == list(FIELDS)
    assert len(data["steps"]) == w.timeline.n
    assert data["about"]["strategy"] == "next-fit"
    last = data["steps"][-1]
    assert last["step"] == w.timeline.n and last["live"] == int(w.timeline.series.live[-1])


# ---------------------------------------------------------------- animations
def test_gif_has_a_frame_per_step_of_the_range_and_looks_like_the_screen(qtbot, loaded, tmp_path):
    w = loaded
    w.seek(7)
    path = tmp_path / "steps.gif"
    steps = export.StepRange(100, 111, fps=5)
    text = w.run_export(export.ExportRequest("map", str(path), steps))
    assert "12 frames" in text
    assert w.model.position == 7          # back where the teacher was
    gif = Image.open(path)
    assert gif.n_frames == len(steps) == 12
    assert gif.size == (w.heap_map.width(), w.heap_map.height())
    assert gif.info["duration"] == 200
    # the last frame is step 111 as the window draws it
    w.seek(111)
    settle(qtbot)
    screen = export.rgb_array(w.heap_map.grab().toImage()).astype(int)
    gif.seek(gif.n_frames - 1)
    frame = np.asarray(gif.convert("RGB")).astype(int)
    assert np.mean(np.abs(frame - screen)) < 3          # 256 colours: nearly the same pixels


def test_mp4_has_a_frame_per_step(qtbot, loaded, tmp_path):
    if export.video_unavailable():
        pytest.skip("imageio-ffmpeg is not installed")
    import imageio_ffmpeg
    w = loaded
    path = tmp_path / "steps.mp4"
    w.run_export(export.ExportRequest("window", str(path), export.StepRange(40, 49, fps=10)))
    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    frames = sum(1 for _ in reader)
    assert frames == 10
    assert tuple(meta["size"]) == (w.width() + w.width() % 2, w.height() + w.height() % 2)


def test_without_an_encoder_mp4_says_how_to_get_one(qtbot, loaded, tmp_path, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_ffmpeg(name, *args, **kwargs):
        if name == "imageio_ffmpeg":
            raise ImportError("No module named 'imageio_ffmpeg'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ffmpeg)
    reason = export.video_unavailable()
    assert reason and "heapscope[video]" in reason and "GPL" in reason
    path = tmp_path / "x.mp4"
    assert loaded.run_export(export.ExportRequest("map", str(path), export.StepRange(1, 3))) is None
    box = loaded.message_box
    assert "heapscope[video]" in box.informativeText()
    box.close()
    assert not path.exists()


def test_a_cancelled_export_leaves_no_file(qtbot, loaded, tmp_path, monkeypatch):
    path = tmp_path / "long.gif"
    asked = []

    def cancel_after_three():
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(export.ExportCancelled):
        export.save_animation(loaded, loaded.heap_map, path, export.StepRange(1, 200), cancel=cancel_after_three)
    assert not path.exists()


# -------------------------------------------------------------------- dialog
def test_the_dialog_offers_the_formats_of_what_is_chosen_and_builds_the_request(qtbot, loaded, tmp_path):
    d = ExportDialog(loaded.model.n, 40, str(tmp_path), loaded)
    qtbot.addWidget(d)
    formats = [d.format.itemData(i) for i in range(d.format.count())]
    assert formats == ["png", "svg", "gif", "mp4"]
    d.format.setCurrentIndex(formats.index("gif"))
    assert d.first.isEnabled() and d.fps.isEnabled()
    d.first.setValue(40)
    d.last.setValue(52)
    d.fps.setValue(8)
    r = d.request()
    assert r.part == "window" and r.path.endswith(".gif") and os.path.dirname(r.path) == str(tmp_path)
    assert (r.steps.first, r.steps.last, r.steps.fps) == (40, 52, 8)
    d.what.setCurrentIndex(d.what.findData("measures"))
    assert [d.format.itemData(i) for i in range(d.format.count())] == ["csv", "json"]
    assert not d.fps.isEnabled()
    assert d.request().path.endswith(".csv")
    d.what.setCurrentIndex(d.what.findData("map"))
    d.format.setCurrentIndex(0)
    assert d.request().steps is None and not d.first.isEnabled()


def test_file_export_runs_the_dialogs_request(qtbot, loaded, tmp_path, monkeypatch):
    path = tmp_path / "chosen.svg"

    def fake_exec(dialog):
        dialog.what.setCurrentIndex(dialog.what.findData("gauges"))
        dialog.format.setCurrentIndex(dialog.format.findData("svg"))
        dialog.path.setText(str(path))
        return QDialog.Accepted

    monkeypatch.setattr(ExportDialog, "exec", fake_exec)
    loaded.seek(12)
    loaded.act_export.trigger()
    assert path.exists() and ET.parse(path).getroot().tag == SVG + "svg"
    assert "chosen.svg" in loaded.statusBar().currentMessage()


def gif_frames(path) -> list[np.ndarray]:
    gif = Image.open(path)
    out = []
    for i in range(gif.n_frames):
        gif.seek(i)
        out.append(np.asarray(gif.convert("RGB")).copy())
    return out


def test_an_animated_gif_plays_each_steps_events_and_is_the_same_every_run(qtbot, loaded, tmp_path):
    w = loaded
    # two steps: each is played, then ends whole (the quick suite: one,
    # played, ending whole, the same twice)
    first, last = 300, pick(300, 301)
    events = 0
    for t in range(first, last + 1):
        w.seek(t)
        events += w.model.step().event_count
    plain, a, b = tmp_path / "plain.gif", tmp_path / "a.gif", tmp_path / "b.gif"
    export.save_animation(w, w.structure_panel, plain, export.StepRange(first, last, fps=12))
    for path in (a, b):
        export.save_animation(w, w.structure_panel, path, export.StepRange(first, last, fps=12, animate=True))
    frames_a, frames_b = gif_frames(a), gif_frames(b)
    # more pictures than steps: the events one after another (identical
    # neighbours, an event held, are one GIF frame shown longer)
    assert len(frames_a) > last - first + 1 + 2
    assert len(frames_a) == len(frames_b) and all(np.array_equal(x, y) for x, y in zip(frames_a, frames_b))
    # each step ends on the whole step, as drawn without the animation
    assert np.array_equal(frames_a[-1], gif_frames(plain)[-1])
    assert events > 3


def test_the_dialog_asks_whether_to_play_the_events(qtbot, loaded, tmp_path):
    d = ExportDialog(loaded.model.n, 10, str(tmp_path), loaded)
    qtbot.addWidget(d)
    d.format.setCurrentIndex(d.format.findData("png"))
    assert not d.animate.isEnabled()
    d.format.setCurrentIndex(d.format.findData("gif"))
    assert d.animate.isEnabled() and not d.request().steps.animate
    d.animate.setChecked(True)
    assert d.fps.value() == 12 and d.request().steps.animate


def test_an_animated_export_steps_the_maps_fades_frame_by_frame_not_by_the_clock(qtbot, loaded):
    """The heap map's transitions (a placed block fading in, a cut sliding
    down: gui/heap_map.py) are stepped by the exporter with seek_transition,
    so a frame shows the fade as far as the frame's time says."""
    from PySide6.QtCore import QVariantAnimation
    from heapscope.allocators import events as ev
    from heapscope.gui.step_animator import move_ms, plan
    w, hm = loaded, loaded.heap_map
    fps = 25
    frame_ms = 1000 / fps
    for t in range(300, 400):
        w.seek(t)
        events = w.model.step().record.events or []
        script = plan(events, 1.0)
        placed = [k for k, (i, _) in enumerate(script) if k and isinstance(events[i], ev.Placed)]
        if placed:
            break
    k = placed[0]
    index, slot = script[k]
    expected = [min(1.0, (f + 1) * frame_ms / move_ms(slot)) for f in range(max(1, round(slot / frame_ms)))]
    seen = []
    for _ in export.frames_of_step(w, t, fps, animate=True):
        assert hm._anim.state() != QVariantAnimation.Running        # never the clock
        if w.model.event_index == index:
            seen.append(hm.placed_item.opacity())
    assert seen == pytest.approx(expected)
    assert 0 < seen[0] < 1                   # a frame mid-fade
    assert not hm.animating() and not hm.manual_transitions and hm.placed_item.opacity() == 1


def test_an_animated_gif_of_the_map_is_the_same_every_run(qtbot, loaded, tmp_path):
    w = loaded
    paths = [tmp_path / "a.gif", tmp_path / "b.gif"]
    for path in paths:
        # 10 frames a second: still several frames a step, each mid-transition
        # (the quick suite: step 300 alone)
        export.save_animation(w, w.heap_map, path, export.StepRange(300, pick(300, 301), fps=10, animate=True))
    frames_a, frames_b = (gif_frames(p) for p in paths)
    assert len(frames_a) > 2 + 2
    assert len(frames_a) == len(frames_b) and all(np.array_equal(x, y) for x, y in zip(frames_a, frames_b))
