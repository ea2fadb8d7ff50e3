"""``heapscope experiment NAME``: each seed's experiment rerun on heapscope's
strategies, its published figures beside ours (docs/experiments.md).

    >>> from heapscope.experiments import run_experiment
    >>> result = run_experiment("vo1989", only=["bsd-buckets"], settings={"runs": "1"},
    ...                         workload={"steps": "500"}, workers=1)
    >>> [r["strategy"] for r in result.tables[0].rows]
    ['bsd-buckets']

One module per seed; this one keeps the registry and runs one.  No Qt: the
chart is data here (:class:`~heapscope.experiments.model.Chart`), drawn by
``heapscope.gui.experiment_chart``.
"""

from __future__ import annotations

#: the names ``from heapscope.experiments import ...`` gives, all from
#: .catalog, imported on the first one asked for: ``heapscope`` builds its
#: parser (``experiment``'s options among every command's) at every start,
#: and the seeds' modules with the runner cost about 30 ms of CPU, more
#: than a third of the command's own imports after numpy
_FROM_CATALOG = frozenset({
    "DEFAULT_TIME_LIMIT",
    "Experiment",
    "ExperimentError",
    "Result",
    "check_corpus",
    "corpus_files",
    "ProgressFn",
    "load",
    "run_jobs",
    "Coppa2010",
    "Djgpp1997",
    "Dowdeswell1999",
    "Plotnick1983",
    "Vo1989",
    "EXPERIMENTS",
    "register",
    "get",
    "run_experiment",
})


def __getattr__(name: str):
    if name in _FROM_CATALOG:
        from . import catalog
        return getattr(catalog, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _FROM_CATALOG)
