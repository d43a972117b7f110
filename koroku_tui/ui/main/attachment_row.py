"""The transcript row of a file attached with ``@``: ``+ @notes.md · 2.1 KB``.

It opens like a tool row (Enter, space or a click) on what the model was
given: the file's text, shortened then whole, drawn literally (a file can
hold escape sequences and markup as well as a tool's answer can). An image
opens on one line saying it went to the model as an image. Live and after a
restart the row is read from the same frame (``events.attachments``).
"""

from __future__ import annotations

from rich.text import Text

from koroku_tui.events.attachments import AttachedFile
from koroku_tui.ui.main.tool_row import ToolRow

__all__ = ["ATTACHED", "AttachmentRow"]

ATTACHED = "+"
"""The mark of an attachment row."""


class AttachmentRow(ToolRow):
    """One attached file; opens on its content."""

    def __init__(self, file: AttachedFile) -> None:
        self.file = file  # before the first drawing, which reads it
        super().__init__("attachment", {}, label=file.label)
        self.done = True
        self.set_class(False, "-pending")
        self.add_class("-attachment")
        if file.content is None:
            self.answer = f"{file.mime_type} image, sent to the model as an image."
        else:
            # Not ``finish``: its words for the user would rewrite a tool's answer,
            # and this is the user's own file.
            self.answer = file.content or "(the file is empty)"
        self._render_row()

    def _mark(self) -> str:
        return ATTACHED

    def _summary(self) -> Text:
        return Text("")

    def _reason(self) -> str | None:
        return self.file.note
