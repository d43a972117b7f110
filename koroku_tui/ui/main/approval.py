"""The approval modal: may this tool call run?

What the user approves must be what runs. The arguments are shown whole
(wrapped and scrollable), with every hidden character as a highlighted
``\\u009d`` escape. A very long value is cut only with an explicit
"… N more characters" line and a key that shows the rest. When the
arguments hold hidden characters the dialog says so in words and Deny
has the focus, so a reflexive Enter refuses.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from koroku_tui.agent.tools.approval import ApprovalDecision, ApprovalRequest
from koroku_tui.text_safety import escape_hidden
from koroku_tui.tool_args import args_hidden_characters, args_text
from koroku_tui.ui.safe_text import literal, visible

__all__ = ["SHOWN_AT_FIRST", "ApprovalScreen", "hidden_warning"]

SHOWN_AT_FIRST = 20_000
"""Characters of the arguments drawn before "… N more characters" (drawing megabytes stalls)."""


NAMED_AT_MOST = 6
"""Hidden characters the warning names; more are counted."""


def hidden_warning(tool_name: str, hidden: list[str]) -> str:
    """The sentence shown above arguments that hold hidden characters (``U+XXXX`` names)."""
    what = "This command contains" if tool_name == "run_command" else "These arguments contain"
    named = ", ".join(hidden[:NAMED_AT_MOST])
    if len(hidden) > NAMED_AT_MOST:
        named += f" and {len(hidden) - NAMED_AT_MOST} more"
    return (
        f"⚠ {what} hidden control characters ({named}), shown below as highlighted "
        "\\u escapes. They can hide part of what runs: read it carefully."
    )


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    """Shows the tool and its arguments literally; dismissed with the user's decision."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "decide('allow_once')", "Allow once", id="approval.allow_once"),
        Binding("a", "decide('allow_session')", "Allow for session", id="approval.allow_session"),
        Binding("n,escape", "decide('deny')", "Deny", id="approval.deny"),
        Binding("m", "show_all", "Show all", id="approval.show_all"),
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request
        self.hidden = args_hidden_characters(request.args)
        """``U+XXXX`` of each hidden character in the arguments; empty when there are none."""
        self._raw = args_text(request.args, indent=2)
        self._drawn = min(len(self._raw), SHOWN_AT_FIRST)

    @property
    def more_characters(self) -> int:
        """How many characters of the arguments are not drawn yet (0 once all are)."""
        return len(self._raw) - self._drawn

    def compose(self) -> ComposeResult:
        with Vertical(id="approval-dialog"):
            title = literal("Allow ")
            title.append(literal(escape_hidden(self.request.tool_name), style="bold"))
            title.append(" to run?")
            yield Static(title, id="approval-title")
            if self.hidden:
                warning = Text(hidden_warning(self.request.tool_name, self.hidden), "bold")
                yield Static(warning, id="approval-warning")
            with VerticalScroll(id="approval-args"):
                yield Static(visible(self._raw[: self._drawn]), id="approval-args-text")
                if self.more_characters:
                    more = f"… {self.more_characters:,} more characters: press m to show them all"
                    yield Static(Text(more, "italic"), id="approval-more")
            with Horizontal(id="approval-buttons"):
                yield Button("Allow once [y]", id="allow_once", variant="primary")
                yield Button("Allow for session [a]", id="allow_session")
                yield Button("Deny [n]", id="deny", variant="error")

    def on_mount(self) -> None:
        if self.hidden:
            self.query_one("#deny", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id:
            self.action_decide(event.button.id)

    def action_decide(self, decision: str) -> None:
        self.dismiss(ApprovalDecision(decision))

    def action_show_all(self) -> None:
        """Draw the arguments in full (they stay scrollable)."""
        if not self.more_characters:
            return
        self._drawn = len(self._raw)
        self.query_one("#approval-args-text", Static).update(visible(self._raw))
        self.query_one("#approval-more", Static).remove()
