"""Koroku's first frame with none of Koroku's code: the floor for its screen.

``tui_bench.py`` launches it in a pseudo-terminal next to ``koroku-tui`` and
``floor_app.py``, as ``python widgets_floor_app.py DATABASE``. It reads the
bench session's newest page straight from SQLite (``json.loads``, no
pydantic) and shows the widget kinds Koroku's first frame shows, laid out
alike: a Header, the newest messages (user text as a Static, each thought as
a one-line "Thinking…" Static, each tool call as a one-line Static, each
answer as Rich Markdown, as Koroku draws stored answers), a DataTable of the
page's tool calls in a sidebar, the gauge and status lines, a TextArea prompt
and a one-line key bar. So it pays Python's start, Textual's imports, Rich
Markdown and these widgets, and nothing of Koroku's store, events, settings
or screens. It is a floor, not a copy: Koroku wraps each message in a block
widget and reads rewinds, compactions and unreadable rows, which this app
(one session, nothing rewound: the bench's data) does not; so what Koroku
pays above it is mostly, not only, its own code.
ctrl+q quits it (Textual's own binding).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from contextlib import closing
from typing import Any

from rich.markdown import Markdown
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Header, Static, TextArea

PAGE = 40
"""Rows read, as Koroku's first page."""
SHOWN = 12
"""The newest rows drawn: three question-call-result-answer turns, about a screenful."""
KEYS = " esc Cancel  ^l New  ^o Compact  ^r History  ^t Tools  ▏^p palette "

CSS = """
#transcript { width: 1fr; }
#transcript > Static { margin: 0 0 1 0; }
#sidebar { width: 44; border-left: solid $primary; }
#prompt { height: 3; }
#keys { dock: bottom; height: 1; background: $footer-background; }
"""


def newest_page(database: str) -> list[dict[str, Any]]:
    with closing(sqlite3.connect(database)) as conn:
        rows = conn.execute(
            "SELECT event_json FROM messages WHERE session_id = "
            "(SELECT MAX(session_id) FROM messages) ORDER BY id DESC LIMIT ?",
            (PAGE,),
        ).fetchall()
    return [json.loads(row[0]) for row in reversed(rows)]


def calls(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    found = []
    for event in events:
        for part in event.get("parts", []):
            if "function_call" in part:
                call = part["function_call"]
                found.append((call["name"], json.dumps(call.get("args", {}))))
    return found


class WidgetsFloorApp(App[None]):
    CSS = CSS

    def __init__(self, database: str) -> None:
        super().__init__()
        self.events = newest_page(database)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with VerticalScroll(id="transcript"):
                for event in self.events[-SHOWN:]:
                    for part in event.get("parts", []):
                        text = part.get("text")
                        if text is not None and part.get("thought"):
                            yield Static("▸ Thinking…")
                        elif text is not None:
                            answer = event.get("role") == "model"
                            yield Static(Markdown(text) if answer else text, markup=False)
                        elif "function_call" in part:
                            yield Static(f"✓ {part['function_call']['name']}")
            with Vertical(id="sidebar"):
                yield Static("Tool calls")
                yield DataTable(id="calls")
        yield Static("Context: 99% left", id="gauge")
        yield Static("", id="status")
        yield TextArea(id="prompt")
        yield Static(KEYS, id="keys")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("", "tool", "args")
        for name, args in calls(self.events):
            table.add_row("✓", name, args)
        self.query_one("#transcript", VerticalScroll).scroll_end(animate=False)
        self.query_one(TextArea).focus()


if __name__ == "__main__":
    WidgetsFloorApp(sys.argv[1]).run()
