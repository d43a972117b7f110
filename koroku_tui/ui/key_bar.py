"""``KeyBar``: the bottom line of keys, drawn as one widget in the first frame.

It shows what Textual's ``Footer`` shows (each shown binding of the focused
chain as "key Description", disabled ones dimmed, the command palette's key
at the right edge) and a click on a key presses it. Unlike ``Footer`` it
never cuts a key mid-word and always shows quit's key: on a narrow screen
(80 columns) the keys that do not fit whole are left out, from the right.

It exists for launch speed: ``Footer`` draws nothing in the first frame (it waits for the screen's
first bindings update, then mounts one widget per key, each styled twice),
which cost ~0.1 s of CPU and a second full frame before the keys showed.
One line of text, rebuilt when the bindings change, costs almost nothing.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widget import Widget

__all__ = ["KeyBar", "Keys", "Shown"]

_ENABLED, _DISABLED = Style(), Style(dim=True)
_QUIT_ACTIONS = frozenset({"quit", "app.quit"})


class Shown(NamedTuple):
    """One key on the bar."""

    key: str
    """The key pressed when it is clicked (Textual's name, e.g. ``ctrl+l``)."""
    display: str
    """How it is written (``^l``, ``esc``...)."""
    description: str
    enabled: bool


class Keys(NamedTuple):
    """The keys of the bar: quit's and the palette's are shown at any width."""

    left: list[Shown]
    """In the bindings' order; at the right end those that do not fit are left out."""
    quit: Shown | None
    """Quit's key, right after the keys on the left."""
    palette: Shown | None
    """The command palette's key, at the right edge."""


class KeyBar(Widget, can_focus=False):
    """The keys of what has focus, one line at the bottom of a screen."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "key-bar--key",
        "key-bar--description",
        "key-bar--separator",
        "key-bar--hover",
    }
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        .key-bar--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .key-bar--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .key-bar--separator {
            color: $foreground 20%;
        }
        .key-bar--hover {
            background: $block-hover-background;
        }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._spans: list[tuple[int, int, Shown]] = []
        """Where each key was drawn (first and past-last column), for clicks."""
        self._pointer: int | None = None
        """The column under the mouse pointer: its key is highlighted, as a button is."""

    def on_mount(self) -> None:
        # Focus moves and check_action changes publish this signal.
        self.screen.bindings_updated_signal.subscribe(self, lambda _screen: self.refresh())

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def keys(self) -> Keys:
        """The keys shown now, as :class:`Keys`."""
        app, active = self.app, self.screen.active_bindings
        palette_key = app.COMMAND_PALETTE_BINDING if app.ENABLE_COMMAND_PALETTE else None
        keys = Keys([], None, None)
        actions: set[str] = set()
        for key, (_node, binding, enabled, _tooltip) in active.items():
            if key == palette_key:
                keys = keys._replace(palette=self._shown(binding, enabled))
            elif binding.show and binding.action not in actions:
                actions.add(binding.action)  # one key per action, as Footer shows
                if binding.action in _QUIT_ACTIONS:
                    keys = keys._replace(quit=self._shown(binding, enabled))
                else:
                    keys.left.append(self._shown(binding, enabled))
        return keys

    def _shown(self, binding: Binding, enabled: bool) -> Shown:
        return Shown(binding.key, self.app.get_key_display(binding), binding.description, enabled)

    def _key(self, shown: Shown) -> Text:
        """One key as drawn, `` ^l New ``, dimmed when disabled."""
        dim = _ENABLED if shown.enabled else _DISABLED
        return Text.assemble(
            (f" {shown.display} ", self.get_component_rich_style("key-bar--key") + dim),
            (f"{shown.description} ", self.get_component_rich_style("key-bar--description") + dim),
        )

    def _palette(self, shown: Shown) -> Text:
        """The palette's key, after a thin separator: ``▏^p palette``."""
        return Text.assemble(
            ("▏", self.get_component_rich_style("key-bar--separator")),
            (shown.display, self.get_component_rich_style("key-bar--key")),
            (f" {shown.description} ", self.get_component_rich_style("key-bar--description")),
        )

    def render(self) -> Text:
        keys, width = self.keys(), self.size.width
        tail = self._palette(keys.palette) if keys.palette is not None else Text()
        pinned = [keys.quit] if keys.quit is not None else []
        # Keys on the left go whole or not at all, in order, in the room that
        # quit's key and the palette's leave: never a key cut mid-word.
        room = width - tail.cell_len - sum(self._key(shown).cell_len for shown in pinned)
        fitting: list[Shown] = []
        for shown in keys.left:
            room -= self._key(shown).cell_len
            if room < 0:
                break
            fitting.append(shown)
        line, spans = Text(no_wrap=True, overflow="crop"), []
        for shown in fitting + pinned:
            start = line.cell_len
            line.append_text(self._key(shown))
            spans.append((start, line.cell_len, shown))
        if keys.palette is not None:
            line.pad_right(max(0, width - tail.cell_len - line.cell_len))
            spans.append((line.cell_len, line.cell_len + tail.cell_len, keys.palette))
            line.append_text(tail)
        self._spans = spans
        under = self._span_at(self._pointer)
        if under is not None:
            line.stylize(self.get_component_rich_style("key-bar--hover"), under[0], under[1])
        return line

    def _span_at(self, x: int | None) -> tuple[int, int, Shown] | None:
        return next(
            (span for span in self._spans if x is not None and span[0] <= x < span[1]), None
        )

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._span_at(event.x) != self._span_at(self._pointer):
            self.refresh()
        self._pointer = event.x

    def on_leave(self, _event: events.Leave) -> None:
        self._pointer = None
        self.refresh()

    def key_at(self, x: int) -> Shown | None:
        """The key drawn at column ``x`` (what a click there presses), if any."""
        under = self._span_at(x)
        return None if under is None else under[2]

    def on_mouse_down(self, event: events.MouseDown) -> None:
        # Koroku's App makes a press on an enabled key that key as it reads it
        # (``KorokuApp.on_event``): it reaches here dimmed, or under another App.
        shown = self.key_at(event.x)
        if shown is None:
            return
        if shown.enabled:
            self.app.simulate_key(shown.key)
        else:
            self.app.bell()
