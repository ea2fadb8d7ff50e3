"""heapscope/outputs.py: an output is checked before work, and written through
a temporary file beside it that is renamed over it only when complete."""

import errno
import gzip
import os
import stat

import pytest

from heapscope.outputs import OutputError, atomic_output, atomic_path, check_output, same_file


def leftovers(folder, *keep):
    """Files in ``folder`` other than ``keep``: a temporary file left behind."""
    return sorted(set(os.listdir(folder)) - set(keep))


class DiskFull(Exception):
    """Stands for a failure part way through writing."""


# ----------------------------------------------------------------- check_output
def test_a_missing_folder_is_named(tmp_path):
    target = tmp_path / "no-such-folder" / "out.rep"
    with pytest.raises(OutputError) as info:
        check_output(target, what="trace")
    message = str(info.value)
    assert str(target) in message and "the trace" in message
    assert f"the folder {tmp_path / 'no-such-folder'} does not exist" in message


def test_a_folder_is_not_a_file_to_write(tmp_path):
    with pytest.raises(OutputError, match="it is a folder"):
        check_output(tmp_path)


def test_an_unwritable_folder_is_refused(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes into any folder")
    folder = tmp_path / "locked"
    folder.mkdir(mode=0o500)
    with pytest.raises(OutputError, match="not writable"):
        check_output(folder / "x.png")


def test_an_output_equal_to_an_input_is_refused_under_any_name(tmp_path):
    original = tmp_path / "in.rep"
    original.write_text("data")
    link = tmp_path / "link.rep"
    link.symlink_to(original)
    hard = tmp_path / "hard.rep"
    os.link(original, hard)
    dotted = tmp_path / "sub" / ".." / "in.rep"
    (tmp_path / "sub").mkdir()
    for name in (original, link, hard, dotted):
        with pytest.raises(OutputError) as info:
            check_output(name, [original], what="converted trace")
        assert f"would overwrite its input {original}" in str(info.value)
    # ... and the other way round: the input given through the link
    with pytest.raises(OutputError):
        check_output(original, [link])
    assert same_file(link, original) and not same_file(tmp_path / "other", original)


def test_a_new_output_or_another_file_passes(tmp_path):
    original = tmp_path / "in.rep"
    original.write_text("data")
    other = tmp_path / "other.rep"
    other.write_text("old")
    check_output(tmp_path / "new.rep", [original])       # does not exist yet
    check_output(other, [original, tmp_path / "missing.rep"])


# ---------------------------------------------------------------- atomic_output
def test_a_failure_mid_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_bytes(b"the old content\n")
    with pytest.raises(DiskFull):
        with atomic_output(target) as f:
            f.write(b"half of the new")
            f.flush()
            raise DiskFull
    assert target.read_bytes() == b"the old content\n"
    assert leftovers(tmp_path, "out.txt") == []


def test_a_failure_mid_write_of_a_new_file_leaves_nothing(tmp_path):
    with pytest.raises(DiskFull):
        with atomic_output(tmp_path / "new.txt", "w") as f:
            f.write("part")
            raise DiskFull
    assert leftovers(tmp_path) == []


def test_the_target_is_untouched_until_the_block_ends(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with atomic_output(target, "w") as f:
        f.write("new")
        f.flush()
        assert target.read_text() == "old"            # the new bytes are elsewhere
        partial, = leftovers(tmp_path, "out.txt")       # beside it: one file system
        assert (tmp_path / partial).read_text() == "new"
    assert target.read_text() == "new"
    assert leftovers(tmp_path, "out.txt") == []


def test_the_mode_of_the_old_file_is_kept(tmp_path):
    target = tmp_path / "shared.txt"
    target.write_text("old")
    target.chmod(0o640)
    with atomic_output(target, "w") as f:
        f.write("new")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert target.read_text() == "new"


def test_a_new_file_gets_the_umasks_mode_not_mkstemps(tmp_path):
    old = os.umask(0o027)
    try:
        with atomic_output(tmp_path / "new.txt", "w") as f:
            f.write("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == 0o666 & ~0o027   # 0640


# ------------------------------------------------------------------ atomic_path
def test_atomic_path_keeps_the_suffix_for_a_writer_that_reads_it(tmp_path):
    with atomic_path(tmp_path / "chart.png") as partial:
        assert partial.endswith(".png") and os.path.dirname(partial) == str(tmp_path)
        with open(partial, "wb") as f:
            f.write(b"png")
    assert (tmp_path / "chart.png").read_bytes() == b"png"
    with atomic_path(tmp_path / "t.rep.gz") as partial:
        assert partial.endswith(".rep.gz")
        with gzip.open(partial, "wb") as f:
            f.write(b"a 0 1")
    assert gzip.decompress((tmp_path / "t.rep.gz").read_bytes()) == b"a 0 1"
    assert leftovers(tmp_path, "chart.png", "t.rep.gz") == []


def test_atomic_path_failure_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "slide.gif"
    target.write_bytes(b"GIF89a old")
    with pytest.raises(OSError):
        with atomic_path(target) as partial:
            with open(partial, "wb") as f:
                f.write(b"GIF89a half")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert target.read_bytes() == b"GIF89a old"
    assert leftovers(tmp_path, "slide.gif") == []


# ------------------------------------------------- links, devices and FIFOs
def test_writing_through_a_link_replaces_its_file_and_keeps_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.rep"
    target.write_text("old")
    link = tmp_path / "out.rep"
    link.symlink_to(target)
    with atomic_output(link, "w") as f:
        f.write("new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    with atomic_path(link) as partial:
        assert os.path.dirname(partial) == str(tmp_path / "real")     # beside the file itself
        with open(partial, "w") as f:
            f.write("newer")
    assert link.is_symlink() and target.read_text() == "newer"
    assert leftovers(tmp_path / "real", "out.rep") == [] and leftovers(tmp_path, "out.rep", "real") == []


def test_a_fifo_is_written_into_not_replaced(tmp_path):
    # A FIFO of our own stands for /dev/stdout and the like: a test must never
    # write to a real device (run as root, a broken version would replace it).
    import threading
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    check_output(fifo)
    with atomic_output(fifo) as f:
        f.write(b"through the pipe")
    reader.join(10)
    assert got == [b"through the pipe"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)            # still a FIFO, not a file
    assert leftovers(tmp_path, "pipe") == []

