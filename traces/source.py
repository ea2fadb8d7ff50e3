"""Opening a trace file as a bounded stream of text lines, for every format.

:func:`open_source` opens a path -- a regular file, a FIFO or a character
device -- and hands the reader its content in blocks of whole lines
(:meth:`TraceSource.blocks`), never the whole file at once:

- **Compressed input** is recognised by its gzip magic bytes (or a ``.gz``
  name) and inflated one chunk at a time, so a small file that inflates to
  gigabytes costs no more memory than a plain one.
- **Line ends** are LF, CRLF or a lone CR (old Mac files: fscanf in the CS:APP
  driver reads any whitespace, so it reads those files too); blocks are given
  with LF only, and line numbers count a lone CR as a line end.
- **Limits** (:class:`ReadLimits`): the bytes read (after decompression), the
  length of one line, and -- checked by the format readers -- the number of
  operations and ids.  Going past one is a :class:`TraceError` that names the
  limit and the line reached, as soon as it happens; so ``/dev/zero``, an
  endless pipe or a gzip bomb stop within a few megabytes.
- **FIFOs and devices** are read as they come; the wait for data is a
  ``poll()`` with a short timeout, so a ``cancel()`` callback is seen even when
  the writer is silent (or has not opened the FIFO yet).

The memory a read takes is bounded by the chunk size and the longest line
allowed, plus what the reader keeps (the operations), which the op limit
bounds.  :meth:`TraceSource.head` shows the first bytes without consuming
them, for choosing a format by content.
"""

from __future__ import annotations

import errno
import gzip
import io
import os
import select
import stat
import zlib
from dataclasses import dataclass
from typing import Callable, Iterator

from .errors import ReadCancelled, TraceError
from .limits import MAX_IDS, MAX_INPUT_BYTES, MAX_LINE_BYTES, MAX_OPS

__all__ = ["ReadLimits", "DEFAULT_LIMITS", "TraceSource", "open_source", "CHUNK_BYTES"]

#: bytes read (and inflated) at a time; the reader's numpy temporaries are a
#: small multiple of this
CHUNK_BYTES = 1 << 20
#: how often (s) a wait for a silent FIFO or device looks at ``cancel()``
POLL_SECONDS = 0.1
_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"


def _mib(n: int) -> str:
    """A byte count as a user would write the limit: 2 GiB, 1 MiB, 100 bytes."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} bytes"


@dataclass(frozen=True)
class ReadLimits:
    """The most heapscope reads of one trace; past it the trace is refused.

    ``max_bytes``: bytes of text, after decompression (the compressed input
    counts too); ``max_line``: bytes on one line; ``max_ops``: operations;
    ``max_ids``: the ids a trace declares (``num_ids``).  The defaults are
    :mod:`heapscope.traces.limits`, the one place for every reader.
    """

    max_bytes: int = MAX_INPUT_BYTES
    max_line: int = MAX_LINE_BYTES
    max_ops: int = MAX_OPS
    max_ids: int = MAX_IDS

    def too_many_bytes(self) -> str:
        shown = _mib(self.max_bytes)
        exact = "" if shown.endswith("bytes") else f" ({self.max_bytes:,} bytes)"
        return f"more than {shown} of text{exact}, the most heapscope reads"

    def line_too_long(self) -> str:
        return (f"line longer than {_mib(self.max_line)}, the longest heapscope reads "
                f"(is this a trace file?)")

    def too_many_ops(self) -> str:
        return f"more than {self.max_ops:,} operations, the most heapscope reads"

    def too_many_ids(self, num_ids: int) -> str:
        return f"num_ids = {num_ids:,} is more than {self.max_ids:,}, the most heapscope reads"


DEFAULT_LIMITS = ReadLimits()

Progress = Callable[[int, int], None]
Cancel = Callable[[], bool]


class _RawFile(io.RawIOBase):
    """An open file descriptor, read with the byte budget and the cancel hook.

    A regular file is read with plain blocking reads.  A FIFO or a device is
    opened non-blocking and each read first waits in ``poll()`` for at most
    POLL_SECONDS at a time, so that ``cancel()`` is looked at while a writer is
    silent.  (On Linux a FIFO opened this way reports neither data nor hang-up
    until a writer has come, so "no writer yet" is a wait, not an end.)
    :meth:`peek` reads ahead (to see the magic bytes) without consuming.
    """

    def __init__(self, fd: int, regular: bool, source: "TraceSource") -> None:
        super().__init__()
        self.fd = fd
        self.source = source
        self.count = 0            # bytes read from the file
        self._ahead = b""         # peeked, not yet consumed
        self._poll = None
        if not regular:
            self._poll = select.poll()
            self._poll.register(fd, select.POLLIN | select.POLLPRI)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if not self._ahead:
            return self._read_file(buffer)
        n = min(len(buffer), len(self._ahead))
        buffer[:n] = self._ahead[:n]
        self._ahead = self._ahead[n:]
        if self._poll is None and n < len(buffer):
            # a regular file: fill the rest (a FIFO's caller takes what is there)
            n += self._read_file(memoryview(buffer)[n:])
        return n

    def _read_file(self, buffer) -> int:
        while True:
            self.source.check_cancel()
            if self._poll is not None and not self._poll.poll(POLL_SECONDS * 1000):
                continue
            try:
                n = os.readv(self.fd, [buffer])
            except BlockingIOError:
                continue
            self.count += n
            # compressed input counts too (empty gzip members inflate to
            # nothing); plain text is counted, to the byte, as text
            if self.source.compressed and self.count > self.source.limits.max_bytes:
                raise self.source.error(self.source.limits.too_many_bytes())
            return n

    def read1(self, n: int = -1) -> bytes:
        """At most ``n`` bytes in one read (what is there, for a FIFO)."""
        return self.read(n)

    def peek(self, n: int) -> bytes:
        """The next ``n`` bytes (fewer only at the end), left to be read."""
        while len(self._ahead) < n:
            buffer = bytearray(n - len(self._ahead))
            got = self._read_file(buffer)
            if not got:
                break
            self._ahead += bytes(buffer[:got])
        return self._ahead[:n]

    def close(self) -> None:
        if not self.closed:
            os.close(self.fd)
        super().close()


class TraceSource:
    """A trace being read: its name, its first bytes, its lines in blocks.

    Use as a context manager (it owns a file descriptor).  ``path`` is the
    name errors give; ``line`` the number of the line being read.  Errors
    are :class:`TraceError` naming ``path`` and, past the start, the line.
    """

    def __init__(self, path: str | None, stream, *, limits: ReadLimits = DEFAULT_LIMITS,
                 size: int = 0, progress: Progress | None = None,
                 cancel: Cancel | None = None) -> None:
        self.path = path
        self.limits = limits
        self.line = 1
        self._stream = stream
        self._raw: _RawFile | None = None
        self._size = size
        self._progress = progress
        self._cancel = cancel
        self._read_text = 0           # bytes of text (after decompression)
        self._pending = b""           # read but not yet given out
        self.compressed = False       # gzip data, inflated as it is read
        self._eof = False
        self._over = False            # the byte limit was reached: no more text
        self._started = False

    # --- opening -----------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: bytes, path: str | None = None, *,
                   limits: ReadLimits = DEFAULT_LIMITS) -> "TraceSource":
        """Text already in memory (``parse_rep`` of a string); never compressed."""
        return cls(path, io.BytesIO(data), limits=limits)

    def __enter__(self) -> "TraceSource":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for f in (self._stream, self._raw):
            if f is not None:
                try:
                    f.close()
                except (OSError, EOFError, zlib.error):
                    pass

    # --- errors and hooks ----------------------------------------------------
    def error(self, message: str, line: int | None = -1) -> TraceError:
        """A TraceError at ``line`` (default: the line being read)."""
        return TraceError(message, self.path, self.line if line == -1 else line)

    def cancelled(self) -> bool:
        """Whether the cancel hook has turned true (for a reader that raises itself)."""
        return self._cancel is not None and bool(self._cancel())

    def report_share(self, done: int, total: int) -> None:
        """Progress of a reader that reads the file by itself (memray's): ``done``
        of ``total`` units, reported as that share of the file's bytes, never
        less than the bytes already read for its head (progress only goes on)."""
        if self._progress is not None and total > 0:
            read = self._raw.count if self._raw is not None else self._read_text
            self._progress(max(self._size * min(done, total) // total, read), self._size)

    def check_cancel(self) -> None:
        if self.cancelled():
            raise ReadCancelled(self.path)

    # --- reading -------------------------------------------------------------
    def _read_chunk(self) -> bytes:
        """The next piece of text (b"" at the end), limits checked, no BOM."""
        data = self._read_chunk_raw()
        if not self._started:
            # A UTF-8 byte order mark carries nothing.  (A FIFO may give its
            # first bytes one at a time: wait until it is clear whether one is there.)
            while data and len(data) < len(_BOM) and _BOM.startswith(data):
                more = self._read_chunk_raw()
                if not more:
                    break
                data += more
            self._started = True
            if data.startswith(_BOM):
                data = data[len(_BOM):] or self._read_chunk_raw()
        return data

    def _read_chunk_raw(self) -> bytes:
        if self._over:
            return b""
        self.check_cancel()
        try:
            # read1: one step of the file or of the inflater, as much as is
            # there; never more than a line may hold, so that only the first
            # line of a block can be too long (see blocks)
            data = self._stream.read1(min(CHUNK_BYTES, self.limits.max_line))
        except (gzip.BadGzipFile, EOFError, zlib.error) as e:
            raise self.error(f"not a valid gzip file: {e}", None) from None
        except OSError as e:
            raise self.error(f"cannot read the file: {e.strerror or e}", None) from None
        if self._read_text + len(data) > self.limits.max_bytes:
            # keep the text up to the limit: its lines are read (an error in them
            # comes first), then blocks() names the line the limit falls in
            data = data[:self.limits.max_bytes - self._read_text]
            self._over = True
        self._read_text += len(data)
        if self._progress is not None:
            raw = self._raw.count if self._raw is not None else self._read_text
            self._progress(raw, self._size)
        return data

    def head(self, n: int = 4096) -> bytes:
        """The first ``n`` bytes of text (fewer if the file is shorter), not consumed."""
        while len(self._pending) < n and not self._eof:
            data = self._read_chunk()
            if not data:
                self._eof = True
            self._pending += data
        return self._pending[:n]

    def blocks(self) -> Iterator[bytes]:
        """The text in blocks of whole lines, with LF line ends.

        A block ends with a line end except the file's last one, which may
        not.  When a block is given, :attr:`line` is the number of its first
        line; the caller counts lines within it.
        """
        carry = b""
        while True:
            if self._pending:
                # what head() read, in pieces no longer than one read would be
                step = min(CHUNK_BYTES, self.limits.max_line)
                data, self._pending = self._pending[:step], self._pending[step:]
            else:
                data = b"" if self._eof else self._read_chunk()
            if not data:
                if self._over:
                    raise self.error(self.limits.too_many_bytes())
                self._eof = True
                if carry:
                    yield _lf_only(carry)
                return
            carry += data
            # a CR at the very end may be half of a CRLF: it waits for the next byte
            end = len(carry) - carry.endswith(b"\r")
            cut = max(carry.rfind(b"\n", 0, end), carry.rfind(b"\r", 0, end)) + 1
            if cut == 0:
                if end > self.limits.max_line:
                    raise self.error(self.limits.line_too_long())
                continue
            block = _lf_only(carry[:cut])
            carry = carry[cut:]
            # Lines that start in this read are no longer than it; only the
            # block's first line, begun in the carry, and the new carry can be.
            if block.find(b"\n") > self.limits.max_line:
                raise self.error(self.limits.line_too_long())
            if len(carry) - carry.endswith(b"\r") > self.limits.max_line:
                self.line += block.count(b"\n")
                raise self.error(self.limits.line_too_long())
            yield block
            self.line += block.count(b"\n")


def _lf_only(text: bytes) -> bytes:
    """CRLF and lone CR line ends turned into LF."""
    if b"\r" not in text:
        return text
    return text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _is_gzip_name(path: str) -> bool:
    return path.lower().endswith(".gz")


def open_source(path: str | os.PathLike, *, limits: ReadLimits = DEFAULT_LIMITS,
                progress: Progress | None = None, cancel: Cancel | None = None) -> TraceSource:
    """Open ``path`` for reading a trace: a regular file, FIFO or device.

    gzip data is inflated as it is read (recognised by its magic bytes; a
    name ending in ``.gz`` must hold gzip data).  ``progress(done, total)``
    is called after every chunk with the bytes read from the file and its
    size (0 when unknown: a FIFO or a device); ``cancel()`` is looked at
    between chunks and while waiting for a FIFO, and :class:`ReadCancelled`
    raised when it turns true.
    """
    where = os.fsdecode(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise TraceError(f"cannot read the file: {e.strerror or e}", where) from None
    source = None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise TraceError(f"cannot read the file: {os.strerror(errno.EISDIR)}", where)
        regular = stat.S_ISREG(info.st_mode)
        if regular:
            os.set_blocking(fd, True)
        source = TraceSource(where, None, limits=limits, size=info.st_size if regular else 0,
                             progress=progress, cancel=cancel)
        raw = _RawFile(fd, regular, source)
        fd = -1                      # raw owns it now
        source._raw = raw
        try:
            magic = raw.peek(len(_GZIP_MAGIC))
        except OSError as e:
            raise TraceError(f"cannot read the file: {e.strerror or e}", where) from None
        if magic == _GZIP_MAGIC:
            source._stream = gzip.GzipFile(filename="", mode="rb", fileobj=raw)
            source.compressed = True
        elif _is_gzip_name(where):
            raise TraceError("not a valid gzip file: it does not start with the gzip "
                             "magic bytes 1f 8b", where)
        else:
            source._stream = raw
        return source
    except BaseException:
        if source is not None:
            source.close()
        if fd >= 0:
            os.close(fd)
        raise
