"""An animated GIF written frame by frame, in memory flat in the number of
frames.

Pillow's ``save_all`` keeps every frame until the end (its GIF writer
collects them all to merge equal frames and crop each to what changed): 2.4
MB a frame of a 1280x720 window, 983 MB for 400.  :class:`GifStream` does the
same work one frame at a time with Pillow's frame-level GIF functions
(``GifImagePlugin.getheader`` / ``getdata``): it holds the frame not written
yet (a frame equal to it only makes it show longer) and the last distinct
frame's pixels (to crop the next one to the box that changed), nothing more.

Each frame gets its own palette of at most 255 colours (Pillow's fast
octree, no dithering: flat UI colours stay flat); the first frame's is the
global colour table, the others' are local.  Frames are left in place
(disposal 1), so a frame that changes a corner carries only that corner, and
inside that box every pixel that shows the same colour as before is written
as the one transparent index (the 256th), which LZW packs into long runs: a
1280x720 window whose map and structure view move changes pixels from its
top to its bottom, so the box was the whole frame and the step GIFs of
docs/steps grew from 11 to 20 MB once each frame was quantized whole; with
the unchanged pixels transparent they are 6 MB.  The first frame sets the
canvas: a later frame of another size (a widget that was laid out again) is
cut to it or padded with white.  No Qt here.
"""

from __future__ import annotations

from typing import BinaryIO

import numpy as np
from PIL import GifImagePlugin, Image

from .frame_limits import GIF_MAX_SIDE


def frame_ms(fps: float) -> int:
    """How long one frame shows at ``fps``, in ms (GIF counts hundredths:
    at least 20 ms, as browsers slow anything faster down)."""
    return max(20, round(1000 / max(fps, 0.01)))


def _quantized(rgb: np.ndarray) -> Image.Image:
    # Fast octree, not median cut: on a 1280x720 window of 4,516 colours it is
    # ten times faster (6.5 against 62 ms a frame) and strays less from the
    # true colours (at most 46 against 80 levels in a channel).
    # 255 colours: the 256th index is left for the pixels a frame does not change
    return Image.fromarray(rgb, "RGB").quantize(COLOURS, method=Image.Quantize.FASTOCTREE,
                                                  dither=Image.Dither.NONE)


#: colours a frame keeps; index COLOURS is the transparent "as before"
COLOURS = 255


def _unchanged_transparent(frame: Image.Image, same: np.ndarray) -> tuple[Image.Image, int]:
    """``frame`` (a palette image of at most :data:`COLOURS` colours) with
    the pixels where ``same`` is True transparent, and its palette cut to
    the colours it uses (a local colour table of 256 entries on every frame
    cost 768 bytes each): (the image, its transparent index, the last)."""
    index = np.asarray(frame)
    used = np.unique(index[~same])
    renumber = np.zeros(256, np.uint8)          # the colours used, in order, then transparent
    renumber[used] = np.arange(len(used), dtype=np.uint8)
    pixels = renumber[index]
    pixels[same] = len(used)
    out = Image.fromarray(pixels, "P")
    palette = np.asarray(frame.getpalette(), np.uint8).reshape(-1, 3)
    out.putpalette(palette[used].ravel().tolist() + [255, 0, 255])
    return out, len(used)


def _fitted(rgb: np.ndarray, shape: tuple) -> np.ndarray:
    """``rgb`` cut or padded (white, at the right and bottom) to ``shape``."""
    if rgb.shape == shape:
        return rgb
    out = np.full(shape, 255, np.uint8)
    h, w = min(shape[0], rgb.shape[0]), min(shape[1], rgb.shape[1])
    out[:h, :w] = rgb[:h, :w]
    return out


class GifStream:
    """``add`` RGB frames (``(h, w, 3)`` uint8 arrays) to an open binary
    file, then ``close``; loops forever."""

    def __init__(self, fp: BinaryIO, fps: float) -> None:
        self._fp = fp
        self._duration = frame_ms(fps)
        #: the frame not written yet: [palette image, offset, duration in ms]
        self._held: list | None = None
        #: the pixels of the last distinct frame, as the viewer shows them (quantized)
        self._previous: np.ndarray | None = None
        self._started = False
        #: frames added, equal ones included
        self.frames = 0

    def add(self, rgb: np.ndarray) -> None:
        h, w = rgb.shape[:2]
        if self._previous is None:
            if w > GIF_MAX_SIDE or h > GIF_MAX_SIDE:
                raise ValueError(f"a GIF frame is at most {GIF_MAX_SIDE} pixels a side, not {w}x{h}")
        else:
            rgb = _fitted(rgb, self._previous.shape)
        # The whole frame is quantized, as Pillow's writer does, and compared
        # with the last one as quantized: so each frame shows exactly its own
        # 256 colours, whatever came before it.
        frame = _quantized(np.ascontiguousarray(rgb))
        shown = np.asarray(frame.convert("RGB"))
        box = (0, 0, w, h)
        if self._previous is not None:
            changed = np.any(shown != self._previous, axis=2)
            rows = np.flatnonzero(changed.any(axis=1))
            if not len(rows):
                self.frames += 1
                self._held[2] += self._duration     # the same picture shows longer
                return
            cols = np.flatnonzero(changed.any(axis=0))
            box = (int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1)
            if box != (0, 0, w, h):
                frame = frame.crop(box)
            frame, transparent = _unchanged_transparent(frame, ~changed[box[1]:box[3], box[0]:box[2]])
        else:
            transparent = None
        self._write_held()
        self._held = [frame, box[:2], self._duration, transparent]
        self._previous = shown
        self.frames += 1

    def _write_held(self) -> None:
        if self._held is None:
            return
        frame, offset, duration, transparent = self._held
        if not self._started:
            # The first frame is the whole canvas; its palette is the global one.
            header, _ = GifImagePlugin.getheader(frame, None, {"loop": 0, "duration": duration,
                                                             "optimize": True})
            chunks = header + GifImagePlugin.getdata(frame, offset, duration=duration, disposal=1)
            self._started = True
        else:
            # the palette as given: an optimised one would renumber the transparent index
            chunks = GifImagePlugin.getdata(frame, offset, duration=duration, disposal=1,
                                            include_color_table=True,
                                            **({"transparency": transparent} if transparent is not None else {}))
        for chunk in chunks:
            self._fp.write(chunk)
        self._held = None

    def close(self) -> None:
        """Write the last frame and the trailer; ValueError if no frame was added."""
        if self._previous is None:
            raise ValueError("no frames to write")
        self._write_held()
        self._fp.write(b";")
