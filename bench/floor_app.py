"""The floor any Textual app pays: a minimal app that shows one Static.

``tui_bench.py`` launches it in a pseudo-terminal next to ``koroku-tui``, as
``python floor_app.py``: Python's start, Textual's imports and one frame.
ctrl+q quits it (Textual's own binding).
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

TEXT = "The floor: one Static."


class FloorApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Static(TEXT)


if __name__ == "__main__":
    FloorApp().run()
