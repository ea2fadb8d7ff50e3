"""The shown step in words for compare mode: the request, the same in every
row, and what one strategy did with it (:meth:`heapscope.allocators.replay.Timeline.describe`
says both at once for one strategy)."""

from __future__ import annotations

from heapscope.traces.trace import ALLOC, FREE, block_words


def request_words(model) -> str:
    """The shown step's operation, the same for every row: 'step 2056:
    malloc(943) for id 1298' (where each strategy put it is in its row)."""
    timeline = model.timeline(0)
    t = model.position
    if timeline is None:
        return ""
    if t == 0:
        return f"step 0 of {model.n:,}: empty heap, nothing replayed yet"
    kind, ident, size = timeline.op(t)
    who = block_words(ident, getattr(model, "names", None))    # 'a (id 0)' for a named block
    if kind == ALLOC:
        what = f"malloc({size}) for {who}"
    elif kind == FREE:
        what = f"free of {who}"
    else:
        what = f"realloc of {who} to {size} bytes"
    return f"step {t}: {what}"


def outcome(step) -> str:
    """What one strategy did with the shown step's request, without the
    request itself: '→ 0x43b90 after examining 7 free blocks; split once'."""
    timeline, t = step.timeline, step.position
    if t == 0:
        return "empty heap"
    kind, ident, _ = timeline.op(t)
    text = timeline.describe()
    marker = f" for {block_words(ident, getattr(timeline.trace, 'names', None))}"
    i = text.find(marker)
    rest = text[i + len(marker):] if i >= 0 else text.split(": ", 1)[-1]
    rest = rest.lstrip(": ").replace("->", "→")
    rec = step.record
    if i >= 0 and kind == FREE and rec is not None and rec.payload is not None:
        rest = f"freed 0x{rec.payload:x}" + (f": {rest}" if rest else "")
    return rest
