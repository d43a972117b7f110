"""ctrl+c and copying: an answer can be selected and copied, or copied whole; ctrl+c stops a turn.

ctrl+c copies what is selected (in the prompt, or on screen with the
mouse), else cancels the running turn as Escape does (as in Gemini CLI and
Claude Code), else says how to quit, once however often it is pressed. A
finished answer (Rich's Markdown in one widget) took no selection before;
"Copy last answer" (palette, ctrl+s) copies the newest turn's answer whole.
"""

from __future__ import annotations

from pathlib import Path

from google import genai
from helpers.ui_kit import build, run_command, send, settle, wait_until
from textual.pilot import Pilot

from koroku_tui.fake_gemini import FakeGemini, Hang, call_reply, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.answer import AnswerBlock, AnswerPiece
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.rewind import RewindScreen
from koroku_tui.ui.main.transcript import Transcript

ANSWER = "Forty-two is **the answer**.\n\n- one item\n- two `code` items\n\nLast 日本語 line."


async def answered(pilot: Pilot[None], app: KorokuApp, fake: FakeGemini, *replies: str) -> None:
    for n, reply in enumerate(replies):
        fake.add(text_reply(reply))
        await settle(pilot, app)
        await send(pilot, app, f"question {n}")
        await settle(pilot, app)


async def drag(
    pilot: Pilot[None], piece: AnswerPiece, start: tuple[int, int], end: tuple[int, int]
) -> None:
    """Select from ``start`` to ``end`` (columns, lines in ``piece``) with the mouse."""
    await pilot.mouse_down(piece, offset=start)
    await pilot.hover(piece, offset=end)
    await pilot.mouse_up(piece, offset=end)
    await pilot.pause()


def quit_notices(app: KorokuApp) -> list[str]:
    return [n.message for n in app._notifications if "to quit" in n.message]


async def test_text_of_a_finished_answer_is_selected_highlighted_and_copied(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await answered(pilot, app, fake, ANSWER)
        piece = app.query_one(AnswerPiece)
        last = piece.region.height - 1  # "Last 日本語 line."
        await drag(pilot, piece, (6, 0), (8, last))
        assert app.screen.get_selected_text() == (
            "two is the answer.\n\n • one item\n • two code items\n\nLast 日本語"
        )
        # Drawn highlighted: the selection's background, the text's own colour kept.
        line = piece.render_line(last)
        assert line.text.startswith("Last 日本語 line.")
        styles = [seg.style for seg in line if seg.text.strip()]
        assert styles[0] is not None and styles[-1] is not None
        assert styles[0].bgcolor != styles[-1].bgcolor  # "Last 日本語" lit, " line." not
        assert styles[0].color == styles[-1].color
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert (
            app.clipboard == "two is the answer.\n\n • one item\n • two code items\n\nLast 日本語"
        )


async def test_copy_last_answer_takes_the_newest_turns_text_whole(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("oat milk\n")
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await answered(pilot, app, fake, "An old answer.")
        fake.add(
            call_reply(("read_file", {"path": "notes.txt"})),
            text_reply("It says \x1b[31moat milk\x1b[0m."),
        )
        await send(pilot, app, "what is in notes.txt?")
        await settle(pilot, app)
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert app.clipboard == "It says oat milk."  # escape sequences removed, as shown
        assert any(
            "Copied the last answer (17 characters)" in n.message for n in app._notifications
        )


async def test_copy_last_answer_is_in_the_palette_and_says_when_there_is_none(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert app.clipboard == ""
        assert any(n.message == "There is no answer to copy yet." for n in app._notifications)
        await answered(pilot, app, fake, "First.", "Second, **bold**.")
        await run_command(pilot, app, "copy last", "Copy last answer")
        await settle(pilot, app)
        assert app.clipboard == "Second, **bold**."  # the Markdown as written


async def test_copy_last_answer_while_a_turn_runs_takes_the_answer_before_it(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await answered(pilot, app, fake, "The answer before.")
        fake.add(Hang(), text_reply("Not asked for."))
        await send(pilot, app, "hang please")
        await wait_until(pilot, lambda: fake.pending == 1, "the request reaching the model")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.clipboard != "", "the copy")
        assert app.clipboard == "The answer before."
        await pilot.press("escape")
        await settle(pilot, app)


async def test_ctrl_c_cancels_a_running_turn_as_escape_does(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(Hang(), text_reply("Back again."))
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hang please")
        await wait_until(pilot, lambda: fake.pending == 1, "the request reaching the model")
        assert app.running
        await pilot.press("ctrl+c")
        await settle(pilot, app)
        assert not app.running
        assert quit_notices(app) == []  # it stopped the turn: no "how to quit"
        assert not isinstance(app.screen, RewindScreen)
        await send(pilot, app, "again")
        await settle(pilot, app)
        assert len(fake.generate_requests) == 2


async def test_ctrl_c_copies_a_selection_in_the_prompt_without_cancelling(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(Hang(), text_reply("Not asked for."))
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "hang please")
        await wait_until(pilot, lambda: fake.pending == 1, "the request reaching the model")
        prompt = app.query_one(Prompt)
        prompt.text = "keep this draft"
        prompt.select_all()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "keep this draft"
        assert app.running  # copying is not cancelling
        await pilot.press("escape")
        await settle(pilot, app)


async def test_ctrl_c_says_how_to_quit_once_however_often_it_is_pressed(
    client: genai.Client, tmp_path: Path
) -> None:
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+c", "ctrl+c", "ctrl+c")
        await wait_until(pilot, lambda: bool(app.query("Toast")), "the toast showing")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert quit_notices(app) == ["Press ctrl+q to quit."]
        assert len(app.query("Toast")) == 1
        app.clear_notifications()  # dismissed (or timed out): the next press says it again
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: quit_notices(app) != [], "the notice again")
        assert quit_notices(app) == ["Press ctrl+q to quit."]


async def test_a_selection_in_the_answer_being_written_stays_on_its_text(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Text selected while the answer streams is what ctrl+c copies, once more arrived too.

    When a finished stretch of the live text was set apart, the selection
    stayed at the same place in the live piece, now showing later text:
    the highlight jumped and ctrl+c copied words the user never selected.
    """
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 60)) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        await transcript.add_text("Alpha " + "lorem ipsum " * 140 + "\n\n")
        await settle(pilot, app)
        await drag(pilot, app.query(AnswerPiece).last(), (0, 5), (30, 6))
        selected = app.screen.get_selected_text()
        assert selected is not None and selected.startswith("ipsum lorem")
        await transcript.add_text("Bravo, a second paragraph." + " bravo words" * 50)
        await settle(pilot, app)
        assert len(app.query(AnswerPiece)) == 2  # the first paragraph is set apart
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == selected


async def copy_rows(pilot: Pilot[None], app: KorokuApp, top: float, row: int) -> str | None:
    """Scroll the transcript to ``top``, select from two lines above ``row`` to it, and copy."""
    transcript = app.query_one(Transcript)
    transcript.scroll_to(y=top, animate=False, immediate=True)
    await pilot.pause()
    await pilot.mouse_down(transcript, offset=(2, row - 2))
    await pilot.hover(transcript, offset=(12, row))
    await pilot.mouse_up(transcript, offset=(12, row))
    await pilot.press("ctrl+c")
    await pilot.pause()
    return app.clipboard


async def test_a_selection_across_two_pieces_copies_the_blank_line_between_them(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """What ctrl+c copies across a cut is what it copies there after a restart (one piece).

    The blank line between two pieces is the first one's margin, outside its
    text: copied, the two pieces' lines were glued together.
    """
    answer = "".join(f"Paragraph {n} " + "words " * 200 + "\n\n" for n in range(6))
    fake.add(text_reply(answer, pieces=60))
    app = build(tmp_path, client)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "explain")
        await settle(pilot, app)
        block = app.query(AnswerBlock).last()
        await wait_until(pilot, lambda: not block.guessing, "every piece drawn")
        assert len(block.query_children(AnswerPiece)) > 2
        cut = next(p for p in app.query(AnswerPiece) if p.source.startswith("Paragraph 2"))
        transcript = app.query_one(Transcript)
        transcript.scroll_to_widget(cut, animate=False, immediate=True, top=True)
        await pilot.pause()
        # The cut five lines down the view; the same place after the restart.
        top, row = transcript.scroll_y - 5, cut.region.y - transcript.region.y + 5
        live = await copy_rows(pilot, app, top, row)
    again = build(tmp_path, client)
    async with again.run_test(size=(100, 40)) as pilot:
        await settle(pilot, again)
        assert len(again.query(AnswerPiece)) == 1  # a restart shows the answer as one piece
        replayed = await copy_rows(pilot, again, top, row)
    assert live is not None and live.endswith("words\n\nParagraph 2")
    assert live == replayed
