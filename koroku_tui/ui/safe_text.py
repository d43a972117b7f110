"""Showing untrusted text (model replies, tool output, stored rows) literally and safely.

Two dangers, two rules:

* Markup: Rich and Textual parse ``[bold]``, ``[link=...]`` and ``[@click=...]``
  in plain strings. Untrusted text therefore goes into a ``rich.text.Text``
  (which is never parsed), or into widgets built with ``markup=False``.
* Terminal control: an escape sequence such as ``ESC ] 0 ; title BEL`` or
  ``ESC [ 2 J`` could retitle or clear the user's terminal if it reached it
  unfiltered (an export ``cat``-ed later, a copy to the clipboard). Text that
  is only read goes through ``sanitize`` (sequences and controls removed,
  bidi controls shown as escapes, as on ``--print``); what the user approves
  (tool arguments) goes through ``visible``, which shows every hidden
  character as an escape (see ``koroku_tui.text.safety``).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from koroku_tui.text.safety import for_terminal, hidden_pieces
from koroku_tui.text.tool_args import ShownPiece

__all__ = ["BREAK_STYLE", "ESCAPE_STYLE", "literal", "sanitize", "styled", "visible"]

ESCAPE_STYLE = "bold reverse red"
"""How an escaped hidden character looks: unlike anything the model could type."""

BREAK_STYLE = "bold yellow"
"""How a ``\\n`` or ``\\t`` inside an argument looks: a real character, not text."""


def sanitize(text: str) -> str:
    """Read-only ``text`` for the TUI: ``text.safety.for_terminal``, the rule ``--print`` uses.

    Escape sequences and controls are removed; bidi controls (which would
    make a line read differently from what it says) and lone surrogates
    show as ``\\u202e``-style escapes.
    """
    return for_terminal(text)


def literal(text: str, style: str | Style | None = None) -> Text:
    """A ``Text`` showing ``text`` exactly as written: sanitized, never parsed as markup."""
    return Text(sanitize(text), style=style or "")


def visible(text: str, style: str | Style | None = None) -> Text:
    """A ``Text`` of ``text`` with every hidden character as a highlighted ``\\u009d`` escape.

    Nothing is dropped: this is for what a user decides on (tool arguments).
    """
    shown = Text(style=style or "")
    for piece, escaped in hidden_pieces(text):
        shown.append(piece, style=ESCAPE_STYLE if escaped else None)
    return shown


def styled(pieces: list[ShownPiece], style: str | Style | None = None) -> Text:
    """A ``Text`` of ``text.tool_args.args_display`` pieces: escapes and line marks highlighted."""
    shown = Text(style=style or "")
    styles = {"hidden": ESCAPE_STYLE, "break": BREAK_STYLE}
    for text, kind in pieces:
        shown.append(text, style=styles.get(kind))
    return shown
