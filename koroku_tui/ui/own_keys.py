"""Text fields run their own editing keys at once, so keys read together act in order.

Textual (8.2.8, textual#6605) has a focused widget insert a typed letter
itself, but runs its bindings (Backspace, ctrl+w, ctrl+u, Delete, the arrows,
Home, Enter in an ``Input``) only once the key has bubbled up, from message
queue to message queue, to the App. The keys read after it meanwhile go
straight to the focused widget: in one burst (a fast typist, a macro, keys
typed while the app was busy) ``abc`` Backspace ``xyz`` left ``abcxy``.
``run_own_binding`` runs the widget's own binding of a key in the widget's
turn, the one Textual would run first (the keymap applied); keys bound only
by the screen or the App still bubble up, and ``ui.key_order`` hands the App
the keys read after them only once they have acted.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget
from textual.widgets import Input

__all__ = ["InOrderInput", "run_own_binding"]


async def run_own_binding(widget: Widget, event: events.Key) -> None:
    """Run ``widget``'s own binding of ``event`` now, after its ``_on_key`` (which takes text)."""
    if event.is_printable:
        return  # text: the widget inserted it (Textual never runs a binding for it there)
    chain = widget.screen._modal_binding_chain
    if not chain or chain[0][0] is not widget:
        return  # the focus moved on since the App handed this key over: Textual's way
    for binding in chain[0][1].key_to_bindings.get(event.key, ()):
        if not binding.priority and await widget.app.run_action(binding.action, widget):
            event.stop()
            event.prevent_default()
            return


class InOrderInput(Input):
    """Textual's ``Input``, its editing keys acting in the order typed."""

    async def _on_key(self, event: events.Key) -> None:
        await super()._on_key(event)
        await run_own_binding(self, event)
