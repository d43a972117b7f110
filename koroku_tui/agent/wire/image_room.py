"""Images in one request: the newest go whole, older ones give way to a line of text.

An ``@`` image stays whole in its stored event (a restart, a fork or an
export still has it), and every request carries the whole context, so each
image used to go again with every later message. Gemini refuses a request
body over 20,971,520 bytes (400 INVALID_ARGUMENT "Request payload size exceeds
the limit: 20971520 bytes."), and inline data travels as base64, a third
larger: with the third 7 MB photo (9.3 MB of base64 each) the request passed
the limit, and from then on every turn of the session failed the same way.

So a request carries at most ``REQUEST_IMAGE_BYTES`` of images. The newest
user message's own images always go (at most ``MAX_MESSAGE_IMAGE_BYTES``,
7 MB); then older images, newest first, while they fit. Each one that does
not is replaced, in this request only, by a text part naming it, so the
model knows it was there and the user how to show it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from koroku_tui.agent.wire.body import WireContent
from koroku_tui.events.attachments import frame_of, human_size, mention_text

__all__ = [
    "MAX_REQUEST_BYTES",
    "REQUEST_IMAGE_BYTES",
    "fit_images",
    "holds_inline_data",
    "left_out_note",
]

MAX_REQUEST_BYTES = 20_971_520
"""The largest request body Gemini takes (20 MiB); past it: 400 INVALID_ARGUMENT."""
REQUEST_IMAGE_BYTES = 12_000_000
"""Image bytes one request carries at most. As base64 that is 16 MB of the 20.97 MB a
body may hold, leaving 4.9 MB for the rest: the text of a context at the compaction
threshold (80% of 1,048,576 tokens, about 3.4 MB at four characters a token), the
system instruction and the tools. It still takes the newest message's 7 MB of images
and 5 MB of older ones."""


def holds_inline_data(content: WireContent) -> bool:
    """True when ``content`` (a wire form) has an ``inlineData`` part."""
    return any("inlineData" in part for part in content.get("parts") or ())


def _raw_size(part: dict[str, Any]) -> int:
    """Bytes of a part's inline data, from its base64 length (padded or not)."""
    data = part["inlineData"].get("data") or ""
    return len(data.rstrip("=")) * 3 // 4


def left_out_note(content: WireContent, index: int, size: int) -> str:
    """The text standing for part ``index`` of ``content``, an image left out of a request."""
    parts = content["parts"]
    previous = parts[index - 1].get("text") if index > 0 else None
    frame = frame_of(content.get("role"), index - 1, previous) if previous else None
    if frame is not None and frame.mime_type is not None:
        named, again = f" {mention_text(frame.path)}", "; attach it again to show it"
    else:
        named, again = "", ""
    return (
        f"[image{named} ({human_size(size)}) left out of this request to stay under "
        f"Gemini's request size{again}]"
    )


def fit_images(
    contents: list[WireContent],
    holding: Sequence[int],
    newest: int | None,
    budget: int = REQUEST_IMAGE_BYTES,
) -> list[WireContent]:
    """``contents`` with the images past ``budget`` replaced by a note (see the module).

    ``holding`` are the indices of the contents with inline data (in order),
    ``newest`` the index of the newest user message, whose images always go.
    The contents given are never changed: a changed one is a copy.
    """
    sizes = {
        (index, part_index): _raw_size(part)
        for index in holding
        for part_index, part in enumerate(contents[index]["parts"])
        if "inlineData" in part
    }
    if sum(sizes.values()) <= budget:
        return contents
    room = budget
    for (index, _), size in sizes.items():
        if index == newest:
            room -= size
    fitted = list(contents)
    for (index, part_index), size in reversed(sizes.items()):
        if index == newest:
            continue
        if size <= room:
            room -= size
            continue
        content = fitted[index]
        parts = list(content["parts"])
        kept = {k: v for k, v in parts[part_index].items() if k != "inlineData"}
        parts[part_index] = {**kept, "text": left_out_note(content, part_index, size)}
        fitted[index] = {**content, "parts": parts}
    return fitted
