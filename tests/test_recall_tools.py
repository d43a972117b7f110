"""Total recall: search_history and read_session, alone and in a real ``--print`` turn.

Real SQLite in ``tmp_path`` through the real ``SessionManager``; the ``--print``
turn runs the installed command against the fake Gemini server.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from helpers.agent_kit import function_responses, open_agent
from helpers.events import model, user
from test_headless import run
from test_store_migrations import build_v2, seed_json

from koroku_tui.agent.instructions import system_instruction
from koroku_tui.agent.tools import (
    MAX_OUTPUT_CHARS,
    ToolRegistry,
    ToolResult,
    ToolSettings,
    default_registry,
)
from koroku_tui.events import FCMetadata, SessionEvent
from koroku_tui.events.reading import shorten
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.store import (
    SearchPage,
    SessionExcerpt,
    SessionInfo,
    SessionManager,
    StoredMessage,
)
from koroku_tui.text import recall
from koroku_tui.ui.history.message_text import HistoryMoment, message_text

ARGS = {"path": "x"}
PLANTED = "The staging backup server listens on port 7412; we agreed to keep it there."


async def plant_four_sessions(db: Path) -> dict[str, int]:
    """Four earlier sessions; the second holds the planted fact. Returns the ids that matter."""
    store = SessionManager(db)
    await store.initialize()
    try:
        await store.add_message(user("Plan a trip to Kyoto in spring"))
        await store.add_message(model("Go in early April for the cherry blossoms."))
        second = await store.new_session()
        await store.add_message(user("Which port should the staging backup server use?"))
        fact = await store.add_message(model(PLANTED))
        await store.new_session()
        await store.add_message(user("Tidy up my shell aliases"))
        await store.add_message(model("Done: grouped by tool."))
        await store.new_session()
        await store.add_message(user("What is a good name for a cat?"))
        await store.add_message(model("Mochi."))
    finally:
        await store.close()
    return {"session": second.id, "fact": fact}


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SessionManager]:
    manager = SessionManager(tmp_path / "koroku.db")
    await manager.initialize()
    yield manager
    await manager.close()


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry()


async def call(
    registry: ToolRegistry, settings: ToolSettings, name: str, **args: Any
) -> ToolResult:
    return await registry.execute(types.FunctionCall(id="c1", name=name, args=args), settings)


# --- the done-when scenario ---------------------------------------------------


def test_print_turn_searches_reads_and_answers_from_three_sessions_back(
    fake: FakeGemini, tmp_path: Path
) -> None:

    ids = asyncio.run(plant_four_sessions(tmp_path / "koroku.db"))
    session, fact = ids["session"], ids["fact"]
    fake.add(
        call_reply(("search_history", {"query": "staging backup port"})),
        call_reply(("read_session", {"session_id": session, "around_message_id": fact})),
        text_reply(f"Port 7412, as decided in session {session}."),
    )
    done = run(fake, tmp_path, "--new", "--print", "Which port did we pick for staging backups?")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Port 7412, as decided in session {session}.\n"

    first = fake.generate_requests[0].body
    assert "search_history" in json.dumps(first["systemInstruction"])
    declared = first["tools"][0]["functionDeclarations"]
    assert {"search_history", "read_session", "read_memory"} <= {d["name"] for d in declared}
    # The search's answer reached the model: the hit names its session and message.
    searched = function_responses(fake, 1)[-1]
    assert searched["name"] == "search_history"
    found = searched["response"]["output"]
    matches = recall.matches_in(found)
    assert matches is not None and matches >= 1
    assert f'session {session} "Which port should the staging backup server use?"' in found
    assert f"message {fact}" in found
    assert f"{recall.MARK_START}backup{recall.MARK_END}" in found
    # Then the session three back, read around the hit, with the planted fact in it.
    read = function_responses(fake, 2)[-1]
    assert read["name"] == "read_session"
    text = read["response"]["output"]
    assert text.startswith(f'session {session} "Which port should')
    assert f"#{fact} model" in text and PLANTED in text
    assert "Kyoto" not in text and "Mochi" not in text
    # The new session (the fifth) is three sessions after the one answered from.
    assert session == 2


def test_the_system_instruction_asks_to_search_before_answering_about_the_past(
    tmp_path: Path,
) -> None:
    words = system_instruction(tmp_path / "memory", default_registry())
    for needed in ("search_history", "read_session", "read_memory", "session 12"):
        assert needed in words
    assert "search before answering" in words


# --- search_history ----------------------------------------------------------


def tool_result(name: str, args: dict[str, Any], output: str) -> SessionEvent:
    """The user event answering one call of ``name`` with ``output``."""
    content = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(name=name, response={"output": output})
            )
        ],
    )
    return SessionEvent.from_content(content, [FCMetadata(name=name, args=args)])


async def test_search_history_names_session_message_time_and_who_with_marked_matches(
    store: SessionManager, registry: ToolRegistry
) -> None:
    await store.rename_session(store.session_id, "Backup\u202e plans")
    asked = await store.add_message(user("How often should the backup script run?"))
    await store.add_message(model("Nightly; the backup\x1b[2J script keeps seven copies."))
    await store.new_session()
    await store.add_message(user("unrelated"))
    settings = ToolSettings(history=store)

    result = await call(registry, settings, "search_history", query="  backup\x00 ")
    assert result.error is None
    lines = (result.output or "").splitlines()
    assert lines[0] == recall.headline("backup", 2, 2)
    assert recall.matches_in(result.output or "") == 2
    when = datetime.fromtimestamp(time.time()).strftime("%d-%m-%Y")
    heading = next(line for line in lines if f"message {asked} " in line)
    assert heading.startswith('session 1 "Backup\\u202e plans" · ')
    assert f"· {when} " in heading and heading.endswith("(local time) · user")
    snippets = [line for line in lines if line.startswith("  ")]
    assert "  How often should the «backup» script run?" in snippets
    # Two matches one space apart stay one space apart (a phrase reads as written).
    both = await call(registry, settings, "search_history", query="backup script")
    assert "  How often should the «backup» «script» run?" in (both.output or "").splitlines()
    # The escape sequence the model once wrote is shown, never passed on raw.
    assert any("\\u001b[2J" in line for line in snippets)
    assert "\x1b" not in (result.output or "") and "\u202e" not in (result.output or "")
    assert lines[-1].startswith("To read more of a conversation, call read_session(session_id=1,")


async def test_search_history_with_no_hits_or_no_store_says_so(
    store: SessionManager, registry: ToolRegistry
) -> None:
    await store.add_message(user("hello there"))
    result = await call(registry, ToolSettings(history=store), "search_history", query="zebra")
    assert result.output == 'No past messages match "zebra".'
    alone = await call(registry, ToolSettings(), "search_history", query="zebra")
    assert alone.error == "Past conversations are not available in this session."
    unread = await call(registry, ToolSettings(), "read_session", session_id=1)
    assert unread.error == "Past conversations are not available in this session."


async def test_the_agent_gives_the_tools_its_store(fake: FakeGemini, tmp_path: Path) -> None:
    async with open_agent(fake, tmp_path) as agent:
        assert agent.tool_settings.history is agent.session_manager


# --- read_session ------------------------------------------------------------


async def test_read_session_reads_as_the_history_screen_with_results_shortened(
    store: SessionManager, registry: ToolRegistry
) -> None:
    session = store.session_id
    await store.add_message(user("read the log"))
    call_event = SessionEvent.from_content(
        types.Content(
            role="model",
            parts=[
                types.Part(function_call=types.FunctionCall(name="read_file", args={"path": "x"}))
            ],
        )
    )
    await store.add_message(call_event)
    huge = "z" * 5_000
    answered = await store.add_message(tool_result("read_file", {"path": "x"}, huge))
    await store.add_message(model("The log is all z."))
    await store.new_session()

    result = await call(registry, ToolSettings(history=store), "read_session", session_id=session)
    text = result.output or ""
    rows = await store.load_all(session)
    now = datetime.now().astimezone()
    for row in rows:
        # The history reader's words for the row: heading (but its date form) and body.
        screen = message_text(row, HistoryMoment(now), whole=True).plain
        heading, _, body = screen.partition("\n")
        # The user is "you" on screen and "user" to the model ("you" would be itself).
        assert heading.rsplit("  ", 1)[0].replace(" you", " user") in text
        if row.id != answered:
            assert body in text
    # The 5,000-character result is cut as in the compaction transcript, not shown whole.
    assert shorten(huge) in text and huge not in text
    assert '✓ read_file {"path": "x"}' in text
    assert text.index("read the log") < text.index("The log is all z.")
    assert "before:" not in text and "after:" not in text


async def test_read_session_says_how_to_page_to_older_messages(
    store: SessionManager, registry: ToolRegistry
) -> None:
    session = store.session_id
    ids = [await store.add_message(user(f"note number {n}")) for n in range(10)]
    result = await call(
        registry, ToolSettings(history=store), "read_session", session_id=session, limit=3
    )
    text = result.output or ""
    assert [f"#{i} user" in text for i in ids] == [False] * 7 + [True] * 3
    assert (
        f"before: older messages exist; to read them call "
        f"read_session(session_id={session}, around_message_id={ids[7]})"
    ) in text


async def test_read_session_says_how_to_page_to_newer_messages(registry: ToolRegistry) -> None:
    class Window:
        """A store answering with one fixed window that has newer rows after it."""

        async def search_history(self, query: str, limit: int = 10) -> SearchPage:
            return SearchPage([], 0)

        async def read_session(
            self, session_id: int, around_message_id: int | None = None, limit: int = 40
        ) -> SessionExcerpt:
            info = SessionInfo(session_id, None, 0.0, 0.0, 9, 0)
            rows = [StoredMessage(4, session_id, "session", 0.0, user("four"))]
            return SessionExcerpt(info, rows, more_before=False, more_after=True)

    result = await call(registry, ToolSettings(history=Window()), "read_session", session_id=7)
    text = result.output or ""
    assert text.startswith('session 7 "Untitled session" · 9 messages')
    assert text.endswith(
        "after: newer messages exist; to read them call "
        "read_session(session_id=7, around_message_id=4)"
    )


async def test_read_session_refuses_unknown_sessions_and_foreign_messages(
    store: SessionManager, registry: ToolRegistry
) -> None:
    first = store.session_id
    theirs = await store.add_message(user("in the first session"))
    await store.new_session()
    ours = await store.add_message(user("in the second session"))
    settings = ToolSettings(history=store)
    missing = await call(registry, settings, "read_session", session_id=999)
    assert missing.error == (
        "There is no session 999: use a session number that search_history gave (session N)."
    )
    foreign = await call(
        registry, settings, "read_session", session_id=store.session_id, around_message_id=theirs
    )
    assert foreign.error == (
        f"Message {theirs} is not in session {store.session_id}: use a message id that "
        "search_history gave for that session, or leave around_message_id out."
    )
    fine = await call(registry, settings, "read_session", session_id=first)
    assert "in the first session" in (fine.output or "")
    assert f"#{ours} " not in (fine.output or "")


async def test_a_session_in_the_trash_is_no_session_to_the_recall_tools(
    store: SessionManager, registry: ToolRegistry
) -> None:
    """The user deleted it: the model neither finds it nor reads it (until it is restored)."""
    deleted = store.session_id
    await store.add_message(user("the lighthouse keeper's name is Ada"))
    await store.new_session()
    await store.delete_session(deleted)
    settings = ToolSettings(history=store)
    searched = await call(registry, settings, "search_history", query="lighthouse keeper")
    assert searched.output == 'No past messages match "lighthouse keeper".'
    read = await call(registry, settings, "read_session", session_id=deleted)
    assert read.error == (
        f"There is no session {deleted}: use a session number that search_history gave (session N)."
    )
    await store.restore_session(deleted)
    read = await call(registry, settings, "read_session", session_id=deleted)
    assert "the lighthouse keeper's name is Ada" in (read.output or "")


# --- hostile inputs ----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("search_history", {"query": ""}, "The query is empty"),
        ("search_history", {"query": "\x00\x1b\u200b\t\n"}, "The query is empty"),
        ("search_history", {"query": "x" * 100_000}, "The query is 100,000 characters long"),
        ("search_history", {"query": 5}, "Invalid arguments for search_history"),
        ("search_history", {"query": "a", "limit": "many"}, "Invalid arguments"),
        ("read_session", {"session_id": 0}, "There is no session 0"),
        ("read_session", {"session_id": -1}, "There is no session -1"),
        ("read_session", {"session_id": 10**30}, "There is no session 1000000000000"),
        ("read_session", {"session_id": 2**63 - 1}, "There is no session"),
        ("read_session", {"session_id": "first"}, "Invalid arguments for read_session"),
        ("read_session", {"session_id": 1, "around_message_id": -5}, "Message -5 is not in"),
        ("read_session", {"session_id": 1, "around_message_id": 10**20}, "is not in session 1"),
        ("read_session", {}, "missing required argument 'session_id'"),
    ],
)
async def test_hostile_arguments_get_one_sentence(
    store: SessionManager, registry: ToolRegistry, name: str, args: dict[str, Any], expected: str
) -> None:
    await store.add_message(user("something to find"))
    result = await call(registry, ToolSettings(history=store), name, **args)
    assert result.error is not None and expected in result.error, result.error
    assert "Traceback" not in result.error and len(result.error) < 300
    assert len(result.error.splitlines()) == 1


@pytest.mark.parametrize(
    "query",
    ['"', 'backup" OR', "AND( NEAR/2 *", "-backup", "col:backup", "^backup*", "'", "(((", "ü ß"],
)
async def test_fts_syntax_in_a_query_is_just_text(
    store: SessionManager, registry: ToolRegistry, query: str
) -> None:
    await store.add_message(user("the backup script"))
    result = await call(registry, ToolSettings(history=store), "search_history", query=query)
    assert result.error is None, result.error
    assert recall.matches_in(result.output or "") is not None


@pytest.mark.parametrize(("limit", "used"), [(0, 1), (-5, 1), (10**9, 50), (3, 3)])
async def test_search_limits_are_kept_within_bounds_and_said(
    store: SessionManager, registry: ToolRegistry, limit: int, used: int
) -> None:
    for n in range(4):
        await store.add_message(user(f"backup number {n}"))
    await store.new_session()
    result = await call(
        registry, ToolSettings(history=store), "search_history", query="backup", limit=limit
    )
    text = result.output or ""
    assert text.count("\nsession ") == min(used, 4)
    note = f"(limit {limit} is outside 1 to 50; {used} was used.)"
    assert (note in text) == (limit != used)


@pytest.mark.parametrize(("limit", "shown"), [(0, 1), (-5, 1), (10**9, 12)])
async def test_read_limits_are_kept_within_bounds_and_said(
    store: SessionManager, registry: ToolRegistry, limit: int, shown: int
) -> None:
    session = store.session_id
    for n in range(12):
        await store.add_message(user(f"line {n}"))
    result = await call(
        registry, ToolSettings(history=store), "read_session", session_id=session, limit=limit
    )
    text = result.output or ""
    assert text.count(" user  ") == shown
    assert f"(limit {limit} is outside 1 to 100;" in text


async def test_a_long_read_keeps_the_messages_around_the_hit_within_the_output_cap(
    store: SessionManager, registry: ToolRegistry
) -> None:
    session = store.session_id
    ids = [await store.add_message(user(f"chapter {n} " + "words " * 500)) for n in range(12)]
    centre = ids[6]
    result = await call(
        registry,
        ToolSettings(history=store),
        "read_session",
        session_id=session,
        around_message_id=centre,
    )
    text = result.output or ""
    assert len(text) <= MAX_OUTPUT_CHARS and "characters cut" not in text
    shown = [i for i in ids if f"#{i} user" in text]
    assert centre in shown and 3 <= len(shown) < len(ids)
    assert shown == ids[ids.index(shown[0]) : ids.index(shown[-1]) + 1]  # one unbroken run
    # Each mark names the nearest message left out, so following it moves on.
    older, newer = ids[ids.index(shown[0]) - 1], ids[ids.index(shown[-1]) + 1]
    assert f"read_session(session_id={session}, around_message_id={older})" in text
    assert text.endswith(f"read_session(session_id={session}, around_message_id={newer})")


async def test_following_the_marks_reaches_every_message_past_a_huge_one(
    store: SessionManager, registry: ToolRegistry
) -> None:
    session = store.session_id
    ids = [
        await store.add_message(user("first small")),
        await store.add_message(model("big " * 30_000)),
        await store.add_message(user("\u200b" * 5_000)),  # 6x longer once escaped
        await store.add_message(user("last small")),
    ]
    settings = ToolSettings(history=store)
    seen: set[int] = set()
    texts: list[str] = []
    around: int | None = None
    for _ in range(len(ids) + 1):  # one read per message at most
        result = await call(
            registry, settings, "read_session", session_id=session, around_message_id=around
        )
        text = result.output or ""
        texts.append(text)
        assert len(text) <= MAX_OUTPUT_CHARS and "characters cut" not in text
        seen |= {i for i in ids if f"#{i} " in text}
        marks = re.findall(r"^before: .*around_message_id=(\d+)\)$", text, re.MULTILINE)
        if not marks:
            break
        assert int(marks[0]) not in {i for i in ids if f"#{i} " in text}
        around = int(marks[0])
    assert seen == set(ids)
    # The message too big for any page is shown alone, cut by the tool with a note.
    assert any(f"#{ids[1]} " in t and "more characters of this message]" in t for t in texts)


def test_print_on_a_file_an_upgrade_must_migrate_says_so_first(
    fake: FakeGemini, tmp_path: Path
) -> None:
    # A year of history re-indexes for a while: the script's user sees why nothing happens.
    build_v2(tmp_path / "koroku.db", [("session", seed_json("user", "the backup plan"))])
    fake.add(text_reply("ok"))
    done = run(fake, tmp_path, "--print", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("koroku-tui: updating the database after an upgrade")
    again = run(fake, tmp_path, "--print", "hello again")
    assert "updating the database" not in again.stderr  # once


async def test_a_literal_guillemet_never_reads_as_a_match_mark(
    store: SessionManager, registry: ToolRegistry
) -> None:
    await store.rename_session(store.session_id, "French quotes: « zebra is here")
    await store.add_message(user("she said « bonjour » to the zebra"))
    await store.new_session()
    result = await call(registry, ToolSettings(history=store), "search_history", query="zebra")
    text = result.output or ""
    assert text.count(recall.MARK_START) == text.count(recall.MARK_END) == 1
    assert f"{recall.MARK_START}zebra{recall.MARK_END}" in text
    assert '"French quotes: \\u00ab zebra is here"' in text
    assert "said \\u00ab bonjour \\u00bb to the" in text


def test_the_headline_reads_well_for_any_count() -> None:
    assert recall.headline("x", 5, 1) == (
        '5 past messages match "x"; the best one is shown, 4 more matched.'
    )
    assert recall.matches_in(recall.headline("x", 5, 1)) == 5


async def test_a_tool_result_hit_says_it_is_a_tools(
    store: SessionManager, registry: ToolRegistry
) -> None:
    await store.add_message(tool_result("read_file", {"path": "x"}, "the zebra file"))
    await store.new_session()
    result = await call(registry, ToolSettings(history=store), "search_history", query="zebra")
    assert "(local time) · tool results" in (result.output or "")


async def test_read_session_shows_a_rewind_as_its_marker_not_as_unreadable(
    store: SessionManager, registry: ToolRegistry
) -> None:
    session = store.session_id
    await store.add_message(user("first try"))
    await store.add_message(model("an answer"))
    retried = await store.add_message(user("second try"))
    await store.rewind(retried)
    await store.new_session()
    result = await call(registry, ToolSettings(history=store), "read_session", session_id=session)
    text = result.output or ""
    assert f"↶ rewound to before message #{retried}" in text
    assert "unreadable" not in text
