"""A sweep's cells on a Dask distributed cluster (``heapscope sweep --scheduler``).

The same tasks as on the local pool (heapscope/sweep.py): each cell's
:class:`~heapscope.experiments.runner.Job` measured by
:func:`heapscope.sweep.measure_cell`, its trace loaded in the worker by the
job runner's :func:`~heapscope.experiments.runner.load` (so a trace file
must be at the same path on every worker: true of ``local:N``).  Each row
is appended to the results file as its future completes, so a stop loses
only the cells running; a worker lost mid-sweep is Dask's to handle: the
scheduler reruns the tasks that worker held (up to its
``distributed.scheduler.allowed-failures``), and only those.

``--scheduler local:N`` starts a :class:`~dask.distributed.LocalCluster` of
N single-threaded worker processes for the sweep and stops it at the end;
``--scheduler tcp://HOST:PORT`` uses a running cluster's scheduler.
dask[distributed] is an optional extra: ``pip install 'heapscope[dask]'``.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import time

from .experiments.runner import Job, load
from .sweep import Cell, ProgressFn, ResultsFile, SweepError, measure_cell

#: the most workers ``local:N`` starts (as ``-j``)
MAX_LOCAL_WORKERS = 64
#: seconds to wait for a scheduler given by address
CONNECT_TIMEOUT = 10


def parse_scheduler(text: str) -> tuple[str, object]:
    """``local:N`` -> ``("local", N)``; ``tcp://HOST:PORT`` (or tls://) ->
    ``("address", text)``; ValueError naming what is accepted otherwise."""
    match = re.fullmatch(r"local:(\d+)", text.strip())
    if match and 1 <= int(match.group(1)) <= MAX_LOCAL_WORKERS:
        return "local", int(match.group(1))
    if re.fullmatch(r"(tcp|tls)://[^\s/:]+:\d+", text.strip()):
        return "address", text.strip()
    raise ValueError(f"expected local:N (N in 1..{MAX_LOCAL_WORKERS}) or tcp://HOST:PORT, got {text!r}")


def dask_missing() -> str | None:
    """Why ``--scheduler`` cannot run here (None: it can)."""
    if importlib.util.find_spec("distributed") is None:
        return "--scheduler needs dask's distributed scheduler: pip install 'heapscope[dask]'"
    return None


def measure_named(job: Job) -> dict:
    """The task each cell is on a Dask worker: :func:`measure_cell` on the
    trace the job names, loaded there."""
    return measure_cell(job, load(job.trace))


def run_on_dask(todo: list[Cell], results: ResultsFile, scheduler: tuple[str, object],
                progress: ProgressFn | None = None) -> int:
    """As :func:`heapscope.sweep.run_sweep`, on the cluster ``scheduler``
    names (:func:`parse_scheduler`); SweepError when it cannot be reached.
    Returns how many rows have an error."""
    from dask.distributed import Client, LocalCluster, as_completed
    kind, value = scheduler
    cluster = None
    try:
        if kind == "local":
            cluster = LocalCluster(n_workers=value, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
        else:
            client = Client(value, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        if cluster is not None:
            cluster.close()
        raise SweepError(f"--scheduler {value}: cannot reach the scheduler: {exc}") from None
    errors = 0
    start = time.monotonic()
    try:
        futures = {client.submit(measure_named, cell.job(), pure=False): cell for cell in todo}
        for done, future in enumerate(as_completed(futures), 1):
            cell = futures[future]
            try:
                row = future.result()
            except Exception as exc:      # the task raised on its worker, or was lost too often
                row = {"error": f"{type(exc).__name__}: {exc}"}
            results.append(cell, row)
            errors += "error" in row
            if progress:
                elapsed = time.monotonic() - start
                progress(done, len(todo), elapsed / done * (len(todo) - done))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return errors
