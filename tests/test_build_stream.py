"""A timeline built in a worker and shipped in chunks (allocators/build_stream.py)
is the timeline a build in this process makes: the same measures in every
row, and every step sought gives the same heap."""

import numpy as np
import pytest

from heapscope import traces
from heapscope.allocators.build_stream import series_columns, stop_at_built, take_chunk, take_end
from heapscope.allocators.parallel import BuildSpec, Finished, ParallelBuild, Streamed
from heapscope.allocators.replay import Timeline


@pytest.fixture(scope="module")
def trace():
    return traces.make_workload("vo1989", steps=6000, seed=7)


def heap_of(strategy):
    return [tuple(b[:3]) for b in strategy.walk()]


def streamed(trace, name, stop_after=None):
    """The window's timeline of ``trace`` through ``name``, taken in chunk by chunk
    (``stop_after``: that many chunks, then the build is cancelled); and the chunks' count."""
    timeline = Timeline(trace, name)
    build = ParallelBuild(trace, [BuildSpec(name)], keep="stream", workers=1).start()
    chunks = 0
    try:
        while not build.finished:
            for event in build.poll(0.05):
                if isinstance(event, Streamed):
                    take_chunk(timeline, event.chunk)
                    chunks += 1
                    if chunks == stop_after:
                        build.cancel()
                        stop_at_built(timeline)
                        return timeline, chunks
                elif isinstance(event, Finished):
                    take_end(timeline, event.result)
    finally:
        build.cancel()
    return timeline, chunks


@pytest.mark.parametrize("name", ["next-fit", "tlsf", "buddy"])
def test_a_streamed_timeline_is_the_one_built_here(trace, name):
    timeline, chunks = streamed(trace, name)
    # in pieces: a chunk at the first progress point at least, the rest at the end
    assert chunks >= 1
    here = Timeline(trace, name).build()
    assert timeline.built == timeline.n == here.n == len(trace)
    for column in series_columns(here.series):
        assert np.array_equal(getattr(timeline.series, column), getattr(here.series, column)), column
    assert timeline.checkpoint_steps == sorted(timeline.checkpoint_steps)
    for t in (len(trace), 1, 4097, 9000, 5000):
        timeline.seek(t)
        here.seek(t)
        assert heap_of(timeline.strategy) == heap_of(here.strategy), t


def test_a_stream_cancelled_keeps_the_steps_it_had(trace):
    timeline, _ = streamed(trace, "first-fit", stop_after=1)
    # the first chunk is sent at the first progress point (ChunkSender)
    assert timeline.n == timeline.built == 4096
    assert timeline.series.n == 4096
    here = Timeline(trace, "first-fit")
    timeline.seek(4096)
    here.seek(4096)
    assert heap_of(timeline.strategy) == heap_of(here.strategy)


def test_a_worker_not_forked_reads_its_trace_from_a_file_removed_after_the_build(trace):
    # pickled down the worker's pipe, a big trace blocked Process.start() until
    # the child had imported the parent's main module (allocators/shipped_trace.py)
    import os
    import pickle
    build = ParallelBuild(trace, ["first-fit", "tlsf"], keep="summary", checkpoints=False,
                          start_method="forkserver").start()
    shipped = build._trace_for_workers()
    assert shipped is not trace and len(pickle.dumps(shipped)) < 1000
    assert os.path.exists(shipped.path)
    results = build.wait()
    assert not os.path.exists(shipped.path)
    here = Timeline(trace, "tlsf", checkpoints=False).build().summary()
    assert results["tlsf"]["waste"] == here["waste"]


def test_the_sender_ships_every_checkpoint_and_keeps_none_of_them(trace):
    """The worker's timeline forgets each checkpoint once it is shipped (the
    window keeps it); the chunks carry exactly a plain build's checkpoints."""
    from heapscope.allocators.build_stream import ChunkSender
    plain = Timeline(trace, "first-fit").build()
    worker = Timeline(trace, "first-fit")
    sent = []
    sender = ChunkSender(worker, sent.append, every=0.0)
    worker.build(progress=sender)
    sent.append(("chunk", sender.end().chunk))
    shipped = [(t, blob) for _, chunk in sent for t, blob in zip(chunk.checkpoint_steps, chunk.checkpoints)]
    # checkpoints are spaced by what they cost: the worker's own steps, each
    # the heap a plain build seeks to there
    assert len(shipped) > 1 and [t for t, _ in shipped] == worker.checkpoint_steps
    for t, blob in shipped:
        assert pickle_heap(blob) == heap_of(plain.seek(t)), t
    assert worker.checkpoints == [None] * len(shipped)


def pickle_heap(blob):
    from heapscope.allocators.replay import unpickled_heap
    return heap_of(unpickled_heap(blob)[0])
