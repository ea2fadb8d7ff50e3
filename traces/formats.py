"""Which reader a trace file needs, chosen by its content, not its name.

Two kinds of text are read: a .rep trace (``traces.rep``: header integers,
then ``a``/``r``/``f`` lines) and ltrace output or villoc's input
(``traces.ltrace``: ``malloc(24) = 0x...``).  The first lines of the file
(decompressed if it is gzip) decide: a call, an ltrace resumption or an
ltrace marker line there means ltrace; anything else goes to the .rep reader,
whose messages say what a .rep should look like.
"""

from __future__ import annotations

import gzip
import os
import stat
import zlib

from .errors import TraceError
from .ltrace import GZIP_MAGIC, looks_like_ltrace, read_ltrace
from .rep import read_rep
from .trace import Trace

#: bytes looked at to decide
SNIFF_BYTES = 64 * 1024
#: significant lines looked at to decide
SNIFF_LINES = 50


def sniff(head: bytes) -> str:
    """``"ltrace"`` or ``"rep"`` for the first bytes of a (decompressed) file."""
    seen = 0
    for line in head.split(b"\n")[:-1] if b"\n" in head else [head]:
        text = line.strip()
        if not text or text.startswith(b"#"):
            continue
        if looks_like_ltrace(text):
            return "ltrace"
        seen += 1
        if seen >= SNIFF_LINES:
            break
    return "rep"


def _head(path: str | os.PathLike) -> bytes:
    """The first bytes of the file, decompressed if it is gzip; b"" for a
    broken gzip stream (the .rep reader then says what is wrong) and for
    anything but a regular file: reading a pipe's first bytes would take them
    from the reader, so a pipe or device goes to the .rep reader as before."""
    where = os.fsdecode(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return b""
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
            if head[:2] != GZIP_MAGIC:
                return head
            f.seek(0)
            try:
                with gzip.GzipFile(fileobj=f, mode="rb") as gz:
                    return gz.read(SNIFF_BYTES)
            except (OSError, EOFError, zlib.error):
                return b""
    except OSError as e:
        raise TraceError(f"cannot read the file: {e.strerror or e}", where) from None


def sniff_file(path: str | os.PathLike) -> str:
    """``"ltrace"`` or ``"rep"``: the reader that ``path`` needs."""
    return sniff(_head(path))


def read_trace_file(path: str | os.PathLike) -> Trace:
    """Read any trace file heapscope understands, chosen by its content."""
    if sniff_file(path) == "ltrace":
        return read_ltrace(path)
    return read_rep(path)
