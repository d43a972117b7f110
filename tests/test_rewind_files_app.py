"""Rewind and fork with files in the app: Pilot, the real agent, the fake Gemini, SQLite.

The rewind list's choice is followed by "conversation only / conversation and
files" (naming the turns that ran commands, from the tools' specs); a file
the user changed since Koroku wrote it is asked about with its diff; the
palette's "Undo file restore" puts back what the restore replaced; a fork
can start with the files of its fork point.
"""

from __future__ import annotations

from pathlib import Path

from google import genai
from helpers.rewind_kit import writes
from helpers.ui_kit import build, run_command, send, settle, wait_until
from textual.pilot import Pilot
from textual.widgets import Static

from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.history.dialogs import ConfirmDialog
from koroku_tui.ui.main.file_restoring import RestoreChoice
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.rewind import RewindScreen


def app_in(tmp_path: Path, client: genai.Client) -> tuple[KorokuApp, Path]:
    """The app on a workspace ``tmp_path/ws``, tools allowed, dialogs without grace."""
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = Settings(home=tmp_path / "home", approval_grace=0)
    return build(tmp_path, client, settings=settings, workspace=ws, auto_approve=True), ws


async def turn(pilot: Pilot[None], app: KorokuApp, text: str) -> None:
    await send(pilot, app, text)
    await settle(pilot, app)


async def choose_in_list(pilot: Pilot[None], app: KorokuApp, *keys: str) -> RestoreChoice:
    """Escape twice, then ``keys`` in the rewind list; the files question it opens."""
    app.query_one(Prompt).focus()
    await pilot.press("escape", "escape")
    await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen), "the rewind list")
    await pilot.press(*keys)
    await wait_until(pilot, lambda: isinstance(app.screen, RestoreChoice), "the files question")
    assert isinstance(app.screen, RestoreChoice)
    return app.screen


def shown(screen: RestoreChoice, widget_id: str) -> str:
    return str(screen.query_one(f"#{widget_id}", Static).render())


def question_drawn(app: KorokuApp) -> bool:
    """The file question is on screen: a key pressed before it was drawn is dropped (on
    purpose: it was not typed at the question), and its worker would wait forever."""
    return isinstance(app.screen, ConfirmDialog) and app.screen.grace.drawn_at is not None


async def test_rewind_with_files_asks_about_a_changed_file_with_its_diff(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app, ws = app_in(tmp_path, client)
    (ws / "mine.txt").write_text("m1\n")
    (ws / "keep.txt").write_text("k1\n")
    writes(fake, ("mine.txt", "m2\n"), ("keep.txt", "k2\n"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await turn(pilot, app, "edit")
        (ws / "mine.txt").write_text("changed by hand\n")
        choice = await choose_in_list(pilot, app, "enter")
        assert "mine.txt, keep.txt" in shown(choice, "restore-files")
        assert "Changed since Koroku wrote them (you are asked about each): mine.txt" in (
            shown(choice, "restore-files")
        )
        await pilot.press("f")
        await wait_until(pilot, lambda: question_drawn(app), "the question")
        question = str(app.screen.query_one(Static).render())
        assert "mine.txt was changed since Koroku wrote it." in question
        assert "-changed by hand" in question.splitlines() and "+m1" in question.splitlines()
        await pilot.press("n")
        await settle(pilot, app)
        assert (ws / "keep.txt").read_text() == "k1\n"
        assert (ws / "mine.txt").read_text() == "changed by hand\n"
        notes = [n.message for n in app._notifications]
        assert any(
            "mine.txt was changed since Koroku wrote it, so it was not restored." in n
            for n in notes
        )
        # Undo: the palette puts back what the restore replaced.
        await run_command(pilot, app, "undo file", "Undo file restore")
        await settle(pilot, app)
        assert (ws / "keep.txt").read_text() == "k2\n"


async def test_the_question_names_the_turns_that_ran_commands(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app, _ws = app_in(tmp_path, client)
    fake.add(call_reply(("run_command", {"command": "true"})), text_reply("Ran."))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await turn(pilot, app, "build it")
        choice = await choose_in_list(pilot, app, "enter")
        said = shown(choice, "restore-commands")
        assert said.startswith("These turns ran commands, whose changes cannot be put back: #")
        assert said.endswith("build it")
        await pilot.press("c")
        await settle(pilot, app)
        assert app.query_one(Prompt).text == "build it"  # rewound, conversation only


async def test_fork_with_files_starts_with_the_files_of_the_fork_point(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    app, ws = app_in(tmp_path, client)
    (ws / "a.txt").write_text("a1")
    writes(fake, ("a.txt", "a2"), ("b.txt", "b"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await turn(pilot, app, "edit")
        await choose_in_list(pilot, app, "f")
        await pilot.press("f")
        await settle(pilot, app)
        assert app.store is not None and app.store.session_id == 2
    assert (ws / "a.txt").read_text() == "a1"
    assert not (ws / "b.txt").exists()


async def test_many_changed_files_are_counted_and_escape_keeps_the_rest(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Twelve files changed by hand: the question names eight and counts the rest, each
    question says which it is, and escape keeps it and all the others, unasked."""
    app, ws = app_in(tmp_path, client)
    names = [f"f{number:02}.txt" for number in range(12)]
    writes(fake, *[(name, "koroku's\n") for name in names])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await turn(pilot, app, "edit")
        for name in names:
            (ws / name).write_text("mine\n")
        choice = await choose_in_list(pilot, app, "enter")
        said = shown(choice, "restore-files")
        assert f"(you are asked about each): {', '.join(names[:8])} and 4 more." in said
        await pilot.press("f")
        await wait_until(pilot, lambda: question_drawn(app), "the question")
        question = str(app.screen.query_one(Static).render())
        assert question.startswith("1 of 12: f00.txt was changed since Koroku wrote it.")
        await pilot.press("escape")
        await settle(pilot, app)
        assert not isinstance(app.screen, ConfirmDialog)
        assert all((ws / name).read_text() == "mine\n" for name in names)
        toast = [n.message for n in app._notifications][-1]
        assert toast.startswith("Files: 0 files put back; 12 left as they are. f00.txt was")
        assert toast.count("was changed since Koroku wrote it") == 8
        assert toast.endswith(
            "f07.txt was changed since Koroku wrote it, so it was not "
            "restored. And 4 more left as they are."
        )


async def test_the_question_says_which_files_cannot_be_put_back(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """A file replaced by a link to a system file is not offered as "put back"."""
    app, ws = app_in(tmp_path, client)
    (ws / "passwd").write_text("p1\n")
    writes(fake, ("passwd", "p2\n"), ("ok.txt", "o\n"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await turn(pilot, app, "edit")
        (ws / "passwd").unlink()
        (ws / "passwd").symlink_to("/etc/passwd")
        said = shown(await choose_in_list(pilot, app, "enter"), "restore-files")
        assert said == (
            "Files these turns wrote (put back as they were): ok.txt. These turns wrote files "
            "that cannot be put back now (a link, a folder...: each is said after): passwd."
        )
        await pilot.press("f")
        await settle(pilot, app)
    assert (ws / "passwd").is_symlink() and not (ws / "ok.txt").exists()
