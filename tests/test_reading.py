"""``events.reading``: the words of a stored message, shared by the history and the model."""

from __future__ import annotations

from datetime import UTC, datetime

from google.genai import types
from helpers.events import model, user

from koroku_tui.events import CompactionEvent, Event, FCMetadata, SessionEvent
from koroku_tui.events.reading import (
    CLIPPED,
    FOR_MODEL,
    STYLE_NAMES,
    WHOLE,
    body_pieces,
    heading_pieces,
    plain,
    shorten,
)
from koroku_tui.store import StoredMessage
from koroku_tui.ui.history.message_text import HistoryMoment, message_text


def answered(output: str) -> SessionEvent:
    """A read_file result holding ``output``."""
    response = types.FunctionResponse(name="read_file", response={"output": output})
    content = types.Content(role="user", parts=[types.Part(function_response=response)])
    return SessionEvent.from_content(content, [FCMetadata(name="read_file", args={"path": "a"})])


def test_a_long_body_is_clipped_to_its_first_lines_with_a_count_of_the_rest() -> None:
    event = answered("\n".join(f"row {n}" for n in range(40)))
    clipped = plain(body_pieces(event, CLIPPED))
    lines = clipped.split("\n")
    # The call line, 23 rows, then the note for the 17 lines left out.
    assert len(lines) == 25
    assert lines[:2] == ['✓ read_file {"path": "a"}', "row 0"]
    assert lines[23] == "row 22"
    assert lines[24] == "… 17 more lines (space to read all)"
    assert plain(body_pieces(event, WHOLE)).count("\n") == 40

    row = StoredMessage(7, 1, "session", 0.0, event)
    shown = message_text(row, HistoryMoment(datetime(2025, 6, 1, tzinfo=UTC))).plain
    assert shown.split("\n", 1)[1] == clipped


def test_for_the_model_tool_output_is_shortened_as_in_the_compaction_transcript() -> None:
    event = answered("q" * 3_000)
    assert plain(body_pieces(event, FOR_MODEL)).endswith("\n" + shorten("q" * 3_000))
    assert shorten("q" * 3_000).endswith("[... 1000 more characters]")
    assert plain(body_pieces(event, CLIPPED)).endswith("\n" + "q" * 2_000)


def test_every_piece_has_a_known_style_name() -> None:
    thought = model("answer", thought="pondering")
    events: list[Event] = [
        user("hi"),
        thought,
        answered("out"),
        CompactionEvent.from_summary("earlier"),
    ]
    for event in events:
        for cuts in (CLIPPED, WHOLE, FOR_MODEL):
            for piece in [*heading_pieces(1, event, "now", hidden=True), *body_pieces(event, cuts)]:
                assert piece.style in STYLE_NAMES, piece
    assert plain(body_pieces(thought, WHOLE)) == "thought: pondering\nanswer"
