"""Search in scripts written without spaces and in compatibility forms (issue 26).

Real SQLite in tmp_path through ``SessionManager``: Chinese, Japanese and
Korean are found by any part of a run (one character too), ``ＦＵＬＬ`` and
``full`` find each other, both through the store's two searches and through
the agent's ``search_history`` on the strict fake; a version-7 file is
re-formed by migration 10; a query with no real word ranks its newest
matches only.
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from helpers.agent_kit import function_responses, open_agent
from helpers.events import model, user
from test_store_recall import found, past_session

import koroku_tui.store.search_broad as search_broad
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.store import MATCH_END, MATCH_START, SCHEMA_VERSION, SessionManager, schema
from koroku_tui.store.search import MAX_PHRASE_TOKENS, build_match_query
from koroku_tui.store.search_forms import SEPARATOR, index_form

TOKYO = "東京都の天気は晴れ、最高気温は十八度"
KYOTO = "京都の紅葉は十一月が見頃"
SEOUL = "서울의 날씨는 맑음"
BEIJING = "今天北京天气很好"


def marked(text: str) -> str:
    return f"{MATCH_START}{text}{MATCH_END}"


async def test_chinese_japanese_and_korean_are_found_by_any_part(store: SessionManager) -> None:
    tokyo, kyoto, seoul, beijing = await past_session(
        store, user(TOKYO), model(KYOTO), user(SEOUL), model(BEIJING)
    )
    assert await found(store, "天気") == [tokyo]  # two characters inside a run
    assert await found(store, "晴") == [tokyo]  # one
    assert await found(store, "서울") == [seoul]  # a particle attached
    assert await found(store, "天气") == [beijing]
    assert await found(store, "紅葉") == [kyoto]
    # A run is also searched as its pairs: the exact run first, Kyoto (京都) after.
    assert await found(store, "東京都") == [tokyo, kyoto]
    assert await found(store, '"東京都"') == [tokyo]  # quotes keep it exact
    # A question written without spaces finds the fact that shares words with it.
    assert (await found(store, "明日の天気はどうですか"))[0] == tokyo
    [hit] = await store.search("天気")  # the history screen's search
    assert marked("天気") in hit.snippet and SEPARATOR not in hit.snippet
    assert hit.snippet.replace(MATCH_START, "").replace(MATCH_END, "").startswith(TOKYO[:6])


async def test_a_pasted_page_of_japanese_is_searched_by_its_start(store: SessionManager) -> None:
    """A run is one phrase of every character: FTS5 walked 5,000 of them for seconds."""
    [tokyo] = await past_session(store, user(TOKYO))
    pasted = TOKYO + "明日も晴れるでしょう" * 500
    match = build_match_query(pasted)
    assert match is not None
    tokens = [re.findall(r"[^\W_]+", term) for term in match.split(" OR ")]
    assert max(map(len, tokens)) == MAX_PHRASE_TOKENS
    assert await found(store, pasted) == [tokyo]
    assert await found(store, '"東京都の天気は雨"') == []  # a short phrase stays exact


async def test_compatibility_forms_find_each_other(store: SessionManager) -> None:
    wide, ligature, plain = await past_session(
        store,
        user("the ＦＵＬＬ report is ready"),
        model("the ﬁle was saved"),
        user("a full file listing"),
    )
    assert set(await found(store, "full")) == {wide, plain}
    assert set(await found(store, "ＦＵＬＬ")) == {wide, plain}
    assert set(await found(store, "file")) == {ligature, plain}
    assert set(await found(store, "ﬁle")) == {ligature, plain}
    hits = await store.search("ｆｕｌ")  # typed as a prefix in the history screen
    assert {hit.message_id for hit in hits} == {wide, plain}
    assert any(marked("FULL") in hit.snippet for hit in hits)


async def test_a_query_without_a_real_word_ranks_its_newest_matches(
    store: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_broad, "BROAD_CANDIDATES", 2)
    # The oldest rows say the words most often: over every match, they win.
    old = await past_session(store, user("what did we do, what did we do"), user("co co co co"))
    new = await past_session(
        store,
        user("what is it"),
        user("we did"),
        user("cold coffee"),
        user("a config commit"),
    )
    assert set(await found(store, "what did we do")) == {new[0], new[1]}
    assert {hit.message_id for hit in await store.search("co")} == {new[2], new[3]}
    # A real word among them: every match is ranked, the best first.
    assert (await found(store, "what did we do cold"))[0] == new[2]
    assert (await store.search("co c"))[0].message_id == old[1]  # "c" waits for a second letter
    assert old[0] in await found(store, '"what did we do"')  # a phrase is a real term


async def test_the_model_finds_a_japanese_fact_with_search_history(
    fake: FakeGemini, tmp_path: Path
) -> None:
    async with SessionManager(tmp_path / "koroku.db") as store:
        fact = await store.add_message(user(TOKYO))
        await store.new_session()
        await store.add_message(user("hello"))  # the session the agent continues
    fake.add(
        call_reply(("search_history", {"query": "天気"})),
        text_reply("晴れです。"),
    )
    async with open_agent(fake, tmp_path) as agent:
        assert await agent.run_turn("東京の天気は？") == "晴れです。"
    [response] = function_responses(fake, 1)
    output = response["response"]["output"]
    assert f"message {fact} " in output
    assert "東京都の«天気»は晴れ" in output


def build_v7(path: Path, texts: list[str]) -> None:
    """A version-7 file: one session of user messages, indexed as version 7 indexed them."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        for step in schema.MIGRATIONS[:7]:
            step(conn)
        conn.execute("PRAGMA user_version = 7")
        # One transaction: in autocommit each of the 3,000 inserts waited for its own
        # fsync (21 s of the test's 22 on CI).
        conn.execute("BEGIN")
        conn.execute(
            "INSERT INTO sessions(id, title, created_at, updated_at, message_count) "
            "VALUES (1, 'v7', 0, 0, ?)",
            (len(texts),),
        )
        for row_id, text in enumerate(texts, start=1):
            event = user(text)
            conn.execute(
                "INSERT INTO messages(id, session_id, kind, event_json, created_at) "
                "VALUES (?, 1, 'session', ?, ?)",
                (row_id, event.model_dump_json(), float(row_id)),
            )
            conn.execute(
                "INSERT INTO messages_fts(rowid, text, role) VALUES (?, ?, 'user')",
                (row_id, text),
            )
        conn.execute("COMMIT")


async def test_a_version_7_file_is_reformed_and_found_by_parts(tmp_path: Path) -> None:
    path = tmp_path / "koroku.db"
    fillers = [f"filler note {n}" for n in range(1_500)]
    build_v7(path, [TOKYO, "the ＦＵＬＬ report", *fillers, SEOUL])
    calls: list[tuple[int, int]] = []
    store = SessionManager(path)
    await store.initialize(progress=lambda done, total: calls.append((done, total)))
    try:
        await store.new_session()
        assert await found(store, "天気") == [1]
        assert await found(store, "full") == [2]
        assert await found(store, "서울") == [1_503]
        assert (await store.search_history("filler")).total == 1_500
    finally:
        await store.close()
    assert calls == [(0, 1_503), (1_000, 1_503), (1_503, 1_503)]
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = dict(conn.execute("SELECT rowid, text FROM messages_fts WHERE rowid IN (1, 3)"))
    assert rows == {1: index_form(TOKYO), 3: "filler note 0"}  # English rows stay as they were
