"""docs/tutorial.md stays true: its code is the code of examples/, and what it
quotes `heapscope grade` saying is what grade says (throughput figures, which
depend on the machine, aside)."""

import pathlib
import re
import shlex

import pytest

from heapscope.allocators import plugins
from heapscope.allocators.grading import grade
from heapscope.cli import main
from heapscope.traces import load_trace

ROOT = pathlib.Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorial.md"


def excerpts() -> list[tuple[str, str]]:
    text = TUTORIAL.read_text()
    return re.findall(r"<!-- excerpt: (\S+) -->\n```python\n(.*?)```", text, re.S)


def console_blocks() -> list[tuple[str, str]]:
    """(command, output) of each ```console block that runs heapscope grade."""
    out = []
    for block in re.findall(r"```console\n(.*?)```", TUTORIAL.read_text(), re.S):
        first, _, rest = block.partition("\n")
        assert first.startswith("$ heapscope grade "), first
        out.append((first[2:], rest))
    return out


def test_the_tutorial_quotes_the_examples_as_they_are():
    found = excerpts()
    assert len(found) >= 12
    files = {path for path, _ in found}
    assert {"examples/bump.py", "examples/tutorial/segfit_step1.py", "examples/tutorial/segfit_step2.py",
            "examples/tutorial/segfit_step3.py", "examples/segfit.py"} <= files
    for path, code in found:
        assert code in (ROOT / path).read_text(), f"this excerpt is not in {path}:\n{code}"


def normalise(text: str) -> list[str]:
    """Lines with the machine's figures masked: Kops/s and the index (one
    decimal), the throughput ratio (two), and the spacing they move."""
    lines = []
    for line in text.strip("\n").splitlines():
        line = re.sub(r"\b\d+\.\d\b", "#", line)
        if line.startswith(("throughput", "perf index")):
            line = re.sub(r"\b\d+\.\d\d\b", "#", line)
        lines.append(" ".join(line.split()))
    return lines


@pytest.fixture
def cleanup():
    before = set(plugins.ORIGINS)
    yield
    for name in set(plugins.ORIGINS) - before:
        plugins.forget(name)


@pytest.mark.parametrize("command, quoted", console_blocks(), ids=lambda v: v.split()[2] if
                         isinstance(v, str) and v.startswith("heapscope") else "")
def test_what_the_tutorial_quotes_grade_saying_is_what_it_says(command, quoted, monkeypatch, capsys,
                                                                cleanup):
    monkeypatch.chdir(ROOT)
    status = main(shlex.split(command)[1:])
    out = capsys.readouterr().out
    assert normalise(out) == normalise(quoted)
    assert status == (1 if "NO" in quoted.split() else 0)


def test_the_broken_example_output_is_quoted_exactly(monkeypatch, capsys, cleanup):
    # no machine figures in it: the whole text, as it is
    command, quoted = next((c, q) for c, q in console_blocks() if "broken.py" in c)
    monkeypatch.chdir(ROOT)
    assert main(shlex.split(command)[1:]) == 1
    assert capsys.readouterr().out == quoted


def test_step_2_without_payload_capacity_is_caught_as_the_tutorial_says(tmp_path, cleanup):
    source = (ROOT / "examples/tutorial/segfit_step2.py").read_text()
    start = source.index("    def _payload_capacity(")
    end = source.index("    # ----", start)
    path = tmp_path / "nocap.py"
    path.write_text(source[:start] + source[end:])
    cls = plugins.load_file(f"{path}:SegFit2")
    result = grade(cls, [("perl-words", load_trace("perl-words"))], timing=False)
    error = result.traces[0].error
    assert error.method == "_realloc" and result.traces[0].operation.startswith("realloc of id")
    assert re.fullmatch(r"your _realloc kept the block at 0x[0-9a-f]+ in place for \d+ bytes, but its "
                        r"\d+ bytes hold 16 header bytes too: if your blocks end with a footer, "
                        r"override _payload_capacity to leave it out", error.message)


def test_the_readme_points_at_the_tutorial():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Write your own allocator", 1)[1].split("\n## ", 1)[0]
    assert "docs/tutorial.md" in section and "heapscope grade" in section and "--allocator" in section
