"""``KeyBar``: the bottom line of keys, drawn as one widget in the first frame.

It shows what Textual's ``Footer`` shows (each shown binding of the focused
chain as "key Description", disabled ones dimmed, the command palette's key
at the right edge) and a click on a key presses it. It exists for launch
speed: ``Footer`` draws nothing in the first frame (it waits for the screen's
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

__all__ = ["KeyBar", "Shown"]

_ENABLED, _DISABLED = Style(), Style(dim=True)


class Shown(NamedTuple):
    """One key on the bar."""

    key: str
    """The key pressed when it is clicked (Textual's name, e.g. ``ctrl+l``)."""
    display: str
    """How it is written (``^l``, ``esc``...)."""
    description: str
    enabled: bool


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

    def keys(self) -> tuple[list[Shown], Shown | None]:
        """The keys shown now: those on the left, and the palette's (right), if any."""
        app, active = self.app, self.screen.active_bindings
        palette_key = app.COMMAND_PALETTE_BINDING if app.ENABLE_COMMAND_PALETTE else None
        left: list[Shown] = []
        actions: set[str] = set()
        palette: Shown | None = None
        for key, (_node, binding, enabled, _tooltip) in active.items():
            if key == palette_key:
                palette = self._shown(binding, enabled)
            elif binding.show and binding.action not in actions:
                actions.add(binding.action)  # one key per action, as Footer shows
                left.append(self._shown(binding, enabled))
        return left, palette

    def _shown(self, binding: Binding, enabled: bool) -> Shown:
        return Shown(binding.key, self.app.get_key_display(binding), binding.description, enabled)

    def render(self) -> Text:
        key_style = self.get_component_rich_style("key-bar--key")
        text_style = self.get_component_rich_style("key-bar--description")
        left, palette = self.keys()
        line, spans = Text(no_wrap=True, overflow="crop"), []
        for shown in left:
            start = line.cell_len
            dim = _ENABLED if shown.enabled else _DISABLED
            line.append(f" {shown.display} ", key_style + dim)
            line.append(f"{shown.description} ", text_style + dim)
            spans.append((start, line.cell_len, shown))
        width = self.size.width
        if palette is not None:
            right = Text.assemble(
                ("▏", self.get_component_rich_style("key-bar--separator")),
                (palette.display, key_style),
                (f" {palette.description} ", text_style),
            )
            room = max(0, width - right.cell_len)
            line.truncate(room, pad=True)  # keys that do not fit go under the palette's key
            # A key cut by the palette's still takes a click on what shows of it.
            spans = [(start, min(end, room), shown) for start, end, shown in spans if start < room]
            spans.append((room, room + right.cell_len, palette))
            line.append_text(right)
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

    def on_mouse_down(self, event: events.MouseDown) -> None:
        under = self._span_at(event.x)
        if under is None:
            return
        if under[2].enabled:
            self.app.simulate_key(under[2].key)
        else:
            self.app.bell()
