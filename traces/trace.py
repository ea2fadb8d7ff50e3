"""A malloc/free trace held compactly in numpy arrays, and its checks.

A trace is a sequence of operations on *ids*: ``ALLOC id size`` (malloc),
``FREE id`` and ``REALLOC id size``.  An id names one block of the traced
program; after it is freed it may be allocated again.  ``REALLOC`` of an id
that was never allocated acts like malloc, as ``realloc(NULL, n)`` does.

Op ``i`` is ``(kind[i], ids[i], sizes[i])``; sizes of frees are 0.  Arrays are
made read-only so a Trace can be shared between views and cached results
(:meth:`Trace.stats`) stay true.

The semantic checks (:func:`check_ops`) and the statistics are vectorised:
for every op we find the previous op on the same id with one stable argsort,
which tells whether the id is live just before it.  That keeps a 1M-op trace
well under the 1 s parse budget, where a Python loop would eat most of it.
"""

from __future__ import annotations

import os
from typing import Iterable, Iterator

import numpy as np

from .errors import TraceError

ALLOC = 0
FREE = 1
REALLOC = 2

#: Letter of each kind in a .rep file, and the reverse.
KIND_LETTERS = {ALLOC: "a", FREE: "f", REALLOC: "r"}
LETTER_KINDS = {v: k for k, v in KIND_LETTERS.items()}
KIND_NAMES = {ALLOC: "alloc", FREE: "free", REALLOC: "realloc"}

#: Requests above this are taken for corrupt input, not a real program (1 TiB).
MAX_SIZE = 2**40
#: Ids are stored as int32.
MAX_IDS = 2**31 - 1

_NO_PREV = -1


#: ops checked (and counted by :meth:`Trace.stats`) at a time: the checks'
#: temporaries are a few bytes an op of this many, not of the whole trace
CHECK_CHUNK = 1 << 20


def _index_dtype(n: int):
    """The narrowest dtype that holds an op index of a trace of ``n`` ops, and -1."""
    return np.int32 if n < 2**31 else np.int64


def previous_op_same_id(ids: np.ndarray) -> np.ndarray:
    """For each op, the index of the previous op on the same id, or -1.

    A stable sort by id puts each id's ops together in trace order, so the
    predecessor of an op is its neighbour in the sorted order.  The result
    is int32 below 2**31 ops; the neighbours are compared a chunk of the
    sorted order at a time, so that beside the sort's own indices (8 bytes
    an op, given back at once) the work takes a few bytes an op of a chunk.
    """
    n = len(ids)
    dtype = _index_dtype(n)
    prev = np.full(n, _NO_PREV, dtype=dtype)
    if n < 2:
        return prev
    order = np.argsort(ids, kind="stable").astype(dtype, copy=False)
    for start in range(0, n - 1, CHECK_CHUNK):
        o = order[start:start + CHECK_CHUNK + 1]   # one past: the chunk's last pair
        sorted_ids = ids[o]
        same = sorted_ids[1:] == sorted_ids[:-1]
        prev[o[1:][same]] = o[:-1][same]
    return prev


def _live_before(kind: np.ndarray, prev: np.ndarray) -> np.ndarray:
    """Whether each op's id is live just before the op (valid traces)."""
    return _live_before_at(kind, prev, kind)


def _live_before_at(kind: np.ndarray, prev: np.ndarray, own: np.ndarray) -> np.ndarray:
    """:func:`_live_before` of some ops (their ``prev``), ``kind`` the whole trace's."""
    has_prev = prev >= 0
    live = np.zeros(len(own), dtype=bool)
    live[has_prev] = kind[prev[has_prev]] != FREE
    return live


def _where(i: int, line_numbers: np.ndarray | None) -> tuple[int | None, str]:
    """(line for TraceError, how to refer to op i in a message).

    Without line numbers (a trace built in memory) ops are named by their
    1-based position: "op 12".
    """
    if line_numbers is not None:
        line = int(line_numbers[i])
        return line, f"line {line}"
    return None, f"op {i + 1}"


def check_ops(kind: np.ndarray, ids: np.ndarray, sizes: np.ndarray, num_ids: int,
              line_numbers: np.ndarray | None = None, path: str | None = None) -> np.ndarray:
    """Raise TraceError for the first op (in trace order) that makes no sense.

    Checks: kind known, id in ``[0, num_ids)``, size not negative nor absurd
    (> 2**40), no free of an id that is not live (never allocated or already
    freed: double free), no realloc of a freed id, no alloc of a live id.
    ``ids`` and ``sizes`` must hold the values as read (int64 when one does
    not fit in int32), so that out-of-range values are seen before anything
    is narrowed.  The ops are checked :data:`CHECK_CHUNK` at a time.  The error names the
    line of the op when ``line_numbers`` is given, else its 1-based position.
    Returns :func:`previous_op_same_id` of ``ids``, which it had to compute.
    """
    if len(kind) == 0:
        return np.zeros(0, dtype=np.int32)
    kind = np.asarray(kind)
    ids = np.asarray(ids)
    sizes = np.asarray(sizes)
    prev = previous_op_same_id(ids)
    bad = None
    for start in range(0, len(kind), CHECK_CHUNK):
        at = slice(start, start + CHECK_CHUNK)
        k, i, z, p = kind[at], ids[at], sizes[at], prev[at]
        local_bad = (k > REALLOC) | (i < 0) | (i >= num_ids) | (z < 0) | (z > MAX_SIZE)
        live = _live_before_at(kind, p, k)
        freed = (p >= 0) & ~live
        semantic_bad = (((k == ALLOC) & live) | ((k == FREE) & ~live)
                        | ((k == REALLOC) & freed))
        found = np.flatnonzero(local_bad | semantic_bad)
        if len(found):
            bad = start + found
            break
    if bad is None:
        return prev
    i = int(bad[0])
    line, _ = _where(i, line_numbers)
    k, ident, size = int(kind[i]), int(ids[i]), int(sizes[i])
    p = int(prev[i])
    prev_at = _where(p, line_numbers)[1] if p >= 0 else ""
    if k > REALLOC:
        msg = f"unknown operation kind {k}"
    elif not 0 <= ident < num_ids:
        msg = f"id {ident} is out of range [0, {num_ids}) (num_ids = {num_ids})"
    elif size < 0:
        msg = f"negative size {size} for id {ident}"
    elif size > MAX_SIZE:
        msg = f"absurd size {size} for id {ident} (more than 2**40 bytes)"
    elif k == ALLOC:
        msg = f"alloc of id {ident}, which is already live (allocated at {prev_at})"
    elif k == FREE and p >= 0:
        msg = f"double free of id {ident} (freed at {prev_at})"
    elif k == FREE:
        msg = f"free of id {ident}, which is not live (it was never allocated)"
    else:
        msg = f"realloc of id {ident}, which was freed at {prev_at}"
    if line is None:
        msg = f"{_where(i, None)[1]}: {msg}"
    raise TraceError(msg, path, line)


class Trace:
    """A malloc/free trace: parallel arrays ``kind``, ``ids``, ``sizes``.

    ``kind`` is uint8 (ALLOC, FREE, REALLOC), ``ids`` int32 in
    ``[0, num_ids)``, ``sizes`` int64 requested bytes (0 for frees).
    ``name`` is for display, ``source`` the file it came from (or None),
    ``header`` the 4 integers of a .rep header (or None), ``line_numbers``
    (int32, or None) the source line of each op, for error messages and for
    showing where a step comes from.  ``names`` ({id: name}, or None) are
    the names a person gave the blocks (``a = malloc(240)`` in the readable
    form, or the window's sandbox): messages say ``a (id 0)`` where they
    would say ``id 0`` (:func:`block_words`).  A .rep has none.

    The constructor checks the ops (see :func:`check_ops`) unless
    ``validate=False``, and raises TraceError naming ``source`` and the line.
    """

    __slots__ = ("kind", "ids", "sizes", "num_ids", "name", "source", "header",
                 "line_numbers", "names", "_prev", "_stats")

    def __init__(self, kind, ids, sizes, num_ids: int | None = None, *, name: str = "",
                 source: str | os.PathLike | None = None,
                 header: tuple[int, int, int, int] | None = None,
                 line_numbers=None, validate: bool = True, copy: bool = True,
                 names: dict | None = None) -> None:
        # Copies, so freezing them below never touches the caller's arrays;
        # copy=False takes arrays the caller hands over (a reader's, filled
        # for this trace) as they are when their dtypes are already the
        # trace's: a trace of ten million ops is then never held twice.
        convert = np.array if copy else np.asarray
        kind = convert(kind, dtype=np.uint8)
        ids = np.asarray(ids)
        if ids.dtype != np.int32:     # as read (int64 may hold an id out of range): narrowed below
            ids = np.array(ids, dtype=np.int64)
        elif copy:
            ids = ids.copy()
        sizes = convert(sizes, dtype=np.int64)
        source = None if source is None else os.fspath(source)
        if not (kind.ndim == ids.ndim == sizes.ndim == 1
                and len(kind) == len(ids) == len(sizes)):
            raise TraceError("kind, ids and sizes must be 1-D arrays of one length", source)
        if line_numbers is not None:
            line_numbers = convert(line_numbers, dtype=np.int32)
            if line_numbers.shape != kind.shape:
                raise TraceError("line_numbers must have one entry per op", source)
        if num_ids is None:
            num_ids = int(ids.max()) + 1 if len(ids) else 0
        num_ids = int(num_ids)
        if not 0 <= num_ids <= MAX_IDS:
            raise TraceError(f"num_ids {num_ids} is out of range [0, {MAX_IDS}]", source)
        # A free carries no size; keep it 0 whatever the caller passed.
        if sizes.flags.writeable:
            sizes[kind == FREE] = 0
        else:
            sizes = np.where(kind == FREE, 0, sizes)
        prev = None
        if validate:
            prev = check_ops(kind, ids, sizes, num_ids, line_numbers, source)
        elif len(ids) and (ids.min() < 0 or ids.max() > MAX_IDS):
            raise TraceError("ids must fit in int32", source)
        if ids.dtype != np.int32:
            ids = ids.astype(np.int32)
        self.kind = _frozen(kind)
        self.ids = _frozen(ids)
        self.sizes = _frozen(sizes)
        self.num_ids = num_ids
        self.name = name
        self.source = source
        self.header = None if header is None else tuple(int(h) for h in header)
        self.line_numbers = None if line_numbers is None else _frozen(line_numbers)
        self.names = {int(i): str(n) for i, n in names.items()} if names else None
        self._prev = None if prev is None else _frozen(prev)
        self._stats = None

    # --- construction -------------------------------------------------------
    @classmethod
    def from_ops(cls, ops: Iterable[tuple], name: str = "", num_ids: int | None = None,
                 validate: bool = True) -> "Trace":
        """Build a trace from ``(kind, id, size)`` tuples.

        ``kind`` is ALLOC/FREE/REALLOC or the letter ``'a'``/``'f'``/``'r'``;
        a free may be given as ``(FREE, id)``.  ``num_ids`` defaults to the
        largest id + 1.  Errors name the op by its 1-based position.
        """
        kinds: list[int] = []
        ids: list[int] = []
        sizes: list[int] = []
        for n, op in enumerate(ops, 1):
            try:
                k = LETTER_KINDS[op[0]] if isinstance(op[0], str) else int(op[0])
                arity_ok = len(op) == 3 or (k == FREE and len(op) == 2)
                if k not in KIND_LETTERS or not arity_ok:
                    raise ValueError
                kinds.append(k)
                ids.append(int(op[1]))
                sizes.append(int(op[2]) if len(op) == 3 and k != FREE else 0)
            except (TypeError, ValueError, IndexError, KeyError):
                raise TraceError(f"op {n}: expected (kind, id, size), got {op!r}") from None
        if any(abs(v) > 2**62 for v in ids) or any(abs(v) > 2**62 for v in sizes):
            raise TraceError("an id or size does not fit in 64 bits")
        return cls(np.array(kinds, dtype=np.uint8), np.array(ids, dtype=np.int64),
                   np.array(sizes, dtype=np.int64), num_ids, name=name, validate=validate)

    def validate(self) -> None:
        """Check the ops again (see :func:`check_ops`); raise TraceError."""
        self._prev = _frozen(check_ops(self.kind, self.ids, self.sizes, self.num_ids,
                                       self.line_numbers, self.source))

    # --- access -------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.kind)

    def op(self, i: int) -> tuple[int, int, int]:
        """Op ``i`` as plain ints ``(kind, id, size)``."""
        return int(self.kind[i]), int(self.ids[i]), int(self.sizes[i])

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        # .tolist() turns the arrays into Python ints in C: far faster than
        # indexing numpy scalars one by one.
        return zip(self.kind.tolist(), self.ids.tolist(), self.sizes.tolist())

    def __repr__(self) -> str:
        return f"<Trace {self.name!r}: {len(self)} ops, {self.num_ids} ids>"

    def previous_same_id(self) -> np.ndarray:
        """For each op the index of the previous op on the same id, or -1 (cached)."""
        if self._prev is None:
            self._prev = _frozen(previous_op_same_id(self.ids))
        return self._prev

    # --- statistics ---------------------------------------------------------
    def stats(self) -> dict:
        """Counts and sizes of the trace (cached; a fresh dict each call).

        ``max_live_bytes`` is the largest, over time, sum of the requested
        sizes of the live ids (the seeds' "Salloc"); ``max_live_blocks`` the
        largest number of live ids.  ``min_size``, ``max_size``, ``mean_size``
        and ``total_requested`` are over the alloc and realloc requests (0 when
        there are none).
        """
        if self._stats is None:
            self._stats = self._compute_stats()
        return dict(self._stats)

    def _compute_stats(self) -> dict:
        # A chunk of ops at a time (CHECK_CHUNK), the running totals carried
        # over: the temporaries are some 40 bytes an op of a chunk.
        kind, sizes = self.kind, self.sizes
        prev = self.previous_same_id()
        n = len(kind)
        allocs = frees = reallocs = total = 0
        max_live_bytes = max_live_blocks = 0
        live_bytes = live_blocks = 0        # after the ops so far
        min_size, max_size = None, None
        for start in range(0, n, CHECK_CHUNK):
            at = slice(start, start + CHECK_CHUNK)
            k, z, p = kind[at], sizes[at], prev[at]
            is_alloc, is_free, is_realloc = k == ALLOC, k == FREE, k == REALLOC
            requested = z[~is_free]
            live = _live_before_at(kind, p, k)
            old = np.zeros(len(k), dtype=np.int64)
            old[live] = sizes[p[live]]
            # A realloc replaces the old request by the new one; a free drops it.
            step_bytes = np.cumsum(z - old)         # a free's size is 0
            step_blocks = np.cumsum(is_alloc.astype(np.int64) + (is_realloc & ~live)
                                    - is_free.astype(np.int64))
            max_live_bytes = max(max_live_bytes, live_bytes + int(step_bytes.max()))
            max_live_blocks = max(max_live_blocks, live_blocks + int(step_blocks.max()))
            live_bytes += int(step_bytes[-1])
            live_blocks += int(step_blocks[-1])
            allocs += int(np.count_nonzero(is_alloc))
            frees += int(np.count_nonzero(is_free))
            reallocs += int(np.count_nonzero(is_realloc))
            if len(requested):
                total += int(requested.sum())
                low, high = int(requested.min()), int(requested.max())
                min_size = low if min_size is None else min(min_size, low)
                max_size = high if max_size is None else max(max_size, high)
        n_req = allocs + reallocs
        return {
            "num_ops": n,
            "num_ids": self.num_ids,
            "allocs": allocs,
            "frees": frees,
            "reallocs": reallocs,
            "max_live_bytes": max_live_bytes,
            "max_live_blocks": max_live_blocks,
            "total_requested": total,
            "min_size": min_size if n_req else 0,
            "max_size": max_size if n_req else 0,
            # the exact total over the count: what numpy's mean of the sizes
            # gives while the total stays below 2**53
            "mean_size": total / n_req if n_req else 0.0,
        }


def block_words(ident: int, names: dict | None) -> str:
    """How a message names trace id ``ident``: ``a (id 0)`` when ``names``
    (a trace's :attr:`Trace.names`) gives it a name of its own, else
    ``id 0`` (a .rep's ids, a readable .rep line's id)."""
    name = names.get(ident) if names else None
    return f"{name} (id {ident})" if name is not None and name != str(ident) else f"id {ident}"


def _frozen(a: np.ndarray) -> np.ndarray:
    """Make an array this module owns read-only, so cached results stay true."""
    a.flags.writeable = False
    return a
