"""Shared pieces of the agent tests: a fast config, an agent on the fake, a hook recorder,
and holds on a step (its reply's write, its first call) to cancel it there."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import types

from koroku_tui.agent import HOOK_NAMES, Agent, AgentConfig, RetryPolicy
from koroku_tui.agent.loop.conversation import Conversation
from koroku_tui.agent.protocols import Compactor
from koroku_tui.agent.tools import ToolRegistry, ToolResult, ToolSettings
from koroku_tui.agent.tools.mcp.servers import McpServers
from koroku_tui.agent.wire.client import close_client, make_client
from koroku_tui.events import SessionEvent
from koroku_tui.fake_gemini import FakeGemini
from koroku_tui.store import SessionManager

ENV_VARIABLES = (
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_API_VERSION",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
)
"""Every variable that could point the SDK at Google; tests strip them all."""


def vertex_client(base_url: str) -> genai.Client:
    """A Vertex AI client (express mode: an API key, no project) pointed at the fake."""
    options = types.HttpOptions(
        base_url=base_url,
        api_version="v1beta1",
        retry_options=types.HttpRetryOptions(attempts=1),
        httpx_async_client=httpx2.AsyncClient(),
    )
    return genai.Client(vertexai=True, api_key="test-key", http_options=options)


FAST_RETRY = RetryPolicy(attempts=3, initial_delay=0.001, max_delay=0.005, jitter=0.0)


def fast_config(tmp_path: Path, **overrides: Any) -> AgentConfig:
    """Tiny backoff, no automatic compaction, memory files under ``tmp_path``."""
    values: dict[str, Any] = {
        "memory_dir": tmp_path / "memory",
        "retry": FAST_RETRY,
        "auto_compact": False,
    }
    values.update(overrides)
    return AgentConfig(**values)


@asynccontextmanager
async def open_agent(
    fake: FakeGemini | str,
    tmp_path: Path,
    *,
    timeout_seconds: float = 30.0,
    db: Path | None = None,
    store: bool = True,
    tools: ToolRegistry | None = None,
    tool_settings: ToolSettings | None = None,
    compactor: Compactor | None = None,
    mcp: McpServers | None = None,
    **config: Any,
) -> AsyncIterator[Agent]:
    """An initialised Agent on the fake server (and a SQLite file unless ``store=False``).

    ``fake`` may also be a base URL (e.g. of a port nobody listens on).
    """
    base_url = fake if isinstance(fake, str) else fake.base_url
    client = make_client(base_url=base_url, api_key="test-key", timeout_seconds=timeout_seconds)
    manager = SessionManager(db or tmp_path / "koroku.db") if store else None
    agent = Agent(
        # Without a store, an explicitly empty context: never the real Koroku home.
        context=None if manager is not None else [],
        session_manager=manager,
        client=client,
        tools=tools,
        tool_settings=tool_settings or ToolSettings(workspace=tmp_path),
        config=fast_config(tmp_path, **config),
        compactor=compactor,
        mcp=mcp,
    )
    try:
        await agent.initialize()
        yield agent
    finally:
        await agent.close()
        await close_client(client)


@dataclass
class HookRecorder:
    """Records every hook the agent fires, in order, with its payload."""

    calls: list[tuple[str, Any]] = field(default_factory=list)

    def attach(self, agent: Agent) -> HookRecorder:
        for name in sorted(HOOK_NAMES):
            agent.on(name, self._handler(name))  # type: ignore[call-overload]
        return self

    def _handler(self, name: str) -> Any:
        async def record(payload: Any) -> None:
            self.calls.append((name, payload))

        return record

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.calls]

    def payloads(self, name: str) -> list[Any]:
        return [payload for hook, payload in self.calls if hook == name]


async def stored_events(db: Path) -> list[SessionEvent]:
    """Every session event of the current session, read back from the file."""
    manager = SessionManager(db)
    await manager.initialize()
    try:
        rows = await manager.load_all()
    finally:
        await manager.close()
    return [row.event for row in rows if isinstance(row.event, SessionEvent)]


def wire_signature(part: dict[str, Any]) -> bytes | None:
    """A request part's thought signature as bytes (either base64 alphabet)."""
    raw = part.get("thoughtSignature") or part.get("thought_signature")
    if raw is None:
        return None
    text = raw.replace("-", "+").replace("_", "/")
    return base64.b64decode(text + "=" * (-len(text) % 4))


def sent_instructions(fake: FakeGemini) -> list[str]:
    """The system instruction of each generate request the fake received, in order."""
    said = []
    for request in fake.generate_requests:
        text = request.body["systemInstruction"]["parts"][0]["text"]
        assert isinstance(text, str)
        said.append(text)
    return said


def function_responses(fake: FakeGemini, index: int) -> list[dict[str, Any]]:
    """The function responses the model received in the ``index``-th generate request."""
    contents = fake.generate_requests[index].contents
    return [
        part["functionResponse"]
        for content in contents
        for part in content.get("parts", [])
        if "functionResponse" in part
    ]


def held_writes(
    monkeypatch: pytest.MonkeyPatch, armed: asyncio.Event | None = None
) -> tuple[asyncio.Event, asyncio.Event]:
    """Hold the next write of a reply (once ``armed``: the next write): ``(holding, release)``."""
    holding, release = asyncio.Event(), asyncio.Event()
    write = Conversation._write

    async def held(self: Conversation, items: Any) -> None:
        model = any(isinstance(e, SessionEvent) and e.role == "model" for e, _ in items)
        if (armed.is_set() if armed is not None else model) and not holding.is_set():
            holding.set()
            await release.wait()
        await write(self, items)

    monkeypatch.setattr(Conversation, "_write", held)
    return holding, release


def held_first_call(monkeypatch: pytest.MonkeyPatch) -> tuple[asyncio.Event, asyncio.Event]:
    """Hold the step's first call while it runs (a slow tool): ``(running, done)``."""
    running, done = asyncio.Event(), asyncio.Event()
    execute = ToolRegistry.execute

    async def held(self: ToolRegistry, call: types.FunctionCall, ctx: ToolSettings) -> ToolResult:
        if not running.is_set():
            running.set()
            await done.wait()
        return await execute(self, call, ctx)

    monkeypatch.setattr(ToolRegistry, "execute", held)
    return running, done
