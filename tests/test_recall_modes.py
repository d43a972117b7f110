"""Recall by meaning in each run: ``--print`` through the strict fake, the app, the three choices.

``[recall] embeddings`` is ``"local"`` by default, ``"gemini"`` (the fake answers
``batchEmbedContents``) or ``"off"``. The ``--print`` turns run the installed
command; the app runs under Pilot on a home in ``tmp_path``.
"""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from google import genai
from helpers.agent_kit import function_responses
from helpers.events import user
from helpers.recall_kit import (
    PASSPORT,
    TRAVEL_DOCUMENT,
    indexed,
    plant_history,
    wordllama_without_its_files,
)
from helpers.ui_kit import build, settle, wait_until
from test_headless import run
from test_ui_history import HostApp, lines

from koroku_tui.agent.recall import embedder, embedder_loader
from koroku_tui.agent.recall.local import LocalEmbedder
from koroku_tui.agent.recall.meaning import MeaningEmbedder
from koroku_tui.agent.recall.passes import MEANING_PASS_WEIGHT, LocalPasses
from koroku_tui.agent.wire.client import close_client, make_client
from koroku_tui.agent.wire.embeddings import GeminiEmbedder
from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.modes.wiring import assemble
from koroku_tui.store import SessionManager
from koroku_tui.ui.history.lists import SearchResults
from koroku_tui.ui.main.recall_progress import INDEXING, RecallProgress

LONG_KEY = "AIzaSy" + "k" * 33
"""A key as long as a real one: shorter ones are not redacted (``MIN_SECRET_LENGTH``)."""


async def plant(db: Path, *extra: str) -> int:
    async with SessionManager(db) as store:
        fact = await plant_history(store)
        for text in extra:
            await store.add_message(user(text))
    return fact


def searched_for(fake: FakeGemini, question: str, home: Path, said: list[str] | None = None) -> str:
    """Run ``--print`` whose model searches for ``question``; the search's answer to the model
    (and what the command said on stderr, appended to ``said``)."""
    fake.api_key = LONG_KEY
    fake.add(
        call_reply(("search_history", {"query": question})),
        text_reply("On 9 March."),
    )
    done = run(fake, home, "--new", "--print", question, key=LONG_KEY)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "On 9 March.\n"
    if said is not None:
        said.append(done.stderr)
    [searched] = function_responses(fake, 1)
    assert searched["name"] == "search_history"
    return str(searched["response"]["output"])


def vector_rows(db: Path) -> list[tuple[str, int]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(
            "SELECT e.name, count(*) FROM message_vectors AS v JOIN embedders AS e "
            "ON e.id = v.embedder_id GROUP BY e.name"
        ).fetchall()


def test_off_keeps_full_text_alone(
    fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KOROKU_RECALL_EMBEDDINGS", "off")
    asyncio.run(plant(tmp_path / "koroku.db"))
    assert PASSPORT not in searched_for(fake, TRAVEL_DOCUMENT, tmp_path)
    assert vector_rows(tmp_path / "koroku.db") == []


def test_gemini_embeds_through_the_same_client_redacted_and_batched(
    fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KOROKU_RECALL_EMBEDDINGS", "gemini")
    secret = f"my key is {LONG_KEY} keep it"
    asyncio.run(plant(tmp_path / "koroku.db", secret))
    searched_for(fake, "passport expiry", tmp_path)
    sent = fake.requests_for("batchEmbedContents")
    documents = [r for r in sent if "RETRIEVAL_DOCUMENT" in str(r.body)]
    queries = [r for r in sent if "RETRIEVAL_QUERY" in str(r.body)]
    texts = [
        part["text"]
        for r in documents
        for request in r.body["requests"]
        for part in request["content"]["parts"]
    ]
    assert len(documents[0].body["requests"]) > 40  # one request for the whole history
    assert any("[redacted]" in text for text in texts)
    assert not any(LONG_KEY in str(r.raw_body) for r in sent)
    assert len(queries) == 1 and {r.api_key for r in sent} == {LONG_KEY}
    assert documents[0].body["requests"][0]["outputDimensionality"] == 256
    [(name, count)] = vector_rows(tmp_path / "koroku.db")
    assert name == "gemini-gemini-embedding-001-256" and count == len(texts)


async def test_the_history_screen_finds_a_fact_asked_in_other_words(tmp_path: Path) -> None:
    async with SessionManager(tmp_path / "koroku.db") as manager:
        fact = await plant_history(manager)
        async with indexed(manager):
            app = HostApp(manager, manager.session_id)
            async with app.run_test(size=(120, 40)) as pilot:
                await settle(pilot)
                await pilot.press("slash", *TRAVEL_DOCUMENT)
                await settle(pilot)
                hits = app.screen.query_one(SearchResults).hits
                assert fact in [hit.message_id for hit in hits]
                status = lines(app.screen.query_one("#history-status"))[0]
                assert "match" in status and "No matches" not in status


async def test_the_app_indexes_in_the_background_with_a_progress_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both local passes, one after the other, then MiniLM alone is searched."""
    monkeypatch.setattr(RecallProgress, "REVEAL_AFTER", 0.0)
    async with SessionManager(Settings(home=tmp_path).database_path) as store:
        await store.add_messages([user(f"shopping list item {n}") for n in range(300)])
    shown: list[str] = []
    progress = RecallProgress.progress

    def watched(line: RecallProgress, done: int, total: int, what: str) -> None:
        progress(line, done, total, what)
        if line.has_class("-shown"):
            shown.append(str(line.render()))

    monkeypatch.setattr(RecallProgress, "progress", watched)
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        line = app.main.query_one(RecallProgress)
        passes = line.indexer
        assert isinstance(passes, LocalPasses)
        await passes.meaning_alone.wait()
        await wait_until(pilot, lambda: not line.has_class("-shown"), "the line going")
        assert app.store is not None
        for name in (LocalEmbedder.name, MeaningEmbedder.name):
            assert await app.store.vector_progress(name) == (300, 300)
        assert app.store.vector_sides == {MeaningEmbedder.name: MEANING_PASS_WEIGHT}
    assert shown and all(text.startswith(INDEXING) for text in shown)
    assert f"{INDEXING} recall… 0% (0 of 300 messages)" in shown
    assert any(text.startswith(f"{INDEXING} recall by meaning… ") for text in shown)


def test_off_starts_no_indexer() -> None:
    parts = assemble(Settings(recall_embeddings="off"))
    assert parts.recall_indexer(SessionManager(":memory:")) is None


async def test_changing_the_embedder_indexes_again_and_searches_with_the_new_one(
    fake: FakeGemini, client: genai.Client, store: SessionManager
) -> None:
    fact = await plant_history(store)
    async with indexed(store) as local:
        assert local.embedder is not None
        rows = await store.vector_progress(local.embedder.name)
    gemini = embedder_loader("gemini", client)
    assert gemini is not None
    async with indexed(store, gemini) as remote:
        assert remote.embedder is not None and remote.embedder.name != local.embedder.name
        assert await store.vector_progress(remote.embedder.name) == rows  # all again, in full
        assert await store.vector_progress(local.embedder.name) == rows  # the old ones kept
        page = await store.search_history("passport", limit=3)
    assert fact in [hit.message_id for hit in page.hits]
    [asked] = [
        r for r in fake.requests_for("batchEmbedContents") if "RETRIEVAL_QUERY" in str(r.body)
    ]
    assert asked.body["requests"][0]["content"]["parts"] == [{"text": "passport"}]


async def test_a_network_that_swallows_requests_leaves_searches_to_their_words(
    store: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemini mode offline behind a silent gateway: no search waits out the client's 120 s."""
    monkeypatch.setattr(embedder, "QUERY_TIMEOUT", 0.1, raising=False)
    fact = await plant_history(store)
    asked: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        asked.append(writer)  # takes the request, never answers

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = make_client(base_url=f"http://127.0.0.1:{port}", api_key="test-key")
    store.use_vectors(embedder.QuerySide(GeminiEmbedder(client)))
    try:
        async with asyncio.timeout(30):  # the client alone would wait 120 s
            first = await store.search_history("passport", limit=5)
            second = await store.search(PASSPORT, 20)
    finally:
        await close_client(client)
        for writer in asked:
            writer.close()
        server.close()
        await server.wait_closed()
    assert fact in [hit.message_id for hit in first.hits]
    assert fact in [hit.message_id for hit in second]
    assert len(asked) == 1  # the next search did not ask again


MISSING_MODEL = (
    "Recall by meaning is off for this run: the local embedding model (the wordllama "
    "package's files) is not installed."
)


def test_print_says_when_the_local_model_cannot_load_and_searches_by_words(
    fake: FakeGemini, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(wordllama_without_its_files(tmp_path)))
    asyncio.run(plant(home / "koroku.db"))
    fake.add(call_reply(("search_history", {"query": "passport"})), text_reply("9 March."))
    done = run(fake, home, "--new", "--print", "When does my passport expire?")
    assert done.returncode == 0, done.stderr
    assert f"koroku-tui: {MISSING_MODEL}\n" in done.stderr and "Traceback" not in done.stderr
    assert "expires on 9 March" in str(function_responses(fake, 1)[0]["response"])  # by words


async def test_the_app_says_once_when_the_local_model_cannot_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(wordllama_without_its_files(tmp_path)))
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        line = app.main.query_one(RecallProgress)
        assert line.indexer is not None
        await line.indexer.loaded.wait()
        await wait_until(
            pilot,
            lambda: [n.message for n in app._notifications] == [MISSING_MODEL],
            "the notice",
        )
