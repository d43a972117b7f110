"""Agent step overhead, without the model: 30 vs 3,000 events in the context.

Run: ``uv run python bench/agent_bench.py``

Two agents, each on its own SQLite file and local fake Gemini, hold a context
of 30 and of 3,000 events (tool turns: question, signed call, response,
answer). They then run the same turns, alternately, so drift in the machine
hits both alike. Each turn is two steps: the model calls ``read_file``, then
answers.

What is timed is the agent's own work per step: the wall time of ``run()``
minus the time spent inside the SDK (building and sending the request,
waiting for and parsing each chunk). That SDK share is measured by wrapping
``client.aio.models.generate_content_stream`` and its chunk iterator; the
agent's per-chunk work between chunks is not counted as SDK time. It covers
storing events (SQLite), the history repair, building the request from the
Content cache, the guardrail, running the tool and the hooks.

The goal: the 3,000-event step costs at most 1.3x the 30-event one.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from google.genai import types

from koroku_tui.agent import Agent, AgentConfig
from koroku_tui.agent.context.budget import BudgetPolicy
from koroku_tui.agent.tools import ToolSettings, default_registry
from koroku_tui.agent.wire.client import make_client
from koroku_tui.events import FCMetadata, SessionEvent
from koroku_tui.fake_gemini import FakeGemini, RecordedRequest, ScriptItem, call_reply, text_reply
from koroku_tui.store import SessionManager

SIZES = (30, 3_000)
WARMUP_TURNS = 3
MEASURED_TURNS = 40


def responder(request: RecordedRequest) -> ScriptItem:
    """Call read_file on a question; answer once the tool's response is in."""
    last = request.contents[-1]
    if any("functionResponse" in part for part in last.get("parts", ())):
        return text_reply("a.txt holds apples.", pieces=2, signature_chunk=True)
    return call_reply(("read_file", {"path": "a.txt"}))


def turn_events(fake: FakeGemini, index: int) -> list[SessionEvent]:
    """One finished tool turn, as the agent would have stored it."""
    call = types.FunctionCall(id=f"c{index}", name="read_file", args={"path": "a.txt"})
    response = types.FunctionResponse(id=f"c{index}", name="read_file", response={"output": "x"})
    return [
        SessionEvent.from_content(
            types.Content(role="user", parts=[types.Part(text=f"Question {index}?")])
        ),
        SessionEvent.from_content(
            types.Content(
                role="model",
                parts=[types.Part(function_call=call, thought_signature=fake.issue_signature())],
            )
        ),
        SessionEvent.from_content(
            types.Content(role="user", parts=[types.Part(function_response=response)]),
            [FCMetadata(name="read_file", args={"path": "a.txt"})],
        ),
        SessionEvent.from_content(
            types.Content(role="model", parts=[types.Part(text=f"Answer {index}: apples.")])
        ),
    ]


class SdkClock:
    """Wraps the client's streaming call and adds up the time spent inside the SDK."""

    def __init__(self, models: Any) -> None:
        self.seconds = 0.0
        self._original = models.generate_content_stream
        models.generate_content_stream = self._stream

    async def _stream(self, **kwargs: Any) -> AsyncIterator[types.GenerateContentResponse]:
        started = time.perf_counter()
        stream = await self._original(**kwargs)
        self.seconds += time.perf_counter() - started
        return self._timed(stream)

    async def _timed(
        self, stream: AsyncIterator[types.GenerateContentResponse]
    ) -> AsyncIterator[types.GenerateContentResponse]:
        while True:
            started = time.perf_counter()
            try:
                chunk = await anext(stream)
            except StopAsyncIteration:
                self.seconds += time.perf_counter() - started
                return
            self.seconds += time.perf_counter() - started
            yield chunk  # the agent's work on the chunk runs while we are suspended here


class Subject:
    """One agent with a context of ``size`` events, and its per-step timings."""

    def __init__(self, size: int, root: Path) -> None:
        self.size = size
        self.root = root / f"ctx{size}"
        self.root.mkdir()
        (self.root / "a.txt").write_text("apples\n")
        self.fake = FakeGemini(on_empty=responder).start()
        self.client = make_client(base_url=self.fake.base_url, api_key="test-key")
        self.clock = SdkClock(self.client.aio.models)
        self.steps: list[float] = []
        self.sdk_steps: list[float] = []
        self.agent: Agent | None = None

    async def open(self) -> None:
        manager = SessionManager(self.root / "koroku.db")
        await manager.initialize()
        for index in range(self.size // 4):
            for event in turn_events(self.fake, index):
                await manager.add_message(event)
        for index in range(self.size % 4):  # top up to the exact size with plain texts
            role = "user" if index % 2 == 0 else "model"
            content = types.Content(role=role, parts=[types.Part(text=f"note {index}")])
            await manager.add_message(SessionEvent.from_content(content))
        await manager.close()
        config = AgentConfig(
            memory_dir=self.root / "memory",
            context_window=1_048_576,
            budget=BudgetPolicy(event_limit=None),  # never compact: the size must hold
            auto_compact=False,
        )
        self.agent = Agent(
            session_manager=SessionManager(self.root / "koroku.db"),
            client=self.client,
            tools=default_registry(),
            tool_settings=ToolSettings(workspace=self.root),
            config=config,
        )

        async def gauge(budget: object) -> None:
            pass  # a listener, as the UI's gauge would be, so the budget is computed

        self.agent.on("on_usage", gauge)
        await self.agent.initialize()
        assert len(self.agent.context) == self.size

    async def turn(self, index: int, record: bool) -> None:
        assert self.agent is not None
        message: str | types.Content | None = f"Measured question {index}?"
        while message is not None:
            sdk_before = self.clock.seconds
            started = time.perf_counter()
            message = await self.agent.run(message)
            elapsed = time.perf_counter() - started
            if record:
                sdk = self.clock.seconds - sdk_before
                self.steps.append(elapsed - sdk)
                self.sdk_steps.append(sdk)

    async def close(self) -> None:
        if self.agent is not None:
            await self.agent.close()
        await self.client.aio.aclose()
        self.fake.stop()


def describe(subject: Subject) -> str:
    steps = subject.steps
    return (
        f"{subject.size:>5} events: median {statistics.median(steps) * 1e3:6.2f} ms/step, "
        f"mean {statistics.fmean(steps) * 1e3:6.2f} ms, "
        f"p90 {statistics.quantiles(steps, n=10)[-1] * 1e3:6.2f} ms "
        f"({len(steps)} steps; SDK + fake server, excluded: "
        f"median {statistics.median(subject.sdk_steps) * 1e3:.0f} ms/step)"
    )


async def main() -> int:
    with tempfile.TemporaryDirectory(prefix="koroku-agent-bench-") as tmp:
        subjects = [Subject(size, Path(tmp)) for size in SIZES]
        try:
            for subject in subjects:
                await subject.open()
            for index in range(WARMUP_TURNS):
                for subject in subjects:
                    await subject.turn(index, record=False)
            gc.collect()
            for index in range(MEASURED_TURNS):
                for subject in subjects:  # alternate, so both see the same machine
                    await subject.turn(WARMUP_TURNS + index, record=True)
        finally:
            for subject in subjects:
                await subject.close()
    small, large = subjects
    print("Agent step overhead, model time excluded (fake Gemini on 127.0.0.1, SQLite store)")
    print(f"python {sys.version.split()[0]}, pid {os.getpid()}")
    for subject in subjects:
        print("  " + describe(subject))
    ratio = statistics.median(large.steps) / statistics.median(small.steps)
    verdict = "within" if ratio <= 1.3 else "OVER"
    label = f"ratio {large.size}/{small.size} events (median per step)"
    print(f"{label}: {ratio:.2f}x ({verdict} 1.3x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
