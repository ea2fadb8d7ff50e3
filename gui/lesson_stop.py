"""A lesson's stop set in the window, and what the window shows read back
(docs/lessons.md, "Playing a lesson").

A stop (:class:`heapscope.lessons.StopState`) says the step, the event within
it, the block selected by its trace name and the panels shown.  These
functions set them through the window's public parts -- the show model's
``seek`` and ``select``, the View menu's actions (triggered, as a click on the
menu item would), a compare row's ``select`` -- and read them back the same
way: the lesson player (gui/lesson_player.py) and ``heapscope lesson export``
(heapscope/lesson_export.py) both set stops here, and the tests read back
with :func:`shown_state`.

The heap map and the gauges always show; ``structure``, ``explain`` and
``plots`` follow the View menu's Structure View, Explain Panel and Plots.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the panels a stop may hide, with the window's action for each
PANEL_ACTIONS = (("structure", "act_structure"), ("explain", "act_explain"), ("plots", "act_plots"))
#: the panels that always show
ALWAYS_SHOWN = ("map", "gauges")


def set_panels(window, shown) -> None:
    """Show exactly the panels named in ``shown`` (of those a stop may hide)."""
    for panel, name in PANEL_ACTIONS:
        act = getattr(window, name)
        if act.isChecked() != (panel in shown):
            act.trigger()         # checks it and runs its toggle, as the menu does


def shown_panels(window) -> tuple[str, ...]:
    """The panels shown now, in the order of :data:`heapscope.lessons.PANELS`."""
    from heapscope.lessons import PANELS
    on = set(ALWAYS_SHOWN) | {panel for panel, name in PANEL_ACTIONS if getattr(window, name).isChecked()}
    return tuple(p for p in PANELS if p in on)


def address_of(step, ident) -> int | None:
    """The payload address of live block ``ident`` (a trace id) in ``step``
    (a shown step), or None when it is not live there."""
    if step is None or ident is None:
        return None
    return next((a for a, i in step.ids.items() if i == ident), None)


def select_block(window, ident) -> None:
    """Select and outline block ``ident`` (a trace id; None clears) in every
    row shown: its address differs from one strategy's heap to another's, so
    in compare mode each row selects its own."""
    model = window.model
    if window.compare.active:
        for row in window.compare.view.shown_rows():
            row.select(address_of(model.step(row.row), ident))
        model.select(None)
        return
    model.select(address_of(model.step(0), ident))


def set_stop(window, state, ids: dict[str, int], panels=None) -> None:
    """Set ``window`` to stop ``state``: its step and event, the panels
    ``panels`` (None: leave them), its selected block (``ids``: trace name
    -> id)."""
    window.model.seek(state.step, None if state.event is None else state.event - 1, at_once=True)
    if panels is not None:
        set_panels(window, panels)
    select_block(window, ids.get(state.select) if state.select is not None else None)


@dataclass(frozen=True)
class ShownState:
    """What the window shows, in a stop's terms."""
    step: int
    event: int | None                 # 1-based, as a lesson writes it; None: the whole step
    selected: tuple                   # the selected block's trace id in each row (None: none)
    panels: tuple[str, ...]
    strategies: tuple[str, ...]       # the strategy of each row shown


def shown_state(window) -> ShownState:
    """Read back what ``window`` shows: the position, the event, each row's
    selected block (by trace id), the panels and the strategies."""
    model = window.model
    rows = range(len(model.shown))
    if window.compare.active:
        selected = tuple(_outlined_id(model.step(r.row), r.map) for r in window.compare.view.shown_rows())
    else:
        selected = (_outlined_id(model.step(0), window.heap_map),)
    event = model.event_index
    return ShownState(model.position, None if event is None else event + 1, selected,
                      shown_panels(window), tuple(model.timeline(r).strategy_name for r in rows))


def _outlined_id(step, heap_map):
    """The trace id of the live block a heap map outlines as selected, read
    from the outline drawn (None: no outline, or round no live block)."""
    outlined = heap_map.selected_range()
    if step is None or outlined is None:
        return None
    start, size = outlined
    return next((i for a, i in step.ids.items() if start <= a < start + size), None)
