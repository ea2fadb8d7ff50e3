"""Whether MP4 can be written here: the optional encoder, imageio-ffmpeg.

Its ffmpeg binary is GPL-licensed, so heapscope does not require it; the
``video`` extra installs it (``pip install 'heapscope[video]'``).  No Qt here:
``heapscope render`` asks before it starts Qt (and before its worker
processes, which fork fastest from a process without Qt).
"""

from __future__ import annotations

VIDEO_MISSING = ("MP4 needs the optional encoder: pip install 'heapscope[video]' (imageio-ffmpeg, "
                 "which brings an ffmpeg binary under the GPL); GIF needs nothing more")


def video_unavailable() -> str | None:
    """Why MP4 cannot be written here, or None."""
    try:
        import imageio_ffmpeg
        imageio_ffmpeg.get_ffmpeg_exe()
    except Exception:      # not installed, or no ffmpeg binary for this platform
        return VIDEO_MISSING
    return None
