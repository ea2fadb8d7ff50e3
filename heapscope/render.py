"""``heapscope render``: what the window would show, drawn without a window
on screen, for scripts, documentation and slides.

    heapscope render TRACE --strategy S [--strategy S2 ...] (--step N | --steps A:B) -o OUT

Each strategy is replayed and shown in a window of ``--size`` (default
1280x720) that is never put on a screen: Qt draws it offscreen (the command
sets ``QT_QPA_PLATFORM=offscreen`` unless another platform was asked for),
with the text size a screen of that height gets, in ``--theme`` and, with
``--presenter``, in presenter mode.  Several strategies are drawn side by
side, one window each, in the order given.  ``OUT``'s suffix picks the
format: PNG or SVG (one step; with ``--steps``, one file per step, the step
number added to the name), GIF or MP4 (one frame per step of the range, at
``--fps``).  ``--part`` draws one part of the window only (the heap map, the
structure view, the gauges, the plots).

The pictures are the window's own (:mod:`heapscope.gui.export` writes them): what a
teacher sees when opening the trace at that step is what the slide shows.

Bounded: ``--size`` and the windows side by side stay within
:mod:`heapscope.frame_limits` (7680 pixels a side, one 7680x4320 picture),
a range of steps makes at most 10 000 frames or files; each is refused
before any work.  GIF and MP4 frames go to the encoder as they are drawn,
so memory is flat in the number of frames.  Outputs are checked before work
and written through a temporary file (:mod:`heapscope.outputs`); the
windows' settings live in a temporary folder removed at the end.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass, field

from .allocators.isolation import DEFAULT_TIME_LIMIT, MainThreadGuard, UserCodeTimedOut, needs_worker
from .allocators.registry import STRATEGIES, make_strategy
from .allocators.replay import Timeline
from .allocators.user import UserStrategyError
from .frame_limits import (MAX_FRAMES, FrameLimitError, check_frame_count, check_picture,
                           check_window_size)
from .outputs import OutputError, atomic_path, check_output

#: the window's size when --size is not given
DEFAULT_SIZE = (1280, 720)
FORMATS = ("png", "svg", "gif", "mp4")


class RenderError(ValueError):
    """A request that cannot be drawn (exit status 2, one line)."""


@dataclass
class RenderRequest:
    trace: str | None                 # a file, a bundled trace or a workload spec (None: the default)
    strategies: list[str]
    output: str
    step: int | None = None
    steps: tuple[int, int] | None = None
    size: tuple[int, int] = DEFAULT_SIZE
    presenter: bool = False
    theme: str = "light"
    fps: float = 4.0
    part: str = "window"
    animate: bool = False             # each step plays its events (several frames a step)
    params: dict = field(default_factory=dict)            # every strategy's
    strategy_params: dict = field(default_factory=dict)   # -P, by strategy
    #: seconds a strategy of your own may go without an answer (allocators/isolation.py)
    time_limit: float | None = DEFAULT_TIME_LIMIT


def parse_size(text: str) -> tuple[int, int]:
    """``WxH`` (e.g. 1280x720) to a pair of ints within the limits of
    :func:`heapscope.frame_limits.check_window_size` (ValueError names them)."""
    w, sep, h = text.lower().partition("x")
    try:
        size = (int(w), int(h))
    except ValueError:
        size = None
    if not sep or size is None:
        raise ValueError(f"a size is WxH in pixels, e.g. 1280x720; got {text!r}")
    check_window_size(*size)
    return size


def parse_steps(text: str) -> tuple[int, int]:
    """``A:B`` (whole numbers, 0 <= A <= B)."""
    a, sep, b = text.partition(":")
    try:
        first, last = int(a), int(b)
    except ValueError:
        first = last = -1
    if not sep or first < 0 or last < first:
        raise ValueError(f"steps are A:B with 0 <= A <= B, e.g. 100:140; got {text!r}")
    return first, last


def output_format(path: str) -> str:
    fmt = os.path.splitext(path)[1].lower().lstrip(".")
    if fmt not in FORMATS:
        raise RenderError(f"{path}: the output's suffix picks the format: "
                          f"{', '.join('.' + f for f in FORMATS)}")
    return fmt


def replay_all(trace, request: RenderRequest, warn=None, progress=None) -> list[Timeline]:
    """Replay the trace through each strategy: several at once in worker
    processes (allocators/parallel.py), one in this process.  A strategy that
    refuses its parameters or a user strategy that breaks is left out with a
    warning, as ``heapscope compare`` leaves out its row; when none is left,
    RenderError."""
    from .allocators.parallel import BuildFailed, BuildSpec, build_timelines
    specs, errors = [], {}
    for name in dict.fromkeys(request.strategies):
        params = dict(request.params, **request.strategy_params.get(name, {}))
        try:
            make_strategy(name, **params)
        except (ValueError, UserStrategyError) as exc:
            errors[name] = f"{name}: {exc}" if name not in str(exc) else str(exc)
            continue
        specs.append(BuildSpec(name, params))
    built: dict = {}
    if len(specs) == 1 and not needs_worker(specs[0].name):
        spec = specs[0]
        timeline = Timeline(trace, spec.name, spec.params).build(
            progress=(lambda d, n: progress(spec.name, d, n)) if progress else None)
        built[spec.name] = timeline if timeline.fault is None else BuildFailed(spec.name, str(timeline.fault))
    elif specs:
        # a strategy of your own is built in a worker process with a time limit
        built = build_timelines(trace, specs, progress=progress, time_limit=request.time_limit)
    for name, result in built.items():
        if isinstance(result, BuildFailed):
            # named: by the class the user's mistake names, else "kills-itself: ..."
            cls = STRATEGIES.get(name)
            named = result.error.startswith(name) or (cls is not None and f"{cls.__name__}." in result.error)
            errors[name] = result.error if named else str(result)
    timelines = [built[name] for name in request.strategies
                 if name in built and not isinstance(built[name], BuildFailed)]
    if not timelines:
        raise RenderError("; ".join(errors.values()) or "no strategy to draw")
    for e in errors.values():
        if warn is not None:
            warn(f"left out: {e}")
    return timelines


def ensure_application():
    """The QApplication (made here, offscreen unless a platform was asked for)."""
    if not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import qInstallMessageHandler
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance()
    if app is None:
        qInstallMessageHandler(_quiet_offscreen)
        app = QApplication(sys.argv[:1])
    return app


def _quiet_offscreen(kind, context, message: str) -> None:
    """Qt's messages on stderr, but for the offscreen platform's note that a
    window it never shows cannot be sized by its contents."""
    if "propagateSizeHints" not in message:
        print(f"qt: {message}", file=sys.stderr)


def make_windows(trace, timelines, request: RenderRequest, source: str | None, first_position: int,
                 settings_dir: str):
    """One window per timeline, laid out at ``request.size``, showing
    ``first_position``; their settings files go in ``settings_dir``."""
    from PySide6.QtCore import QSettings
    from .gui.app import configure_app
    from .gui.main_window import MainWindow
    app = ensure_application()
    width, height = request.size
    configure_app(app, screen_height=height)
    windows = []
    for i, timeline in enumerate(timelines):
        # never the user's settings: a render is the same for everyone
        settings = QSettings(os.path.join(settings_dir, f"window{i}.ini"), QSettings.IniFormat)
        w = MainWindow(settings)
        # render's own guard limits the user's code here (one SIGALRM timer at a time)
        w.user_watch.enabled = False
        w.apply_presentation(w.presentation.with_(presenter=request.presenter, theme_name=request.theme,
                                                  screen_height=height))
        w.show()
        w.set_window_size(width, height)
        label = os.path.basename(source) if source else (request.trace or trace.name or "trace")
        w.show_built(trace, timeline, source, first_position, label)
        w.statusBar().showMessage(w.summary_text(timed=False))     # the same picture every run
        windows.append(w)
    from .gui.export import settle
    settle()
    for w in windows:
        w.set_window_size(width, height)     # the loaded views may ask for another arrangement
    settle()
    small = [w for w in windows if (w.width(), w.height()) != (width, height)]
    if small:
        hint = small[0].minimumSizeHint()
        close_windows(windows)
        raise RenderError(f"--size {width}x{height} is smaller than the window can be drawn at this "
                          f"text size (at least {hint.width()}x{hint.height()})")
    return windows


def close_windows(windows) -> None:
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication
    for w in windows:
        w.close()
        w.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.DeferredDelete)


def side_by_side(images):
    """QImages in a row, tops aligned, on the first image's background."""
    from PySide6.QtGui import QImage, QPainter
    if len(images) == 1:
        return images[0]
    width = sum(im.width() for im in images)
    height = max(im.height() for im in images)
    out = QImage(width, height, QImage.Format_RGB32)
    out.fill(images[0].pixelColor(0, images[0].height() - 1))
    p = QPainter(out)
    x = 0
    for im in images:
        p.drawImage(x, 0, im)
        x += im.width()
    p.end()
    return out


def render(request: RenderRequest, trace, source: str | None = None, progress=None, warn=None) -> list[str]:
    """Draw ``request``; the files written.  ``progress(what, done, total)``
    hears of the replays and of the frames drawn."""
    fmt = output_format(request.output)
    check_request(request, trace, fmt, [source] if source else [])
    timelines = replay_all(trace, request, warn,
                           (lambda key, d, n: progress(f"replay {key}", d, n)) if progress else None)
    with tempfile.TemporaryDirectory(prefix="heapscope-render-", ignore_cleanup_errors=True) as settings:
        return _draw(request, trace, timelines, fmt, source, progress, settings)


def check_request(request: RenderRequest, trace, fmt: str, inputs=()) -> None:
    """RenderError, before any work, for an output that cannot be written
    (:func:`heapscope.outputs.check_output`), a picture past the pixel
    budget or a range of steps past :data:`MAX_FRAMES`."""
    try:
        check_output(request.output, inputs)
        width, height = request.size
        check_window_size(width, height)
        k = len(dict.fromkeys(request.strategies))
        if fmt in ("gif", "mp4", "png"):      # one picture of every window side by side
            check_picture(width * k, height, fmt, k)
        if request.steps is not None:
            first, last = request.steps
            count = max(0, min(last, len(trace)) - first + 1)
            check_frame_count(count, "frames" if fmt in ("gif", "mp4") else f"{fmt.upper()} files")
    except (OutputError, FrameLimitError) as exc:
        raise RenderError(str(exc)) from None


def _draw(request: RenderRequest, trace, timelines, fmt: str, source, progress, settings: str) -> list[str]:
    """render() once the replays are done: the windows, then the files."""
    from .gui import export
    n = min(t.n for t in timelines)
    if request.steps is not None:
        first, last = request.steps
        if first > n:
            raise RenderError(f"steps {first}:{last}: the replay has {n} steps")
        positions = list(range(first, min(last, n) + 1))
    else:
        positions = [min(request.step or 0, n)]
    if request.part not in export.PARTS:
        raise RenderError(f"unknown part {request.part!r}; known: {', '.join(export.PARTS)}")
    # Drawing seeks the timelines and asks the strategies for their blocks and
    # structure: a strategy of your own runs here then, under a time limit per frame.
    users = [t.strategy_name for t in timelines if needs_worker(t.strategy_name)]
    guard = MainThreadGuard(request.time_limit if users else None,
                            f"while drawing {', '.join(users)}",
                            [STRATEGIES[name] for name in users])
    try:
        with guard:
            return _draw_files(request, trace, timelines, source, positions, fmt, progress, guard,
                               settings)
    except UserCodeTimedOut as exc:
        raise RenderError(str(exc)) from None


def _draw_files(request, trace, timelines, source, positions, fmt, progress, guard,
                settings: str) -> list[str]:
    """The files of ``render``, drawn; ``guard.rearm()`` at every frame."""
    from .gui import export
    windows = make_windows(trace, timelines, request, source, positions[0], settings)
    try:
        widgets = [export.part_widget(w, request.part) for w in windows]
        if fmt in ("gif", "mp4"):
            images = _frames(windows, widgets, positions, request,
                             (lambda d, n: progress("draw", d, n)) if progress else None, guard)
            writer = export.write_gif if fmt == "gif" else export.write_mp4
            try:
                writer(_checked(images, guard), request.output, request.fps)
            except export.ExportError as exc:
                raise RenderError(str(exc)) from None
            return [request.output]
        written = []
        for position in positions:
            path = request.output
            if len(positions) > 1:
                stem, suffix = os.path.splitext(request.output)
                path = f"{stem}-{position}{suffix}"
            guard.rearm()
            for w in windows:
                w.model.seek(position)
            export.settle()
            guard.check()             # a frame the time limit cut short is not written
            if fmt == "png":
                try:
                    export.save_image(side_by_side([export.grab_image(x) for x in widgets]), path)
                except export.ExportError as exc:
                    raise RenderError(str(exc)) from None
            else:
                _svg(widgets, path, f"heapscope: {', '.join(request.strategies)} at step {position}")
            written.append(path)
            if progress is not None:
                progress("draw", len(written), len(positions))
        return written
    finally:
        close_windows(windows)


def _checked(images, guard):
    """``images``, each one checked against the time limit before it is encoded."""
    for image in images:
        guard.check()
        yield image


def _frames(windows, widgets, positions, request, progress, guard=None):
    """The side-by-side pictures of every step (of every frame of each step's
    events, with ``request.animate``: a window whose step has fewer events
    holds its last frame until the others are done).  Made one at a time as
    the encoder asks for them; RenderError past :data:`MAX_FRAMES` (animated
    steps make several frames each)."""
    from .gui import export
    frames = 0
    for i, position in enumerate(positions):
        players = [export.frames_of_step(w, position, request.fps, request.animate) for w in windows]
        last = [None] * len(windows)
        try:
            while True:
                if guard is not None:
                    guard.rearm()
                moved = False
                for k, (player, widget) in enumerate(zip(players, widgets)):
                    if next(player, StopIteration) is not StopIteration:
                        last[k] = widget.grab().toImage()
                        moved = True
                if not moved:
                    break
                frames += 1
                if frames > MAX_FRAMES:
                    raise RenderError(f"steps {positions[0]}:{positions[-1]} played make more than "
                                      f"{MAX_FRAMES:,} frames: draw fewer steps, or without --animate")
                yield side_by_side(last)
        finally:
            for player in players:      # while the windows are still there
                player.close()
        if progress is not None:
            progress(i + 1, len(positions))


def _svg(widgets, path: str, title: str) -> None:
    """The widgets side by side in one SVG, through QSvgGenerator, written
    atomically."""
    from .gui import export
    if len(widgets) == 1:
        export.save_svg(widgets[0], path, title)
        return
    with atomic_path(path) as tmp:
        _svg_side_by_side(widgets, tmp, title)


def _svg_side_by_side(widgets, path: str, title: str) -> None:
    import contextlib
    from PySide6.QtCore import QPoint, QRect, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator
    from .gui import export
    width = sum(x.width() for x in widgets)
    height = max(x.height() for x in widgets)
    generator = QSvgGenerator()
    generator.setFileName(path)
    generator.setSize(QSize(width, height))
    generator.setViewBox(QRect(0, 0, width, height))
    generator.setTitle(title)
    with contextlib.ExitStack() as stack:
        for x in widgets:
            stack.enter_context(export.vector_heap_maps(x))
        painter = QPainter(generator)
        offset = 0
        for x in widgets:
            painter.save()
            painter.translate(offset, 0)
            x.render(painter, QPoint(0, 0))
            painter.restore()
            offset += x.width()
        painter.end()
