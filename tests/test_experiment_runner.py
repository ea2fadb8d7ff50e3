"""heapscope/experiments/runner.py in this process, on traces small enough
to work out by hand: what a job's row holds beyond the timeline's summary,
the progress line, the words naming a failed run, and the write model of
the resident-memory measure.  Fast (no worker process but where named), so
that a mutation run of runner.py is feasible (docs/testing.md)."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from heapscope.allocators import plugins
from heapscope.allocators.registry import make_strategy
from heapscope.experiments import runner
from heapscope.experiments.runner import Job, free_writes, links_outside, measure, run_jobs
from heapscope.traces import make_workload
from heapscope.traces.rep import parse_rep

DATA = Path(__file__).resolve().parent / "data"

#: a 0 16, a 1 32, f 0, a 2 8: worked by hand for CountedBump (8-byte
#: alignment; every malloc visits each block it already holds)
#:   step            1     2     3     4
#:   heap H         16    48    48    56      (never reused: 16, +32, -, +8)
#:   work            0     1     0     2      (blocks already held)
#:   grows           1     1     0     1
HAND = "0\n3\n4\n1\na 0 16\na 1 32\nf 0\na 2 8\n"


@pytest.fixture(scope="module")
def counted():
    cls = plugins.load_file(f"{DATA / 'counted_bump.py'}:CountedBump")
    yield cls.name
    plugins.forget(cls.name)


def test_a_row_holds_the_heap_over_time_the_work_and_the_growths(counted):
    row = measure(Job.of(("k",), "hand", counted), parse_rep(HAND))
    assert row["mean_heap"] == (16 + 48 + 48 + 56) / 4                 # 42
    assert row["heap_by_work"] == pytest.approx((48 * 1 + 56 * 2) / 3)  # H weighted by work
    assert row["work_total"] == 3 and row["grows"] == 3
    assert row["first_failure"] is None and row["max_heap"] == 56
    assert row["wall_s"] > 0 and "resident" not in row


def test_under_a_heap_limit_the_first_failed_malloc_is_named(counted):
    # at 48 bytes the last malloc (step 4) cannot grow the heap: H stays 48
    row = measure(Job.of(("k",), "hand", counted, {"heap_limit": 48}), parse_rep(HAND))
    assert row["first_failure"] == 4 and row["failed"] == 1
    assert row["mean_heap"] == (16 + 48 + 48 + 48) / 4
    assert row["heap_by_work"] == pytest.approx((48 * 1 + 48 * 2) / 3)
    assert row["grows"] == 2 and row["work_total"] == 3


def test_with_no_work_the_heap_by_work_is_the_mean_heap(counted):
    # one malloc into an empty heap visits nothing: no work to weigh by
    row = measure(Job.of(("k",), "one", counted), parse_rep("0\n1\n1\n1\na 0 8\n"))
    assert row["work_total"] == 0 and row["heap_by_work"] == row["mean_heap"] == 8


def test_a_resident_page_adds_the_pages_written_without_and_with_the_program(counted):
    # 16-byte pages; CountedBump keeps no header, so a malloc writes nothing
    # of its own; the free of block 0 writes its two link words (16 bytes:
    # page 0); the program touches 16, 32 and 8 bytes: pages 0, 1-2 and 3
    row = measure(Job.of(("k",), "hand", counted, resident_page=16), parse_rep(HAND))
    assert row["resident"] == 16 and row["resident_touched"] == 4 * 16


def test_a_region_mapped_apart_stays_resident_when_the_heap_shrinks_below_it():
    # dlmalloc maps the 200000-byte request apart (mmap_threshold 150000; the
    # region at MMAP_BASE, 2**46, far above the break); the free of block 1
    # trims the heap (trim_threshold 4096) from 0xa000 to 0x1000; block 2's
    # 140000 bytes come after the shrink.  Touched, in 64 KiB pages, worked
    # from the addresses:
    #   block 0: bytes 0x10..200016 of the region, its pages 0-3     4 pages
    #   block 1: bytes 0x10..40016 of the heap, page 0               1 (peak 5)
    #   the trim keeps heap page 0 and the region's 4                5
    #   block 2: bytes 0x10..140016 of the heap, pages 0-2           4 + 3 = 7
    # (the region's pages dropped at the trim would give a peak of 5).  The
    # allocator alone writes headers: the region's page 0, heap page 0, and
    # the header of the rest of top after block 2 (near 0x222c0, page 2): 3
    trace = parse_rep("0\n3\n4\n1\na 0 200000\na 1 40000\nf 1\na 2 140000\n")
    strategy = make_strategy("dlmalloc", word=8, trim_threshold=4096, mmap_threshold=150000)
    assert runner.resident_pages(trace, strategy, 65536) == (3 * 65536, 7 * 65536)


def test_jobs_sharing_a_key_are_refused():
    job = Job.of(("same",), ("vo1989", {"steps": 10}), "tlsf")
    with pytest.raises(ValueError, match="two jobs share a key"):
        run_jobs([job, Job.of(("same",), ("vo1989", {"steps": 20}), "buddy")], workers=1)


def test_jobs_run_here_report_progress_in_order_and_come_back_in_the_jobs_order():
    jobs = [Job.of((name,), ("vo1989", {"steps": 60}), name, label=f"{name} here")
            for name in ("tlsf", "buddy", "next-fit")]
    calls = []
    rows = run_jobs(jobs, workers=1, progress=lambda done, total, job: calls.append((done, total, job.label)))
    assert calls == [(1, 3, "tlsf here"), (2, 3, "buddy here"), (3, 3, "next-fit here")]
    assert list(rows) == [("tlsf",), ("buddy",), ("next-fit",)]
    assert run_jobs([], workers=4) == {}


def test_a_job_sorts_its_parameters_and_its_workloads_and_is_named_by_its_strategy():
    job = Job.of(("k",), ("vo1989", {"steps": 5, "seed": 2}), "tlsf", {"word": 4, "align": 8})
    assert job.trace == ("vo1989", (("seed", 2), ("steps", 5)))
    assert job.params == (("align", 8), ("word", 4)) and job.label == "tlsf"
    assert Job.of(("k",), "gcc-cc1", "tlsf", label="mine").label == "mine"
    made = runner.load(job.trace)
    assert made.sizes.tolist() == make_workload("vo1989", steps=5, seed=2).sizes.tolist()


def test_a_failed_run_of_your_own_names_its_file_the_trace_and_the_run(counted):
    job = Job.of(("k",), ("vo1989", {"steps": 5}), counted, label="counted, vax, seed 1")
    text = runner.failure_text(job, "no answer")
    assert text == (f"counted-bump ({DATA / 'counted_bump.py'}:CountedBump) on vo1989:steps=5 "
                    "(counted, vax, seed 1): no answer")
    bare = Job.of(("k",), "gcc-cc1", "tlsf")            # no file: its name alone
    assert runner.failure_text(bare, "x") == "tlsf on gcc-cc1 (tlsf): x"
    assert runner.trace_text(("plotnick1983", ())) == "plotnick1983"


# ------------------------------------------------- the resident memory's write model
def test_which_allocators_keep_a_free_blocks_links_outside_it():
    phk, gnu, first = make_strategy("phkmalloc"), make_strategy("gnu-malloc"), make_strategy("first-fit")
    assert links_outside(phk, 16) and links_outside(phk, 1 << 20)
    # GNU malloc: whole blocks (more than half of its 4 KiB block) in _heapinfo
    assert gnu.blocklog == 12
    assert not links_outside(gnu, 2048) and links_outside(gnu, 2049)
    assert not links_outside(first, 1 << 20)


def test_a_free_writes_the_header_and_two_link_words_or_nothing():
    first, phk = make_strategy("first-fit", word=8), make_strategy("phkmalloc")
    block = SimpleNamespace(block_addr=1000, block_size=64)
    assert free_writes(first, block, 1016) == 1016 + 16           # header + two 8-byte words
    small = SimpleNamespace(block_addr=1000, block_size=24)
    assert free_writes(first, small, 1016) == 1024                # no further than the block
    assert free_writes(phk, block, 1016) == 1000                  # nothing in the block
    four = make_strategy("first-fit", word=4)
    assert free_writes(four, block, 1008) == 1016


# ------------------------------------------------- the same heap on the timed replay
def _ended(live: dict, brk: int):
    """What same_heap_again reads of a replay's end: the program's blocks, the break."""
    return SimpleNamespace(live=live), SimpleNamespace(arena=SimpleNamespace(brk=brk))


def _built(live: dict, brk: int):
    program, strategy = _ended(live, brk)
    return SimpleNamespace(program=program, strategy=strategy)


def test_a_second_replay_ending_with_the_same_heap_is_accepted():
    runner.same_heap_again(_built({1: (0x100, 8)}, 0x200), *reversed(_ended({1: (0x100, 8)}, 0x200)))


@pytest.mark.parametrize("built, again, said", [
    ({1: (0x100, 8), 2: (0x140, 8)}, {1: (0x100, 8), 2: (0x180, 8)},
     "block 2 of the trace ends at 0x140 in one replay and at 0x180 in the next"),
    ({3: (0x100, 8)}, {}, "block 3 of the trace ends at 0x100 in one replay and at nowhere (freed) in the next"),
    ({}, {3: (0x120, 8)}, "block 3 of the trace ends at nowhere (freed) in one replay and at 0x120 in the next"),
])
def test_a_second_replay_ending_with_other_blocks_names_the_first_that_moved(built, again, said):
    program, _ = _ended(again, 0x200)

    class Mine:                      # the error names the strategy's class
        arena = SimpleNamespace(brk=0x200)
    strategy = Mine()
    with pytest.raises(runner.UserStrategyError) as caught:
        runner.same_heap_again(_built(built, 0x200), strategy, program)
    error = caught.value
    assert error.message == (f"not deterministic: two replays of the trace ended with different heaps "
                             f"({said}): the same trace must give the same heap every time (seed any "
                             "random numbers you use, and do not depend on the time, id() or the order "
                             "of a set of objects)")
    assert (error.method, error.cls_name) == ("_malloc", "Mine")


def test_a_second_replay_ending_at_another_break_says_both():
    program, strategy = _ended({}, 0x3000)
    with pytest.raises(runner.UserStrategyError, match=r"\(the break ends at 0x2000 in one replay and at "
                                                        r"0x3000 in the next\)"):
        runner.same_heap_again(_built({}, 0x2000), strategy, program)
