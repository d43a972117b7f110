"""Secrets never reach tools, the database or the model; Koroku's files are private.

Commands run with the real shell; the agent talks to the fake server through
the real SDK with a realistic key, and the database is a real file whose raw
bytes are searched for the key.
"""

from __future__ import annotations

import logging
import os
import stat
import subprocess
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from google.genai import types
from helpers.agent_kit import stored_events, wire_signature
from helpers.processes import KOROKU, koroku_env
from helpers.secrets_kit import LIVE_KEY, agent_with_live_key, database_bytes
from hostile.secret_leaks import KEPT, KEY_IN_TEXT, SDK_CREDENTIALS_NOT_ALLOWABLE, STRIPPED

from koroku_tui.agent.tools import ToolSettings, default_registry
from koroku_tui.agent.wire.redaction import REDACTED
from koroku_tui.config.settings import Settings
from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.privacy.logs import LOG_FILENAME, configure_logging
from koroku_tui.store import SessionManager
from koroku_tui.store.memory_files import append_summary

"""Shaped like a real Gemini key (39 characters)."""


# -- what a command's environment holds ---------------------------------------


async def command_env(context: ToolSettings) -> str:
    call = types.FunctionCall(id="c1", name="run_command", args={"command": "env"})
    result = await default_registry().execute(call, context)
    assert result.output is not None, result.error
    return result.output


@pytest.fixture
def ctx(tmp_path: Path) -> ToolSettings:
    return ToolSettings(workspace=tmp_path, auto_approve=True)


@pytest.mark.parametrize("name", STRIPPED)
async def test_a_command_does_not_see_credentials(
    name: str, ctx: ToolSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, f"value-of-{name}")
    monkeypatch.setenv("KOROKU_PROBE", "visible")
    seen = await command_env(ctx)
    assert "KOROKU_PROBE=visible" in seen  # the environment itself is there
    assert f"{name}=" not in seen and f"value-of-{name}" not in seen


async def test_a_command_keeps_what_is_not_secret(
    ctx: ToolSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in KEPT:
        monkeypatch.setenv(name, os.environ.get(name, f"value-of-{name}"))
    seen = await command_env(ctx)
    for name in KEPT:
        assert f"\n{name}=" in f"\n{seen}", name


async def test_the_allow_setting_lets_a_named_token_through_but_never_the_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", LIVE_KEY)
    monkeypatch.setenv("FOO_TOKEN", "foo-token-value")
    monkeypatch.setenv(
        "KOROKU_TOOL_ENV_ALLOW", f"FOO_TOKEN, {','.join(SDK_CREDENTIALS_NOT_ALLOWABLE)}"
    )
    allow = Settings().tool_env_allow
    assert allow == ["FOO_TOKEN", *SDK_CREDENTIALS_NOT_ALLOWABLE]
    for name in SDK_CREDENTIALS_NOT_ALLOWABLE:
        monkeypatch.setenv(name, f"value-of-{name}")
    context = ToolSettings(workspace=tmp_path, auto_approve=True, env_allow=frozenset(allow))
    seen = await command_env(context)
    assert "FOO_TOKEN=foo-token-value" in seen
    assert LIVE_KEY not in seen
    for name in SDK_CREDENTIALS_NOT_ALLOWABLE:
        assert f"{name}=" not in seen


def test_print_mode_strips_the_key_and_honours_the_allow_setting(
    fake: FakeGemini, tmp_path: Path
) -> None:
    assert KOROKU is not None, "koroku-tui is not installed in the test environment"
    fake.api_key = LIVE_KEY
    env = koroku_env(fake, tmp_path / "home", key=LIVE_KEY)
    env |= {"FOO_TOKEN": "foo-token-value", "BAR_TOKEN": "bar-token-value"}
    env["KOROKU_TOOL_ENV_ALLOW"] = "BAR_TOKEN"
    fake.add(call_reply(("run_command", {"command": "env"})), text_reply("Done."))
    done = subprocess.run(
        [KOROKU, "--yes", "--print", "show the environment"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    response = fake.generate_requests[1].contents[-1]["parts"][0]["functionResponse"]
    seen = response["response"]["output"]
    assert "BAR_TOKEN=bar-token-value" in seen  # allowed by name
    assert "FOO_TOKEN" not in seen and "GEMINI_API_KEY" not in seen
    assert LIVE_KEY not in seen


# -- the key in tool output and model text ------------------------------------


def sent_bytes(fake: FakeGemini) -> list[bytes]:
    """Every request body the fake received (the key travels in a header, not here)."""
    return [r.raw_body for r in fake.requests if r.raw_body]


@pytest.mark.parametrize("shape", KEY_IN_TEXT)
async def test_a_command_printing_the_key_is_stored_and_sent_redacted(
    fake: FakeGemini, tmp_path: Path, shape: str
) -> None:
    (tmp_path / "profile.txt").write_text(shape.format(key=LIVE_KEY))
    fake.add(call_reply(("run_command", {"command": "cat profile.txt"})), text_reply("Seen."))
    async with agent_with_live_key(fake, tmp_path) as agent:
        assert await agent.run_turn("show my profile") == "Seen."

    redacted = shape.format(key=REDACTED).rstrip("\n")
    response = fake.generate_requests[1].contents[-1]["parts"][0]["functionResponse"]
    assert redacted in response["response"]["output"]
    assert all(LIVE_KEY.encode() not in body for body in sent_bytes(fake))
    stored = (await stored_events(tmp_path / "koroku.db"))[2].function_responses[0]
    assert stored.function_response.response is not None
    assert redacted in stored.function_response.response["output"]
    assert LIVE_KEY.encode() not in database_bytes(tmp_path)


async def test_model_text_with_the_key_is_redacted_and_its_signature_kept(
    fake: FakeGemini, tmp_path: Path
) -> None:
    fake.add(
        call_reply(
            ("run_command", {"command": f"echo {LIVE_KEY}"}),
            text=f"I will print {LIVE_KEY} for you.",
            thought=f"The key is {LIVE_KEY}.",
        ),
        text_reply(f"Your key is {LIVE_KEY}.", signature_chunk=True),
        text_reply("Noted."),
    )
    async with agent_with_live_key(fake, tmp_path, include_thoughts=True) as agent:
        assert await agent.run_turn("what is my key?") == f"Your key is {REDACTED}."
        assert await agent.run_turn("thanks") == "Noted."

    last = fake.generate_requests[-1]
    assert last.status == 200  # the strict fake took the edited, signed parts
    assert all(LIVE_KEY.encode() not in body for body in sent_bytes(fake))
    model_step = last.contents[1]["parts"]
    call = next(p for p in model_step if "functionCall" in p)
    assert call["functionCall"]["args"] == {"command": f"echo {REDACTED}"}
    assert wire_signature(call) in fake.issued_signatures  # byte for byte as issued
    answer = last.contents[3]["parts"]
    assert answer[0]["text"] == f"Your key is {REDACTED}."
    assert wire_signature(answer[-1]) in fake.issued_signatures
    assert LIVE_KEY.encode() not in database_bytes(tmp_path)


async def test_rows_stored_before_redaction_are_redacted_in_requests_and_compaction(
    fake: FakeGemini, tmp_path: Path
) -> None:
    # A session written by an older Koroku: the key sits in the file already.
    old = SessionManager(tmp_path / "koroku.db")
    await old.initialize()
    try:
        for role, text in [
            ("user", "read my profile"),
            ("model", f"It says GEMINI_API_KEY={LIVE_KEY}."),
            ("user", "thanks"),
            ("model", "You are welcome."),
        ]:
            content = types.Content(role=role, parts=[types.Part(text=text)])
            await old.add_message(SessionEvent.from_content(content))
    finally:
        await old.close()
    fake.add(text_reply("Here it is."), text_reply("They read a profile."))
    async with agent_with_live_key(fake, tmp_path, auto_compact=True) as agent:
        await agent.run_turn("and now?")
        assert await agent.compact() is not None

    chat, compaction = fake.generate_requests
    assert compaction.action == "generateContent"
    assert f"GEMINI_API_KEY={REDACTED}" in chat.contents[1]["parts"][0]["text"]
    assert REDACTED in compaction.raw_body.decode()
    assert all(LIVE_KEY.encode() not in body for body in sent_bytes(fake))


# -- file modes ---------------------------------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """The common umask: new files 0644, folders 0755, unless Koroku says otherwise."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.mark.usefixtures("loose_umask", "own_logging")
def test_the_log_stays_private_after_rotation(tmp_path: Path) -> None:
    path = configure_logging(tmp_path)
    assert path == tmp_path / LOG_FILENAME
    logging.getLogger("test").warning("before the rotation")
    [handler] = logging.getLogger().handlers
    assert isinstance(handler, logging.handlers.RotatingFileHandler)
    handler.doRollover()
    logging.getLogger("test").warning("after the rotation")
    assert mode(path) == 0o600
    assert mode(tmp_path / f"{LOG_FILENAME}.1") == 0o600
    assert "after the rotation" in path.read_text()


@pytest.mark.usefixtures("loose_umask")
def test_memory_files_and_their_folder_are_private(tmp_path: Path) -> None:
    fresh = append_summary(tmp_path / "memory", "a summary", datetime(2026, 1, 2, 3, 4))
    assert mode(fresh) == 0o600 and mode(fresh.parent) == 0o700
    # A folder and a day file left open by an older Koroku are closed on the next write.
    older = tmp_path / "older"
    older.mkdir(mode=0o755)
    day = older / "02-01-2026.md"
    day.write_text("[01:00]: earlier\n")
    day.chmod(0o644)
    append_summary(older, "another", datetime(2026, 1, 2, 5, 6))
    assert mode(day) == 0o600 and mode(older) == 0o700
    assert day.read_text().splitlines()[-1] == "[05:06]: another"


def test_koroku_s_own_loose_files_are_tightened_at_start_and_the_log_says_so(
    tmp_path: Path,
) -> None:
    """Koroku's files and memory/ are tightened; the home, a folder it did not make, is not."""
    assert KOROKU is not None, "koroku-tui is not installed in the test environment"
    home = tmp_path / "home"
    (home / "memory").mkdir(parents=True)
    home.chmod(0o755)
    (home / "memory").chmod(0o777)
    files = [home / "koroku.db", home / "koroku.db-wal", home / "koroku.log.1"]
    files.append(home / "memory" / "02-01-2026.md")
    for path in files:
        path.write_bytes(b"")
        path.chmod(0o644)
    outside = tmp_path / "not-koroku.txt"
    outside.write_text("someone else's")
    outside.chmod(0o644)
    (home / "koroku.db-shm").symlink_to(outside)  # a link is never followed
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    done = subprocess.run(
        [KOROKU, "--home", str(home), "--print", "hello"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "GEMINI_API_KEY" in done.stderr  # no key: stops early
    assert mode(home) == 0o755 and mode(home / "memory") == 0o700
    assert {path.name: mode(path) for path in files} == {path.name: 0o600 for path in files}
    assert mode(outside) == 0o644
    log = (home / LOG_FILENAME).read_text()
    assert f"tightened {home} " not in log
    assert f"tightened {home / 'memory'} from mode 777 to 700" in log
    assert f"tightened {home / 'memory' / '02-01-2026.md'} from mode 644 to 600" in log
    # tmp_path (0700) keeps others out of the home whatever its mode: no warning.
    assert "Koroku home" not in done.stderr
