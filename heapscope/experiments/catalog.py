"""The experiments' registry and :func:`run_experiment`: what
``heapscope.experiments`` gives (its ``__init__`` reads these names from here
on first use, so that importing a light submodule -- the output formats the
command line's parser names -- does not import every seed's module, the
runner and the workers' machinery)."""

from __future__ import annotations

from ..allocators.isolation import DEFAULT_TIME_LIMIT
from .base import Experiment, ExperimentError
from .model import Result
from ..traces.corpus import check_corpus, corpus_files
from .runner import ProgressFn, load, run_jobs
from .coppa2010 import Coppa2010
from .djgpp1997 import Djgpp1997
from .dowdeswell1999 import Dowdeswell1999
from .plotnick1983 import Plotnick1983
from .vo1989 import Vo1989

#: experiment name -> experiment, in the seeds' order
EXPERIMENTS: dict[str, Experiment] = {}


def register(experiment: Experiment) -> Experiment:
    EXPERIMENTS[experiment.name] = experiment
    return experiment


for _cls in (Vo1989, Djgpp1997, Plotnick1983, Dowdeswell1999, Coppa2010):
    register(_cls())


def get(name: str) -> Experiment:
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise ExperimentError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}") from None


def run_experiment(name: str, only: list[str] | None = None, settings: dict[str, str] | None = None,
                   workload: dict[str, str] | None = None, workers: int | None = None,
                   progress: ProgressFn | None = None,
                   time_limit: float | None = DEFAULT_TIME_LIMIT,
                   traces: list[str] | None = None) -> Result:
    """Run experiment ``name``: ``only`` these strategies (default: the seed's
    and all of ours), ``settings`` and ``workload`` overrides as text
    (``{"runs": "3"}``, ``{"steps": "2000"}``), ``workers`` processes;
    a strategy of your own silent ``time_limit`` seconds is stopped (its row
    says so, runner.py).  ``traces``: a user's corpus (files, folders of
    them: traces/corpus.py) replayed instead of the experiment's own traces,
    each read before any replay (TraceError names a broken one's file and
    line)."""
    experiment = get(name)
    corpus = None
    if traces is not None:
        experiment.corpus_setting(settings or {})      # refused before the files are read
        corpus = corpus_files(traces)
        check_corpus(corpus, load)
    run = experiment.prepare(only, settings, workload, workers, corpus)
    rows = run_jobs(experiment.jobs(run), run.workers, progress, time_limit=time_limit)
    return experiment.result(run, rows)


__all__ = ["EXPERIMENTS", "Experiment", "ExperimentError", "Result", "get", "run_experiment"]
