"""The live key is redacted where the first line of redaction missed it.

A key cut between a reply's text and its signed last part, a key the
summariser writes into the summary, a key a server quotes back in an error
(the log), a key used as an argument *name*, and the Vertex AI credentials.
The agent talks to the strict fake through the real SDK; the database, the
memory files and the log are real files searched byte for byte.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types
from google.oauth2.credentials import Credentials
from helpers.agent_kit import wire_signature
from helpers.secrets_kit import LIVE_KEY, agent_with_live_key, database_bytes
from hostile.secret_leaks import KEY_CUTS, KEY_IN_ARGUMENTS

from koroku_tui.agent import AgentError
from koroku_tui.agent.hooks import CompactionFailed
from koroku_tui.agent.wire.redaction import REDACTED, Redactor
from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini, Reply, Text, call_reply, error_reply, text_reply
from koroku_tui.privacy.logs import LOG_FILENAME, configure_logging
from koroku_tui.store import SessionManager


def files_bytes(folder: Path) -> bytes:
    """Everything Koroku wrote under ``folder``: database, WAL, memory files, log."""
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def sent_bytes(fake: FakeGemini) -> bytes:
    return b"".join(r.raw_body for r in fake.requests if r.raw_body)


# -- a key cut across parts -----------------------------------------------------


@pytest.mark.parametrize("cut", KEY_CUTS)
async def test_a_key_cut_between_text_and_its_signed_last_part_is_redacted(
    fake: FakeGemini, tmp_path: Path, cut: int
) -> None:
    # The signed last chunk is never merged with the text before it.
    split = Reply(((Text(f"Your key is {LIVE_KEY[:cut]}"),), (Text(f"{LIVE_KEY[cut:]}."),)))
    fake.add(split, text_reply("Noted."))
    async with agent_with_live_key(fake, tmp_path) as agent:
        assert await agent.run_turn("what is my key?") == f"Your key is {REDACTED}."
        assert await agent.run_turn("thanks") == "Noted."

    last = fake.generate_requests[-1]
    assert last.status == 200  # the strict fake took the edited, signed parts
    answer = last.contents[1]["parts"]
    assert [p["text"] for p in answer] == [f"Your key is {REDACTED}", "."]
    assert wire_signature(answer[-1]) in fake.issued_signatures  # still on its part
    assert LIVE_KEY.encode() not in sent_bytes(fake)
    assert LIVE_KEY.encode() not in files_bytes(tmp_path)


# -- the key as an argument name ------------------------------------------------


def with_key(shape: Any) -> Any:
    """``shape`` with ``{key}`` replaced by the live key, in names and values."""
    if isinstance(shape, str):
        return shape.replace("{key}", LIVE_KEY)
    if isinstance(shape, dict):
        return {with_key(k): with_key(v) for k, v in shape.items()}
    if isinstance(shape, list):
        return [with_key(item) for item in shape]
    return shape


@pytest.mark.parametrize("shape", KEY_IN_ARGUMENTS)
async def test_a_key_in_an_argument_name_is_redacted(
    fake: FakeGemini, tmp_path: Path, shape: dict[str, Any]
) -> None:
    fake.add(call_reply(("list_directory", {"path": ".", **with_key(shape)})), text_reply("Ok."))
    async with agent_with_live_key(fake, tmp_path) as agent:
        await agent.run_turn("look")

    assert fake.generate_requests[-1].status == 200
    call = fake.generate_requests[-1].contents[1]["parts"][0]["functionCall"]
    assert REDACTED in json.dumps(call["args"])
    assert LIVE_KEY.encode() not in sent_bytes(fake)
    assert LIVE_KEY.encode() not in files_bytes(tmp_path)


# -- compaction -----------------------------------------------------------------


async def store_long_turns(db: Path) -> None:
    store = SessionManager(db)
    await store.initialize()
    try:
        for role, text in [("user", "one " * 80), ("model", "two " * 80)]:
            content = types.Content(role=role, parts=[types.Part(text=text)])
            await store.add_message(SessionEvent.from_content(content))
    finally:
        await store.close()


async def test_a_summary_holding_the_key_is_stored_and_remembered_redacted(
    fake: FakeGemini, tmp_path: Path
) -> None:
    await store_long_turns(tmp_path / "koroku.db")
    fake.add(text_reply("Fine."), text_reply(f"The user's key is {LIVE_KEY}."))
    async with agent_with_live_key(fake, tmp_path, auto_compact=True) as agent:
        await agent.run_turn("and now?")
        summary = await agent.compact()

    assert summary is not None and summary.summary == f"The user's key is {REDACTED}."
    [memory] = (tmp_path / "memory").iterdir()
    assert f"The user's key is {REDACTED}." in memory.read_text()
    assert LIVE_KEY.encode() not in files_bytes(tmp_path)


@pytest.mark.usefixtures("own_logging")
async def test_a_server_quoting_the_key_in_an_error_leaves_it_out_of_the_log(
    fake: FakeGemini, tmp_path: Path
) -> None:
    configure_logging(tmp_path)
    await store_long_turns(tmp_path / "koroku.db")
    quoted = f"API key {LIVE_KEY} is not valid for this project."
    fake.add(error_reply(400, quoted), text_reply("Fine."), error_reply(400, quoted))
    failures: list[CompactionFailed] = []
    async with agent_with_live_key(fake, tmp_path, auto_compact=True) as agent:
        agent.on("on_compaction_failed", failures.append)
        with pytest.raises(AgentError) as raised:
            await agent.run_turn("hello")
        await agent.run_turn("again")
        assert await agent.compact() is None
    logging.shutdown()

    log = (tmp_path / LOG_FILENAME).read_text()
    assert "is not valid for this project" in log  # the server's words were logged...
    assert LIVE_KEY not in log  # ...without the key
    [failure] = failures
    assert LIVE_KEY not in failure.message and LIVE_KEY not in raised.value.user_message
    assert LIVE_KEY.encode() not in files_bytes(tmp_path)


# -- Vertex AI --------------------------------------------------------------------

PRIVATE_KEY = (
    "-----BEGIN PRIVATE KEY-----\n"
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n"
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n"
    "NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ\n"
    "-----END PRIVATE KEY-----\n"
)
SERVICE_ACCOUNT = {
    "type": "service_account",
    "project_id": "a-project",
    "private_key_id": "0123456789abcdef0123456789abcdef01234567",
    "private_key": PRIVATE_KEY,
    "client_email": "koroku@a-project.iam.gserviceaccount.com",
}
ACCESS_TOKEN = "ya29.a0AfH6SMB-an-access-token-for-the-tests"
HEADER_TOKEN = "header-token-0123456789"


def test_vertex_credentials_are_redacted(tmp_path: Path) -> None:
    key_file = tmp_path / "sa.json"
    key_file.write_text(json.dumps(SERVICE_ACCOUNT, indent=2))
    client = genai.Client(
        vertexai=True,
        project="a-project",
        location="us-central1",
        # google-auth leaves Credentials.__init__ unannotated.
        credentials=Credentials(token=ACCESS_TOKEN),  # type: ignore[no-untyped-call]
    )
    environ = {
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GOOGLE_APPLICATION_CREDENTIALS": str(key_file),
        "GOOGLE_GENAI_DEFAULT_HEADERS": json.dumps({"Authorization": f"Bearer {HEADER_TOKEN}"}),
    }
    redactor = Redactor.for_client(client, environ)
    outputs = {
        "cat sa.json": key_file.read_text(),
        "the key as a PEM file": PRIVATE_KEY,
        "the access token": f"Authorization: Bearer {ACCESS_TOKEN}",
        "the header token": f"curl -H 'Authorization: Bearer {HEADER_TOKEN}'",
    }
    secrets = [SERVICE_ACCOUNT["private_key_id"], ACCESS_TOKEN, HEADER_TOKEN]
    secrets += PRIVATE_KEY.splitlines()[1:-1]
    for what, output in outputs.items():
        shown = redactor.text(output)
        assert REDACTED in shown, what
        assert not [s for s in secrets if s in shown], what


async def test_a_key_pasted_into_a_message_is_neither_sent_nor_stored(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """Sent, stored and sent again after a restart alike: without the key."""
    fake.add(text_reply("Noted."), text_reply("Again."))
    async with agent_with_live_key(fake, tmp_path) as agent:
        await agent.run_turn(f"why does {LIVE_KEY} fail?")
    async with agent_with_live_key(fake, tmp_path) as agent:  # a restart: the row is read back
        await agent.run_turn("and now?")
    sent = [request.body["contents"][0]["parts"][0]["text"] for request in fake.generate_requests]
    assert sent == [f"why does {REDACTED} fail?"] * 2
    assert LIVE_KEY.encode() not in database_bytes(tmp_path)
