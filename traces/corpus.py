"""A user's corpus of recorded traces: the files of a folder (or a list of
them), as ``heapscope sweep`` and ``heapscope experiment NAME --traces``
take them.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); _ = [open(os.path.join(d, n), "w").close() for n in ("b.rep", "a.rep", ".hidden")]
    >>> [os.path.basename(p) for p in corpus_files([d])]
    ['a.rep', 'b.rep']
"""

from __future__ import annotations

import os
from typing import Callable

from .errors import TraceError


def corpus_files(given: list[str]) -> list[str]:
    """The traces ``given`` names: a folder stands for the files in it
    (sorted, hidden ones left out; not its subfolders); anything else is a
    file, a bundled name or a workload, as ``heapscope compare`` takes it.
    Each once, in the order given.  TraceError for a folder with no file."""
    out = []
    for spec in given:
        if os.path.isdir(spec):
            inside = sorted(os.path.join(spec, f) for f in os.listdir(spec)
                            if not f.startswith(".") and os.path.isfile(os.path.join(spec, f)))
            if not inside:
                raise TraceError("the folder holds no trace files", spec)
            out += inside
        else:
            out.append(spec)
    return list(dict.fromkeys(out))


def check_corpus(specs: list[str], load: Callable[[str], object]) -> None:
    """Read each trace once before any replay starts, so that a broken one
    is named (TraceError: ``file:line: what is wrong``) before an hour of
    replays, not after."""
    for spec in specs:
        load(spec)
