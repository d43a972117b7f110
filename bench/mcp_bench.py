"""MCP servers never in the way (issue 25): three ratios, measured in one run.

Run: ``uv run python bench/mcp_bench.py [--frame-rounds 5] [--ready-rounds 3]
[--requests 200]``. The servers are the test servers of ``tests/mcp_servers/``:
``well_behaved.py`` (the SDK's own ``MCPServer``), two of the ten with
``--delay-start 5`` (they serve 5 s after they were launched, their imports
included, as a server waiting on something slow does).

a. First frame: the installed ``koroku-tui`` in a pseudo-terminal
   (``terminal_launch.py``) on a 40-event home, with a config file naming the
   ten servers, against one naming none; until the frame that shows the newest
   message and the footer. Goal: within 1.1x (the servers start after it).
b. Ready: ``McpServers`` from ``start()`` until ``ready_for_turn()`` returns,
   with the ten servers, against the slowest of them alone. Goal: within 1.3x
   (they start in parallel). The SDK is imported before either is timed. Each
   SDK-built server spends about a second of CPU importing the SDK before it
   can answer: the CPU time of the servers' processes is printed next to it,
   and a light set (the two slow servers and eight stdlib-only ones,
   ``hangs_in_call.py``, whose ``echo`` answers) shows what Koroku itself adds.
c. One request: the agent's request (``RequestSettings``, the SDK's converters,
   its client) to a fake Gemini in another process, with the built-in tools
   and 300 tools of one server (``well_behaved.py --tools 300``) declared,
   against the built-in tools alone; wall and this process's CPU time per
   request (the fake's own work is not counted in CPU). Goal: at most 2x (the
   declarations are converted once per tool list).

Runs alternate (A, B, then B, A) so a busy machine slows both alike; the
ratios are medians of per-round ratios (for c, of per-pair ratios).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import tomlkit
from terminal_launch import FOOTER, Launch, koroku, launch_in_terminal
from tui_bench import build_home

from koroku_tui.agent.hooks import HookEmitter
from koroku_tui.agent.tools import default_registry
from koroku_tui.agent.tools.mcp.servers import McpServers
from koroku_tui.agent.tools.registry import ToolRegistry
from koroku_tui.agent.wire.body import WireForm
from koroku_tui.agent.wire.client import close_client, make_client
from koroku_tui.agent.wire.request import ReplyInFlight, RequestSettings, request_reply
from koroku_tui.agent.wire.retry import RetryPolicy
from koroku_tui.config.mcp_servers import McpServerSettings

SERVERS = Path(__file__).resolve().parents[1] / "tests" / "mcp_servers"
WELL_BEHAVED = str(SERVERS / "well_behaved.py")
COUNT, SLOW, DELAY = 10, 2, 5.0
EVENTS = 40
MODEL = "gemini-3-flash-preview"


def server(*args: str) -> McpServerSettings:
    """``well_behaved.py`` with ``args``, run by this interpreter."""
    return McpServerSettings(command=sys.executable, args=[WELL_BEHAVED, *args])


def ten_servers(*, light: bool = False) -> dict[str, McpServerSettings]:
    """Ten servers; the first two take ``DELAY`` seconds to start. ``light``: the other
    eight are stdlib-only servers (they start in milliseconds)."""
    slow = server("--delay-start", f"{DELAY:g}")
    quick = (
        McpServerSettings(command=sys.executable, args=[str(SERVERS / "hangs_in_call.py")])
        if light
        else server()
    )
    return {f"s{i}": slow if i < SLOW else quick for i in range(COUNT)}


def config_text(servers: dict[str, McpServerSettings]) -> str:
    """A config file naming ``servers``, as a user writes one."""
    tables = {name: s.model_dump(mode="json", exclude_defaults=True) for name, s in servers.items()}
    return tomlkit.dumps({"mcp_servers": tables}) if tables else "# no servers\n"


def alternate(rounds: int, cases: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
    """Each case once per round, in order, then in reverse order the next round."""
    runs: dict[str, list[float]] = {name: [] for name in cases}
    for round_ in range(rounds):
        order = list(cases) if round_ % 2 == 0 else list(reversed(cases))
        for name in order:
            runs[name].append(cases[name]())
    return runs


def ratio(runs: dict[str, list[float]], a: str, b: str) -> float:
    """The median of per-round ratios a / b."""
    return statistics.median(x / y for x, y in zip(runs[a], runs[b], strict=True))


def show(label: str, runs: dict[str, list[float]], a: str, b: str, goal: float) -> None:
    for name, series in runs.items():
        print(f"  {name:>12}: median {statistics.median(series) * 1e3:9.1f} ms")
    print(f"{label}: {ratio(runs, a, b):.2f}x ({len(runs[a])} alternating rounds; goal {goal}x)")


# -- a. the first frame -----------------------------------------------------------


def first_frame(root: Path, rounds: int) -> None:
    home = root / "home"
    build_home(home, EVENTS)
    (root / "work").mkdir()
    configs = {"none": root / "none.toml", "ten servers": root / "ten.toml"}
    configs["none"].write_text(config_text({}))
    configs["ten servers"].write_text(config_text(ten_servers()))
    last = f"Final answer {EVENTS - 1}."
    cpu: dict[str, list[float]] = {name: [] for name in configs}

    def launch(name: str) -> Callable[[], float]:
        def once() -> float:
            env = {"KOROKU_CONFIG": str(configs[name]), "XDG_CONFIG_HOME": str(root / "xdg")}
            run: Launch = launch_in_terminal(
                koroku(home), last, FOOTER, cwd=root / "work", env_extra=env
            )
            cpu[name].append(run.cpu)
            return run.wall

        return once

    cases = {name: launch(name) for name in configs}
    for once in cases.values():  # untimed: caches, .pyc files
        once()
    for series in cpu.values():
        series.clear()
    runs = alternate(rounds, cases)
    print("a. first frame, installed koroku-tui in a pseudo-terminal (wall):")
    show("   ten servers / none", runs, "ten servers", "none", 1.1)
    print(f"   CPU: {ratio(cpu, 'ten servers', 'none'):.2f}x")


# -- b. all ten ready ---------------------------------------------------------------


def children_cpu() -> float:
    """CPU seconds of this process's ended (and waited for) descendants so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


async def ready_after(
    servers: dict[str, McpServerSettings], workspace: Path, cpu: list[float]
) -> float:
    """Seconds from ``start()`` until ``ready_for_turn()`` returns, every server ready; the
    servers' CPU seconds (until they ended) go to ``cpu``."""
    mcp = McpServers(servers, ToolRegistry(), workspace=workspace)
    before = children_cpu()
    started = time.monotonic()
    try:
        mcp.start()
        left_out = await mcp.ready_for_turn()
        took = time.monotonic() - started
    finally:
        await mcp.close()
    cpu.append(children_cpu() - before)
    if left_out:
        raise RuntimeError(f"not every server was ready: {left_out}")
    return took


def all_ready(root: Path, rounds: int) -> None:
    importlib.import_module("koroku_tui.agent.tools.mcp.connection")  # the SDK, once
    slowest = {"slow": server("--delay-start", f"{DELAY:g}")}
    sets = {"ten": ten_servers(), "ten, light": ten_servers(light=True), "slowest": slowest}
    cpu: dict[str, list[float]] = {name: [] for name in sets}

    def case(name: str) -> Callable[[], float]:
        return lambda: asyncio.run(ready_after(sets[name], root, cpu[name]))

    cases = {name: case(name) for name in sets}
    cases["slowest"]()  # untimed: caches
    cpu["slowest"].clear()
    runs = alternate(rounds, cases)
    print("b. start() until ready_for_turn() returns (wall):")
    show("   ten / slowest alone", runs, "ten", "slowest", 1.3)
    print(f"   ten light / slowest alone: {ratio(runs, 'ten, light', 'slowest'):.2f}x")
    said = ", ".join(f"{name} {statistics.median(used):.1f} s" for name, used in cpu.items())
    print(f"   the servers' CPU: {said} (on {os.cpu_count()} cores, shared)")


# -- c. one request -----------------------------------------------------------------


@contextmanager
def fake_gemini() -> Iterator[str]:
    """A fake Gemini in another process (echoing), its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "koroku_tui.fake_gemini", "--echo", "--no-strict"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait()


async def requests(base_url: str, count: int) -> tuple[dict[str, list[float]], int]:
    registry = default_registry()
    with tempfile.TemporaryDirectory(prefix="koroku-mcp-bench-") as folder:
        mcp = McpServers({"many": server("--tools", "300")}, registry, workspace=Path(folder))
        client = make_client(base_url=base_url, api_key="test-key")
        try:
            await mcp.ready_for_turn()
            declared = len(registry.names)
            settings = {
                "built-in": RequestSettings("You are Koroku.", default_registry()),
                "300 MCP": RequestSettings("You are Koroku.", registry),
            }
            form, emitter = WireForm(client), HookEmitter()
            contents = [{"role": "user", "parts": [{"text": "hi"}]}]
            policy = RetryPolicy(attempts=1)

            async def once(name: str) -> tuple[float, float]:
                wall, cpu = time.perf_counter(), time.process_time()
                request = settings[name].request(form, MODEL, contents, offer_tools=True)
                await request_reply(
                    form, request, policy=policy, emitter=emitter, flight=ReplyInFlight()
                )
                return time.perf_counter() - wall, time.process_time() - cpu

            for name in settings:  # untimed: the conversions, the connection
                await once(name)
            walls: dict[str, list[float]] = {name: [] for name in settings}
            cpus: dict[str, list[float]] = {f"{name} CPU": [] for name in settings}
            for round_ in range(count):
                order = list(settings) if round_ % 2 == 0 else list(reversed(settings))
                for name in order:
                    wall, cpu = await once(name)
                    walls[name].append(wall)
                    cpus[f"{name} CPU"].append(cpu)
        finally:
            await mcp.close()
            await close_client(client)
    return walls | cpus, declared


def one_request(count: int) -> None:
    with fake_gemini() as base_url:
        runs, declared = asyncio.run(requests(base_url, count))
    print(f"c. one request, {declared} tools declared against the built-in ones alone:")
    show("   300 MCP / built-in (wall)", runs, "300 MCP", "built-in", 2.0)
    print(f"   CPU: {ratio(runs, '300 MCP CPU', 'built-in CPU'):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frame-rounds", type=int, default=5)
    parser.add_argument("--ready-rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="koroku-mcp-bench-") as folder:
        root = Path(folder)
        first_frame(root, args.frame_rounds)
        all_ready(root, args.ready_rounds)
    one_request(args.requests)


if __name__ == "__main__":
    main()
