"""Regenerate the bundled trace files: ``python -m heapscope.traces.make_bundled``.

The bundled traces are our own, generated from the seed workloads, so that no
third-party trace file (each under its own licence) is copied into the repo.
"""

from __future__ import annotations

import os

from .bundled import default_trace_path
from .rep import write_rep
from .workloads import vo1989

#: Keep the shipped file small; above this, fall back to a shorter run.
MAX_BYTES = 400 * 1024


def main() -> None:
    path = default_trace_path()
    write_rep(vo1989(), path)
    if os.path.getsize(path) > MAX_BYTES:
        write_rep(vo1989(steps=2000), path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
