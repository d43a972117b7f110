"""``@path`` attachments under the file tools' rules, stored part for part (issue 27, part 3)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.attach_kit import PNG, counted_reads, refused

from koroku_tui.agent.attachments import (
    MAX_ATTACHED_BYTES,
    MAX_IMAGE_BYTES,
    attach,
    user_content,
)
from koroku_tui.events import SessionEvent, StoredEventAdapter
from koroku_tui.events.attachments import mentions, read_frame
from koroku_tui.fake_gemini.validation import validate_generate_body
from koroku_tui.store import SessionManager
from koroku_tui.store.export import export_markdown
from koroku_tui.store.records import SessionInfo, StoredMessage

TWO_GB = 2 * 1024**3


def test_which_at_words_are_paths() -> None:
    text = '@a.md see @src/x.py, mail me@example.com, @"my notes.md" and (@b)'
    assert mentions(text) == ["a.md", "src/x.py,", "my notes.md"]


def test_text_files_attach_framed_and_the_rest_stays_text(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("hello\n")
    (tmp_path / "my notes.md").write_text("spaced")
    (tmp_path / "src").mkdir()
    mentioned = attach('@notes.md, @notes.md @"my notes.md" @src @nobody', tmp_path)
    assert [(a.path, a.size) for a in mentioned.files] == [("notes.md", 6), ("my notes.md", 6)]
    assert mentioned.missing == ["src", "nobody"]  # a folder, and nothing
    frame = read_frame(mentioned.files[0].text)
    assert frame is not None and (frame.content, frame.label) == ("hello\n", "@notes.md · 6 B")


def test_a_binary_file_is_refused_in_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"ELF\x00\x01\x02" * 10)
    said = refused("@blob.bin", tmp_path)
    assert said == (
        "Cannot attach @blob.bin: it looks like a binary file (60 B); only text files and "
        "PNG, JPEG, WebP, HEIC or HEIF images can be attached."
    )


def test_a_2_gb_file_is_capped_and_never_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "huge.log"
    big.write_bytes(b"log line \xe2\x82\xac\n" * 200_000)  # 2.6 MB of text, a 3-byte "€" in each
    os.truncate(big, TWO_GB)  # sparse: the rest reads as zeros, and takes no disk
    read = counted_reads(monkeypatch)
    [file] = attach("@huge.log", tmp_path).files
    assert sum(read) <= MAX_ATTACHED_BYTES + 1
    frame = read_frame(file.text)
    assert frame is not None and frame.size == TWO_GB
    assert frame.label == "@huge.log · 2.1 GB"
    assert frame.note == f"only the first {MAX_ATTACHED_BYTES:,} bytes of {TWO_GB:,} are attached"
    assert frame.content is not None and len(frame.content.encode()) <= MAX_ATTACHED_BYTES
    assert "\ufffd" not in frame.content  # the "€" cut in two is dropped, not garbled


def test_links_out_of_the_workspace_and_hard_links_are_refused(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("the secret")
    os.symlink(outside / "secret.txt", workspace / "link.txt")
    os.symlink(outside, workspace / "out")
    os.link(outside / "secret.txt", workspace / "hard.txt")
    for path in ("link.txt", "out/secret.txt", "../outside/secret.txt"):
        said = refused(f"read @{path}", workspace)
        assert said.startswith(f"Cannot attach @{path}: ") and "outside the workspace" in said
    assert "hard links" in refused("@hard.txt", workspace)
    os.symlink(workspace / "missing", workspace / "dangling")
    assert attach("@dangling", workspace).missing == ["dangling"]


def test_images_go_inline_by_their_bytes_not_their_names(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    (tmp_path / "fake.png").write_text("not an image")  # a text file, whatever its name
    (tmp_path / "big.png").write_bytes(PNG)
    os.truncate(tmp_path / "big.png", MAX_IMAGE_BYTES + 1)
    mentioned = attach("@shot.png @fake.png", tmp_path)
    assert [f.image[0] if f.image else None for f in mentioned.files] == ["image/png", None]
    assert mentioned.files[0].image == ("image/png", PNG)
    assert refused("@big.png", tmp_path) == (
        "Cannot attach @big.png: the image is 7,000,001 bytes; images up to 7,000,000 bytes "
        "can be attached."  # not "7.0 MB; up to 7.0 MB"
    )


def test_the_stored_event_keeps_text_and_inline_data_and_exports_them(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n")
    (tmp_path / "shot.png").write_bytes(PNG)
    content = user_content(
        "look @notes.md @shot.png", attach("@notes.md @shot.png", tmp_path).files
    )
    event = SessionEvent.from_content(content)
    again = StoredEventAdapter.validate_json(event.model_dump_json())
    assert isinstance(again, SessionEvent) and again.to_content() == content
    assert again.is_real_user_turn
    info = SessionInfo(1, "t", 0.0, 0.0, 1, 0)
    exported = export_markdown(info, [StoredMessage(1, 1, "session", 0.0, again)])
    assert "**Attached:** `@notes.md · 8 B`\n```\n# Notes\n\n```" in exported
    assert f"**Attached:** `@shot.png · {len(PNG)} B` (image/png image)" in exported


def test_the_strict_fake_refuses_inline_data_gemini_would_not_read() -> None:
    def sent(mime_type: str, data: str) -> str | None:
        part = {"inlineData": {"mimeType": mime_type, "data": data}}
        body = {"contents": [{"role": "user", "parts": [{"text": "x"}, part]}]}
        rejection = validate_generate_body(body, strict=True, is_known_signature=lambda _: True)
        return None if rejection is None else rejection.message

    assert sent("image/png", "iVBORw0KGgo=") is None
    assert sent("image/gif", "R0lGODlh") == "Unsupported MIME type: image/gif"
    assert "Base64 decoding failed" in str(sent("image/png", "not base64!"))


async def test_a_fork_keeps_the_attachment(store: SessionManager, tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n")
    content = user_content("look @notes.md", attach("@notes.md", tmp_path).files)
    await store.add_message(SessionEvent.from_content(content))
    fork = await store.fork(store.session_id)
    await store.switch_session(fork.id)
    [event] = await store.load_messages()
    assert isinstance(event, SessionEvent) and event.to_content() == content
    frame = read_frame(event.parts[1].model_dump()["text"])
    assert frame is not None and frame.label == "@notes.md · 8 B"


def test_the_message_text_is_what_the_user_wrote(tmp_path: Path) -> None:
    """A title, or the text a rewind puts back in the prompt: the files are not pasted in."""
    (tmp_path / "notes.md").write_text("# Notes\n")
    content = user_content("look @notes.md", attach("@notes.md", tmp_path).files)
    assert SessionEvent.from_content(content).text == "look @notes.md"
