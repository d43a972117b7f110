"""Agent step cost on the client, without the model: 30 vs 3,000 events in the context.

Run: ``uv run python bench/agent_bench.py``

Two agents, each on its own SQLite file and local fake Gemini, hold a context
of 30 and of 3,000 events (tool turns: question, signed call, response,
answer). They then run the same turns, alternately, so drift in the machine
hits both alike. Each turn is two steps: the model calls ``read_file``, then
answers.

What is timed is everything the client does per step: the wall time of
``run()`` minus only the fake server's own handling, measured inside the fake
(its wall time from a request's first line until its reply begins, which is
reading and checking the body, plus its CPU time while it streams the reply).
So it covers storing events (SQLite), the history repair, building the request
body, the SDK's transport, parsing each chunk, the guardrail, running the tool
and the hooks.

Next to it: ``json.dumps`` of the same context held as wire dicts, the floor
of any client that sends the whole history. The goal: the 3,000-event step
costs at most 3x that ``json.dumps`` plus the 30-event step. Both are given in
wall time and in CPU time (the process's, minus the fake's CPU time): on a
busy machine the wall figures also count the time the client waited for a
core.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from google.genai import types

from koroku_tui.agent import Agent, AgentConfig
from koroku_tui.agent.context.budget import BudgetPolicy
from koroku_tui.agent.tools import ToolSettings, default_registry
from koroku_tui.agent.wire.body import WireForm
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


class Subject:
    """One agent with a context of ``size`` events, and its per-step timings."""

    def __init__(self, size: int, root: Path) -> None:
        self.size = size
        self.root = root / f"ctx{size}"
        self.root.mkdir()
        (self.root / "a.txt").write_text("apples\n")
        self.fake = FakeGemini(on_empty=responder).start()
        self.client = make_client(base_url=self.fake.base_url, api_key="test-key")
        self.steps: list[float] = []
        self.cpu_steps: list[float] = []
        self.fake_steps: list[float] = []
        self.fake_cpu_steps: list[float] = []
        self.dumps: list[float] = []
        self.cpu_dumps: list[float] = []
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
            fake_cpu_before, fake_wall_before = self.fake.handling_seconds
            cpu_started = time.process_time()
            started = time.perf_counter()
            message = await self.agent.run(message)
            elapsed = time.perf_counter() - started
            cpu = time.process_time() - cpu_started
            if record:
                fake_cpu, fake_wall = self.fake.handling_seconds
                fake_cpu -= fake_cpu_before
                fake_wall -= fake_wall_before
                self.steps.append(elapsed - fake_wall)
                self.cpu_steps.append(cpu - fake_cpu)
                self.fake_steps.append(fake_wall)
                self.fake_cpu_steps.append(fake_cpu)

    def time_dumps(self, rounds: int) -> None:
        """``json.dumps`` of the context as wire dicts (converted once, beforehand)."""
        assert self.agent is not None
        form = WireForm(self.client)
        wires = [form.content(event.to_content()) for event in self.agent.context]
        for _ in range(rounds):
            cpu_started = time.process_time()
            started = time.perf_counter()
            json.dumps({"contents": wires})
            self.dumps.append(time.perf_counter() - started)
            self.cpu_dumps.append(time.process_time() - cpu_started)

    async def close(self) -> None:
        if self.agent is not None:
            await self.agent.close()
        await self.client.aio.aclose()
        self.fake.stop()


def ms(values: Sequence[float]) -> str:
    return f"{statistics.median(values) * 1e3:7.2f} ms"


def describe(subject: Subject) -> str:
    steps = subject.steps
    return (
        f"{subject.size:>5} events: client median {ms(steps)}/step "
        f"(p90 {statistics.quantiles(steps, n=10)[-1] * 1e3:.2f} ms, {len(steps)} steps; "
        f"CPU {ms(subject.cpu_steps)}); "
        f"json.dumps of its wire dicts {ms(subject.dumps)} (CPU {ms(subject.cpu_dumps)}); "
        f"fake server's own handling, excluded: {ms(subject.fake_steps)}/step "
        f"(CPU {ms(subject.fake_cpu_steps)})"
    )


def goal_line(label: str, small_step: float, large_step: float, dumps: float) -> str:
    budget = 3 * dumps + small_step
    verdict = "within" if large_step <= budget else "OVER"
    return (
        f"{label}: {large_step * 1e3:.2f} ms vs goal 3 x {dumps * 1e3:.2f} ms "
        f"+ {small_step * 1e3:.2f} ms = {budget * 1e3:.2f} ms; "
        f"ratio {large_step / budget:.2f}x ({verdict} 1.0x)"
    )


async def run(sizes: Sequence[int], warmup: int, measured: int) -> list[Subject]:
    """Build one subject per size, run the turns alternately, and time ``json.dumps``."""
    with tempfile.TemporaryDirectory(prefix="koroku-agent-bench-") as tmp:
        subjects = [Subject(size, Path(tmp)) for size in sizes]
        try:
            for subject in subjects:
                await subject.open()
            for index in range(warmup):
                for subject in subjects:
                    await subject.turn(index, record=False)
            gc.collect()
            for index in range(measured):
                for subject in subjects:  # alternate, so both see the same machine
                    await subject.turn(warmup + index, record=True)
            for subject in subjects:
                subject.time_dumps(max(5, measured))
        finally:
            for subject in subjects:
                await subject.close()
    return subjects


def report(subjects: Sequence[Subject]) -> None:
    small, large = subjects
    print("Agent step on the client, model time excluded (fake Gemini on 127.0.0.1, SQLite store)")
    print(f"python {sys.version.split()[0]}, pid {os.getpid()}, load {os.getloadavg()[0]:.1f}")
    for subject in subjects:
        print("  " + describe(subject))
    print(
        f"goal: {large.size}-event step <= 3 x json.dumps of its wire dicts "
        f"+ {small.size}-event step"
    )
    median = statistics.median
    print("  " + goal_line("wall", median(small.steps), median(large.steps), median(large.dumps)))
    # CPU time is what the client itself spends, whatever else the machine runs.
    print(
        "  "
        + goal_line(
            "CPU", median(small.cpu_steps), median(large.cpu_steps), median(large.cpu_dumps)
        )
    )
    ratio = median(large.steps) / median(small.steps)
    print(f"ratio {large.size}/{small.size} events (wall, median per step): {ratio:.2f}x")


async def main(
    sizes: Sequence[int] = SIZES, warmup: int = WARMUP_TURNS, measured: int = MEASURED_TURNS
) -> int:
    report(await run(sizes, warmup, measured))
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
