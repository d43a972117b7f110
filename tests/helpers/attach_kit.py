"""Shared by the ``@files`` tests: a tiny PNG, and the sentence a refused ``@path`` gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from koroku_tui.agent.attachments import AttachmentRefused, attach

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
"""The PNG signature and some bytes: an image by its first bytes."""


def refused(text: str, workspace: Path) -> str:
    """The one sentence ``attach`` refuses ``text`` with (fails when it attaches)."""
    with pytest.raises(AttachmentRefused) as caught:
        attach(text, workspace)
    return str(caught.value)


def counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the ``os.read`` calls from now on (what was read into memory)."""
    read: list[int] = []
    real_read = os.read

    def counting(fd: int, count: int) -> bytes:
        data = real_read(fd, count)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "read", counting)
    return read
