"""The approval modal: may this tool call run?"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from koroku_tui.agent.tools.approval import ApprovalDecision, ApprovalRequest
from koroku_tui.ui.main.format import args_full
from koroku_tui.ui.safe_text import literal

__all__ = ["ApprovalScreen"]


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    """Shows the tool and its arguments literally; dismissed with the user's decision."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "decide('allow_once')", "Allow once", id="approval.allow_once"),
        Binding("a", "decide('allow_session')", "Allow for session", id="approval.allow_session"),
        Binding("n,escape", "decide('deny')", "Deny", id="approval.deny"),
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        with Vertical(id="approval-dialog"):
            title = literal("Allow ")
            title.append(literal(self.request.tool_name, style="bold"))
            title.append(" to run?")
            yield Static(title, id="approval-title")
            with VerticalScroll(id="approval-args"):
                yield Static(literal(args_full(self.request.args)))
            with Horizontal(id="approval-buttons"):
                yield Button("Allow once [y]", id="allow_once", variant="primary")
                yield Button("Allow for session [a]", id="allow_session")
                yield Button("Deny [n]", id="deny", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id:
            self.action_decide(event.button.id)

    def action_decide(self, decision: str) -> None:
        self.dismiss(ApprovalDecision(decision))
