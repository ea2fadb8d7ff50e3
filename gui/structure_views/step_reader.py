"""Reading one step's events into what a card view marks.

The V7 arena, the buckets and the page and block tables each draw what one
step did from its explained events: the blocks its search examined, in
order, the role each block it touched played, a few sentences for the line
under the drawing.  They read the events the same way, so the walk is here
once: a :class:`StepReader` subclass reads an event type with a method named
after it (``on_Visit``, ``on_Split``, ...), called for each event of that type
in order; events it has no method for are passed over.  An event whose type
extends a known one (a strategy of your own may subclass ``Visit``) is read
as the type it extends.  Pure Python, no Qt.
"""

from __future__ import annotations


class StepReader:
    """What one step did, read from its explained events (or bare events).

    ``visits`` holds the addresses examined in order (a subclass's
    ``on_Visit`` calls :meth:`visit` for those it counts), ``numbers`` each
    one's visit numbers (1-based), ``said`` the sentences for the line under
    the drawing."""

    def __init__(self, explained) -> None:
        self.visits: list[int] = []
        self.numbers: dict[int, list[int]] = {}
        self.said: list[str] = []
        self.read(explained)

    def read(self, explained) -> None:
        """Read each event in order with the subclass's method for its type."""
        readers = type(self)._readers()
        for item in explained:
            e = getattr(item, "event", item)
            kind = type(e)
            if kind not in readers:
                readers[kind] = type(self)._reader_for(kind)
            reader = readers[kind]
            if reader is not None:
                reader(self, e)

    def visit(self, addr: int) -> None:
        """The search examined ``addr`` (numbered in order)."""
        self.visits.append(addr)
        self.numbers.setdefault(addr, []).append(len(self.visits))

    @classmethod
    def _readers(cls) -> dict:
        """This class's event type -> method (or None), filled as types are met."""
        if "_reader_table" not in cls.__dict__:
            cls._reader_table = {}
        return cls._reader_table

    @classmethod
    def _reader_for(cls, kind: type):
        for klass in kind.__mro__:
            reader = getattr(cls, f"on_{klass.__name__}", None)
            if reader is not None:
                return reader
        return None
