"""heapscope record: a C program written for the test, recorded through the
LD_PRELOAD library, gives exactly the trace its source says; exit statuses
pass through; no compiler is reported in one clear line.

The recorded program also calls malloc inside the C library (stdio buffers,
thread stacks), and those calls depend on the libc version.  So the program
gives its own blocks sizes in ranges nothing else uses (away from the powers
of two the C library asks for) -- 5000s for the main thread, 6000s for the
second thread, 7000s for the forked child, 9000s for the program the child
execs -- and each expected sequence is compared with the
trace cut down to the blocks born in that range: every op, size and order
within the thread, exactly.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import numpy as np
import pytest

from heapscope.cli import main
from heapscope.traces import read_rep
from heapscope.traces.preload import NO_COMPILER, find_compiler, preload_library
from heapscope.traces.record import record
from heapscope.traces.trace import ALLOC, FREE, REALLOC

LOOP = 3000

PROGRAM = r"""
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOOP %(loop)d

static void *worker(void *arg)
{
    (void)arg;
    void *q1 = malloc(6001);
    void *q2 = calloc(2, 3001);                 /* 6002 bytes */
    q1 = realloc(q1, 6003);
    for (int i = 0; i < LOOP; i++) {
        void *p = malloc(6100 + i %% 100);
        free(p);
    }
    free(q2);
    return q1;                                  /* main frees it */
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exec-child") == 0) {
        void *e = malloc(9001);
        e = realloc(e, 9002);
        free(e);
        void *k = malloc(9003);                 /* live at exit */
        (void)k;
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "abort") == 0)
        abort();
    void *p1 = malloc(5001);
    void *p2 = calloc(10, 501);                 /* 5010 bytes */
    p1 = realloc(p1, 5002);
    void *p3 = memalign(64, 5003);
    void *p4 = NULL;
    if (posix_memalign(&p4, 128, 5004) != 0)
        return 90;
    void *p5 = aligned_alloc(256, 5120);
    void *p6 = valloc(5005);                    /* live at exit */
    free(p3);
    free(NULL);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    for (int i = 0; i < LOOP; i++) {
        void *p = malloc(5100 + i %% 100);
        free(p);
    }
    void *q1;
    pthread_join(t, &q1);
    free(q1);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        void *c1 = malloc(7001);
        free(p2);                               /* inherited from the parent */
        c1 = realloc(c1, 7002);
        free(c1);
        execl("/proc/self/exe", argv[0], "exec-child", (char *)NULL);
        _exit(99);
    }
    int status;
    waitpid(child, &status, 0);
    free(p1);
    free(p2);
    free(p4);
    free(p5);
    printf("parent done, child status %%d\n", WEXITSTATUS(status));
    (void)p6;
    return argc > 1 ? atoi(argv[1]) : 0;
}
""" % {"loop": LOOP}

needs_cc = pytest.mark.skipif(find_compiler() is None,
                              reason="no C compiler on this machine (cc, gcc or clang): "
                                     "the recorder and the test program are C")


@pytest.fixture(scope="session")
def recorder_cache(tmp_path_factory):
    """One build of the recorder library for the whole session."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        preload_library()
    finally:
        if old is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = old
    return cache


@pytest.fixture
def recorder(recorder_cache, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(recorder_cache))


@pytest.fixture(scope="session")
def program(tmp_path_factory):
    if find_compiler() is None:
        pytest.skip("no C compiler on this machine (cc, gcc or clang)")
    d = tmp_path_factory.mktemp("prog")
    (d / "allocs.c").write_text(PROGRAM)
    exe = d / "allocs"
    subprocess.run(find_compiler() + ["-O0", "-pthread", "-o", str(exe), str(d / "allocs.c")],
                   check=True)
    return str(exe)


# --- projecting a trace on one thread's blocks --------------------------------

MAIN, THREAD, CHILD, EXEC = (5000, 5300), (6000, 6300), (7000, 7100), (9000, 9100)
LETTER = {ALLOC: "a", FREE: "f", REALLOC: "r"}


def project(trace, lo: int, hi: int) -> list[tuple]:
    """The ops on ids whose first op had a size in [lo, hi), ids renamed
    0, 1, 2... in order of first appearance."""
    born: dict[int, int] = {}
    names: dict[int, int] = {}
    out = []
    for kind, ident, size in trace:
        if ident not in born:
            born[ident] = size
        if lo <= born[ident] < hi:
            name = names.setdefault(ident, len(names))
            out.append((LETTER[kind], name) if kind == FREE else (LETTER[kind], name, size))
    return out


def canonical(ops: list[tuple]) -> list[tuple]:
    """Symbolic names (p1, q2...) -> 0, 1, 2 in order of first appearance."""
    names: dict = {}
    return [(op[0], names.setdefault(op[1], len(names))) + tuple(op[2:]) for op in ops]


def loop(base: int) -> list[tuple]:
    ops = []
    for i in range(LOOP):
        ops += [("a", ("loop", base, i), base + i % 100), ("f", ("loop", base, i))]
    return ops


MAIN_BEFORE_FORK = ([("a", "p1", 5001), ("a", "p2", 5010), ("r", "p1", 5002), ("a", "p3", 5003),
                     ("a", "p4", 5004), ("a", "p5", 5120), ("a", "p6", 5005), ("f", "p3")]
                    + loop(5100))
MAIN_AFTER_FORK = [("f", "p1"), ("f", "p2"), ("f", "p4"), ("f", "p5")]
WORKER = ([("a", "q1", 6001), ("a", "q2", 6002), ("r", "q1", 6003)] + loop(6100)
          + [("f", "q2"), ("f", "q1")])
CHILD_OWN = [("a", "c1", 7001), ("r", "c1", 7002), ("f", "c1")]
EXEC_CHILD = [("a", "e", 9001), ("r", "e", 9002), ("f", "e"), ("a", "k", 9003)]


@needs_cc
@pytest.mark.parametrize("keep_live", [False, True])
def test_the_recorded_trace_is_exactly_what_the_program_did(recorder, program, tmp_path,
                                                            keep_live):
    out = tmp_path / "out.rep"
    rec = record([program], out, keep_live=keep_live)
    assert rec.status == 0
    by_role = {}
    for prog in rec.programs:
        role = ("main" if prog.main else "fork" if prog.forked_from is not None
                else "exec" if prog.exec_index else "other")
        assert role not in by_role, f"two programs look like the {role}: {rec.programs}"
        by_role[role] = prog
    assert set(by_role) == {"main", "fork", "exec"}
    main_prog, fork, exe = by_role["main"], by_role["fork"], by_role["exec"]
    assert fork.forked_from == main_prog.pid == fork.parent
    assert exe.pid == fork.pid and exe.exec_index == 1

    # the parent: its own thread and the worker, each in its own order
    end_main = [] if keep_live else [("f", "p6")]
    assert project(main_prog.trace, *MAIN) == canonical(MAIN_BEFORE_FORK + MAIN_AFTER_FORK
                                                             + end_main)
    assert project(main_prog.trace, *THREAD) == canonical(WORKER)
    assert project(main_prog.trace, *CHILD) == project(main_prog.trace, *EXEC) == []

    # the child starts with the parent's heap: the parent's ops up to the fork
    n = fork.inherited
    assert n > 2 * 2 * LOOP
    for a, b in ((fork.trace.kind, main_prog.trace.kind), (fork.trace.ids, main_prog.trace.ids),
                 (fork.trace.sizes, main_prog.trace.sizes)):
        assert np.array_equal(a[:n], b[:n])
    # ... then frees one inherited block, and at exec everything left is freed
    at_exec = [] if keep_live else [("f", "p1"), ("f", "p4"), ("f", "p5"), ("f", "p6")]
    assert project(fork.trace, *MAIN) == canonical(MAIN_BEFORE_FORK + [("f", "p2")] + at_exec)
    assert project(fork.trace, *CHILD) == canonical(CHILD_OWN)
    assert project(fork.trace, *THREAD) == canonical(WORKER)

    # the program exec'd in the child: a new heap, its own trace
    end_exec = [] if keep_live else [("f", "k")]
    assert project(exe.trace, *EXEC) == canonical(EXEC_CHILD + end_exec)
    assert all(project(exe.trace, *r) == [] for r in (MAIN, THREAD, CHILD))

    # what was written: the main trace at OUT, the others beside it, named by pid
    assert read_rep(out).ids.tolist() == main_prog.trace.ids.tolist()
    assert fork.path == tmp_path / f"out.{fork.pid}.allocs.rep"
    assert exe.path == tmp_path / f"out.{exe.pid}.allocs.2.rep"
    assert len(read_rep(exe.path)) == len(exe.trace)


@needs_cc
def test_allocations_made_while_dlsym_runs_come_from_the_bootstrap_buffer(program, tmp_path):
    """The calloc loop of seed 004: dlsym may allocate before the real calloc
    is known.  A build of the recorder that allocates mid-lookup (as such a
    dlsym does), frees one of those blocks and reallocs the other at exit:
    the program runs, nothing of the bootstrap reaches the C library's free
    (which would abort), and the realloc'd block appears as a new one."""
    from heapscope.traces.preload import CFLAGS, LIBS, recorder_source
    from heapscope.traces.record import exit_status, read_recordings, run_recorded
    src = tmp_path / "recorder.c"
    src.write_bytes(recorder_source())
    lib = tmp_path / "recorder-boot.so"
    subprocess.run(find_compiler() + CFLAGS + ["-DHEAPSCOPE_TEST_BOOTSTRAP", "-o", str(lib),
                                               str(src)] + LIBS, check=True)
    raw = tmp_path / "raw"
    raw.mkdir()
    run = run_recorded([program], str(raw), lib, stdin=subprocess.DEVNULL)
    assert exit_status(run.returncode) == 0
    main_prog = read_recordings(raw, run.pid).main
    assert project(main_prog.trace, 7777, 7778) == [("a", 0, 7777), ("f", 0)]
    assert project(main_prog.trace, 3000, 3001) == []      # calloc(3, 1000): never recorded
    assert project(main_prog.trace, *MAIN) == canonical(MAIN_BEFORE_FORK + MAIN_AFTER_FORK
                                                        + [("f", "p6")])


@needs_cc
def test_record_passes_the_output_and_exit_status_through(recorder, program, tmp_path, capfd):
    out = tmp_path / "t.rep"
    code = main(["record", "-o", str(out), "--", program, "5"])
    captured = capfd.readouterr()
    assert code == 5
    assert "parent done, child status 0" in captured.out
    assert "exit status 5" in captured.err
    assert "main pid" in captured.err and str(out) in captured.err
    assert "ops, peak live" in captured.err
    assert "2 processes" in captured.err
    assert out.exists()


@needs_cc
def test_a_program_killed_by_a_signal_gives_128_plus_the_signal(recorder, program, tmp_path, capfd):
    code = main(["record", "-o", str(tmp_path / "t.rep"), "--", program, "abort"])
    capfd.readouterr()
    assert code == 128 + signal.SIGABRT


@needs_cc
def test_a_command_that_does_not_exist_is_an_error(recorder, tmp_path, capsys):
    code = main(["record", "-o", str(tmp_path / "t.rep"), "--", str(tmp_path / "no-such-program")])
    err = capsys.readouterr().err
    assert code == 2
    assert "cannot run" in err and "no-such-program" in err


def test_record_without_a_command_is_an_error(tmp_path, capsys):
    assert main(["record", "-o", str(tmp_path / "t.rep"), "--"]) == 2
    assert "say which program to run" in capsys.readouterr().err


def test_without_a_c_compiler_record_says_what_to_install(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))   # nothing built yet
    code = main(["record", "-o", str(tmp_path / "t.rep"), "--", "true"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == f"heapscope: error: {NO_COMPILER}"
    assert "\n" not in err.strip()
    assert "apt install gcc" in err
    assert not (tmp_path / "t.rep").exists()


@needs_cc
def test_the_library_is_built_once_into_the_cache(recorder_cache, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(recorder_cache))
    lib = preload_library()
    assert lib.parent == recorder_cache / "heapscope"
    before = lib.stat().st_mtime_ns
    monkeypatch.setenv("PATH", "/nonexistent")       # no compiler needed any more
    assert preload_library() == lib
    assert lib.stat().st_mtime_ns == before


@needs_cc
def test_a_shell_pipeline_records_every_process(recorder, tmp_path, capfd):
    sh = shutil.which("sh")
    out = tmp_path / "sh.rep"
    code = main(["record", "-o", str(out), "--", sh, "-c", "ls / | sort > /dev/null; exit 3"])
    err = capfd.readouterr().err
    assert code == 3
    assert "main pid" in err
    written = sorted(p.name for p in tmp_path.iterdir())
    assert "sh.rep" in written
    assert any(".ls." in name for name in written), written
    assert any(".sort." in name for name in written), written


# --- issue 19: nothing the program did is lost, nothing is left behind -------

import json  # noqa: E402
import stat  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from heapscope.traces import TraceError, preload, private_folder  # noqa: E402
from heapscope.traces.preload import RecorderUnavailable, library_path  # noqa: E402
from heapscope.traces.record_run import LIMIT_BYTES, LIMIT_OPS  # noqa: E402

#: a Python program that says its pid, allocates (blocks over pymalloc's 512
#: bytes reach malloc), says so, and sleeps far longer than any test waits
ALLOCATE_THEN_SLEEP = r"""
import os, sys, time
print(os.getpid(), flush=True)
kept = [bytearray(20000 + i) for i in range(300)]
print("allocated", flush=True)
time.sleep(120)
"""


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def partial_lines(path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("#")]


@needs_cc
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_sent_to_record_reaches_the_program_and_what_it_recorded_is_written(
        recorder_cache, tmp_path, sig):
    """Before issue 19, SIGTERM killed heapscope record: the program went on as
    an orphan, its raw file stayed in TMPDIR and no trace was written."""
    tmpdir = tmp_path / "tmp"          # a TMPDIR of the test's own, to see what is left
    tmpdir.mkdir()
    out = tmp_path / "out.rep"
    env = dict(os.environ, TMPDIR=str(tmpdir), XDG_CACHE_HOME=str(recorder_cache))
    # A session of its own: no terminal, so the signal reaches the program
    # only if heapscope passes it on.
    hs = subprocess.Popen([sys.executable, "-m", "heapscope", "record", "-o", str(out), "--",
                           sys.executable, "-c", ALLOCATE_THEN_SLEEP], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True)
    program = None
    try:
        program = int(hs.stdout.readline())
        assert hs.stdout.readline().strip() == "allocated"
        hs.send_signal(sig)
        _, err = hs.communicate(timeout=60)
        assert hs.returncode == 128 + sig, err
        assert not alive(program), "the program was left running"
    finally:
        if program is not None and alive(program):
            os.kill(program, signal.SIGKILL)
        if hs.poll() is None:
            hs.kill()
            hs.wait()
    trace = read_rep(out)
    # bytearray(n) asks malloc for n + 1 bytes (it keeps a NUL at the end).
    # Each is freed once: by the trace's end (killed), or by the program on
    # its way out (Python's KeyboardInterrupt, in its own order).
    ops = project(trace, 20001, 20301)
    assert ops[:300] == [("a", i, 20001 + i) for i in range(300)]
    assert sorted(ops[300:]) == [("f", i) for i in range(300)]
    notes = partial_lines(out)
    assert len(notes) == 1 and "partial" in notes[0]
    assert f"received {signal.Signals(sig).name} and passed it on" in notes[0]
    assert f"killed by {signal.Signals(sig).name}" in notes[0]
    assert f"partial: {out}" in err
    assert list(tmpdir.iterdir()) == []


@needs_cc
@pytest.mark.parametrize("limit", ["ops", "bytes"])
def test_a_recording_at_the_limit_stops_and_says_so_while_the_program_goes_on(
        recorder, tmp_path, limit):
    """Before issue 19 a recording past 10 M ops was refused after the program
    had run, naming a raw file already removed.  Here the limits are small:
    the message comes while the program still runs (before it writes its
    'done' file), the program ends normally, and the trace is the part that
    fits, marked partial.  The program waits for the message (the 'heard'
    file the first one makes), 20 s at most: it slept a fixed 1.5 s, the
    time the message had to come in; a message that comes only once the
    program has ended still fails, after the 20 s."""
    done, heard = tmp_path / "done", tmp_path / "heard"
    prog = (ALLOCATE_THEN_SLEEP.replace(
        "time.sleep(120)", f"end = time.monotonic() + 20\n"
                           f"while not os.path.exists({str(heard)!r}) and time.monotonic() < end:\n"
                           f"    time.sleep(0.01)")
            + f"open({str(done)!r}, 'w').close()\n")
    said = []

    def say(line):
        said.append((line, done.exists()))
        heard.touch()

    limits = {"max_ops": 2000} if limit == "ops" else {"max_bytes": 32 * 1500}
    out = tmp_path / "out.rep"
    rec = record([sys.executable, "-c", prog], out, say=say, **limits)
    assert rec.status == 0 and done.exists()
    main_prog = rec.main
    assert main_prog.cut == (LIMIT_OPS if limit == "ops" else LIMIT_BYTES)
    assert said and not said[0][1], "the limit was told only after the program ended"
    assert f"pid {main_prog.pid}" in said[0][0]
    assert "heapscope-record-" not in said[0][0] and ".hsr" not in said[0][0]
    trace = read_rep(out)
    if limit == "ops":
        assert len(trace) <= 2000
        assert "2,000 operations" in partial_lines(out)[0]
    else:
        # 1500 records of 32 bytes, 3 of them the file's start, name and stop
        assert len(trace) <= 2 * 1500
        assert "the recorder's file reached" in partial_lines(out)[0]
    assert len(trace) == len(main_prog.trace)
    assert any(main_prog.trace.kind == ALLOC)


def test_output_naming_the_program_is_refused_before_it_runs(tmp_path, monkeypatch, capsys):
    """``record -o PROG -- PROG`` overwrote the program before issue 19; the
    program is found as exec finds it: a path, or a name on the PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    prog = bin_dir / "myprog"
    prog.write_text("#!/bin/sh\necho ran > " + str(tmp_path / "ran") + "\n")
    prog.chmod(0o755)
    before = prog.read_bytes()
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for output, command in ((prog, str(prog)), (prog, "myprog"),
                            (bin_dir / ".." / "bin" / "myprog", "myprog")):
        code = main(["record", "-o", str(output), "--", command])
        err = capsys.readouterr().err
        assert code == 2, err
        assert "would overwrite the program" in err and str(output) in err
    assert prog.read_bytes() == before
    assert not (tmp_path / "ran").exists(), "the program ran"
    assert not (tmp_path / "cache").exists(), "the recorder was built before the refusal"


def test_output_naming_an_input_of_the_program_is_refused(tmp_path, capsys):
    data = tmp_path / "data.txt"
    data.write_text("b\na\n")
    code = main(["record", "-o", str(data), "--", "sort", str(data)])
    err = capsys.readouterr().err
    assert code == 2
    assert "would overwrite its input" in err
    assert data.read_text() == "b\na\n"


@needs_cc
def test_the_trace_replaces_the_old_file_by_renaming(recorder, program, tmp_path, capfd):
    """Written through a temporary file and a rename: a second name of the
    old file keeps the old bytes (writing in place would change them)."""
    out = tmp_path / "t.rep"
    out.write_text("old\n")
    os.link(out, tmp_path / "other-name")
    assert main(["record", "-o", str(out), "--", program]) == 0
    capfd.readouterr()
    assert (tmp_path / "other-name").read_text() == "old\n"
    assert len(read_rep(out)) > 0
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


# --- the recorder library: built in a private folder, checked before each use --

@pytest.fixture
def own_cache(tmp_path, monkeypatch, recorder_cache):
    """An XDG cache of the test's own, with the library built once (a copy of
    the session's build: compiling again in every test would be slow)."""
    cache = tmp_path / "cache"
    folder = cache / "heapscope"
    folder.mkdir(parents=True, mode=0o700)
    for path in (recorder_cache / "heapscope").iterdir():
        shutil.copy2(path, folder / path.name)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return library_path()


def records_something(tmp_path) -> bool:
    rec = record([shutil.which("sh"), "-c", "exit 0"], tmp_path / "sh.rep")
    return rec.main is not None and len(rec.main.trace) > 0


MARKER_LIBRARY = r"""
#include <stdio.h>
__attribute__((constructor)) static void planted(void)
{
    FILE *f = fopen("%s", "a");
    if (f) { fputs("planted library loaded\n", f); fclose(f); }
}
"""


def plant(lib, tmp_path, forge_record: bool):
    """Put another library at ``lib``'s name: one that leaves a file when
    loaded.  With ``forge_record`` its build record is rewritten to match."""
    marker = tmp_path / "planted-ran"
    src = tmp_path / "planted.c"
    src.write_text(MARKER_LIBRARY % marker)
    subprocess.run(find_compiler() + ["-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    if forge_record:
        record_path = preload.build_record_path(lib)
        built = json.loads(record_path.read_text())
        import hashlib
        built["library_sha256"] = hashlib.sha256(lib.read_bytes()).hexdigest()
        record_path.write_text(json.dumps(built))
    return marker


@needs_cc
def test_an_empty_cached_library_is_rebuilt_and_recording_works(own_cache, tmp_path):
    """Before issue 19 an empty library in the cache was taken as built:
    every recording then failed ('nothing was recorded')."""
    own_cache.write_bytes(b"")
    assert records_something(tmp_path)
    assert own_cache.stat().st_size > 0
    assert preload.library_problem(own_cache, preload.recorder_source()) is None


@needs_cc
def test_what_is_wrong_with_a_cached_library_is_said(own_cache):
    source = preload.recorder_source()
    assert preload.library_problem(own_cache, source) is None        # as built
    assert preload.library_problem(own_cache, source + b"/* new */") == (
        "it was built from another source")
    content = own_cache.read_bytes()
    own_cache.write_bytes(content[:-1] + bytes([content[-1] ^ 1]))
    assert preload.library_problem(own_cache, source) == (
        "its content is not what was built (its sha256 differs from the build record's)")
    preload.build_record_path(own_cache).unlink()
    assert preload.library_problem(own_cache, source) == "its build record is missing"
    own_cache.write_bytes(b"")
    assert preload.library_problem(own_cache, source) == "the library is empty"
    own_cache.unlink()
    own_cache.symlink_to("/bin/true")
    assert preload.library_problem(own_cache, source) == "the library is a symbolic link"


@needs_cc
def test_a_library_with_another_content_is_rebuilt_not_loaded(own_cache, tmp_path):
    marker = plant(own_cache, tmp_path, forge_record=False)
    assert records_something(tmp_path)
    assert not marker.exists(), "the planted library was loaded"
    assert preload.library_problem(own_cache, preload.recorder_source()) is None


@needs_cc
def test_a_library_in_a_folder_others_could_write_is_rebuilt_and_the_folder_closed(
        own_cache, tmp_path):
    """A world-writable cache folder: whatever is in it may be someone else's,
    even with a build record that matches (forged here).  The folder is made
    private (0700) and the library built again."""
    folder = own_cache.parent
    marker = plant(own_cache, tmp_path, forge_record=True)
    os.chmod(folder, 0o777)
    assert records_something(tmp_path)
    assert not marker.exists(), "the planted library was loaded"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


@needs_cc
def test_a_library_file_of_another_user_is_rebuilt(own_cache, tmp_path, monkeypatch):
    """The tests run as root: the library is made to look like uid 4242's by
    changing what fstat says about it."""
    real_fstat, inode = os.fstat, own_cache.stat().st_ino

    def fstat(fd):
        st = real_fstat(fd)
        if st.st_ino != inode:
            return st
        fields = list(st)
        fields[stat.ST_UID] = 4242
        return os.stat_result(fields)

    monkeypatch.setattr(preload, "_fstat", fstat)
    problem = preload.library_problem(own_cache, preload.recorder_source())
    assert problem.startswith("the library belongs to uid 4242, not to you")
    preload_library()
    assert own_cache.stat().st_ino != inode, "not rebuilt"


def test_a_cache_folder_of_another_user_is_refused(tmp_path, monkeypatch, capsys):
    """The folder belongs to root (the tests' user); heapscope is made to
    believe it runs as uid 4242.  It will not load nor build anything there."""
    folder = tmp_path / "cache" / "heapscope"
    folder.mkdir(parents=True, mode=0o700)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(private_folder, "current_user", lambda: 4242)
    code = main(["record", "-o", str(tmp_path / "t.rep"), "--", "true"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"the folder {folder} belongs to uid {os.geteuid()}, not to you (uid 4242)" in err
    assert "XDG_CACHE_HOME" in err
    assert list(folder.iterdir()) == []


def test_a_cache_folder_that_is_a_link_is_refused(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "heapscope").symlink_to(elsewhere)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(RecorderUnavailable, match="is a symbolic link"):
        preload_library()


def test_a_cache_folder_whose_parent_others_may_write_is_refused(tmp_path, monkeypatch):
    """Without the sticky bit anyone could rename the folder and put another
    in its place after heapscope checked it."""
    parent = tmp_path / "cache"
    parent.mkdir()
    os.chmod(parent, 0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(parent))
    with pytest.raises(RecorderUnavailable, match="may be written by others"):
        preload_library()
    for fine in (0o1777, 0o775):              # as /tmp; as a umask of 002 makes ~/.cache
        os.chmod(parent, fine)
        folder, _ = private_folder.private_folder(parent / "heapscope")
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_new_cache_folder_is_created_private(tmp_path):
    old = os.umask(0)                         # even with a umask that takes nothing away
    try:
        folder, fresh = private_folder.private_folder(tmp_path / "a" / "heapscope")
    finally:
        os.umask(old)
    assert fresh
    st = os.lstat(folder)
    assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()


@needs_cc
def test_a_raw_file_that_cannot_be_read_is_reported_without_naming_it(recorder, tmp_path,
                                                                       monkeypatch):
    """The raw files are gone when the error is told: the message says whose
    recording failed and why, never the removed file's name (before issue 19
    it named a file in a folder that no longer existed)."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr(tempfile, "tempdir", None)     # read TMPDIR again
    garbage = 'printf "%032d" 7 > "$HEAPSCOPE_RECORD_DIR/99999.hsr"'
    with pytest.raises(TraceError) as caught:
        record([shutil.which("sh"), "-c", garbage], tmp_path / "t.rep")
    message = str(caught.value)
    assert "not a heapscope recording" in message and "pid 99999" in message
    assert "heapscope-record-" not in message and ".hsr" not in message
    assert list(tmpdir.iterdir()) == []


COUNT_SIGINTS = r"""
import os, signal, sys, time
got = []
signal.signal(signal.SIGINT, lambda *_: got.append(1))
kept = [bytearray(30000 + i) for i in range(10)]
print("ready", flush=True)
while not got:
    time.sleep(0.05)
# time for heapscope's handler to run while the program still runs (it
# decides then, in milliseconds, whether to pass the SIGINT on; once the
# program has ended it would note a late signal instead): 1.5 s once
time.sleep(0.5)
print(f"count={len(got)}", flush=True)
"""


@needs_cc
def test_ctrl_c_in_the_terminal_reaches_the_program_once(recorder_cache, tmp_path):
    """Ctrl+C on a terminal signals its whole foreground group, heapscope and
    the program alike: heapscope must not send the program a second SIGINT.
    (Two SIGINTs a moment apart merge before Python's handler runs, so the
    program's count cannot tell; heapscope's partial line says what it did.)"""
    import pty
    out = tmp_path / "out.rep"
    env = dict(os.environ, XDG_CACHE_HOME=str(recorder_cache))
    pid, master = pty.fork()
    if pid == 0:                                          # the child, on the new terminal
        try:
            os.execve(sys.executable, [sys.executable, "-m", "heapscope", "record", "-o",
                                       str(out), "--", sys.executable, "-c", COUNT_SIGINTS], env)
        finally:
            os._exit(127)
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while b"ready" not in seen and time.monotonic() < deadline:
            seen += os.read(master, 4096)
        os.write(master, b"\x03")                          # Ctrl+C
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:                                # EIO: the terminal closed
                break
            if not chunk:
                break
            seen += chunk
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(master)
    text = seen.decode(errors="replace")
    assert "count=" in text, text                       # the program went on to its end
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert partial_lines(out) == ["# heapscope record: partial trace: SIGINT came from the "
                                  "terminal, to the program and heapscope record alike"]


@needs_cc
def test_a_signal_after_the_program_ended_waits_for_the_traces_to_be_written(
        recorder, tmp_path, monkeypatch):
    """SIGTERM while the raw files are converted (sent here from inside the
    conversion): heapscope finishes writing, and says so; the trace is whole."""
    from heapscope.traces import record as record_module
    from heapscope.traces.record import summary_lines
    real = record_module.read_recordings

    def read_then_signalled(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(record_module, "read_recordings", read_then_signalled)
    out = tmp_path / "t.rep"
    before = signal.getsignal(signal.SIGTERM)
    rec = record([shutil.which("sh"), "-c", "exit 0"], out)
    assert signal.getsignal(signal.SIGTERM) is before          # heapscope's own again
    assert [got.signum for got in rec.late_signals] == [signal.SIGTERM]
    assert partial_lines(out) == []
    assert len(read_rep(out)) == len(rec.main.trace) > 0
    assert "  SIGTERM came after the program had ended: the traces were written first" in (
        summary_lines(rec))
