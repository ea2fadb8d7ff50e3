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


def previous_op_same_id(ids: np.ndarray) -> np.ndarray:
    """For each op, the index of the previous op on the same id, or -1.

    A stable sort by id puts each id's ops together in trace order, so the
    predecessor of an op is its neighbour in the sorted order.
    """
    n = len(ids)
    prev = np.full(n, _NO_PREV, dtype=np.int64)
    if n < 2:
        return prev
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    same = sorted_ids[1:] == sorted_ids[:-1]
    prev[order[1:][same]] = order[:-1][same]
    return prev


def _live_before(kind: np.ndarray, prev: np.ndarray) -> np.ndarray:
    """Whether each op's id is live just before the op (valid traces)."""
    has_prev = prev >= 0
    live = np.zeros(len(kind), dtype=bool)
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
    ``ids`` and ``sizes`` should be int64 so that out-of-range values coming
    from a file are seen before anything is narrowed.  The error names the
    line of the op when ``line_numbers`` is given, else its 1-based position.
    Returns :func:`previous_op_same_id` of ``ids``, which it had to compute.
    """
    if len(kind) == 0:
        return np.zeros(0, dtype=np.int64)
    kind = np.asarray(kind)
    ids = np.asarray(ids, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    local_bad = ((kind > REALLOC) | (ids < 0) | (ids >= num_ids)
                 | (sizes < 0) | (sizes > MAX_SIZE))
    prev = previous_op_same_id(ids)
    live = _live_before(kind, prev)
    freed = (prev >= 0) & ~live
    semantic_bad = (((kind == ALLOC) & live) | ((kind == FREE) & ~live)
                    | ((kind == REALLOC) & freed))
    bad = np.flatnonzero(local_bad | semantic_bad)
    if len(bad) == 0:
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
                 line_numbers=None, validate: bool = True, names: dict | None = None) -> None:
        # Copies, so freezing them below never touches the caller's arrays.
        kind = np.array(kind, dtype=np.uint8)
        ids64 = np.array(ids, dtype=np.int64)
        sizes = np.array(sizes, dtype=np.int64)
        source = None if source is None else os.fspath(source)
        if not (kind.ndim == ids64.ndim == sizes.ndim == 1
                and len(kind) == len(ids64) == len(sizes)):
            raise TraceError("kind, ids and sizes must be 1-D arrays of one length", source)
        if line_numbers is not None:
            line_numbers = np.array(line_numbers, dtype=np.int32)
            if line_numbers.shape != kind.shape:
                raise TraceError("line_numbers must have one entry per op", source)
        if num_ids is None:
            num_ids = int(ids64.max()) + 1 if len(ids64) else 0
        num_ids = int(num_ids)
        if not 0 <= num_ids <= MAX_IDS:
            raise TraceError(f"num_ids {num_ids} is out of range [0, {MAX_IDS}]", source)
        # A free carries no size; keep it 0 whatever the caller passed.
        sizes = np.where(kind == FREE, 0, sizes)
        prev = None
        if validate:
            prev = check_ops(kind, ids64, sizes, num_ids, line_numbers, source)
        elif len(ids64) and (ids64.min() < 0 or ids64.max() > MAX_IDS):
            raise TraceError("ids must fit in int32", source)
        self.kind = _frozen(kind)
        self.ids = _frozen(ids64.astype(np.int32))
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
        kind, sizes = self.kind, self.sizes
        is_alloc, is_free, is_realloc = kind == ALLOC, kind == FREE, kind == REALLOC
        requested = sizes[~is_free]
        prev = self.previous_same_id()
        live = _live_before(kind, prev)
        old = np.zeros(len(kind), dtype=np.int64)
        old[live] = sizes[prev[live]]
        # A realloc replaces the old request by the new one; a free drops it.
        live_bytes = np.cumsum(np.where(is_free, 0, sizes) - old)
        live_blocks = np.cumsum(is_alloc.astype(np.int64) + (is_realloc & ~live)
                                - is_free.astype(np.int64))
        n_req = len(requested)
        return {
            "num_ops": len(kind),
            "num_ids": self.num_ids,
            "allocs": int(is_alloc.sum()),
            "frees": int(is_free.sum()),
            "reallocs": int(is_realloc.sum()),
            "max_live_bytes": int(max(0, live_bytes.max())) if len(kind) else 0,
            "max_live_blocks": int(max(0, live_blocks.max())) if len(kind) else 0,
            "total_requested": int(requested.sum()),
            "min_size": int(requested.min()) if n_req else 0,
            "max_size": int(requested.max()) if n_req else 0,
            "mean_size": float(requested.mean()) if n_req else 0.0,
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
