"""heapscope experiment --plot: each experiment's chart drawn offscreen and
saved as a PNG that decodes, with the seed's figures and ours in it."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QImage

from heapscope.cli import main
from heapscope.experiments import run_experiment
from heapscope.gui.experiment_chart import save_chart
from heapscope.gui.palette import BLUE, ORANGE

SMALL = {
    "vo1989": (["bsd-buckets", "splay-best-fit", "tlsf"], {"runs": "1"}, {"steps": "200"}),
    "djgpp1997": (["bsd-buckets", "dlmalloc"], {}, {"actions": "200", "slots": "32"}),
    "plotnick1983": (["v7-malloc", "bsd-buckets", "next-fit"], {"sizes": "20"}, {"n": "100"}),
    "dowdeswell1999": (["bsd-buckets", "dlmalloc", "next-fit"], {"counts": "10,20,40", "heap_limit": "256K"},
                       {"min_size": "1024", "max_size": "4096"}),
    "coppa2010": (["tlsf", "segregated-first-fit"], {"traces": "perl-words"}, {}),
}


def colours(image: QImage) -> set[str]:
    """Every colour of the image, as #RRGGBB."""
    image = image.convertToFormat(QImage.Format_RGB32)
    pixels = np.frombuffer(image.constBits(), dtype=np.uint32, count=image.width() * image.height())
    return {f"#{int(p) & 0xFFFFFF:06X}" for p in np.unique(pixels)}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_each_experiments_chart_is_a_png_with_its_series(qapp, tmp_path, name):
    only, settings, workload = SMALL[name]
    result = run_experiment(name, only, settings, workload, workers=1)
    path = tmp_path / f"{name}.png"
    save_chart(result.chart, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = QImage(str(path))
    assert not image.isNull() and image.width() >= 1000 and image.height() >= 300
    seen = colours(image)
    assert BLUE.upper() in seen and ORANGE.upper() in seen       # the first two series of ours
    if name in ("vo1989", "djgpp1997"):
        assert "#000000" in seen                                 # the seed's own bars


def test_plot_option_writes_the_png_and_still_prints_the_table(qapp, tmp_path, capsys):
    path = tmp_path / "vo.png"
    code = main(["experiment", "vo1989", "-s", "bsd-buckets", "-X", "runs=1", "-W", "steps=100",
                 "-j", "1", "--plot", str(path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "bsd-buckets" in out
    assert not QImage(str(path)).isNull()


def test_an_unwritable_plot_path_is_an_error_not_a_traceback(qapp, tmp_path, capsys):
    code = main(["experiment", "vo1989", "-s", "tlsf", "-X", "runs=1", "-W", "steps=100", "-j", "1",
                 "--plot", str(tmp_path / "no" / "such" / "dir" / "x.png")])
    _, err = capsys.readouterr()
    assert code == 2 and "cannot write" in err
