"""Text typed away from the prompt goes into it, as in Claude Code and Gemini CLI.

After a click on a fold, on the transcript or in the sidebar, the focus is
there, and a printable key would otherwise go nowhere. Unless a binding of
the focused widget or of its parents takes it (space and Enter on a fold),
the key moves the focus to the prompt and is typed there; a paste (a
terminal's bracketed paste) goes to the prompt the same way.

The App asks (``focus_for_input``) before it hands the key to the focused
widget, not the main screen once the key has bubbled up to it: keys travel
from widget to widget through message queues, so while the first key
climbed from the fold to the screen, the keys typed after it were already
handed to the prompt, and a fast typist's text arrived out of order ("fo
jumps over the lazy dogx", seen in the browser, where keys come one by one).
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input, TextArea

from koroku_tui.ui.main.prompt import Prompt

__all__ = ["focus_for_input"]


def focus_for_input(prompt: Prompt, event: events.Key | events.Paste) -> None:
    """Focus ``prompt`` when ``event`` is text typed or pasted where nothing else takes it.

    The App calls this with each key and paste it reads (a forwarded one has
    been handed on already), before it hands the event to the focused widget.
    """
    screen = prompt.screen
    if event.is_forwarded or prompt.read_only or isinstance(screen.focused, Input | TextArea):
        return  # the prompt, or another text input, takes the text itself
    if isinstance(event, events.Key):
        if not event.is_printable or event.character is None:
            return
        active = screen.active_bindings.get(event.key)
        if active is not None and active.enabled:
            return  # the focused widget's key (or the screen's)
    elif not event.text:
        return
    # At once (not ``prompt.focus()``, which waits a turn of the loop): the App
    # hands this event to the prompt, and every key after it.
    screen.set_focus(prompt)
