"""``TitleBar``: Textual's Header, without its crash when the app quits as it starts."""

from __future__ import annotations

from contextlib import suppress

from textual.css.query import NoMatches
from textual.dom import NoScreen
from textual.events import Mount
from textual.widgets import Header
from textual.widgets._header import HeaderTitle

__all__ = ["TitleBar"]


class TitleBar(Header):
    """The title line: Header's look, and a title update that lets a missing title be.

    Header's own title watcher looks up its ``HeaderTitle`` child, which is
    already gone when ctrl+q lands while the screen mounts: ``NoMatches``, a
    traceback and exit 1 (3 launches of 30 quit in their first second). This
    installs the same watchers with a lookup that skips a title not there.
    """

    def _on_mount(self, event: Mount) -> None:
        event.prevent_default()  # Header's watchers would look the title up unguarded
        for owner in (self.app, self.screen):
            self.watch(owner, "title", self._show_title)
            self.watch(owner, "sub_title", self._show_title)

    def _show_title(self) -> None:
        with suppress(NoMatches, NoScreen):  # quitting: the header is being taken down
            # One line whatever it says (no wrapping, the header's width): a new
            # title laid the whole screen out again, as a turn's answer began.
            self.query_one(HeaderTitle).update(self.format_title(), layout=False)
