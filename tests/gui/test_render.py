"""``heapscope render`` (heapscope/render.py): for each strategy, and for
three side by side, files that decode and show the window; one frame per
step; the formats by suffix; bad requests as one-line errors (exit 2)."""

import contextlib
import io
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from heapscope import traces
from heapscope.allocators import plugins, strategy_names
from heapscope.cli import main
from tests.depth import QUICK_STRATEGIES, deep, pick, some_in_quick

ROOT = Path(__file__).resolve().parents[2]
SIZE = (1000, 640)


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("render") / "gen.rep"
    traces.write_rep(traces.make_workload("vo1989", steps=150, seed=4), path)
    return str(path)


def render(*args) -> int:
    return main(["render", *map(str, args), "--size", f"{SIZE[0]}x{SIZE[1]}"])


@pytest.fixture(scope="module")
def step_png(qapp, trace_path, tmp_path_factory):
    """``png(name)``: ``render -s NAME --step 120`` of the trace, run once a
    module for each strategy (the two tests below read the same picture; a
    render is a window's worth of CPU), as (its path, what it printed)."""
    folder = tmp_path_factory.mktemp("step-png")
    done = {}

    def png(name):
        if name not in done:
            out = folder / f"{name}.png"
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                assert render(trace_path, "-s", name, "--step", 120, "-o", out) == 0
            done[name] = (out, printed.getvalue())
        return done[name]
    return png


#: the quick suite's PNG cases: the one-step GIF's four (their PNG is rendered
#: once for both tests) and two more of other shapes (bucket columns, a table)
PNG_IN_QUICK = (*QUICK_STRATEGIES, "bsd-buckets", "gnu-malloc")


@pytest.mark.parametrize("name", some_in_quick(strategy_names(), keep=PNG_IN_QUICK))
def test_each_strategy_renders_a_png_of_the_window(qtbot, step_png, name):
    out, printed = step_png(name)
    assert printed.strip() == str(out)
    image = Image.open(out)
    assert image.size == SIZE
    pixels = np.asarray(image.convert("RGB"))
    # the heap's colours are there: blue payload and yellow free cells
    assert (np.abs(pixels - (0, 114, 178)).sum(axis=2) == 0).sum() > 1000
    assert (np.abs(pixels - (240, 228, 66)).sum(axis=2) == 0).sum() > 20


def test_three_strategies_side_by_side(qtbot, trace_path, tmp_path, step_png):
    out = tmp_path / "three.png"
    assert render(trace_path, "-s", "next-fit", "-s", "tlsf", "-s", "buddy", "--step", 120, "-o", out) == 0
    image = Image.open(out)
    assert image.size == (3 * SIZE[0], SIZE[1])
    one, _ = step_png("tlsf")            # render -s tlsf --step 120, alone
    # the middle third is the TLSF window alone
    both = np.asarray(image.convert("RGB"))[:, SIZE[0]:2 * SIZE[0]]
    assert np.array_equal(both, np.asarray(Image.open(one).convert("RGB")))


def test_three_side_by_side_as_gif_with_a_frame_per_step(qtbot, trace_path, tmp_path):
    out = tmp_path / "three.gif"
    # two steps are the least that is one frame a step (a GIF of one step
    # animates it, test_a_one_step_gif...); the deep suite renders four
    last = pick(61, 63)
    assert render(trace_path, "-s", "first-fit", "-s", "splay-best-fit", "-s", "bsd-buckets",
                  "--steps", f"60:{last}", "--fps", 2, "-o", out) == 0
    gif = Image.open(out)
    assert gif.n_frames == last - 59 and gif.size == (3 * SIZE[0], SIZE[1])
    assert gif.info["duration"] == 500


def test_svg_and_one_png_per_step(qtbot, trace_path, tmp_path, capsys):
    svg = tmp_path / "map.svg"
    assert main(["render", trace_path, "-s", "tlsf", "--step", "90", "--part", "map", "--presenter",
                 "--theme", "dark", "-o", str(svg)]) == 0
    root = ET.parse(svg).getroot()
    assert sum(1 for _ in root.iter("{http://www.w3.org/2000/svg}rect")) > 50
    capsys.readouterr()
    out = tmp_path / "s.png"
    assert render(trace_path, "-s", "buddy", "--steps", "10:12", "--part", "gauges", "-o", out) == 0
    written = capsys.readouterr().out.split()
    assert written == [str(tmp_path / f"s-{t}.png") for t in (10, 11, 12)]
    assert all(Image.open(p).size[0] > 100 for p in written)


def test_mp4(qtbot, trace_path, tmp_path):
    from heapscope.video import video_unavailable
    if video_unavailable():
        pytest.skip("imageio-ffmpeg is not installed")
    import imageio_ffmpeg
    out = tmp_path / "v.mp4"
    assert render(trace_path, "-s", "next-fit", "--steps", "1:6", "-o", out) == 0
    reader = imageio_ffmpeg.read_frames(str(out))
    next(reader)
    assert sum(1 for _ in reader) == 6


def test_a_users_strategy_renders_and_a_broken_one_is_an_error(qtbot, trace_path, tmp_path, capsys):
    try:
        out = tmp_path / "mine.png"
        assert main(["render", trace_path, "--allocator", f"{ROOT / 'examples' / 'segfit.py'}:SegFit",
                     "--step", "50", "-o", str(out)]) == 0
        assert Image.open(out).size == (1280, 720)
        capsys.readouterr()
        broken = ROOT / "examples" / "broken.py"
        assert main(["render", "default", "--allocator", f"{broken}:Broken", "-s", "broken",
                     "--step", "200", "-o", str(tmp_path / "b.png")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("heapscope: error: step 124, malloc(65): your _malloc returned")
        assert not (tmp_path / "b.png").exists()
    finally:
        plugins.forget("segfit")
        plugins.forget("broken")


def near(pixels: np.ndarray, colour, tolerance: int = 24) -> np.ndarray:
    """Where ``pixels`` are within ``tolerance`` of ``colour`` (a GIF frame's
    palette may move a colour a little)."""
    return np.abs(pixels.astype(int) - colour).sum(axis=2) <= tolerance


def test_a_users_strategy_renders_beside_the_built_ins_as_a_gif(qtbot, trace_path, tmp_path):
    """Issue 12: a strategy loaded with --allocator is drawn by render like a
    built-in, here the tutorial's bump allocator beside next fit and TLSF."""
    out = tmp_path / "bump.gif"
    try:
        assert render(trace_path, "--allocator", f"{ROOT / 'examples' / 'bump.py'}:Bump",
                      "-s", "bump", "-s", "next-fit", "-s", "tlsf", "--steps", f"{pick(63, 62)}:64",
                      "-o", out) == 0
    finally:
        plugins.forget("bump")
    gif = Image.open(out)
    assert gif.n_frames == pick(2, 3) and gif.size == (3 * SIZE[0], SIZE[1])
    gif.seek(gif.n_frames - 1)           # step 64
    pixels = np.asarray(gif.convert("RGB"))
    bump, next_fit = pixels[:, :SIZE[0]], pixels[:, SIZE[0]:2 * SIZE[0]]
    # the bump row shows a heap: payload (blue) and the blocks it freed and never reuses (yellow)
    assert near(bump, (0, 114, 178)).sum() > 1000
    assert near(bump, (240, 228, 66)).sum() > 200
    # and it is its own heap, not next fit's
    assert not np.array_equal(bump, next_fit)


def status_of(argv) -> int:
    """main's exit status, argparse's own errors included."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.mark.parametrize("args, message", [
    (["-s", "tlsf", "--step", "3", "-o", "x.bmp"], "suffix picks the format"),
    (["-s", "nope", "--step", "3", "-o", "x.png"], "unknown strategy 'nope'"),
    (["-s", "tlsf", "--step", "3", "--steps", "1:2", "-o", "x.png"], "not allowed with argument"),
    (["-s", "tlsf", "-o", "x.png"], "--steps is required"),
    (["-s", "tlsf", "--steps", "9:3", "-o", "x.gif"], "0 <= A <= B"),
    (["-s", "tlsf", "--step", "3", "--size", "100x100", "-o", "x.png"], "between 320 and 7680"),
    (["-s", "tlsf", "--step", "3", "--size", "400x400", "-o", "x.png"], "smaller than the window"),
    (["-s", "tlsf", "--steps", "900:950", "-o", "x.gif"], "the replay has 300 steps"),
    (["-s", "tlsf", "--step", "3", "-o", "no/such/folder/x.png"], "does not exist"),
])
def test_bad_requests_are_one_line_errors(qtbot, trace_path, tmp_path, capsys, args, message, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert status_of(["render", trace_path, *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not any(f.endswith((".png", ".gif")) for f in os.listdir(tmp_path))


def test_without_an_encoder_mp4_is_refused_with_the_way_to_get_one(qtbot, trace_path, tmp_path, capsys, monkeypatch):
    from heapscope import video
    monkeypatch.setattr(video, "video_unavailable", lambda: video.VIDEO_MISSING)
    assert main(["render", trace_path, "-s", "tlsf", "--steps", "1:3", "-o", str(tmp_path / "v.mp4")]) == 2
    assert "pip install 'heapscope[video]'" in capsys.readouterr().err


def test_animate_gives_the_events_of_each_step(qtbot, trace_path, tmp_path):
    plain, animated = tmp_path / "p.gif", tmp_path / "a.gif"
    if deep():
        # the quick suite has a GIF of two steps without --animate, one frame
        # a step, in test_three_side_by_side_as_gif_with_a_frame_per_step
        assert render(trace_path, "-s", "splay-best-fit", "--steps", "100:101", "-o", plain) == 0
        assert Image.open(plain).n_frames == 2
    # next fit's steps have fewer events to play than splay's rotations (half
    # the frames); splay's animated step is test_a_one_step_gif...'s
    name = pick("next-fit", "splay-best-fit")
    assert render(trace_path, "-s", name, "--steps", "100:101", "--animate", "-o", animated) == 0
    gif = Image.open(animated)
    assert gif.n_frames > 2 and gif.info["duration"] <= 1000 / 12 * 8     # 12 frames a second


def _last_frame(path) -> np.ndarray:
    gif = Image.open(path)
    gif.seek(gif.n_frames - 1)
    return np.asarray(gif.convert("RGB"))


#: the one-step GIF's quick cases: the GIF's frames come from export.frames_of_step,
#: the same for every view; each view's animated step ends on its static
#: drawing in tests/gui/test_step_animation.py (every animated event kind),
#: and splay's tree is issue 24's (its number cut at the frame's edge)
GIF_IN_QUICK = ("next-fit", "splay-best-fit")


@pytest.mark.parametrize("name", some_in_quick(strategy_names(), keep=GIF_IN_QUICK))
def test_a_one_step_gif_plays_its_events_and_ends_on_the_still_picture(qtbot, trace_path, tmp_path, step_png, name):
    """Issue 24, one picture per state: a GIF of one step animates without
    --animate, and its last frame is the PNG of that step, pixel for pixel
    (the PNG given the GIF's own 256 colours: heapscope.gif quantizes each
    frame whole, so equal pictures quantize equally)."""
    from heapscope.gif import _quantized
    gif = tmp_path / "step.gif"
    assert render(trace_path, "-s", name, "--steps", "120:120", "-o", gif) == 0
    png, _ = step_png(name)              # render -s NAME --step 120 -o step.png
    assert Image.open(gif).n_frames > 1
    still = _quantized(np.asarray(Image.open(png).convert("RGB"))).convert("RGB")
    last = _last_frame(gif)
    differ = np.argwhere(np.any(last != np.asarray(still), axis=2))
    assert not len(differ), (name, differ.min(axis=0), differ.max(axis=0))


@pytest.mark.parametrize("name", ["splay-best-fit"])
def test_a_docs_step_gif_ends_on_the_still_picture_of_its_step(qtbot, tmp_path, name):
    """Issue 24: docs/steps/splay-best-fit.gif ended on a frame other than
    the still picture of its step, the wilderness's visit number cut at the
    left edge.  The GIF in docs/steps (made by docs/steps/make_step_gifs.py)
    ends on the PNG ``render`` draws of the step docs/steps/steps.txt names,
    at the same size, pixel for pixel (quantized as the GIF's frames are)."""
    from heapscope.gif import _quantized
    docs = Path(__file__).resolve().parents[2] / "docs" / "steps"
    step = dict(line.split("\t") for line in (docs / "steps.txt").read_text().splitlines())[name]
    png = tmp_path / "still.png"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["render", str(traces.default_trace_path()), "-s", name, "--step", step,
                     "--size", "1280x720", "-o", str(png)]) == 0
    still = _quantized(np.asarray(Image.open(png).convert("RGB"))).convert("RGB")
    last = _last_frame(docs / f"{name}.gif")
    differ = np.argwhere(np.any(last != np.asarray(still), axis=2))
    assert not len(differ), (name, differ.min(axis=0), differ.max(axis=0))


def test_a_readable_trace_renders_as_the_rep_it_converts_to(qtbot, tmp_path, capsys):
    # issue 21: render reads the readable form by its content; same trace, same picture
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    heap = tmp_path / "a" / "lesson.txt"
    # four comment lines, as the .rep has four header lines: the caption's
    # "[lesson.txt line 8]" is the same in both; the blocks are named by
    # their .rep ids, so the caption says "id 2" in both (a name of its own,
    # "c", would travel with the trace: "for c (id 2)")
    heap.write_text("# a\n# small\n# lesson\n\n"
                    "0 = malloc(400)\n1 = calloc(10, 30)\nfree(0)\n2 = malloc(100)\n")
    rep = tmp_path / "b" / "lesson.txt"
    assert main(["convert", str(heap), "-o", str(rep), "--to", "rep"]) == 0
    pictures = []
    for path in (heap, rep):
        out = path.with_suffix(".png")
        assert render(path, "-s", "first-fit", "--step", 4, "-o", out) == 0
        pictures.append(np.asarray(Image.open(out).convert("RGB")))
    assert (np.abs(pictures[0] - (0, 114, 178)).sum(axis=2) == 0).sum() > 1000
    assert np.array_equal(pictures[0], pictures[1])
    heap.write_text("a = malloc(400)\nfree(b)\n")
    capsys.readouterr()
    assert render(heap, "-s", "first-fit", "--step", 1, "-o", tmp_path / "x.png") == 2
    assert f"{heap}:2: free of b, which is not live" in capsys.readouterr().err
