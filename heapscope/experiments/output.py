"""An experiment's result as text for people (``table``), as CSV, JSON or
Markdown.  Every format carries the same values; the table and Markdown
show them formatted, CSV and JSON raw (numbers as numbers, blanks empty or
null)."""

from __future__ import annotations

import csv
import io
import json
import math

from .model import SEED, Result, Table

FORMATS = ("table", "csv", "json", "markdown")


def _raw(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _note_column(table: Table) -> int:
    """Where a row that is not available shows its note: the first of our
    columns after the strategy's names (the seed's figures stay before it)."""
    return next((i for i, c in enumerate(table.columns) if c.source != SEED and i > 1),
                len(table.columns))


def _unavailable(row: dict) -> bool:
    return not row.get("available", True) or bool(row.get("error"))


def _cells(table: Table) -> list[list[str]]:
    """Header, then one list of shown cells per row; a row that is not
    available shows its note across the columns after the seed's."""
    head = [c.title for c in table.columns]
    out = [head]
    at = _note_column(table)
    for r in table.rows:
        cells = [c.show(r.get(c.key)) for c in table.columns]
        if _unavailable(r):
            why = r.get("error") or r.get("note") or "not available"
            cells = cells[:at] + [why] + [""] * (len(cells) - at - 1)
        out.append(cells)
    return out


def format_table(result: Result, terminal: bool = False) -> str:
    """The result for people: its title, source and setup, each table aligned
    (heapscope/console.py; ``terminal``: styled for one, the seed's columns
    set apart) with its notes, then what reproduces."""
    from ..console import RunOn, table_text
    lines = [f"{result.title}", f"  {result.source}"]
    lines += [f"  {s}" for s in result.setup]
    for table in result.tables:
        lines += ["", table.title]
        cells = _cells(table)
        at = _note_column(table)
        # a row not available: the columns before the note aligned, the note runs on
        rows = [RunOn(row[:at], at, row[at] if at < len(row) else "")
                if _unavailable(r) else row for r, row in zip(table.rows, cells[1:])]
        styles = ["cyan" if c.source == SEED else "" for c in table.columns]
        lines.append(table_text(cells[0], rows, terminal=terminal, column_styles=styles))
        for note in table.notes:
            lines.append(f"  {note}")
    if result.findings:
        lines += ["", "What reproduces:"]
        lines += [f"  - {f}" for f in result.findings]
    return "\n".join(lines)


def format_markdown(result: Result, heading: str = "###") -> str:
    lines = []
    for table in result.tables:
        lines += [f"{heading} {table.title}", ""]
        cells = _cells(table)
        titles = cells[0]
        lines.append("| " + " | ".join(titles) + " |")
        lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(titles))) + "|")
        for row in cells[1:]:
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
        if table.notes:
            lines.append("")
            lines += [f"{note}" for note in table.notes]
        lines.append("")
    if result.findings:
        lines += ["What reproduces:", ""]
        lines += [f"- {f}" for f in result.findings]
    return "\n".join(lines).rstrip() + "\n"


def to_json(result: Result) -> dict:
    return {
        "experiment": result.experiment, "title": result.title, "source": result.source,
        "setup": result.setup, "params": result.params,
        "tables": [{"key": t.key, "title": t.title,
                    "columns": [{"key": c.key, "title": c.title, "source": c.source}
                                for c in t.columns],
                    "rows": [{k: _raw(v) for k, v in r.items()} for r in t.rows],
                    "notes": t.notes} for t in result.tables],
        "findings": result.findings,
    }


def format_csv(result: Result) -> str:
    """One CSV for all tables: ``table`` first, then every column any table
    has (in order of appearance), then ``available`` and ``note``."""
    keys: list[str] = []
    for t in result.tables:
        for c in t.columns:
            if c.key not in keys:
                keys.append(c.key)
    extra = ["available", "note", "error"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["table"] + keys + extra)
    for t in result.tables:
        for r in t.rows:
            values = [_raw(r.get(k)) for k in keys]
            writer.writerow([t.key] + ["" if v is None else v for v in values]
                            + [r.get("available", True), r.get("note", ""), r.get("error", "")])
    return out.getvalue().rstrip("\n")


def render(result: Result, fmt: str, terminal: bool = False) -> str:
    if fmt == "json":
        return json.dumps(to_json(result), indent=2)
    if fmt == "csv":
        return format_csv(result)
    if fmt == "markdown":
        return format_markdown(result)
    return format_table(result, terminal)
