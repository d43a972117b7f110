"""The TUI says under an answer that Gemini cut it, and why."""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import build, plain, send, settle
from hostile.finish_reasons import CUT_REASONS

from koroku_tui.fake_gemini import FakeGemini, blocked_prompt, text_reply, thoughts_only
from koroku_tui.ui.main.blocks import AnswerBlock, ErrorBlock, NoticeBlock, ThoughtBlock, UserBlock
from koroku_tui.ui.main.transcript import Transcript


def shown(app_transcript: Transcript) -> list[tuple[str, str]]:
    """Each block of the transcript as (kind, text), top to bottom."""
    return [(type(block).__name__, plain(block).strip()) for block in app_transcript.children]


@pytest.mark.parametrize(("reason", "words"), CUT_REASONS[:2])
async def test_a_cut_answer_has_a_notice_right_under_it(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, reason: str, words: str
) -> None:
    fake.add(text_reply("Here is the first half", pieces=3, finish_reason=reason))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "explain")
        await settle(pilot, app)
        blocks = shown(app.query_one(Transcript))
        assert blocks[-3:] == [
            ("UserBlock", "explain"),
            ("AnswerBlock", "Here is the first half"),
            ("NoticeBlock", f"The answer was cut off: {words}."),
        ]
        notice = app.query(NoticeBlock).last()
        assert notice.has_class("-cut") and notice.region.height >= 1  # on screen


async def test_only_thoughts_says_no_answer_came(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(thoughts_only("Considering...", finish_reason="MAX_TOKENS"))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hard question")
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        assert [type(b) for b in transcript.children][-3:] == [UserBlock, ThoughtBlock, NoticeBlock]
        assert plain(transcript.children[-1]).strip() == (
            "The answer was cut off before any text: token limit."
        )
        assert not app.query(AnswerBlock)


async def test_a_whole_answer_has_no_notice(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply("All of it."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hi")
        await settle(pilot, app)
        assert not app.query(NoticeBlock)


async def test_a_blocked_prompt_is_said_in_the_transcript(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(blocked_prompt("SAFETY"))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "refused")
        await settle(pilot, app)
        assert [plain(b).strip() for b in app.query(ErrorBlock)] == [
            "Gemini blocked your message and gave no answer (safety filter); "
            "rephrase it and send it again."
        ]


async def test_the_notice_is_still_there_after_a_restart(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(text_reply("Here is the first half", finish_reason="MAX_TOKENS"))
    fake.add(thoughts_only("Considering...", finish_reason="SAFETY"))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "explain")
        await settle(pilot, app)
        await send(pilot, app, "and?")
        await settle(pilot, app)
        live = shown(app.query_one(Transcript))
    again = build(tmp_path, client)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        replayed = shown(again.query_one(Transcript))
    notices = [text for kind, text in replayed if kind == "NoticeBlock"]
    assert notices == [
        "The answer was cut off: token limit.",
        "The answer was cut off before any text: safety filter.",
    ]
    assert [kind for kind, _ in replayed] == [kind for kind, _ in live[-len(replayed) :]]
