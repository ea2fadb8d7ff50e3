"""heapscope's simulation core: the heap model, the strategies, the measures and
the replay timeline.  Never imports Qt (tests/test_layering.py enforces it)."""

from .arena import Arena
from .events import OpRecord
from .metrics import MetricSeries, summarize
from .registry import STRATEGIES, make_strategy, strategy_names
from .strategy import FREE_BLOCK, META, USED, Block, HeapInvariantError, InvalidFree, Strategy

__all__ = [
    "Arena", "Block", "FREE_BLOCK", "HeapInvariantError", "InvalidFree", "META", "MetricSeries",
    "OpRecord", "STRATEGIES", "Strategy", "USED", "make_strategy", "strategy_names", "summarize",
]
