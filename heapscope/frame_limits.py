"""The largest pictures and animations heapscope draws, in one place for
``heapscope render`` and File > Export.

Each window drawn costs memory in proportion to its pixels (Qt's backing
store, the grabbed image, the encoder's copy), and an animation time in
proportion to its frames: past these limits a request is refused with a
message before any work starts, instead of growing to gigabytes (twelve
strategies at 8192x8192 reached 7.6 GB).
"""

from __future__ import annotations

#: a window is at least this many pixels a side (below it the panels do not fit)
MIN_SIDE = 320
#: and at most this many (an 8K UHD screen is 7680 wide)
MAX_SIDE = 7680
#: pixels of one picture: a window, or the windows side by side (one 7680x4320 screen)
MAX_PICTURE_PIXELS = 7680 * 4320
#: frames of one GIF or MP4, and files of one ``--steps`` range of PNG or SVG
MAX_FRAMES = 10_000
#: the GIF format stores sides in 16 bits
GIF_MAX_SIDE = 65535


class FrameLimitError(ValueError):
    """A picture or an animation past a limit; the message names it."""


def check_window_size(width: int, height: int) -> None:
    """FrameLimitError unless a WxH window is within the limits."""
    if not (MIN_SIDE <= width <= MAX_SIDE and MIN_SIDE <= height <= MAX_SIDE):
        raise FrameLimitError(f"a size is WxH with each between {MIN_SIDE} and {MAX_SIDE} pixels, "
                              f"e.g. 1280x720; got {width}x{height}")
    if width * height > MAX_PICTURE_PIXELS:
        raise FrameLimitError(f"{width}x{height} is {width * height:,} pixels; a window has at most "
                              f"{MAX_PICTURE_PIXELS:,} (7680x4320)")


def check_picture(width: int, height: int, fmt: str, windows: int = 1) -> None:
    """FrameLimitError unless a picture of ``width`` x ``height`` (``windows``
    windows side by side) can be drawn in ``fmt``."""
    pixels = width * height
    if pixels > MAX_PICTURE_PIXELS:
        side = f" ({windows} windows side by side)" if windows > 1 else ""
        raise FrameLimitError(f"a picture of {width}x{height}{side} is {pixels:,} pixels; at most "
                              f"{MAX_PICTURE_PIXELS:,} (one 7680x4320 screen): draw fewer "
                              "strategies or a smaller --size")
    if fmt == "gif" and max(width, height) > GIF_MAX_SIDE:
        raise FrameLimitError(f"a GIF is at most {GIF_MAX_SIDE} pixels a side, not {width}x{height}: "
                              "draw fewer strategies or a smaller --size")


def check_frame_count(count: int, what: str = "frames") -> None:
    """FrameLimitError if ``count`` frames (or files) are too many."""
    if count > MAX_FRAMES:
        raise FrameLimitError(f"{count:,} {what}: at most {MAX_FRAMES:,} are drawn at once; "
                              "choose a shorter range of steps")
