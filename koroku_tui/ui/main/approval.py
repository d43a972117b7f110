"""The approval modal: may this tool call run?

What the user approves must be what runs. The arguments are shown whole
(wrapped and scrollable), with every hidden character as a highlighted
``\\u009d`` escape, and a newline inside a value as a highlighted ``\\n``
that also breaks the line (so ``echo ok # note\\ntouch X`` reads as the two
commands it is). A very long value is cut only with an explicit
"… N more characters" line and a key that shows the rest. When the
arguments hold hidden characters the dialog says so in words and Deny
has the focus, so a reflexive Enter refuses.

The prompt stays editable while a turn runs, so the dialog can open while
the user is typing: their next letters must not answer it. Keys and clicks
are therefore ignored until :attr:`ApprovalScreen.GRACE_SECONDS` have passed
since the dialog was first drawn *and* since the last key it ignored (a
steady typist never gets through), and keys typed before it was drawn are
dropped. "Allow for session" takes a second press that says what it means.

It also says where the tool runs (the workspace) and lists its keys. What it
says depends on the tool's spec (``request.spec``), never on its name: for a
tool with a ``command_argument`` (``run_command``) it speaks of "this
command"; for a tool with a ``preview`` (``write_file``) it shows what the
request's :class:`FileChange` says (computed in the core,
``agent/tools/change_preview.py``): whether the file exists and the diff,
escaped like the arguments. When an approval rule would have allowed or
denied the call but does not apply to its command (shell syntax, hidden
characters: ``agent/tools/approval_rules.py``), a line says which and why.
A tool of an MCP server (the spec's ``source``) is named as its rows name it
(``time › get_current_time``), and a line names the server and the name the
approval rules know the tool by.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Region
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widgets import Button, Static

from koroku_tui.agent.tools.approval import ApprovalDecision, ApprovalRequest
from koroku_tui.agent.tools.change_preview import FileChange
from koroku_tui.agent.tools.spec import ToolSpec
from koroku_tui.text.safety import escape_hidden
from koroku_tui.text.tool_args import args_display, args_hidden_characters, args_multiline
from koroku_tui.ui.grace_dialog import click_time
from koroku_tui.ui.main.format import SHOWN_AT_FIRST, capped_args, tool_label
from koroku_tui.ui.safe_text import literal, styled, visible

__all__ = [
    "IGNORED_NOTICE",
    "KEYS_HINT",
    "SHOWN_AT_FIRST",
    "ApprovalScreen",
    "DecisionButton",
    "change_summary",
    "diff_text",
    "hidden_warning",
    "home_relative",
    "lines_notice",
    "server_line",
    "session_question",
]


NAMED_AT_MOST = 6
"""Hidden characters the warning names; more are counted."""

IGNORED_NOTICE = "Keys pressed as this dialog opened were ignored: read it, then choose."
# Content, not str: a str label is markup, where "[a]" is a style and vanishes.
SESSION_LABEL = Content("Allow for session [a]")
CONFIRM_LABEL = Content("Yes, allow for session [a]")


KEYS_HINT = "y allow once · a allow for this session (press twice) · n or Esc deny"
"""The dialog's keys in one line (fits the 80-column dialog)."""
_DIFF_STYLES = {"+": "green", "-": "red", "@": "cyan"}


def home_relative(folder: Path) -> str:
    """``folder`` with the user's home written as ``~`` (as shells show it)."""
    try:
        home = Path.home()
    except RuntimeError:  # no home to speak of
        return str(folder)
    if folder == home:
        return "~"
    if folder.is_relative_to(home) and home != Path("/"):
        return f"~/{folder.relative_to(home)}"
    return str(folder)


def change_summary(change: FileChange) -> str:
    """The sentence above a file write's diff: does the file exist, what is shown."""
    path = escape_hidden(change.path)
    if change.unreadable is not None:
        reason = escape_hidden(change.unreadable)
        if change.exists:
            return f"{path} exists, but its contents cannot be shown: {reason}"
        return f"Cannot look at {path}: {reason}"
    if not change.exists:
        return f"{path} does not exist yet: it will be created. Its first lines:"
    if change.unchanged:
        return f"{path} exists and already holds exactly this content: nothing changes."
    return f"{path} exists: it will be replaced. The change:"


def diff_text(change: FileChange) -> Text:
    """The diff lines, colored, every hidden character a highlighted escape."""
    shown = Text()
    for index, line in enumerate(change.lines):
        if index:
            shown.append("\n")
        header = line.startswith(("--- ", "+++ "))
        style = "bold" if header else _DIFF_STYLES.get(line[:1], "")
        shown.append_text(visible(line, style))
    if change.more_lines:
        shown.append(f"\n… {change.more_lines:,} more lines", style="italic")
    return shown


def hidden_warning(spec: ToolSpec, hidden: list[str]) -> str:
    """The sentence shown above arguments that hold hidden characters (``U+XXXX`` names).

    A tool that runs a command (its spec names a ``command_argument``) says "this command".
    """
    has_command = spec.command_argument is not None
    what = "This command contains" if has_command else "These arguments contain"
    named = ", ".join(hidden[:NAMED_AT_MOST])
    if len(hidden) > NAMED_AT_MOST:
        named += f" and {len(hidden) - NAMED_AT_MOST} more"
    return (
        f"⚠ {what} hidden control characters ({named}), shown below as highlighted "
        "\\u escapes. They can hide part of what runs: read it carefully."
    )


def lines_notice(spec: ToolSpec, multiline: list[tuple[str, int]]) -> str:
    """The sentence that counts the lines of multi-line values (``(name, lines)`` pairs).

    The lines of the spec's ``command_argument`` are each said to run.
    """
    said = []
    for name, lines in multiline:
        if name == spec.command_argument:
            said.append(f"This command has {lines} lines; each one runs.")
        else:
            said.append(f'"{escape_hidden(name)}" has {lines} lines.')
    return " ".join(said)


def server_line(spec: ToolSpec) -> str | None:
    """For a tool of an MCP server: the line that names the server (and the name approval
    rules know the tool by); ``None`` for another tool."""
    server = spec.source.server
    if server is None:
        return None
    return (
        f"From the MCP server {escape_hidden(server)}, a program Koroku does not control. "
        f"Approval rules call this tool {escape_hidden(spec.name)}."
    )


def session_question(tool_name: str) -> str:
    """What the second step of "allow for session" asks."""
    return (
        f"Allow {tool_name} for the rest of this session? Every later {tool_name} call, "
        "whatever it does, will then run without asking. Press a again to confirm, "
        "y to allow only this call, n to deny."
    )


class DecisionButton(Button):
    """A dialog button whose clicks count only once the dialog takes input."""

    async def _on_click(self, event: events.Click) -> None:
        screen = self.screen
        if isinstance(screen, ApprovalScreen) and not screen.takes_input(click_time(self, event)):
            # Textual then skips Button's own click handler: no press.
            event.prevent_default()
            event.stop()


SHORT = 30
"""Below this many rows the dialog drops its padding and margins and takes the whole height."""


class ApprovalScreen(ModalScreen[ApprovalDecision]):
    """Shows the tool and its arguments literally; dismissed with the user's decision."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "decide('allow_once')", "Allow once", id="approval.allow_once"),
        Binding("a", "decide('allow_session')", "Allow for session", id="approval.allow_session"),
        Binding("n,escape", "decide('deny')", "Deny", id="approval.deny"),
        Binding("m", "show_all", "Show all", id="approval.show_all"),
    ]

    GRACE_SECONDS: ClassVar[float] = 0.6
    """Quiet time before a key or click counts: after the dialog is drawn, after each ignored key.

    Also after the first step of "allow for session", so a doubled ``a`` is one
    press. Tests set it to 0, or high to check that keys are ignored.
    """

    @property
    def grace(self) -> float:
        """This dialog's quiet time: ``GRACE_SECONDS`` unless the settings say otherwise."""
        return self.GRACE_SECONDS if self._grace is None else self._grace

    def __init__(self, request: ApprovalRequest, grace: float | None = None) -> None:
        super().__init__()
        self.request = request
        self._grace = grace
        self.hidden = args_hidden_characters(request.args)
        """``U+XXXX`` of each hidden character in the arguments; empty when there are none."""
        self.multiline = args_multiline(request.args)
        """``(name, lines)`` of each argument value with more than one line."""
        self._pieces = args_display(request.args)
        self._first, self._more = capped_args(self._pieces, SHOWN_AT_FIRST)
        self._all_drawn = False
        self.displayed_at: float | None = None
        """``time.monotonic()`` when the dialog was first drawn; None before."""
        self._quiet_since = 0.0
        self.ignored_keys = 0
        """Keys and clicks ignored because they came too early."""
        self.confirming_session = False
        """True once "allow for session" was pressed once: the next press confirms."""

    @property
    def label(self) -> str:
        """What the dialog calls the tool, as its rows do (``time › get_current_time``)."""
        return tool_label(self.request.spec)

    @property
    def more_characters(self) -> int:
        """How many characters of the arguments are not drawn yet (0 once all are)."""
        return 0 if self._all_drawn else self._more

    def compose(self) -> ComposeResult:
        with Vertical(id="approval-dialog"):
            title = literal("Allow ")
            title.append(literal(escape_hidden(self.label), style="bold"))
            title.append(" to run?")
            yield Static(title, id="approval-title")
            if (server := server_line(self.request.spec)) is not None:
                yield Static(literal(server), id="approval-server")
            if self.request.workspace is not None:
                where = literal("Working directory: ")
                where.append_text(visible(home_relative(self.request.workspace), "bold"))
                yield Static(where, id="approval-workspace")
            if self.hidden:
                warning = Text(hidden_warning(self.request.spec, self.hidden), "bold")
                yield Static(warning, id="approval-warning")
            if self.multiline:
                notice = Text(lines_notice(self.request.spec, self.multiline), "bold")
                yield Static(notice, id="approval-lines")
            if self.request.unapplied:
                said = "\n".join(rule.sentence for rule in self.request.unapplied)
                # A rule is the user's text, but may hold anything: drawn escaped.
                yield Static(visible(said, "bold"), id="approval-rules")
            change = self.request.change
            # With a diff the dialog has a fixed height: arguments and diff scroll
            # together in what is left, so the keys and buttons stay in view.
            body = VerticalScroll(id="approval-body") if change is not None else nullcontext()
            with body:
                with VerticalScroll(id="approval-args"):
                    yield Static(styled(self._first), id="approval-args-text")
                    if self._more:
                        text = f"… {self._more:,} more characters: press m to show them all"
                        yield Static(Text(text, "italic"), id="approval-more")
                if change is not None:
                    yield Static(Text(change_summary(change), "bold"), id="approval-change")
                    if change.lines:
                        with Vertical(id="approval-diff"):
                            yield Static(diff_text(change), id="approval-diff-text")
            yield Static(Text(KEYS_HINT, "italic"), id="approval-keys")
            with Horizontal(id="approval-buttons"):
                yield DecisionButton(Content("Allow once [y]"), id="allow_once", variant="primary")
                yield DecisionButton(SESSION_LABEL, id="allow_session")
                yield DecisionButton(Content("Deny [n]"), id="deny", variant="error")

    def on_mount(self) -> None:
        if self.request.change is not None:
            self.query_one("#approval-dialog").add_class("with-change")
        self._fit(self.app.size.height)
        if self.hidden:
            self.query_one("#deny", Button).focus()

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.height)

    def _fit(self, height: int) -> None:
        # In a short terminal (80x24) the margins and padding would leave the
        # diff a line or two between the arguments and the keys.
        self.query_one("#approval-dialog").set_class(height < SHORT, "-short")

    def render_lines(self, crop: Region) -> list[Strip]:
        """Draw the dialog; the first time, note that it is now on screen (as ``GraceDialog``)."""
        if self.displayed_at is None:
            self.displayed_at = self._quiet_since = time.monotonic()
        return super().render_lines(crop)

    def takes_input(self, at: float) -> bool:
        """Whether a key or click made at ``at`` (Textual's event time) may act on the dialog.

        No before the dialog was drawn (typed ahead, queued), and no within
        :attr:`GRACE_SECONDS` of it being drawn or of the last ignored input,
        which restarts the wait. Textual stamps events with ``time.monotonic()``
        on the POSIX systems Koroku runs on.
        """
        if self.displayed_at is not None and at >= self.displayed_at:
            if at - self._quiet_since >= self.grace:
                return True
            self._quiet_since = at
        self._ignored()
        return False

    def _ignored(self) -> None:
        self.ignored_keys += 1
        if self.ignored_keys == 1:
            notice = Static(Text(IGNORED_NOTICE, "italic"), id="approval-ignored")
            self.query_one("#approval-dialog").mount(notice, before="#approval-buttons")

    def on_key(self, event: events.Key) -> None:
        # Keys reach the focused widget first and bubble up here before the
        # app looks up the bindings (y, a, n, Enter on a button...): stopping
        # an early key here keeps it from doing anything.
        if not self.takes_input(event.time):
            event.prevent_default()
            event.stop()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id:
            self.action_decide(event.button.id)

    def action_decide(self, decision: str) -> None:
        """Dismiss with ``decision``; "allow for session" asks once more first."""
        if decision == "allow_session" and not self.confirming_session:
            self._ask_for_session()
            return
        self.dismiss(ApprovalDecision(decision))

    def _ask_for_session(self) -> None:
        self.confirming_session = True
        # A doubled key ("aa") is one press: the wait starts again.
        self._quiet_since = time.monotonic()
        question = session_question(escape_hidden(self.label))
        confirm = Static(Text(question, "bold"), id="approval-session")
        self.query_one("#approval-dialog").mount(confirm, before="#approval-buttons")
        button = self.query_one("#allow_session", Button)
        button.label = CONFIRM_LABEL
        button.refresh(layout=True)  # a longer label: the button must grow

    def action_show_all(self) -> None:
        """Draw the arguments in full (they stay scrollable)."""
        if not self.more_characters:
            return
        self._all_drawn = True
        self.query_one("#approval-args-text", Static).update(styled(self._pieces))
        self.query_one("#approval-more", Static).remove()
