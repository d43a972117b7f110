"""A stdio MCP server built with the SDK's own low-level ``Server``, told what to be by a JSON file.

``python listed_server.py PLAN.json`` where the plan holds:

- ``tools``: the tools it lists, as the protocol has them (``name``,
  ``description``, ``inputSchema``), any schema at all;
- ``answers`` (optional): tool name -> the ``CallToolResult`` it answers, as the
  protocol has it (default: the text ``"<tool> got <arguments as JSON>"``);
- ``barrier`` (optional): ``{"dir": ..., "count": n}``: before it answers
  anything it leaves a file in ``dir`` and waits until ``n`` files are there
  (servers started one after the other would wait for ever);
- ``stderr`` (optional): a line it writes on stderr at once;
- ``exit_on_call`` (optional): a tool whose call makes it write ``"dying"`` on
  stderr and exit with status 3 (it dies mid-call);
- ``freeze_on_call`` (optional): a tool whose call freezes the whole server (it
  answers nothing any more, pings included);
- ``grow_on_call`` (optional): a tool whose call adds ``later_tools`` to its list
  and sends ``notifications/tools/list_changed``;
- ``show_env`` (optional): variable names: a call of its tool ``environment``
  answers their values (null when unset) and its working folder, as JSON;
- ``pid_file`` (optional): where it writes its process id;
- ``stubborn`` (optional): a file where it writes the id of a child it starts,
  which sleeps for an hour; and it does not end when its stdin does (as a
  careless server may not): only the guard's sweep ends them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server


def wait_for_the_others(barrier: dict[str, Any]) -> None:
    folder = Path(barrier["dir"])
    (folder / str(os.getpid())).touch()
    while len(list(folder.iterdir())) < int(barrier["count"]):
        time.sleep(0.02)


def main(plan_file: str) -> None:
    plan = json.loads(Path(plan_file).read_text())
    if "pid_file" in plan:
        Path(plan["pid_file"]).write_text(f"{os.getpid()}\n")
    if "stubborn" in plan:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        Path(plan["stubborn"]).write_text(f"{child.pid}\n")
    if "stderr" in plan:
        print(plan["stderr"], file=sys.stderr, flush=True)
    if "barrier" in plan:
        wait_for_the_others(plan["barrier"])
    tools = [types.Tool.model_validate(tool) for tool in plan["tools"]]
    answers = plan.get("answers", {})

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == plan.get("exit_on_call"):
            print("dying", file=sys.stderr, flush=True)
            os._exit(3)
        if params.name == plan.get("freeze_on_call"):
            time.sleep(3600)  # noqa: ASYNC251 (on purpose: its event loop answers nothing more)
        if params.name == plan.get("grow_on_call"):
            tools.extend(types.Tool.model_validate(tool) for tool in plan["later_tools"])
            await ctx.session.send_tool_list_changed()
        if params.name == "environment":
            seen = {name: os.environ.get(name) for name in plan["show_env"]}
            text = json.dumps({"env": seen, "cwd": os.getcwd()})
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
        if params.name in answers:
            return types.CallToolResult.model_validate(answers[params.name])
        text = f"{params.name} got {json.dumps(params.arguments or {}, sort_keys=True)}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    server = Server("listed", on_list_tools=list_tools, on_call_tool=call_tool)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)
    if "stubborn" in plan:
        time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1])
