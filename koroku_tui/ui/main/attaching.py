"""A message's ``@path`` files, read when its turn starts and shown under it as rows.

Read on a thread (a file of a megabyte, on a slow disk, must not stall the
keys); a refusal (``agent.attachments.AttachmentRefused``) sends nothing,
and the turn runner gives the text back to the prompt with the sentence.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from koroku_tui.events.attachments import read_frame
from koroku_tui.ui.main.attachment_row import AttachmentRow
from koroku_tui.ui.main.transcript import Transcript

if TYPE_CHECKING:
    from google.genai import types

__all__ = ["with_attachments"]


async def with_attachments(
    text: str, workspace: Path, transcript: Transcript
) -> str | types.Content:
    """``text`` as the agent takes it: with its attachments' parts, each shown as a row.

    Raises ``AttachmentRefused`` (one sentence) when a named file cannot be attached.
    """
    from koroku_tui.agent.attachments import attach, user_content

    attachments = (await asyncio.to_thread(attach, text, workspace)).files
    if not attachments:
        return text
    frames = [read_frame(attachment.text) for attachment in attachments]
    await transcript.add(*(AttachmentRow(frame) for frame in frames if frame is not None))
    return user_content(text, attachments)
