"""Text typed away from the prompt goes into it, as in Claude Code and Gemini CLI.

After a click on a fold, on the transcript or in the sidebar, the focus is
there, and a printable key would otherwise go nowhere. The key reaches the
main screen (a Key event bubbles up from the focused widget); unless a
binding of the focused widget or of its parents takes it (space and Enter on
a fold), it is typed into the prompt, which takes the focus. Keys the prompt
itself handles never get here: it stops the printable ones. A paste (a
terminal's bracketed paste) there goes to the prompt the same way.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input, TextArea

from koroku_tui.ui.main.prompt import Prompt

__all__ = ["paste_into_prompt", "type_into_prompt"]


def type_into_prompt(prompt: Prompt, event: events.Key) -> None:
    """Type ``event``'s character into ``prompt`` when nothing else on its screen takes it."""
    if not event.is_printable or event.character is None or prompt.read_only:
        return
    screen = prompt.screen
    active = screen.active_bindings.get(event.key)
    if active is not None and active.enabled:
        return  # the focused widget's key (or the screen's): the App runs it after us
    event.stop()
    event.prevent_default()
    # Focus now (not ``prompt.focus()``, which waits a turn of the loop): the
    # keys that follow go straight to the prompt, after this one.
    screen.set_focus(prompt)
    prompt.insert(event.character)


def paste_into_prompt(prompt: Prompt, event: events.Paste) -> None:
    """A paste on a widget that takes no text: into ``prompt`` (a text input keeps its own)."""
    screen = prompt.screen
    if isinstance(screen.focused, Input | TextArea) or prompt.read_only or not event.text:
        return  # the prompt (which lets a paste bubble on) or another input took it
    event.stop()
    screen.set_focus(prompt)
    prompt.paste(event.text)
