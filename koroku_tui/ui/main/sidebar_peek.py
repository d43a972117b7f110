"""Tab in the prompt reaches the tool sidebar's list in one press, shown while it has focus.

Textual's Tab walks the focus chain: from the prompt, the transcript, each
fold and tool row, then the list, six presses in a short session and more
in a long one. The prompt's Tab (``main.focus_sidebar``) goes to the list
directly; Tab there goes on to the prompt, the next in the chain, and
shift+tab still walks the folds. A hidden sidebar (the default below 100
columns, or after ctrl+t) is laid over the transcript while its list has
focus and hidden again when focus leaves it ("peeking").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widget import Widget

from koroku_tui.ui.main.sidebar import ToolSidebar

if TYPE_CHECKING:
    from koroku_tui.ui.main.screen import MainScreen

__all__ = ["SidebarPeek"]


class SidebarPeek:
    """Focus for the sidebar's list, and the hidden sidebar shown while it has it."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.peeking = False
        """True while a hidden sidebar is shown only because its list has focus."""

    def focus_list(self) -> None:
        """Put the focus on the list of calls, showing the sidebar if it is hidden."""
        sidebar = self.screen.query_one(ToolSidebar)
        if sidebar.has_class("-hidden"):
            sidebar.remove_class("-hidden")
            self.peeking = True
        self.screen.set_focus(sidebar.table)

    def focus_moved(self, widget: Widget) -> None:
        """Focus went to ``widget``: a peeking sidebar it left is hidden again."""
        sidebar = self.screen.query_one(ToolSidebar)
        if self.peeking and sidebar not in widget.ancestors_with_self:
            self.peeking = False
            sidebar.add_class("-hidden")
