"""heapscope/gif.py: an animated GIF written frame by frame.  Read back by
Pillow's decoder, every frame shows the pixels given (flat colours: the
palette holds them exactly), equal frames become one that shows longer, and
the writer's memory does not grow with the frames."""

from __future__ import annotations

import io
import tracemalloc

import numpy as np
import pytest
from PIL import Image

from heapscope.gif import GifStream, frame_ms

COLOURS = np.array([[255, 255, 255], [0, 114, 178], [240, 228, 66], [213, 94, 0],
                    [0, 158, 115], [0, 0, 0]], np.uint8)


def frames_of(n: int, h: int = 60, w: int = 90) -> list[np.ndarray]:
    """n frames of flat colours, each changing one box of the one before,
    every fourth equal to the one before."""
    rng = np.random.default_rng(7)
    frame = COLOURS[rng.integers(0, len(COLOURS), (h // 10, w // 10))].repeat(10, 0).repeat(10, 1)
    out = []
    for i in range(n):
        frame = frame.copy()
        if i % 4 != 3:
            y, x = rng.integers(0, h - 10), rng.integers(0, w - 10)
            frame[y:y + 10, x:x + 10] = COLOURS[i % len(COLOURS)]
        out.append(frame)
    return out


def decoded(data: bytes) -> list[tuple[np.ndarray, int]]:
    gif = Image.open(io.BytesIO(data))
    out = []
    for k in range(gif.n_frames):
        gif.seek(k)
        out.append((np.asarray(gif.convert("RGB")).copy(), gif.info["duration"]))
    return out


def written(frames, fps: float = 10) -> bytes:
    buf = io.BytesIO()
    gif = GifStream(buf, fps)
    for f in frames:
        gif.add(f)
    gif.close()
    assert gif.frames == len(frames)
    return buf.getvalue()


def test_frames_read_back_as_given_and_equal_ones_show_longer():
    frames = frames_of(13)
    got = decoded(written(frames, fps=10))
    # distinct frames by hand: frame i equals frame i-1 when i % 4 == 3
    distinct = [(f, 100 * (2 if i + 1 < len(frames) and (i + 1) % 4 == 3 else 1))
                for i, f in enumerate(frames) if i % 4 != 3]
    assert len(got) == len(distinct) == 10
    for (pixels, ms), (want, want_ms) in zip(got, distinct):
        assert np.array_equal(pixels, want)
        assert ms == want_ms


def test_one_frame_and_the_frame_time():
    (pixels, ms), = decoded(written(frames_of(1), fps=4))
    assert np.array_equal(pixels, frames_of(1)[0]) and ms == 250
    assert frame_ms(100) == 20          # no faster than browsers show


def test_a_frame_of_another_size_is_fitted_to_the_first():
    big, small = frames_of(2, 60, 90)[0], frames_of(2, 40, 50)[1]
    (_, _), (pixels, _) = decoded(written([big, small]))
    assert pixels.shape == big.shape
    assert np.array_equal(pixels[:40, :50], small)
    assert (pixels[40:] == 255).all() and (pixels[:, 50:] == 255).all()


def test_no_frames_is_an_error():
    with pytest.raises(ValueError, match="no frames"):
        GifStream(io.BytesIO(), 4).close()


def test_memory_does_not_grow_with_the_frames():
    """The writer keeps the frame not written yet and the last one's pixels:
    its peak (numpy's buffers are traced) is the same for 20 frames as for 200."""
    def peak(n: int) -> int:
        frames = frames_of(2, 200, 300)
        tracemalloc.start()
        gif = GifStream(io.BytesIO(), 10)
        for i in range(n):
            f = frames[i % 2].copy()          # made as a renderer makes them: one at a time
            f[0, 0] = COLOURS[i % 6]          # never equal to the one before
            gif.add(f)
        gif.close()
        got = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return got
    small, large = peak(20), peak(200)
    assert large < small * 1.2 + 200_000, (small, large)


def test_pixels_a_frame_does_not_change_cost_next_to_nothing():
    """Issue 24: the step GIFs grew from 11 to 20 MB.  A window changes
    pixels from top to bottom, so the box that changed is the whole frame;
    inside it the unchanged pixels are written as one transparent index.
    Here a frame of 64 flat colours (each channel 0, 85, 170 or 255: the
    palette holds them exactly) in a noise LZW cannot pack, then the same
    frame with its two opposite corners changed: the second frame adds less
    than a tenth of what the first took (written whole it adds as much
    again), and it still reads back as given."""
    rng = np.random.default_rng(3)
    levels = np.array([0, 85, 170, 255], np.uint8)
    palette = np.array([(r, g, b) for r in levels for g in levels for b in levels], np.uint8)
    first = palette[rng.integers(0, 64, (200, 300))]
    second = first.copy()
    second[0, 0] = 255 - first[0, 0]
    second[-1, -1] = 255 - first[-1, -1]
    one, two = written([first]), written([first, second])
    assert len(two) - len(one) < len(one) / 10, (len(one), len(two))
    got = decoded(two)
    assert np.array_equal(got[0][0], first) and np.array_equal(got[1][0], second)
