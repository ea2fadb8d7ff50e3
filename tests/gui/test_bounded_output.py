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

#: runs ``heapscope render`` in this process and prints its peak RSS (KiB)
RENDER_AND_MEASURE = """
import json, resource, sys
from heapscope.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _render_peak(tmp_path, frames: int) -> tuple[int, str]:
    out = tmp_path / f"g{frames}.gif"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", RENDER_AND_MEASURE, "render", WORKLOAD, "-s", "tlsf",
                           "--steps", f"1:{frames}", "--size", "800x600", "--part", "map",
                           "-o", str(out)], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] == 0, done.stderr[-2000:]
    return result["maxrss_kib"], out


def test_a_240_frame_gif_renders_in_memory_flat_in_the_frames(tmp_path):
    """Before, every frame was kept until the end: 62 MB more at 400 frames
    than at 40 with this map; now the peak is the same to a few MB (3 MB
    more at 240 frames than at 40).  240 frames, not 400, to save 4 s of
    CPU: keeping each frame's RGB pixels comes to 55 MB more, keeping only
    each frame as written (cropped, 256 colours) to 12.8 MB more, both past
    the bound (at 400 frames and a bound of 20 MB the second was 20.6)."""
    rss40, gif40 = _render_peak(tmp_path, 40)
    rss240, gif240 = _render_peak(tmp_path, 240)
    assert rss240 - rss40 < 10 * 1024, (rss40, rss240)
    with Image.open(gif240) as im:
        shown = 0
        for k in range(im.n_frames):
            im.seek(k)
            shown += im.info["duration"]
        assert shown == 240 * 250          # 240 steps at 4 frames a second, equal ones merged
    with Image.open(gif40) as im:
        assert im.size == Image.open(gif240).size


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
