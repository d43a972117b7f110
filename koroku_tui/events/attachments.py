"""A file attached with ``@path``: how its text part is framed, and read back.

The user's ``@notes.md`` becomes, in the stored user event, one text part
the model reads (and, for an image, an ``inline_data`` part after it)::

    <attached-file path="notes.md" size="2100">
    ...the file's text...
    </attached-file>

The first line is the frame: the path (a JSON string, so any name survives),
the file's size in bytes, for an image its MIME type (``type="image/png"``,
then no body: the bytes travel as inline data), and a note when only the
start of the file is attached. One home for the format: the agent writes
it, the transcript and the export read it (``read_frame``), so a restart, a
fork or an export shows the attachment as it was sent.

Only the parts after a user message's first are frames (``frame_of``): the
first is what the user wrote, kept whole even when it looks like a frame.
A ``</attached-file`` inside the file's text is written ``<\\/attached-file``
(one backslash more for each already there, undone on reading), so no
file can end its frame early and have the model read what follows it as
the user's own words; in the first line's JSON strings ``</`` is ``<\\/``
(a file may be named ``</attached-file>``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = [
    "AttachedFile",
    "frame_image",
    "frame_of",
    "frame_text",
    "human_size",
    "mention_text",
    "mentions",
    "read_frame",
]

_MENTION = re.compile(r'(?<!\S)@("[^"\n]+"|[^\s"]+)')
_OPEN = "<attached-file "
_CLOSE = "\n</attached-file>"
# A closing tag inside the text (any case, with any backslashes already
# before its "/"): one backslash is added on writing, taken off on reading.
_CLOSING_INSIDE = re.compile(r"<(\\*)/(attached-file)", re.IGNORECASE)
_CLOSING_ESCAPED = re.compile(r"<(\\*)\\/(attached-file)", re.IGNORECASE)
_HEADER = re.compile(
    r'<attached-file path=("(?:[^"\\\n]|\\.)*") size="(\d+)"'
    r'(?: type="([\w.+-]+/[\w.+-]+)")?(?: note=("(?:[^"\\\n]|\\.)*"))?(/?)>'
)


@dataclass(frozen=True, slots=True)
class AttachedFile:
    """What a framed part says of its file."""

    path: str
    """The path as the user wrote it after ``@`` (relative to the workspace)."""
    size: int
    """The file's size in bytes when it was attached."""
    content: str | None
    """The attached text; ``None`` for an image (its bytes are the next part)."""
    mime_type: str | None = None
    """An image's MIME type; ``None`` for text."""
    note: str | None = None
    """Why less than the whole file was attached (the size cap), else ``None``."""

    @property
    def label(self) -> str:
        """The row's text: ``@notes.md · 2.1 KB``."""
        return f"@{self.path} · {human_size(self.size)}"


def mention_text(path: str) -> str:
    """How ``path`` is written after ``@``: quoted when it holds whitespace."""
    return f'@"{path}"' if any(c.isspace() for c in path) else f"@{path}"


def mentions(text: str) -> list[str]:
    """The paths written after ``@`` in ``text`` (at its start or after whitespace), in order."""
    return [m.group(1).strip('"') for m in _MENTION.finditer(text)]


def human_size(size: int) -> str:
    """``2.1 KB``, ``3.0 MB``, ``512 B``: decimal units, as file managers show."""
    if size < 1000:
        return f"{size} B"
    value = float(size)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1000
        if value < 999.95 or unit == "TB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover


def frame_text(path: str, size: int, content: str, note: str | None = None) -> str:
    """The text part of a text file: frame line, content, closing tag."""
    noted = f" note={_attribute(note)}" if note else ""
    body = _CLOSING_INSIDE.sub(r"<\1\\/\2", content)
    return f'{_OPEN}path={_attribute(path)} size="{size}"{noted}>\n{body}{_CLOSE}'


def frame_image(path: str, size: int, mime_type: str) -> str:
    """The text part announcing an image; its bytes follow as an ``inline_data`` part."""
    return f'{_OPEN}path={_attribute(path)} size="{size}" type="{mime_type}"/>'


def _attribute(value: str) -> str:
    """``value`` as a JSON string, ``</`` written ``<\\/`` (JSON reads it back the same).

    A file may be named ``</attached-file>`` (in a folder named ``<``): in the
    frame's first line it must not read as the frame's end either.
    """
    return json.dumps(value).replace("</", "<\\/")


def read_frame(text: str) -> AttachedFile | None:
    """The attachment a text part frames, or ``None`` for any other text."""
    if not text.startswith(_OPEN):
        return None
    header = _HEADER.match(text)
    if header is None:
        return None
    path_json, size, mime_type, note_json, closed = header.groups()
    try:
        path = json.loads(path_json)
        note = json.loads(note_json) if note_json else None
    except ValueError:
        return None
    rest = text[header.end() :]
    if closed:
        if rest or mime_type is None:
            return None
        return AttachedFile(path, int(size), None, mime_type, note)
    if not rest.startswith("\n") or not rest.endswith(_CLOSE):
        return None
    content = _CLOSING_ESCAPED.sub(r"<\1/\2", rest[1 : -len(_CLOSE)])
    return AttachedFile(path, int(size), content, None, note)


def frame_of(role: str | None, index: int, text: str) -> AttachedFile | None:
    """The file that part ``index`` (its ``text``) of a ``role`` event frames, if any.

    Only a user message's parts after its first: the first is the user's
    own text, which may look like a frame (typed or pasted) and is never
    taken for one; the model's words never are either.
    """
    return read_frame(text) if role == "user" and index > 0 else None
