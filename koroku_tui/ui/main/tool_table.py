"""The sidebar's table of tool calls: status, tool, and arguments cut to the width left.

Its own module because Textual's DataTable is imported with it: the sidebar
mounts the table after the first frame (``ToolSidebar``), and only then is
this module (and DataTable's) loaded.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

__all__ = ["ToolTable"]

_ARGS_MIN = 8
_ARGS = ColumnKey("args")


class ToolTable(DataTable[Any]):
    """The calls' table, whose last column fills the width left (DataTable has no "1fr").

    Its columns are keyed ``status``, ``tool`` and ``args``; a row's cells come in that order.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.add_column(" ", key="status", width=1)
        self.add_column("Tool", key="tool")
        self.add_column("Args", key="args", width=_ARGS_MIN)

    def on_resize(self, event: events.Resize) -> None:
        self.fit_args()

    def fit_args(self) -> None:
        """Give the args column every cell the other columns leave."""
        column = self.columns.get(_ARGS)
        if column is None:
            return
        others = sum(c.get_render_width(self) for c in self.ordered_columns if c.key != _ARGS)
        left = self.scrollable_content_region.width - others - 2 * self.cell_padding
        width = max(_ARGS_MIN, left)
        if column.width != width:
            column.width = width
            # No public way to resize a column: the table re-measures and
            # redraws (its cached cells were cut to the old width).
            self._require_update_dimensions = True
            self._clear_caches()
