"""The card views' one walk over a step's events (gui/structure_views/step_reader.py):
each event read by the method named after its type, in order, whether given
explained or bare; a type that extends a known one read as that one; other
types passed over."""

from heapscope.allocators import events as ev
from heapscope.allocators.explain import ExplainedEvent
from heapscope.gui.structure_views.step_reader import StepReader


class Reader(StepReader):
    """Writes down what it read, in order."""

    def __init__(self, explained) -> None:
        self.log = []
        super().__init__(explained)

    def on_Visit(self, e) -> None:
        self.visit(e.addr)
        self.log.append(("visit", e.addr))

    def on_Note(self, e) -> None:
        self.said.append(e.text)
        self.log.append(("note", e.text))


class MyVisit(ev.Visit):
    """A strategy's own event type, extending Visit."""


def test_events_are_read_in_order_by_their_types_method_and_visits_numbered():
    events = [ev.Visit(64, 16, False), ev.Released(32, 8), ev.Note("hello"), ev.Visit(96, 32, True),
              ev.Visit(64, 16, True)]
    explained = [ExplainedEvent(i, e, "", ()) for i, e in enumerate(events)]
    for given in (explained, events):
        r = Reader(given)
        assert r.log == [("visit", 64), ("note", "hello"), ("visit", 96), ("visit", 64)]
        assert r.visits == [64, 96, 64]
        assert r.numbers == {64: [1, 3], 96: [2]}
        assert r.said == ["hello"]


def test_an_event_type_extending_a_known_one_is_read_as_that_one():
    r = Reader([MyVisit(128, 16, True)])
    assert r.log == [("visit", 128)]
    assert Reader([ev.Released(128, 16)]).log == []
