"""Bounded output (issue 19): ``heapscope render`` and File > Export stream
GIF frames to the file (memory flat in the number of frames), refuse sizes
and frame counts past heapscope/frame_limits.py before any work, write
through a temporary file, and leave no temporary folder behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import pytest
from PIL import Image

from heapscope.cli import main
from heapscope.gui import export

WORKLOAD = "vo1989:steps=400,seed=4"

#: runs ``heapscope render`` in this process twice, each time with the
#: arguments of one JSON list, and prints the peak RSS (KiB) after each
RENDER_AND_MEASURE = """
import json, resource, sys
from heapscope.cli import main
for argv in sys.argv[1:]:
    code = main(json.loads(argv))
    print(json.dumps({"code": code, "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

#: the flat-memory test's window: big, so that a frame kept shows after few frames
GIF_SIZE = "1400x1000"


def _render_peaks(tmp_path, *frames: int) -> list[tuple[int, str]]:
    """One process renders ``--steps 1:N`` of the map for each N in turn:
    (the peak RSS after that render, its GIF) for each."""
    outs = [tmp_path / f"g{k}-{n}.gif" for k, n in enumerate(frames)]
    argvs = [json.dumps(["render", WORKLOAD, "-s", "tlsf", "--steps", f"1:{n}", "--size", GIF_SIZE,
                         "--part", "map", "-o", str(out)]) for n, out in zip(frames, outs)]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", RENDER_AND_MEASURE, *argvs],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["code"] for r in results] == [0] * len(frames), (done.stdout, done.stderr[-2000:])
    return [(r["maxrss_kib"], out) for r, out in zip(results, outs)]


def test_a_60_frame_gif_renders_in_memory_flat_in_the_frames(tmp_path):
    """Before, every frame was kept until the end: 62 MB more at 400 frames
    than at 40 with an 800x600 window's map.  Now the peak is the same to a
    MB or two.  Measured here in one process (one interpreter start, not
    two) with a 1400x1000 window's map (three times the pixels of 800x600
    a frame, at 1.7 times the CPU, so a frame kept shows after fewer frames):
    a 10-frame render first (the first render's window and caches fill up
    its memory: 5 MB more after it than after 2 frames), then 10 frames and
    60, the peak after the 60 against the peak after the 10.  The right
    code: 0.8 and 1.4 MB more; GifStream keeping each frame's RGB pixels: 46
    MB more; keeping each frame as written (cropped, 256 colours): 10.1 MB."""
    _, (rss10, gif10), (rss60, gif60) = _render_peaks(tmp_path, 10, 10, 60)
    assert rss60 - rss10 < 5 * 1024, (rss10, rss60)
    with Image.open(gif60) as im:
        shown = 0
        for k in range(im.n_frames):
            im.seek(k)
            shown += im.info["duration"]
        assert shown == 60 * 250          # 60 steps at 4 frames a second, equal ones merged
    with Image.open(gif10) as im:
        assert im.size == Image.open(gif60).size


@pytest.mark.parametrize("args, message", [
    (["--steps", "0:20000", "-o", "x.gif"], "20,001 frames: at most 10,000"),
    (["--steps", "0:15000", "-o", "x.png"], "15,001 PNG files: at most 10,000"),
    (["--step", "3", "--size", "8192x8192", "-o", "x.png"], "between 320 and 7680"),
    (["--step", "3", "--size", "7680x7680", "-o", "x.png"], "at most 33,177,600"),
    (["-s", "tlsf", "-s", "buddy", "--step", "3", "--size", "7680x4320", "-o", "x.gif"],
     "15360x4320 (2 windows side by side) is 66,355,200 pixels"),
])
def test_limits_are_refused_before_any_work(qtbot, tmp_path, capsys, monkeypatch, args, message):
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    monkeypatch.chdir(tmp_path)
    t0 = time.perf_counter()
    try:
        code = main(["render", *args])      # the bundled trace: 20 000 steps
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert time.perf_counter() - t0 < 10            # refused, not drawn
    assert os.listdir(tmp_path) == []


def test_render_leaves_no_temporary_folder(qtbot, tmp_path, monkeypatch, capsys):
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setattr(tempfile, "tempdir", None)      # gettempdir() reads TMPDIR again
    assert tempfile.gettempdir() == str(private)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["render", WORKLOAD, "-s", "tlsf", "--steps", "3:4", "--size", "800x600",
                 "-o", str(out / "x.gif")]) == 0
    assert main(["render", WORKLOAD, "-s", "tlsf", "--step", "3", "--size", "800x600",
                 "-o", str(out / "x.png")]) == 0
    assert os.listdir(private) == []
    assert sorted(os.listdir(out)) == ["x.gif", "x.png"]     # no partial files either


def test_a_failed_render_keeps_the_file_that_was_there(qtbot, tmp_path, capsys, monkeypatch):
    """Written through a temporary file: a render stopped half way (here past
    the frame limit, which --animate can only see as it plays) leaves the old
    GIF as it was and no partial file."""
    from heapscope import frame_limits, render
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    out = tmp_path / "x.gif"
    out.write_bytes(b"the old one")
    monkeypatch.setattr(render, "MAX_FRAMES", 3)
    assert main(["render", WORKLOAD, "-s", "splay-best-fit", "--steps", "100:104", "--animate",
                 "--size", "800x600", "-o", str(out)]) == 2
    assert "more than 3 frames" in capsys.readouterr().err
    assert out.read_bytes() == b"the old one" and os.listdir(tmp_path) == ["x.gif"]
    assert frame_limits.MAX_FRAMES == 10_000


# ------------------------------------------------------------ File > Export
def test_export_streams_gif_frames_to_the_file(qtbot, loaded, tmp_path):
    """Each frame reaches the (temporary) file while the next is drawn: the
    partial file grows frame by frame, and the GIF appears only at the end."""
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    path = tmp_path / "s.gif"
    sizes = []
    real = export.step_images

    def watched(*args, **kwargs):
        for image in real(*args, **kwargs):
            partial = [f for f in os.listdir(tmp_path) if f != "s.gif"]
            sizes.append(os.path.getsize(tmp_path / partial[0]) if partial else -1)
            assert not path.exists()
            yield image

    import unittest.mock
    with unittest.mock.patch.object(export, "step_images", watched):
        n = export.save_animation(loaded, loaded.heap_map, path, export.StepRange(200, 230))
    assert n == 31 and path.exists()
    assert sizes[0] == 0 and all(s >= 0 for s in sizes)       # the partial file exists from the start
    assert len(set(sizes)) > 10                                 # and grows as the frames come
    assert [f for f in os.listdir(tmp_path) if f != "s.gif"] == []


def test_export_refuses_too_many_frames_before_drawing(qtbot, loaded, tmp_path):
    drawn = []
    path = tmp_path / "long.gif"
    with pytest.raises(export.ExportError, match="10,001 steps .*at most 10,000"):
        export.save_animation(loaded, loaded.heap_map, path, export.StepRange(0, 10_000),
                              progress=lambda d, n: drawn.append(d))
    assert drawn == [] and not path.exists()


def test_export_checks_the_output_first(qtbot, loaded, tmp_path):
    missing = tmp_path / "no" / "such" / "x.gif"
    text = loaded.run_export(export.ExportRequest("map", str(missing), export.StepRange(1, 3)))
    assert text is None
    box = loaded.message_box
    assert "does not exist" in box.informativeText()
    box.close()
