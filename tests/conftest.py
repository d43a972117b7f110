"""Suite-wide guards."""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.agent_kit import ENV_VARIABLES

from koroku_tui.agent.wire import credentials
from koroku_tui.agent.wire.client import close_client, make_client
from koroku_tui.fake_gemini import FakeGemini
from koroku_tui.privacy import live_secrets
from koroku_tui.store import SessionManager
from koroku_tui.ui.main import turn_status

pytest_plugins = [
    "helpers.tool_kit",  # workspace, outside, ctx
    "helpers.config_kit",  # desk
    "helpers.mcp_servers",  # mcp_http_url
]

# Tests start the real koroku-tui command over a hundred times. Where the shell
# sets PYTHONDONTWRITEBYTECODE (this machine does), each start compiled the
# SDK from source (~1 s); the commands the tests start may cache bytecode as a
# person's Python does. (uv's compile-bytecode setting did this too, but made
# every `uv run`, the app's launch included, check 3,000 files: ~0.25 s.)
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# As ``cli.main`` does for a real start: the apps tests run in this process embed with
# numpy on one BLAS thread (two ran the meaning pass 4x slower on busy cores).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

FIRST = (
    "tests/test_recall_bench.py::",
    "tests/test_quality.py::test_mypy_strict_is_clean",
    "tests/test_ui_history_typing.py::test_no_typed_word_deletes_renames_forks_or_exports_anything",
    "tests/test_one_writer.py::test_parallel_print_turns_never_interleave",
    "tests/test_slash_flows.py::test_every_builtin_runs_from_the_prompt",
    "tests/test_e2e_history_typing.py::",
    "tests/test_recall_meaning_pass.py::test_the_meaning_pass_finds_what_wordllama_alone_does_not",
    "tests/test_recall_print_wait.py::",
    "tests/test_ui_scroll_keys.py::test_pageup_pages_through_the_whole_session_and_pagedown_back",
    "tests/test_ui_tool_rows.py::test_rows_leave_out_what_only_the_model_is_told",
    "tests/test_recall_tools.py::test_print_on_a_file_an_upgrade_must_migrate_says_so_first",
    "tests/test_wire_contract.py::",
    "tests/test_ui_fast_stream.py::",
)
"""The longest tests (``--durations``), started first, in this order.

The workers take tests in collection order: a 50 s test collected last ran
alone on one worker at the end of the run while the others had finished.
"""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run ``FIRST`` before the rest; the rest keep their order (every worker sorts alike)."""

    def rank(item: pytest.Item) -> int:
        return next(
            (n for n, start in enumerate(FIRST) if item.nodeid.startswith(start)), len(FIRST)
        )

    items.sort(key=rank)


def _sqlite_workers() -> set[threading.Thread]:
    return {
        t for t in threading.enumerate() if "_connection_worker_thread" in t.name and t.is_alive()
    }


@pytest.fixture(autouse=True)
def no_leaked_database_connection() -> Iterator[None]:
    """Fail the test that leaves an aiosqlite connection open.

    An unclosed connection keeps a non-daemon thread alive, which makes the
    whole pytest process hang at exit long after the last test passed.
    """
    before = _sqlite_workers()
    yield
    leaked = _sqlite_workers() - before
    for thread in leaked:
        thread.join(timeout=2)  # a close() in flight may still be finishing
    still = [t.name for t in leaked if t.is_alive()]
    assert not still, f"test left {len(still)} SQLite connection(s) open: {still}"


@pytest.fixture(autouse=True)
def no_route_to_google(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach Google, whatever the developer's shell exports or an earlier test kept.

    Tests that need a key or a base URL set them to the fake server themselves.
    ``cli.main`` run in the test process (``--show-config``, ``--print``) takes
    the key out of the environment and keeps it, and its value for redaction,
    process-wide, as a real start does: each test starts with none kept, else a
    later test "without a key" got a client with that key on Google's address.
    """
    for name in ENV_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(credentials, "_withdrawn", {})
    monkeypatch.setattr(live_secrets, "_known", ())


def _loopback(name: str) -> bool:
    if name in ("", "None", "localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


@pytest.fixture(autouse=True)
def no_real_host(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Nothing in the test process looks up a host but the loopback (the fake Gemini's).

    The app takes a failed lookup in its stride (a turn's "request failed", the
    default window), so a test that reached for a real host could pass here,
    offline, and send a request there on a connected machine. The lookup is
    refused as a name the resolver does not know, and the test fails naming it.
    """
    tried: list[str] = []
    lookup = socket.getaddrinfo

    def loopback_only(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if not _loopback(name):
            tried.append(name)
            raise socket.gaierror(socket.EAI_NONAME, f"tests reach no real host ({name})")
        return lookup(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", loopback_only)
    yield
    assert not tried, f"the test tried to reach {sorted(set(tried))}; tests use the fake Gemini"


@pytest.fixture(autouse=True)
def home_in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The Koroku home and config folder are never the developer's.

    The seed's ``koroku_tui.Agent()`` and ``koroku-tui`` open ``KOROKU_HOME``;
    the plain defaults below them (``AgentConfig().memory_dir``) name the
    platform's data folder, which ``XDG_DATA_HOME`` moves on Linux. Both read
    ``config.toml`` in the platform's config folder, which ``XDG_CONFIG_HOME``
    moves (to an empty folder), unless ``KOROKU_CONFIG`` names another.
    """
    monkeypatch.setenv("KOROKU_HOME", str(tmp_path_factory.mktemp("koroku-home")))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
    # The user config folder (config.toml, the trust answers, personal AGENTS.md).
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
    monkeypatch.delenv("KOROKU_CONFIG", raising=False)


@pytest.fixture(autouse=True)
def size_from_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command started in a tmux window of 120 columns must draw 120 columns.

    Textual takes COLUMNS and LINES over the terminal's own size, and the
    pytest-xdist workers start with COLUMNS=80 and LINES=24 in their
    environment, which every command a test starts would inherit.
    """
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(autouse=True)
def approval_without_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """The approval dialog takes keys as soon as it is drawn: tests do not wait 0.6 s.

    The tests of the grace period itself set it back (``test_ui_approval_keys``).
    """
    monkeypatch.setattr("koroku_tui.ui.main.approval.ApprovalScreen.GRACE_SECONDS", 0.0)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the ``store`` fixture keeps its database (a test file may override it)."""
    return tmp_path / "koroku.db"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[SessionManager]:
    """A real, initialized SessionManager on a SQLite file in the test's tmp_path."""
    manager = SessionManager(db_path)
    await manager.initialize()
    yield manager
    await manager.close()


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    """A strict fake Gemini server on 127.0.0.1 with an empty script."""
    with FakeGemini() as server:
        yield server


@pytest.fixture
async def client(fake: FakeGemini) -> AsyncIterator[genai.Client]:
    """The real SDK client, on Koroku's pinned transport, pointed at ``fake``."""
    made = make_client(base_url=fake.base_url, api_key="test-key")
    yield made
    await close_client(made)


@pytest.fixture
def fake_in_env(fake: FakeGemini, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the SDK's standard environment at ``fake`` (for code that builds its own client)."""
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")


@pytest.fixture
def own_logging() -> Iterator[None]:
    """configure_logging takes over the root logger; give pytest's handlers back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


# What a developer's shell may export that changes how the app draws.
_DRAWING_VARIABLES = ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "COLORTERM", "TERM")


@pytest.fixture
def snapshot_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home and workspace that are the same on every machine, for snapshot tests.

    The relative path ``.`` (the test runs inside ``tmp_path``): an absolute
    one reaches the picture through the memory folder named in the system
    instruction, whose length moved the token estimate (713 vs 712 tokens
    between two checkouts). The shell's KOROKU_ settings and colour or
    terminal variables are cleared too, so the picture does not depend on
    who runs it.
    """
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        textual = name.startswith("TEXTUAL_") and not name.startswith("TEXTUAL_SNAPSHOT")
        if textual or name.startswith("KOROKU_") or name in _DRAWING_VARIABLES:
            monkeypatch.delenv(name)
    # The working directory the approval dialog names reads "~"; the status
    # line's seconds never tick in a picture (a slow machine showed "1 s").
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(turn_status, "clock", lambda: 1000.0)
    return Path(".")
