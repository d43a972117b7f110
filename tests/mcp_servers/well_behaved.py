"""A stdio MCP server by the book, built with the official SDK's ``MCPServer``.

Usage: python well_behaved.py [--delay-start SECONDS] [--tools N] [--log-stderr TEXT]

Its tools: ``echo`` (text back), ``add`` (two ints), ``forecast`` (structured
content), ``picture`` (a 1x1 PNG), ``sound`` (a short WAV), ``document`` (an
embedded text resource) and ``fail`` (``isError`` with the reason given).

``--tools N`` serves N generated tools instead, ``tool_0`` .. ``tool_<N-1>``,
each taking ``text`` and answering ``"tool_<i>: <text>"`` (the 300-tool case).
``--delay-start`` serves only that many seconds after the server was
launched (its own imports count in them), as a server that waits on something
slow; it ends at once if stdin closes meanwhile (the client gave up), so tests
do not wait it out. Counted from the launch, not from after the imports: ten
servers importing the SDK at once on two cores would otherwise push the slow
ones' start later by the others' CPU, which is no part of a slow start.
``--log-stderr`` writes TEXT as one line on stderr first.
"""

from __future__ import annotations

import time

# The imports below come after LAUNCHED on purpose.
# ruff: noqa: E402
LAUNCHED = time.monotonic()
"""When the process began, before its imports: what ``--delay-start`` counts from."""

import argparse
import base64
import io
import select
import sys
import wave
from collections.abc import Callable
from typing import TypedDict

from mcp.server.mcpserver import Audio, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import EmbeddedResource, TextResourceContents

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
"""A real one-pixel PNG: small, and valid wherever a client forwards it."""


class Forecast(TypedDict):
    """What ``forecast`` returns as structured content."""

    city: str
    celsius: int
    sky: str


def echo(text: str) -> str:
    """Say the text back."""
    return text


def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


def forecast(city: str) -> Forecast:
    """Tomorrow's weather in a city (always the same: it is a test)."""
    return {"city": city, "celsius": 21, "sky": "clear"}


def picture() -> Image:
    """A one-pixel PNG image."""
    return Image(data=PNG_1X1, format="png")


def sound() -> Audio:
    """A tenth of a second of silence as WAV audio."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\0\0" * 800)
    return Audio(data=buffer.getvalue(), format="wav")


def document() -> EmbeddedResource:
    """A text file embedded as a resource."""
    contents = TextResourceContents(
        uri="file:///notes/todo.md", mime_type="text/markdown", text="# To do\n- water the plants\n"
    )
    return EmbeddedResource(type="resource", resource=contents)


def fail(reason: str) -> str:
    """Fail with the reason given (an isError result)."""
    raise ToolError(reason)


def generated(index: int) -> Callable[[str], str]:
    """The body of ``tool_<index>``."""

    def answer(text: str) -> str:
        return f"tool_{index}: {text}"

    return answer


def build(tool_count: int | None) -> MCPServer:
    """The server with its usual tools, or with ``tool_count`` generated ones."""
    server: MCPServer = MCPServer("well-behaved", log_level="WARNING")
    if tool_count is not None:
        for index in range(tool_count):
            description = f"Generated tool number {index}: says the text back."
            server.add_tool(
                generated(index),
                name=f"tool_{index}",
                description=description,
                structured_output=False,
            )
        return server
    for tool in (echo, add, picture, sound, document, fail):
        server.add_tool(tool, structured_output=False)
    server.add_tool(forecast, structured_output=True)
    return server


def wait_unless_stdin_closes(seconds: float) -> None:
    """Sleep until ``seconds`` after the launch, leaving at once if the client closes stdin."""
    poller = select.poll()
    poller.register(sys.stdin.fileno(), select.POLLIN)  # POLLHUP is always reported
    deadline = LAUNCHED + seconds
    while (left := deadline - time.monotonic()) > 0:
        events = poller.poll(left * 1000)
        if any(event & select.POLLHUP for _, event in events):
            sys.exit(0)
        if events:  # a request is waiting: it is read once we serve
            time.sleep(min(left, 0.05))


def main() -> None:
    """Parse the flags, then serve over stdio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay-start", type=float, default=0.0, metavar="SECONDS")
    parser.add_argument("--tools", type=int, default=None, metavar="N")
    parser.add_argument("--log-stderr", default=None, metavar="TEXT")
    options = parser.parse_args()
    if options.log_stderr is not None:
        print(options.log_stderr, file=sys.stderr, flush=True)
    if options.delay_start > 0:
        wait_unless_stdin_closes(options.delay_start)
    build(options.tools).run("stdio")


if __name__ == "__main__":
    main()
