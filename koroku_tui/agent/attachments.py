"""``@path`` in a message: the named workspace file goes with it, as a part the model reads.

Each ``@`` at the start of the message or after whitespace, followed by a
path (``@notes.md``, ``@"my notes.md"`` for a name with spaces), that names
an existing file in the workspace attaches it (once, however often named).
Anything else (``@someone``, a folder, a trailing comma) stays plain text.

Files are read under the file tools' rules (``builtin.files.opened_file``):
inside the workspace, no link followed out of it, regular files only, no
file with other hard links. Text goes in framed with its path
(``events.attachments``); more than ``MAX_ATTACHED_BYTES`` is cut there, and
the frame says so (a 2 GB file is never read whole: at most the cap is).
Images Gemini reads (PNG, JPEG, WebP, HEIC, HEIF, told by their first bytes,
not their names) go as ``inline_data`` after a frame naming them; a larger
one, or any other binary file, refuses the message (``AttachmentRefused``):
a part Gemini rejects would break every later request of the session.

One message's files together are capped too (``MAX_MESSAGE_TEXT_BYTES``,
``MAX_MESSAGE_IMAGE_BYTES``): fifty files of a megabyte each would be 50 MB
to Gemini, more than its context holds, stored in the session so that every
later request failed. Past either cap the message is refused, and the
reading stops at the file that passed it.
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from koroku_tui.agent.tools.builtin.files import MAX_READ_BYTES, looks_binary, opened_file
from koroku_tui.agent.tools.result import ToolError
from koroku_tui.agent.tools.workspace import locate
from koroku_tui.events.attachments import frame_image, frame_text, human_size, mentions
from koroku_tui.privacy.home_files import read_at_most

if TYPE_CHECKING:
    from google.genai import types

__all__ = [
    "MAX_ATTACHED_BYTES",
    "MAX_IMAGE_BYTES",
    "MAX_MESSAGE_IMAGE_BYTES",
    "MAX_MESSAGE_TEXT_BYTES",
    "Attachment",
    "AttachmentRefused",
    "Mentioned",
    "attach",
    "user_content",
]

MAX_ATTACHED_BYTES = MAX_READ_BYTES
"""Text attached at most per file (as much as ``read_file`` reads)."""
MAX_IMAGE_BYTES = 7_000_000
"""Larger images are refused: Gemini takes 20 MB of inline data per request in all."""
MAX_MESSAGE_TEXT_BYTES = 2 * MAX_ATTACHED_BYTES
"""Text attached to one message at most, all files together: about 500,000 tokens,
half the context of Gemini's models, so the answer and the session's next turns fit."""
MAX_MESSAGE_IMAGE_BYTES = MAX_IMAGE_BYTES
"""Images attached to one message at most, together: base64 makes 7 MB about 9.3 MB
of the 20 MB a request may carry, leaving room for the rest of the conversation."""

_TRAILING = ".,;:!?)]}'"


class AttachmentRefused(Exception):
    """An ``@path`` names a file that cannot be attached: the message is not sent (one sentence)."""


@dataclass(frozen=True)
class Attachment:
    """One attached file: the framed text part, and an image's bytes."""

    path: str
    size: int
    text: str
    """The part the model reads (``events.attachments`` frame)."""
    image: tuple[str, bytes] | None = None
    """``(mime_type, data)`` of an image, sent as ``inline_data`` after ``text``."""
    attached: int = 0
    """Bytes of the file that went with the message (less than ``size`` when cut)."""


@dataclass(frozen=True)
class Mentioned:
    """What the ``@`` paths of a message came to."""

    files: list[Attachment]
    """The attached files, in the order first named."""
    missing: list[str]
    """Paths that name nothing in the workspace (or a folder): sent as plain text."""


def attach(text: str, workspace: Path) -> Mentioned:
    """Read the files ``text`` names with ``@``; raises ``AttachmentRefused``. Blocking I/O."""
    workspace = workspace.resolve()
    found: list[Attachment] = []
    missing: list[str] = []
    seen: set[str] = set()
    for written in mentions(text):
        path = _existing(written, workspace)
        if path is None:
            missing.append(written)
            continue
        if os.path.normpath(path) in seen:  # "@a.md" and "@./a.md": one file
            continue
        seen.add(os.path.normpath(path))
        try:
            found.append(_read(path, workspace))
            _within_message_caps(found)
        except ToolError as exc:
            raise AttachmentRefused(f"Cannot attach @{path}: {exc}") from None
    return Mentioned(found, missing)


def _within_message_caps(found: list[Attachment]) -> None:
    """Raise ``ToolError`` when the files so far pass a message's caps."""
    images = sum(len(a.image[1]) for a in found if a.image is not None)
    text = sum(a.attached for a in found if a.image is None)
    for total, cap, kind in (
        (text, MAX_MESSAGE_TEXT_BYTES, "text"),
        (images, MAX_MESSAGE_IMAGE_BYTES, "images"),
    ):
        if total > cap:
            over, limit = _sizes(total, cap)
            raise ToolError(
                f"with it this message's files come to {over} of {kind}; at most {limit} "
                "can go with one message: name fewer files."
            )


def _sizes(size: int, cap: int) -> tuple[str, str]:
    """``size`` and ``cap`` for a refusal: in bytes when both round to the same figure."""
    shown = human_size(size), human_size(cap)
    return shown if shown[0] != shown[1] else (f"{size:,} bytes", f"{cap:,} bytes")


def user_content(text: str, attachments: list[Attachment]) -> types.Content:
    """The user message: its text, then each attachment's part(s)."""
    from google.genai import types

    parts = [types.Part(text=text)]
    for attachment in attachments:
        parts.append(types.Part(text=attachment.text))
        if attachment.image is not None:
            mime_type, data = attachment.image
            parts.append(types.Part(inline_data=types.Blob(mime_type=mime_type, data=data)))
    return types.Content(role="user", parts=parts)


def _existing(written: str, workspace: Path) -> str | None:
    """``written`` (or it without trailing punctuation) if it names something to attach."""
    candidates = [written]
    trimmed = written.rstrip(_TRAILING)
    if trimmed and trimmed != written:
        candidates.append(trimmed)
    for path in candidates:
        try:
            with locate(workspace, path) as target:
                status = target.status
                if status is not None:
                    return None if stat.S_ISDIR(status.st_mode) else path
        except ToolError:
            # Outside the workspace, or a link leading out: refused only if it
            # exists and is no folder, so that "@/" or "@../x" in prose stays prose.
            outside = workspace / path
            if os.path.lexists(outside) and not os.path.isdir(outside):
                return path
    return None


def _read(path: str, workspace: Path) -> Attachment:
    with opened_file(path, workspace) as file:
        head = read_at_most(file.fd, 16)
        mime_type = _image_type(head)
        if mime_type is not None:
            if file.size > MAX_IMAGE_BYTES:
                shown, cap = _sizes(file.size, MAX_IMAGE_BYTES)
                raise ToolError(f"the image is {shown}; images up to {cap} can be attached.")
            data = head + read_at_most(file.fd, MAX_IMAGE_BYTES + 1 - len(head))
            if len(data) > MAX_IMAGE_BYTES:
                raise ToolError("the image grew while it was read; try again.")
        else:
            data = head + read_at_most(file.fd, MAX_ATTACHED_BYTES + 1 - len(head))
        size = max(file.size, len(data))
    if mime_type is not None:
        image = (mime_type, data)
        return Attachment(path, size, frame_image(path, size, mime_type), image, len(data))
    if looks_binary(data):
        raise ToolError(
            f"it looks like a binary file ({human_size(size)}); only text files and "
            "PNG, JPEG, WebP, HEIC or HEIF images can be attached."
        )
    cut = len(data) > MAX_ATTACHED_BYTES
    # A character split by the cut is dropped, not shown as U+FFFD.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    content = decoder.decode(data[:MAX_ATTACHED_BYTES], final=not cut)
    note = f"only the first {MAX_ATTACHED_BYTES:,} bytes of {size:,} are attached" if cut else None
    framed = frame_text(path, size, content, note)
    return Attachment(path, size, framed, attached=min(len(data), MAX_ATTACHED_BYTES))


def _image_type(head: bytes) -> str | None:
    """The MIME type of an image Gemini reads, from the file's first bytes."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in (b"heic", b"heix", b"heim", b"heis"):
            return "image/heic"
        if brand in (b"mif1", b"msf1"):
            return "image/heif"
    return None
