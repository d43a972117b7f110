"""Only a key meant for the approval dialog answers it: the real app, SDK and fake model.

The prompt stays editable while a turn runs, so the dialog can open while
the user is typing their next message: "y" in it once allowed the command
and "a" allowed the tool for the rest of the session, unseen. Now the
dialog ignores keys and clicks until ``GRACE_SECONDS`` have passed since it
was drawn and since the last key it ignored, drops keys typed before it
was drawn, and "allow for session" takes a second, explained press.

No test sleeps: the grace is set high (or to 0, as for every other test)
with ``monkeypatch``, or keys are sent with the event time they were typed at.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import (
    asking,
    asking_to_run,
    build,
    first_frames,
    key_at,
    seed_session,
    send,
    settle,
    wait_for_approval,
)
from textual.widgets import Button, Static

from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.history import HistoryScreen, OpenSession
from koroku_tui.ui.main.approval import IGNORED_NOTICE, ApprovalScreen
from koroku_tui.ui.main.prompt import Prompt

COMMAND = {"command": "touch PWNED"}
FOREVER = 3_600.0


def grace(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    monkeypatch.setattr(ApprovalScreen, "GRACE_SECONDS", seconds)


def shown(dialog: ApprovalScreen, widget_id: str) -> str:
    return str(dialog.query_one(f"#{widget_id}", Static).render())


def nothing_ran(app: KorokuApp, tmp_path: Path) -> bool:
    return (
        isinstance(app.screen, ApprovalScreen)
        and not (tmp_path / "PWNED").exists()
        and app.agent is not None
        and not app.agent.tool_settings.session_allowed
    )


async def test_typing_ahead_into_the_dialog_approves_nothing(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user types their next message; the dialog opens mid-word and takes none of it."""
    grace(monkeypatch, FOREVER)
    fake.add(call_reply(("run_command", COMMAND)), text_reply("Done."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "list the files")
        app.query_one(Prompt).focus()
        typed = 0
        while not isinstance(app.screen, ApprovalScreen) and typed < 500:
            await pilot.press("y" if typed % 2 else "a")
            typed += 1
        dialog = await wait_for_approval(pilot, app)
        for key in ["y", "a", "a", "y", "enter", "space", "n"]:
            await pilot.press(key)
        await pilot.click("#allow_once")
        await pilot.click("#allow_session")
        assert nothing_ran(app, tmp_path)
        assert dialog.ignored_keys == 9 and not dialog.confirming_session
        assert shown(dialog, "approval-ignored") == IGNORED_NOTICE
        # Once the user stops to read (here: the grace is over), keys count.
        grace(monkeypatch, 0)
        await pilot.press("n")
        await settle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
        assert not (tmp_path / "PWNED").exists()


async def test_steady_typing_never_gets_through_and_keys_typed_before_it_showed_are_dropped(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the real 0.6 s: each ignored key restarts the wait, so a typist never answers."""
    grace(monkeypatch, 0.6)
    async with asking_to_run(
        fake, client, tmp_path, COMMAND["command"], request="list the files", then="Done."
    ) as (pilot, app, dialog):
        shown_at = dialog.displayed_at
        assert shown_at is not None
        # Typed before it was drawn (queued while the app was busy), then at
        # 2-5 keys a second for 2.5 s: far past 0.6 s after it was drawn.
        for key, after in [("y", -0.3), ("a", -0.01), ("y", 0.1), ("a", 0.5), ("a", 1.0)]:
            await key_at(pilot, app, key, shown_at + after)
        for key, after in [("y", 1.5), ("a", 2.0), ("y", 2.5)]:
            await key_at(pilot, app, key, shown_at + after)
        assert nothing_ran(app, tmp_path)
        assert dialog.ignored_keys == 8
        # A pause longer than the grace, then a key: it counts.
        await key_at(pilot, app, "y", shown_at + 3.2)
        await settle(pilot, app)
        assert (tmp_path / "PWNED").exists()
        assert app.agent is not None
        assert not app.agent.tool_settings.session_allowed


async def test_without_grace_a_key_pressed_once_the_dialog_is_on_the_terminal_counts(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a script does (``KOROKU_APPROVAL_GRACE=0``): wait for the dialog, press y."""
    shown_at = first_frames(monkeypatch)
    async with asking(
        fake,
        client,
        tmp_path,
        ("run_command", COMMAND),
        request="list the files",
        then="Done.",
    ) as (pilot, app, dialog):
        await key_at(pilot, app, "y", shown_at[dialog])
        await settle(pilot, app)
        assert dialog.ignored_keys == 0
        assert (tmp_path / "PWNED").exists()


async def test_a_key_typed_before_the_dialog_was_drawn_is_dropped_even_without_grace(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    async with asking_to_run(
        fake, client, tmp_path, COMMAND["command"], request="list the files", then="Done."
    ) as (pilot, app, dialog):
        assert dialog.displayed_at is not None
        await key_at(pilot, app, "y", dialog.displayed_at - 0.001)
        assert nothing_ran(app, tmp_path)
        assert dialog.ignored_keys == 1
        await pilot.press("n")
        await settle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
        assert not (tmp_path / "PWNED").exists()


async def test_allow_for_session_takes_a_second_explained_press(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.add(
        call_reply(("run_command", COMMAND)),
        call_reply(("run_command", {"command": "touch AGAIN"})),
        text_reply("Done."),
    )
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "touch two files")
        dialog = await wait_for_approval(pilot, app)
        await pilot.press("a")
        # One "a": a question, not a permission.
        assert nothing_ran(app, tmp_path) and dialog.confirming_session
        question = shown(dialog, "approval-session")
        assert question.startswith("Allow run_command for the rest of this session?")
        assert "Every later run_command call, whatever it does, will then run" in question
        assert "Press a again to confirm" in question
        assert str(dialog.query_one("#allow_session", Button).label) == (
            "Yes, allow for session [a]"
        )
        # A doubled "a" is one press: within the grace the second is ignored.
        grace(monkeypatch, FOREVER)
        await pilot.press("a")
        assert nothing_ran(app, tmp_path)
        grace(monkeypatch, 0)
        await pilot.press("a")
        await settle(pilot, app)
        # Confirmed: this call ran, and the next one did without a dialog.
        assert (tmp_path / "PWNED").exists() and (tmp_path / "AGAIN").exists()
        assert app.agent is not None
        assert app.agent.tool_settings.session_allowed == {"run_command"}


@pytest.mark.parametrize("answer", ["n", "y"])
async def test_a_single_stray_a_then_another_answer_gives_no_session_permission(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, answer: str
) -> None:
    async with asking_to_run(
        fake, client, tmp_path, COMMAND["command"], request="list the files", then="Done."
    ) as (pilot, app, _):
        await pilot.press("a", answer)
        await settle(pilot, app)
        assert not isinstance(app.screen, ApprovalScreen)
        assert (tmp_path / "PWNED").exists() is (answer == "y")
        assert app.agent is not None
        assert not app.agent.tool_settings.session_allowed


async def test_clicking_allow_for_session_also_asks_first(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    async with asking_to_run(
        fake, client, tmp_path, COMMAND["command"], request="list the files", then="Done."
    ) as (pilot, app, dialog):
        await pilot.click("#allow_session")
        await pilot.pause()
        assert nothing_ran(app, tmp_path) and dialog.confirming_session
        button = dialog.query_one("#allow_session", Button)
        while button.has_class("-active"):  # Textual ignores clicks on a button still "pressed"
            await pilot.pause(0.02)
        await pilot.click("#allow_session")
        await settle(pilot, app)
        assert (tmp_path / "PWNED").exists()
        assert app.agent is not None
        assert app.agent.tool_settings.session_allowed == {"run_command"}


@pytest.mark.parametrize("leave", ["new session", "switch session"])
async def test_allow_for_session_ends_with_the_session(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, leave: str
) -> None:
    """A tool allowed for one session asks again in a new one (ctrl+l) or another one."""
    await seed_session(tmp_path, 1)  # session 1, to switch back to
    fake.add(
        call_reply(("run_command", {"command": "touch FIRST"})),
        text_reply("Done."),
        call_reply(("run_command", {"command": "touch SECOND"})),
        text_reply("Ok."),
    )
    app = build(tmp_path, client, new_session=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "touch one file")
        await wait_for_approval(pilot, app)
        await pilot.press("a", "a")
        await settle(pilot, app)
        assert (tmp_path / "FIRST").exists()
        if leave == "new session":
            await pilot.press("ctrl+l")
        else:
            await pilot.press("ctrl+r")
            await pilot.pause()
            assert isinstance(app.screen, HistoryScreen)
            app.screen.dismiss(OpenSession(1))
        await settle(pilot, app)
        await send(pilot, app, "touch another")
        await wait_for_approval(pilot, app)  # asked again, not allowed silently
        assert not (tmp_path / "SECOND").exists()
        await pilot.press("n")
        await settle(pilot, app)
        assert not (tmp_path / "SECOND").exists()
