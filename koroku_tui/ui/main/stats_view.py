"""The palette's "Usage statistics" (and ``/stats``): what was spent, this session and all history.

Tokens in / cached / out / thinking, requests, the time spent waiting for
Gemini, tool calls and their failures, compactions; then the same by model
and by tool. Figures come from the store (``SessionManager.usage_stats``),
read in a worker: this session's column first (an index seek), all
history's when its scan ends. Model and tool names are stored text an MCP
server or a hand-edited row may have chosen: they are shown with every
hidden character as an escape, cut when long, never parsed as markup.
Read-only; Escape closes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from koroku_tui.store import SessionManager, StoreError, UsageStats
from koroku_tui.ui.safe_text import literal, visible

if TYPE_CHECKING:
    from koroku_tui.ui.app import KorokuApp

__all__ = [
    "UsageView",
    "duration_text",
    "models_text",
    "notes_text",
    "show_stats",
    "summary_text",
    "tools_text",
]

NAME_CHARS = 40
"""Characters of a model's or a tool's name shown; a longer one is cut with "…"."""
COUNTING = Text("counting…", style="italic")


def show_stats(app: KorokuApp) -> None:
    """Open the usage statistics on the app's store (or say why there is none yet)."""
    if app.store is None:
        app.notify(app.problem or "Koroku is still starting.", severity="error")
        return
    app.push_screen(UsageView(app.store))


def duration_text(seconds: float) -> str:
    """``4.2 s``, ``2 min 05 s``, ``3 h 07 min``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours:,} h {minutes:02d} min"


def _name(name: str | None, missing: str) -> Text:
    if name is None:
        return Text(missing, style="italic")
    return visible(name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…")


def _columns(rows: list[list[Text]]) -> Text:
    """Rows of cells lined up: the first column left, the figures right-aligned."""
    widths = [max(cell.cell_len for cell in column) for column in zip(*rows, strict=True)]
    out = Text()
    for n, row in enumerate(rows):
        if n:
            out.append("\n")
        for i, (cell, width) in enumerate(zip(row, widths, strict=True)):
            pad = " " * (width - cell.cell_len)
            if i == 0:
                out.append_text(cell)
                out.append(pad)
            else:
                out.append("  " + pad)
                out.append_text(cell)
    return out


def _header(*names: str) -> list[Text]:
    return [Text(name, style="bold") for name in names]


Figure = Callable[[UsageStats], str]

_SUMMARY: tuple[tuple[str, Figure], ...] = (
    ("Requests", lambda s: f"{s.requests:,}"),
    ("Tokens in", lambda s: f"{s.tokens.tokens_in:,}"),
    ("  of which cached", lambda s: f"{s.tokens.cached:,}"),
    ("Tokens out", lambda s: f"{s.tokens.tokens_out:,}"),
    ("Thinking tokens", lambda s: f"{s.tokens.thinking:,}"),
    ("Time waiting for Gemini", lambda s: duration_text(s.wait_seconds)),
    ("Tool calls", lambda s: f"{s.tool_calls:,}"),
    ("  failed", lambda s: f"{s.tool_failures:,}"),
    ("Compactions", lambda s: f"{s.compactions:,}"),
)


def summary_text(session: UsageStats | None, history: UsageStats | None) -> Text:
    """The two columns, figure by figure; a column not read yet says "counting…"."""
    rows = [_header("", "This session", "All history")]
    for label, figure in _SUMMARY:
        cells = [COUNTING if stats is None else Text(figure(stats)) for stats in (session, history)]
        rows.append([Text(label), *cells])
    return _columns(rows)


def models_text(title: str, stats: UsageStats) -> Text:
    """One row per model: requests, tokens, waiting."""
    rows = [_header(title, "Requests", "In", "Cached", "Out", "Thinking", "Waiting")]
    for model in stats.models:
        tokens = model.tokens
        figures = (
            model.requests,
            tokens.tokens_in,
            tokens.cached,
            tokens.tokens_out,
            tokens.thinking,
        )
        waited = duration_text(model.wait_seconds) if model.timed else "not timed"
        cells = [Text(f"{n:,}") for n in figures] + [Text(waited)]
        rows.append([_name(model.model, "model not recorded"), *cells])
    if not stats.models:
        rows.append([Text("no replies yet", style="italic"), *(Text("") for _ in range(6))])
    return _columns(rows)


def tools_text(session: UsageStats, history: UsageStats) -> Text:
    """One row per tool of all history: its calls and failures here, then everywhere."""
    here = {tool.name: tool for tool in session.tools}
    rows = [_header("Tool", "Calls here", "Failed here", "Calls in all", "Failed in all")]
    for tool in history.tools:
        mine = here.get(tool.name)
        figures = (
            mine.calls if mine else 0,
            mine.failures if mine else 0,
            tool.calls,
            tool.failures,
        )
        rows.append([_name(tool.name, ""), *(Text(f"{n:,}") for n in figures)])
    if not history.tools:
        rows.append([Text("no tool calls yet", style="italic"), *(Text("") for _ in range(4))])
    return _columns(rows)


def notes_text(session: UsageStats, history: UsageStats) -> Text:
    """What the figures leave out: untimed replies, unreadable rows."""
    notes: list[str] = []
    untimed = history.requests - history.timed
    if untimed:
        replies = "1 reply" if untimed == 1 else f"{untimed:,} replies"
        notes.append(
            f"The time waiting for Gemini leaves out {replies} stored before Koroku "
            "timed replies (it counts from the version that added this screen)."
        )
    if history.unreadable:
        notes.append(
            f"{history.unreadable:,} stored rows could not be read (corrupted JSON) "
            "and were skipped."
        )
    return literal("\n".join(notes), "italic")


class UsageView(ModalScreen[None]):
    """The usage statistics of the current session and of all history (read-only)."""

    DEFAULT_CSS = """
    UsageView {
        align: center middle;
        background: $background 60%;
    }
    UsageView > Vertical {
        width: 90%;
        height: 90%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    UsageView #stats-title {
        text-style: bold;
    }
    UsageView #stats-body > Static {
        margin: 1 0 0 0;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="stats.close"),
    ]

    def __init__(self, store: SessionManager) -> None:
        super().__init__()
        self.store = store
        self.session: UsageStats | None = None
        self.history: UsageStats | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Usage statistics"), id="stats-title")
            with VerticalScroll(id="stats-body"):
                yield Static(summary_text(None, None), id="stats-summary")
                yield Static(Text(""), id="stats-models")
                yield Static(Text(""), id="stats-tools")
                yield Static(Text(""), id="stats-notes")
            yield Static(Text("Escape closes", "italic"))

    def on_mount(self) -> None:
        self._load()

    @work(group="stats", exclusive=True, exit_on_error=False)
    async def _load(self) -> None:
        """This session's figures (quick), then all history's (a scan of every row)."""
        try:
            self.session = await self.store.usage_stats()
            self._show()
            self.history = await self.store.usage_stats(all_history=True)
        except StoreError as exc:
            self.query_one("#stats-notes", Static).update(literal(str(exc), "bold"))
            return
        self._show()

    def _show(self) -> None:
        session, history = self.session, self.history
        self.query_one("#stats-summary", Static).update(summary_text(session, history))
        if session is None or history is None:
            return
        models = models_text("This session", session)
        models.append("\n\n")
        models.append_text(models_text("All history", history))
        self.query_one("#stats-models", Static).update(models)
        self.query_one("#stats-tools", Static).update(tools_text(session, history))
        self.query_one("#stats-notes", Static).update(notes_text(session, history))

    def action_close(self) -> None:
        """Back to the conversation."""
        self.dismiss(None)
