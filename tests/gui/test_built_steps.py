"""A step of a timeline built in the background is shown only once its
measures have it (``ShowModel.built_steps``).

A chunk from the build's worker puts its rows in the window's timeline and
moves ``timeline.built`` at once (allocators/build_stream.py, ``take_chunk``);
the model's measures take them in at the next ``grown``, up to
``GROW_EVERY`` later (gui/background_build.py).  A seek in between went to a
step the measures did not have: its gauges said "–" (``measures_row`` None)
and kept saying it, the shown step being cached.  Seen in compare mode on
sqlite3-sql-40k at step 100 000: one row of seven without its gauges.

The chunks here are made in this process by the worker's own
``ChunkSender`` around a build of the same trace, so no worker is started."""

from __future__ import annotations

from heapscope import traces
from heapscope.allocators.build_stream import ChunkSender, take_chunk
from heapscope.allocators.replay import PROGRESS_EVERY, Timeline
from heapscope.gui.show_model import ShowModel

NAME = "first-fit"


def chunks_of(trace) -> list:
    """The chunks a worker building ``trace`` sends, one per progress point."""
    sent = []
    worker = Timeline(trace, NAME)
    worker.build(progress=ChunkSender(worker, sent.append, every=0))
    return [chunk for kind, chunk in sent if kind == "chunk"]


def test_a_step_whose_rows_came_but_not_yet_its_measures_is_not_shown(qtbot):
    trace = traces.make_workload("vo1989", steps=3 * PROGRESS_EVERY, seed=3)
    chunks = chunks_of(trace)
    assert [c.done for c in chunks[:2]] == [PROGRESS_EVERY, 2 * PROGRESS_EVERY]
    model = ShowModel()
    model.set_trace(trace)
    window_timeline = Timeline(trace, NAME)        # the window's, never built here
    key = model.add_timeline(window_timeline, building=True)
    model.show([key], 0)

    take_chunk(window_timeline, chunks[0])           # the receiver's poll, before grown
    assert window_timeline.built == PROGRESS_EVERY
    assert model.ready == 0                          # main said PROGRESS_EVERY here
    model.seek(100)
    assert model.position == 0 and model.waiting == 100

    model.grown(key)                                 # the measures take the rows in
    assert model.ready == PROGRESS_EVERY
    assert model.position == 100 and model.waiting is None
    shown = model.step(0).measures_row
    assert shown is not None
    # the gauges' values are the row the build measured after op 100
    assert shown["heap"] == int(window_timeline.series.heap[99])
    assert shown["search"] == int(window_timeline.series.search[99])

    take_chunk(window_timeline, chunks[1])
    model.seek(PROGRESS_EVERY + 10)                  # past the measures: waits
    assert model.position == 100 and model.waiting == PROGRESS_EVERY + 10
    model.grown(key)
    assert model.position == PROGRESS_EVERY + 10
    assert model.step(0).measures_row is not None
