"""Saving what the window shows: pictures for slides, the measures for a
spreadsheet, a range of steps as an animation.

* **Pictures**: the heap map, the structure view, the gauges, the plots or
  the whole window, as PNG (the widget's pixels, ``QWidget.grab``) or SVG
  (Qt's ``QSvgGenerator`` painting the same widget: text, outlines and
  curves stay vectors).  pyqtgraph's own ``SVGExporter`` is not used: in
  pyqtgraph 0.14.0 with this Qt it fails on closed paths (pyqtgraph issue
  #3495), and it saves one scene where we want a whole widget.  The heap map
  is an image of cells on screen; in an SVG its cells are written as
  rectangles instead, one per run of equal cells in a row
  (:class:`VectorCells`), so a slide can scale it without blur and a script
  can read the blocks back.
* **Measures over time** as CSV or JSON: :mod:`heapscope.allocators.series_io`.
* **Steps as GIF or MP4**: one frame per step of the range, or, animated,
  each step playing its events as the window's step animator plays them
  (:func:`frames_of_step`, deterministic: the structure view's glides and
  the heap map's fades and sliding cuts are stepped frame by frame), written by Pillow (GIF) or by imageio-ffmpeg
  (MP4, the optional extra ``heapscope[video]``: its ffmpeg binary is GPL, so
  heapscope does not require it; without it MP4 export says how to get it).

Long exports report progress and stop when asked
(:class:`ExportCancelled`, the partial file removed).  ``heapscope render``
uses the same functions without a window on screen.

Every file is written through :mod:`heapscope.outputs`: checked before work
starts, written to a temporary file beside it and renamed when finished, so
a failed or cancelled export never leaves half a file or spoils the one
there.  Animations are streamed: each frame goes to the encoder as it is
drawn (:class:`heapscope.gif.GifStream`, imageio-ffmpeg's writer), so memory
stays flat in the number of frames; frame counts and picture sizes are
bounded (:mod:`heapscope.frame_limits`).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import numpy as np
from PySide6.QtCore import QPoint, QRect, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication, QGraphicsObject, QWidget

from heapscope import video
from heapscope.allocators import series_io
from heapscope.frame_limits import MAX_FRAMES, FrameLimitError, check_frame_count, check_picture
from heapscope.gif import GifStream
from heapscope.outputs import OutputError, atomic_output, atomic_path, check_output
from heapscope.video import VIDEO_MISSING  # noqa: F401  (the message, for callers)

PICTURE_FORMATS = ("png", "svg")
ANIMATION_FORMATS = ("gif", "mp4")
MEASURE_FORMATS = ("csv", "json")

#: the parts of the window one can export as a picture or an animation
PARTS = {"window": "the whole window", "map": "the heap map", "structure": "the structure view",
         "gauges": "the gauges", "plots": "the plots"}

ProgressFn = Callable[[int, int], None]
CancelFn = Callable[[], bool]


class ExportError(Exception):
    """An export that cannot be done (a missing encoder, a bad range): the message says why."""


class ExportCancelled(Exception):
    """The user stopped a long export; the partial file was removed."""


def format_of(path) -> str:
    """The format a file name asks for: its suffix, lower case, without the dot."""
    suffix = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if suffix not in PICTURE_FORMATS + ANIMATION_FORMATS + MEASURE_FORMATS:
        raise ExportError(f"{os.fspath(path)}: unknown format {suffix or '(no suffix)'!r}; "
                          f"known: {', '.join(PICTURE_FORMATS + ANIMATION_FORMATS + MEASURE_FORMATS)}")
    return suffix


def part_widget(window, part: str) -> QWidget:
    """The widget of the window that ``part`` names (:data:`PARTS`)."""
    if part == "window":
        return window
    if part == "map":
        return window.heap_map
    if part == "structure":
        panel = window.structure_panel
        return panel.view if panel.view is not None else panel
    if part == "gauges":
        return window.gauges
    if part == "plots":
        return window.plots
    raise ExportError(f"unknown part {part!r}; known: {', '.join(PARTS)}")


# ================================================================== pictures
def grab_image(widget: QWidget) -> QImage:
    """The widget's pixels as they are on screen (offscreen too)."""
    settle()
    return widget.grab().toImage()


def save_png(widget: QWidget, path) -> QImage:
    return save_image(grab_image(widget), path)


def save_image(image: QImage, path) -> QImage:
    """``image`` as a PNG file, written atomically (:func:`heapscope.outputs.atomic_path`)."""
    with atomic_path(path) as tmp:
        if not image.save(tmp, "PNG"):
            raise ExportError(f"{os.fspath(path)}: cannot write the PNG file")
    return image


def save_svg(widget: QWidget, path, title: str = "heapscope") -> None:
    """The widget painted into an SVG file by QSvgGenerator, its heap maps
    as rectangles (:class:`VectorCells`), written atomically."""
    settle()
    with atomic_path(path) as tmp:
        _write_svg(widget, tmp, os.fspath(path), title)


def _write_svg(widget: QWidget, tmp: str, path: str, title: str) -> None:
    from PySide6.QtSvg import QSvgGenerator
    generator = QSvgGenerator()
    generator.setFileName(tmp)
    size = widget.size()
    generator.setSize(size)
    generator.setViewBox(QRect(0, 0, size.width(), size.height()))
    generator.setTitle(title)
    generator.setDescription("made by heapscope; the heap map's cells are rect elements")
    with vector_heap_maps(widget):
        painter = QPainter()
        if not painter.begin(generator):
            raise ExportError(f"{path}: cannot write the SVG file")
        try:
            widget.render(painter, QPoint(0, 0))
        finally:
            painter.end()
    if not os.path.getsize(tmp):
        raise ExportError(f"{path}: cannot write the SVG file")


def save_picture(widget: QWidget, path, title: str = "heapscope") -> None:
    """PNG or SVG, as ``path``'s suffix says."""
    fmt = format_of(path)
    if fmt == "png":
        save_png(widget, path)
    elif fmt == "svg":
        save_svg(widget, path, title)
    else:
        raise ExportError(f"{os.fspath(path)}: a picture is PNG or SVG, not {fmt.upper()}")


class VectorCells(QGraphicsObject):
    """The heap map's cell image drawn as rectangles: one per run of equal
    cells in a row, filled with the cell's colour (for SVG export).  Laid
    out where the image is, in the map's coordinates (x: byte offset in the
    row, y: row)."""

    def __init__(self, image: np.ndarray, lut: np.ndarray, rect: QRectF) -> None:
        super().__init__()
        self._rect = QRectF(rect)
        rows, cols = image.shape if image.ndim == 2 else (0, 0)
        self.runs: dict[int, list[QRectF]] = {}
        if not rows or not cols:
            return
        cw, ch = rect.width() / cols, rect.height() / rows
        for r in range(rows):
            line = image[r]
            starts = np.flatnonzero(np.r_[True, line[1:] != line[:-1]])
            ends = np.r_[starts[1:], cols]
            for c0, c1 in zip(starts.tolist(), ends.tolist()):
                self.runs.setdefault(int(line[c0]), []).append(
                    QRectF(rect.x() + c0 * cw, rect.y() + r * ch, (c1 - c0) * cw, ch))
        self.colours = {code: QColor(*[int(v) for v in lut[code][:3]]) for code in self.runs}

    def count(self) -> int:
        return sum(len(v) for v in self.runs.values())

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(self, painter, option, widget=None) -> None:
        painter.setPen(Qt.NoPen)
        for code, rects in self.runs.items():
            painter.setBrush(QBrush(self.colours[code]))
            painter.drawRects(rects)


@contextlib.contextmanager
def vector_heap_maps(widget: QWidget):
    """While in the block, every heap map inside ``widget`` draws its cells
    as :class:`VectorCells` instead of its image."""
    from .heap_map import HeapMapWidget
    maps = [widget] if isinstance(widget, HeapMapWidget) else widget.findChildren(HeapMapWidget)
    swapped = []
    try:
        for hm in maps:
            item = hm.image_item
            lut = item.lut if item.lut is not None else np.zeros((256, 4), np.uint8)
            cells = VectorCells(hm.image, np.asarray(lut), item.mapRectToParent(item.boundingRect()))
            cells.setZValue(item.zValue())
            hm.plot.addItem(cells)
            item.hide()
            swapped.append((hm, item, cells))
        yield [cells for _, _, cells in swapped]
    finally:
        for hm, item, cells in swapped:
            hm.plot.removeItem(cells)
            item.show()


# ================================================================== measures
def save_measures(timeline, path, start: int = 1, stop: int | None = None, about: dict | None = None,
                  progress: ProgressFn | None = None, cancel: CancelFn | None = None) -> int:
    """The timeline's measures over steps ``start..stop`` as CSV or JSON;
    the number of steps written.  A CSV reports its ``progress`` as it goes
    (a window-modal progress dialog runs the event loop there) and stops
    with ExportCancelled when ``cancel()`` says so."""
    fmt = format_of(path)
    if fmt == "csv":
        def report(done: int, total: int) -> None:
            if progress:
                progress(done, total)
            if cancel and cancel():
                raise ExportCancelled(f"{done:,} of {total:,} rows written; the file was removed")
        with atomic_path(path) as tmp:
            return series_io.write_csv(timeline.series, tmp, start, stop, report)
    if fmt == "json":
        about = dict(about or {})
        about.setdefault("strategy", timeline.strategy_name)
        about.setdefault("params", {k: v for k, v in timeline.params.items()})
        with atomic_path(path) as tmp:
            return series_io.write_json(timeline.series, tmp, start, stop, about)
    raise ExportError(f"{os.fspath(path)}: the measures are CSV or JSON, not {fmt.upper()}")


# ================================================================ animations
@dataclass
class StepRange:
    """Steps ``first..last`` (inclusive) at ``fps`` frames a second; with
    ``animate``, each step plays its events as the window does at
    ``speed`` steps a second (several frames a step), else one frame a step."""
    first: int
    last: int
    fps: float = 4.0
    animate: bool = False
    speed: float = 1.0

    def positions(self) -> range:
        return range(self.first, self.last + 1)

    def __len__(self) -> int:
        return max(0, self.last - self.first + 1)


def parse_steps(text: str, n: int) -> StepRange:
    """``A:B`` (or ``N``) to a StepRange clamped to 0..n; ExportError names a bad one."""
    try:
        a, sep, b = text.partition(":")
        first = int(a) if a.strip() else 0
        last = (int(b) if b.strip() else n) if sep else first
    except ValueError:
        raise ExportError(f"steps {text!r}: expected A:B, whole numbers (e.g. 100:140)") from None
    if first < 0 or last < first:
        raise ExportError(f"steps {text!r}: expected 0 <= A <= B")
    if first > n:
        raise ExportError(f"steps {text!r}: the replay has {n} steps")
    return StepRange(first, min(last, n))


def settle() -> None:
    """Let the views finish what they deferred (a relayout, a redraw), and
    hold every map's failure hatch still: it flashes when a failure appears
    (on a 160 ms timer), and a frame taken between two flashes showed step
    95 of a 48 KiB next-fit replay without its hatch while the still picture
    of that step had it (one picture per state, issue 24)."""
    from .heap_map import HeapMapWidget
    app = QApplication.instance()
    if app is not None:
        for _ in range(2):
            app.processEvents()
        for widget in app.allWidgets():
            if isinstance(widget, HeapMapWidget):
                widget.marks_layer.hold_still()


def frames_of_step(window, position: int, fps: float, animate: bool = False,
                   speed: float = 1.0) -> Iterator[None]:
    """Show step ``position`` in ``window`` and yield once per frame to
    capture.  Without ``animate``: one frame, the step as shown when it is
    reached.  With it: the step plays its events as the window's step
    animator plays them at ``speed`` steps a second (gui/step_animator.py:
    the same script, each event held its share of the step's time), the
    structure view's glides stepped frame by frame at ``fps`` rather than by
    the clock, so every run gives the same frames; the last frame is the
    whole step."""
    from .step_animator import move_ms, plan
    model = window.model
    if not animate or position == 0:
        model.seek(position, at_once=True)
        settle()
        yield
        return
    model.seek(position - 1, at_once=True)
    model.seek(position, 0, at_once=True)
    step = model.step()
    script = plan(step.record.events, speed) if step is not None and step.event_count else []
    # Both the structure view's glides and the heap map's fades and sliding
    # cuts (gui/heap_map.py, seek_transition) are stepped frame by frame.
    views = [v for v in (window.structure_panel.view, window.heap_map) if v is not None]
    frame_ms = 1000.0 / max(fps, 0.01)
    for v in views:
        v.manual_transitions = True
    try:
        for k, (index, slot) in enumerate(script):
            if k:
                model.transition_ms = move_ms(slot)
                try:
                    model.set_event(index)
                finally:
                    model.transition_ms = 0
            for f in range(max(1, round(slot / frame_ms))):
                _seek_transitions(views, (f + 1) * frame_ms)
                settle()
                yield
        model.set_event(None)
        settle()
        yield
    finally:
        for v in views:
            v.manual_transitions = False
            v.finish_transition()


def _seek_transitions(views, ms: float) -> None:
    """Every view's transition under way to ``ms`` after its start."""
    for v in views:
        if hasattr(v, "seek_transition"):          # the heap map
            v.seek_transition(ms)
        else:                                      # a structure view's glide
            transition = v.transition
            if transition is not None and transition.running:
                transition.seek(ms)


def step_images(window, widget: QWidget, steps: StepRange, progress: ProgressFn | None = None,
                cancel: CancelFn | None = None) -> Iterator[QImage]:
    """The images of ``widget`` at every step of ``steps``, in order, made one
    at a time as the consumer asks; ExportError past :data:`MAX_FRAMES` frames
    (animated steps make several a step, so their count shows as they play)."""
    total = len(steps)
    frames = 0
    for i, position in enumerate(steps.positions()):
        if cancel is not None and cancel():
            raise ExportCancelled(f"export stopped after {i} of {total} steps")
        for _ in frames_of_step(window, position, steps.fps, steps.animate, steps.speed):
            frames += 1
            if frames > MAX_FRAMES:
                raise ExportError(f"steps {steps.first}-{steps.last} played make more than "
                                  f"{MAX_FRAMES:,} frames: export fewer steps, or without "
                                  "playing their events")
            yield widget.grab().toImage()
        if progress is not None:
            progress(i + 1, total)


def rgb_array(image: QImage) -> np.ndarray:
    """A QImage as an (h, w, 3) uint8 array."""
    image = image.convertToFormat(QImage.Format_RGB888)
    w, h, bpl = image.width(), image.height(), image.bytesPerLine()
    buf = np.frombuffer(image.constBits(), np.uint8, count=bpl * h).reshape(h, bpl)
    return buf[:, :w * 3].reshape(h, w, 3).copy()


def write_gif(images: Iterable[QImage], path, fps: float) -> int:
    """An animated GIF (looping) of ``images`` at ``fps``; the frame count.
    Each frame goes to the file as it comes (:class:`heapscope.gif.GifStream`:
    its own 256-colour palette, cropped to what changed), so memory does not
    grow with the frames; the file appears, whole, when the last is written."""
    with atomic_output(path) as f:
        gif = GifStream(f, fps)
        for image in images:
            gif.add(rgb_array(image))
        if not gif.frames:
            raise ExportError("no frames to write")
        gif.close()
    return gif.frames


def video_unavailable() -> str | None:
    """Why MP4 cannot be written here, or None (:mod:`heapscope.video`)."""
    return video.video_unavailable()


def write_mp4(images: Iterable[QImage], path, fps: float) -> int:
    """An H.264 MP4 of ``images`` at ``fps`` through imageio-ffmpeg; the
    frame count.  Frames are padded to even sizes (yuv420p needs them)."""
    reason = video_unavailable()
    if reason:
        raise ExportError(reason)
    with atomic_path(path) as tmp:
        count = _encode_mp4(images, tmp, fps)
    return count


def _encode_mp4(images: Iterable[QImage], path: str, fps: float) -> int:
    """write_mp4's encoding into ``path``: each frame is sent to ffmpeg as it
    comes (its writer holds none of them)."""
    import imageio_ffmpeg
    writer = None
    count = 0
    try:
        for image in images:
            rgb = rgb_array(image)
            h, w = rgb.shape[:2]
            if writer is None:
                size = (w + w % 2, h + h % 2)
                writer = imageio_ffmpeg.write_frames(path, size, fps=fps, codec="libx264",
                                                     pix_fmt_out="yuv420p", macro_block_size=2,
                                                     quality=8, ffmpeg_log_level="error")
                writer.send(None)
            if w % 2 or h % 2:
                padded = np.full((h + h % 2, w + w % 2, 3), 255, np.uint8)
                padded[:h, :w] = rgb
                rgb = padded
            writer.send(np.ascontiguousarray(rgb))
            count += 1
    finally:
        if writer is not None:
            writer.close()
    if not count:
        raise ExportError("no frames to write")
    return count


def save_animation(window, widget: QWidget, path, steps: StepRange, progress: ProgressFn | None = None,
                   cancel: CancelFn | None = None) -> int:
    """Steps ``steps`` of ``widget`` as GIF or MP4 (by ``path``'s suffix);
    the frame count.  The window is left at the last step.  A cancelled
    export leaves no partial file (and the file that was there as it was)."""
    fmt = format_of(path)
    if fmt not in ANIMATION_FORMATS:
        raise ExportError(f"{os.fspath(path)}: an animation is GIF or MP4, not {fmt.upper()}")
    if fmt == "mp4":
        reason = video_unavailable()
        if reason:
            raise ExportError(reason)
    if not len(steps):
        raise ExportError("the range of steps is empty")
    try:
        check_output(path, what="animation")
        check_frame_count(len(steps), f"steps ({steps.first}-{steps.last})")
        check_picture(widget.width(), widget.height(), fmt)
    except (OutputError, FrameLimitError) as exc:
        raise ExportError(str(exc)) from None
    images = step_images(window, widget, steps, progress, cancel)
    return write_gif(images, path, steps.fps) if fmt == "gif" else write_mp4(images, path, steps.fps)


# ================================================================ one entry
@dataclass
class ExportRequest:
    """What File > Export (and ``heapscope render``) asks for."""
    part: str                          # a key of PARTS, or "measures"
    path: str
    steps: StepRange | None = None     # animations and measures; None: the shown step / all steps


def export(window, request: ExportRequest, progress: ProgressFn | None = None,
           cancel: CancelFn | None = None) -> str:
    """Do ``request`` in ``window``; a line saying what was written."""
    fmt = format_of(request.path)
    path = os.fspath(request.path)
    try:
        check_output(path)
    except OutputError as exc:
        raise ExportError(str(exc)) from None
    if request.part == "measures" or fmt in MEASURE_FORMATS:
        timeline = window.timeline
        if timeline is None:
            raise ExportError("nothing replayed yet: open a trace first")
        if fmt not in MEASURE_FORMATS:
            raise ExportError(f"{path}: the measures are CSV or JSON, not {fmt.upper()}")
        first, last = (request.steps.first, request.steps.last) if request.steps else (1, timeline.n)
        if window.model.building():
            last = min(last, timeline.built)     # the rows past it are not measured yet
        about = {"trace": window.model.label, "source": window.model.source}
        n = save_measures(timeline, path, max(first, 1), last, about, progress, cancel)
        return f"wrote {path}: the measures of {n:,} steps"
    widget = part_widget(window, request.part)
    if fmt in ANIMATION_FORMATS:
        steps = request.steps or StepRange(window.model.position, window.model.position)
        n = save_animation(window, widget, path, steps, progress, cancel)
        how = " (each step's events played)" if steps.animate else ""
        return (f"wrote {path}: {PARTS[request.part]}, steps {steps.first}-{steps.last}{how}, "
                f"{n:,} frames at {steps.fps:g} per second")
    title = f"heapscope: {window.model.label} through {window.strategy_name}, step {window.model.position}"
    save_picture(widget, path, title)
    return f"wrote {path}: {PARTS[request.part]} at step {window.model.position}"
