"""What the guard costs a stdio MCP server's start: ready with it, against ready without it.

Run: ``uv run python bench/mcp_guard_bench.py [--rounds 8]``.
Each round starts the published ``mcp-server-time`` until its tools are
listed, once under the guard (as Koroku runs every stdio server, so that it
dies with Koroku) and once started directly (as the SDK alone would), in
alternating order; it prints the medians and the median of per-round ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters

from koroku_tui.agent.tools.mcp import transports
from koroku_tui.agent.tools.mcp.servers import McpServers
from koroku_tui.agent.tools.registry import ToolRegistry
from koroku_tui.config.mcp_servers import McpServerSettings

TIME_SERVER = McpServerSettings(command=sys.executable, args=["-m", "mcp_server_time"])
GUARDED = transports.stdio_parameters


def unguarded(*args: Any, **kwargs: Any) -> StdioServerParameters:
    """The server's own command, without the guard in front (``python -I -S guard.py --``)."""
    guarded = GUARDED(*args, **kwargs)
    return guarded.model_copy(update={"command": guarded.args[4], "args": guarded.args[5:]})


async def ready_in(workspace: Path, guard: bool) -> float:
    """Seconds from start until the server's tools are listed."""
    transports.stdio_parameters = GUARDED if guard else unguarded
    servers = McpServers({"time": TIME_SERVER}, ToolRegistry(), workspace=workspace)
    began = time.perf_counter()
    lines = await servers.ready_for_turn()
    took = time.perf_counter() - began
    await servers.close()
    if lines:
        sys.exit(f"the server did not start: {lines}")
    return took


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        await ready_in(workspace, guard=True)  # the SDK imported, caches warm
        with_guard: list[float] = []
        without: list[float] = []
        for index in range(rounds):
            order = (True, False) if index % 2 == 0 else (False, True)
            for guard in order:
                (with_guard if guard else without).append(await ready_in(workspace, guard))
    ratio = statistics.median(a / b for a, b in zip(with_guard, without, strict=True))
    print(
        f"ready with the guard {statistics.median(with_guard):.3f} s, "
        f"without {statistics.median(without):.3f} s: ratio {ratio:.2f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    asyncio.run(main(parser.parse_args().rounds))
