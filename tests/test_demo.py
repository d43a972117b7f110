"""The ``--demo`` mode: the full app against the scripted fake Gemini, no API key.

(No test here has Gemini credentials: the conftest strips them for every test.)
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

from helpers.ui_kit import plain, send, settle, texts, wait_for_approval
from textual.pilot import Pilot

from koroku_tui.config.settings import Settings
from koroku_tui.events import SessionEvent, TextPart
from koroku_tui.modes.demo import DEMO_DIRNAME, OPENING_MESSAGE, DemoRun, demo_app
from koroku_tui.modes.demo.recall_scene import EARLIER_TITLE, seed_earlier_session
from koroku_tui.store import SessionManager
from koroku_tui.ui.main.blocks import AnswerBlock, CompactionBlock, ToolRow, UserBlock
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.sidebar import ToolSidebar

SIZE = (120, 40)


async def wait_for(pilot: Pilot[None], check: Callable[[], bool]) -> None:
    """Poll ``check`` while the app runs; a hang fails the test instead of blocking it."""
    async with asyncio.timeout(10):
        while not check():
            await pilot.pause(0.02)


async def opened(pilot: Pilot[None], demo: DemoRun) -> None:
    """Wait for start-up, send the suggested opening and wait for the greeting to finish."""
    app = demo.app
    await app.ready.wait()
    prompt = app.query_one(Prompt)
    await wait_for(pilot, lambda: prompt.text == OPENING_MESSAGE)
    prompt.focus()
    await pilot.press("enter")
    await wait_for(pilot, lambda: bool(texts(app, UserBlock)))
    await settle(pilot, app)


async def test_demo_starts_without_a_key_and_streams_the_greeting(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    async with demo_app(settings) as demo:  # real pace: the greeting streams in pieces
        app = demo.app
        assert demo.settings.home == tmp_path / DEMO_DIRNAME
        async with app.run_test(size=SIZE) as pilot:
            await app.ready.wait()
            assert app.agent is not None
            await wait_for(pilot, lambda: app.query_one(Prompt).text == OPENING_MESSAGE)
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.running)
            await wait_for(pilot, lambda: "Welcome" in "".join(texts(app, AnswerBlock)))
            assert app.running  # still streaming when the first words are shown
            await settle(pilot, app)
            assert texts(app, UserBlock) == [OPENING_MESSAGE]
            answer = texts(app, AnswerBlock)[-1]
            assert "Welcome to the Koroku demo" in answer and "run the tests" in answer
            assert "offline demo" in app.sub_title
        stream = demo.fake.requests_for("streamGenerateContent")
        assert len(stream) == 1 and stream[0].api_key == "demo"
        assert stream[0].status == 200
    assert (tmp_path / DEMO_DIRNAME / "koroku.db").exists()
    assert not (tmp_path / "koroku.db").exists()  # real conversations are untouched
    assert not demo.workspace.exists()  # the scratch folder is removed


async def test_files_turn_lists_and_reads_real_files(tmp_path: Path) -> None:
    async with demo_app(Settings(home=tmp_path), pace=0) as demo:
        app = demo.app
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, demo)
            await send(pilot, app, "show me the files")
            await settle(pilot, app)
            rows = app.query_one(ToolSidebar).rows()
            assert [(r[0], r[1]) for r in rows] == [
                ("✓", "list_directory"),
                ("✓", "read_file"),
                ("✓", "read_file"),
            ]
            assert all(row.startswith("✓") for row in texts(app, ToolRow))
            answer = texts(app, AnswerBlock)[-1]
            assert "notes.md" in answer and "todo.txt" in answer
            assert "2 open to-do items" in answer  # read from the real file


async def test_run_the_tests_asks_approval_and_shows_real_output(tmp_path: Path) -> None:
    async with demo_app(Settings(home=tmp_path), pace=0) as demo:
        app = demo.app
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, demo)
            await send(pilot, app, "run the tests")
            dialog = await wait_for_approval(pilot, app)
            assert dialog.request.tool_name == "run_command"
            await pilot.press("y")
            await settle(pilot, app)
            assert app.query_one(ToolSidebar).rows()[0][:2] == ("✓", "run_command")
            answer = texts(app, AnswerBlock)[-1]
            assert "exit code 0" in answer
            assert "test_todo_has_open_items" in answer  # unittest -v's real output
            assert "OK" in answer


async def test_loop_turn_ends_at_the_guardrail(tmp_path: Path) -> None:
    async with demo_app(Settings(home=tmp_path), pace=0) as demo:
        app = demo.app
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, demo)
            before = len(demo.fake.generate_requests)
            await send(pilot, app, "loop")
            await settle(pilot, app)
            turn = demo.fake.generate_requests[before:]
            assert len(turn) == 16
            assert all(r.status == 200 for r in turn)
            assert ["tools" in r.body for r in turn] == [True] * 15 + [False]
            assert app.query_one(ToolSidebar).row_count == 15
            answer = texts(app, AnswerBlock)[-1]
            assert "15 tool calls" in answer
            assert answer.rstrip().endswith("?")  # it asks the user how to go on


async def test_ctrl_o_compacts_and_writes_the_memory_line(tmp_path: Path) -> None:
    async with demo_app(Settings(home=tmp_path), pace=0) as demo:
        app = demo.app
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, demo)
            await send(pilot, app, "tell me a story")
            await settle(pilot, app)
            assert "## You said" not in texts(app, AnswerBlock)[-1]  # rendered Markdown
            assert "tell me a story" in texts(app, AnswerBlock)[-1]
            await pilot.press("ctrl+o")
            await settle(pilot, app)
            markers = app.query(CompactionBlock)
            assert len(markers) == 1
            await pilot.click(CompactionBlock)  # open it
            assert OPENING_MESSAGE in plain(markers.first())
        compaction = [r for r in demo.fake.generate_requests if r.model == "demo-summariser"]
        assert len(compaction) == 1 and compaction[0].status == 200
    memory = list((tmp_path / DEMO_DIRNAME / "memory").glob("*.md"))
    assert len(memory) == 1
    assert OPENING_MESSAGE in memory[0].read_text()


async def test_denied_command_does_not_run(tmp_path: Path) -> None:
    async with demo_app(Settings(home=tmp_path), pace=0) as demo:
        app = demo.app
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, demo)
            await send(pilot, app, "run `touch made-by-demo.txt`")
            await wait_for_approval(pilot, app)
            await pilot.press("n")
            await settle(pilot, app)
            assert not (demo.workspace / "made-by-demo.txt").exists()
            assert app.query_one(ToolSidebar).rows()[0][:2] == (
                "⊘",
                "run_command",
            )  # denied: by choice, not a failure
            assert "Nothing ran" in texts(app, AnswerBlock)[-1]


async def test_context_fills_up_and_compacts_by_itself(tmp_path: Path) -> None:
    async with demo_app(Settings(home=tmp_path), pace=0) as demo:
        app = demo.app
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, demo)
            assert app.agent is not None
            used = [app.agent.budget.tokens_used]
            for n in range(6):
                await send(pilot, app, f"message number {n}")
                await settle(pilot, app)
                used.append(app.agent.budget.tokens_used)
                if app.query(CompactionBlock):
                    break
            assert len(app.query(CompactionBlock)) == 1
            assert used[-1] < used[-2]  # the summary replaced the older turns
            assert used[:-1] == sorted(used[:-1])  # the gauge only grew before that


async def test_recall_scene_searches_reads_and_cites_the_earlier_session(tmp_path: Path) -> None:
    async with demo_app(Settings(home=tmp_path), pace=0) as demo:
        app = demo.app
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, demo)
            await send(pilot, app, "What did we decide about the backup script last time?")
            await settle(pilot, app)
            rows = texts(app, ToolRow)
            assert re.fullmatch(r'✓ search_history "backup script" · \d+ match(es)?', rows[0])
            assert rows[1].startswith('✓ read_session {"session_id": 1, "around_message_id": ')
            answer = texts(app, AnswerBlock)[-1]
            assert "From session 1:" in answer  # the earlier demo session, seeded first
            assert "runs every night at 02:00" in answer and "30 daily snapshots" in answer
        # What the model read came from the tools, in the requests it received.
        last = demo.fake.requests_for("streamGenerateContent")[-1]
        sent = str(last.contents[-1])
        assert "Decided: the backup script runs every night" in sent and "#4 model" in sent
    # A second demo run finds the earlier session there already: not stored twice.
    async with demo_app(Settings(home=tmp_path), pace=0, opening=None) as demo:
        pass
    async with SessionManager(demo.settings.database_path) as store:
        assert [s.title for s in await store.list_sessions()].count(EARLIER_TITLE) == 1


async def test_the_greeting_names_the_recall_scene(tmp_path: Path) -> None:
    async with demo_app(Settings(home=tmp_path), pace=0) as demo:
        app = demo.app
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, demo)
            assert "backup script last time" in texts(app, AnswerBlock)[-1]


async def test_the_earlier_session_comes_back_after_the_user_deleted_it(tmp_path: Path) -> None:
    database = tmp_path / "koroku.db"
    assert await seed_earlier_session(database)
    async with SessionManager(database) as store:
        (seeded,) = [s for s in await store.list_sessions() if s.title == EARLIER_TITLE]
        await store.new_session()
        # What the files scene reads says "daily" too: that is not the seeded decision.
        note = "notes.md: one daily memory file, 30 snapshots"
        await store.add_message(SessionEvent(role="user", parts=[TextPart(text=note)]))
        await store.delete_session(seeded.id)
    assert await seed_earlier_session(database)
    assert not await seed_earlier_session(database)  # and only once


async def test_the_demo_sends_nothing_by_itself(tmp_path: Path) -> None:
    """It suggests its opening in the prompt; each start used to store one more session."""
    for _start in range(2):  # as `--demo` and `--demo --new` do: a new session each time
        await start_and_quit(tmp_path)
    async with SessionManager(tmp_path / DEMO_DIRNAME / "koroku.db") as store:
        assert [s.title for s in await store.list_sessions()] == [EARLIER_TITLE]


async def start_and_quit(home: Path) -> None:
    """Start the demo, check that it only suggests its opening, and quit."""
    async with demo_app(Settings(home=home), pace=0) as demo:
        app = demo.app
        async with app.run_test(size=SIZE) as pilot:
            await app.ready.wait()
            prompt = app.query_one(Prompt)
            await wait_for(pilot, lambda: prompt.text == OPENING_MESSAGE)
            await settle(pilot, app)
            assert prompt.selected_text == OPENING_MESSAGE  # typing replaces it
            assert texts(app, UserBlock) == [] and not app.running
        assert demo.fake.generate_requests == []


async def test_the_first_message_of_a_new_session_is_echoed_not_welcomed(tmp_path: Path) -> None:
    async with demo_app(Settings(home=tmp_path), pace=0) as demo:
        app = demo.app
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot, demo)
            assert "Welcome to the Koroku demo" in texts(app, AnswerBlock)[-1]
            await pilot.press("ctrl+l")  # a new session
            await settle(pilot, app)
            await send(pilot, app, "banana bread recipe")
            await settle(pilot, app)
            assert texts(app, UserBlock) == ["banana bread recipe"]
            [answer] = texts(app, AnswerBlock)
            assert "banana bread recipe" in answer and "Welcome" not in answer
            await send(pilot, app, "hello again")  # a greeting still gets the welcome
            await settle(pilot, app)
            assert "Welcome to the Koroku demo" in texts(app, AnswerBlock)[-1]
