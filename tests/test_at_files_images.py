"""``@`` images in a long session: no request passes Gemini's size limit (issue 27, part 3).

Every request carried every earlier image of the context: with the third 6 MB
photo the body passed Gemini's 20 MiB, and every later turn failed the same way.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from google.genai import errors, types
from helpers.agent_kit import open_agent, stored_events
from helpers.attach_kit import PNG

from koroku_tui.agent.attachments import attach, user_content
from koroku_tui.agent.wire.image_room import REQUEST_IMAGE_BYTES, fit_images
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.fake_gemini.validation import MAX_REQUEST_BYTES

PHOTO_BYTES = 5_900_000
"""Three of them are 17.7 MB: 23.6 MB of base64, more than a request may carry."""


def photo(workspace: Path, name: str, fill: int) -> bytes:
    """A PNG of ``PHOTO_BYTES`` (an image by its first bytes) written as ``name``."""
    data = PNG + bytes([fill]) * (PHOTO_BYTES - len(PNG))
    (workspace / name).write_bytes(data)
    return data


def message(text: str, workspace: Path) -> types.Content:
    """``text`` with its ``@`` files attached, as the app and ``--print`` send it."""
    return user_content(text, attach(text, workspace).files)


def sent_images(contents: list[dict[str, Any]]) -> list[bytes]:
    """The images a request carried, oldest first."""
    return [
        base64.urlsafe_b64decode(part["inlineData"]["data"])
        for content in contents
        for part in content["parts"]
        if "inlineData" in part
    ]


async def test_three_large_photos_each_turn_goes_and_the_store_keeps_them_all(
    fake: FakeGemini, tmp_path: Path
) -> None:
    photos = [photo(tmp_path, name, n) for n, name in enumerate(("a.png", "b.png", "c.png"))]
    fake.add(*(text_reply(f"Seen {n}.") for n in range(4)))
    db = tmp_path / "koroku.db"
    async with open_agent(fake, tmp_path, db=db) as agent:
        for n, name in enumerate(("a.png", "b.png", "c.png")):
            assert await agent.run_turn(message(f"what is in @{name}?", tmp_path)) == f"Seen {n}."
    # A restart builds the request afresh from the store: the same rule holds.
    async with open_agent(fake, tmp_path, db=db) as agent:
        assert await agent.run_turn("and now?") == "Seen 3."

    requests = fake.generate_requests
    assert [r.error_message for r in requests] == [None] * 4
    assert all(len(r.raw_body) <= MAX_REQUEST_BYTES for r in requests)
    carried = [sent_images(r.contents) for r in requests]
    assert all(sum(map(len, images)) <= REQUEST_IMAGE_BYTES for images in carried)
    # The newest image always goes; the oldest gives way to a line saying so.
    assert carried == [photos[:1], photos[:2], photos[1:], photos[1:]]
    first_message = requests[2].contents[0]["parts"]
    assert first_message[-1] == {
        "text": "[image @a.png (5.9 MB) left out of this request to stay under Gemini's "
        "request size; attach it again to show it]"
    }
    assert first_message[1]["text"].startswith('<attached-file path="a.png"')

    stored = [
        part.inline_data.data
        for event in await stored_events(db)
        for part in event.to_content().parts or ()
        if part.inline_data is not None
    ]
    assert stored == photos


async def test_the_fake_refuses_a_body_past_the_limit_as_gemini_does(
    fake: FakeGemini, tmp_path: Path, client: Any
) -> None:
    photos = [photo(tmp_path, name, n) for n, name in enumerate(("a.png", "b.png", "c.png"))]
    parts = [types.Part.from_bytes(data=data, mime_type="image/png") for data in photos]
    with pytest.raises(errors.ClientError) as refused:
        await client.aio.models.generate_content(
            model="gemini-3-flash-preview", contents=types.Content(role="user", parts=parts)
        )
    assert (refused.value.code, refused.value.status) == (400, "INVALID_ARGUMENT")
    assert refused.value.message == "Request payload size exceeds the limit: 20971520 bytes."


def test_images_left_out_are_copies_and_an_unframed_one_is_named_by_its_size() -> None:
    """A request's contents are the conversation's cached wire forms: never changed in place."""
    six_mb = "A" * 8_000_000  # base64
    blob: dict[str, Any] = {"inlineData": {"mime_type": "image/png", "data": six_mb}}
    older: dict[str, Any] = {"role": "user", "parts": [{"text": "look"}, blob]}
    newest: dict[str, Any] = {"role": "user", "parts": [{"text": "and"}, blob, blob]}
    contents = [older, {"role": "model", "parts": [{"text": "ok"}]}, newest]
    fitted = fit_images(contents, [0, 2], newest=2)
    assert fitted[0]["parts"][1] == {
        "text": "[image (6.0 MB) left out of this request to stay under Gemini's request size]"
    }
    assert fitted[1:] == contents[1:] and older["parts"][1] is blob
