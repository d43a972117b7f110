"""A hand-written stdio MCP server loop, for the servers that must misbehave on purpose.

The SDK's server classes answer every request correctly; a server that never
answers, dies mid-call or writes garbage has to speak newline-delimited
JSON-RPC itself. This module is that loop and nothing more: the legacy
``initialize`` handshake (any other era's probe, ``server/discover``, gets
"method not found", so the SDK's client falls back to the handshake as it
does with the older servers people run), ``ping``, ``tools/list`` and
``tools/call``. Standard library only, so a server starts in milliseconds.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import cycle
from typing import Any

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The versions the ``initialize`` handshake negotiates; a client's own is echoed."""

METHOD_NOT_FOUND = -32601
PARSE_ERROR = -32700

Json = dict[str, Any]
Answer = Callable[[Json], Json | None]
"""A tool's body: its arguments in, a CallToolResult out (None: never answer; raise
:class:`RpcError` to answer a JSON-RPC error). Text holding ``\\udcXX`` (surrogateescape)
goes out as the raw byte ``XX``: how a server writes what is not UTF-8."""

WORDS_SCHEMA: Json = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "Any words."}},
}
"""A small valid input schema for tools whose arguments do not matter."""


def text_result(text: str, *, is_error: bool = False) -> Json:
    """A CallToolResult holding one text block."""
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def says(text: str) -> Answer:
    """A tool body that answers ``text`` whatever its arguments."""
    return lambda arguments: text_result(text)


@dataclass(frozen=True)
class RawTool:
    """One tool as ``tools/list`` declares it, exactly as given (no checks: that is the point)."""

    name: str
    answer: Answer
    description: str = ""
    input_schema: Json = field(default_factory=lambda: dict(WORDS_SCHEMA))

    def declared(self) -> Json:
        """The tool's ``tools/list`` entry."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        }


def echo_tool(name: str = "echo") -> RawTool:
    """A tool that answers its ``text`` argument back: proof the server still works."""
    return RawTool(name, lambda args: text_result(str(args.get("text", ""))), "Say the text back.")


class RawServer:
    """Serves ``tools`` over this process's stdin and stdout until stdin ends."""

    def __init__(
        self,
        name: str,
        tools: Sequence[RawTool],
        *,
        noise: Iterable[str] = (),
        list_changed: bool = False,
        pings: bool = True,
    ) -> None:
        self.name = name
        self.list_changed = list_changed
        """Says in ``initialize`` that it sends ``notifications/tools/list_changed``."""
        self.pings = pings
        """Answers ``ping`` (else "method not found", as a server that never learnt it)."""
        self.lists_served = 0
        self.tools = {tool.name: tool for tool in tools}
        self._listing = [tool.declared() for tool in tools]
        noise = list(noise)
        self._noise: Iterator[str] | None = cycle(noise) if noise else None

    def serve(self) -> None:
        """Answer requests line by line; return when stdin reaches its end."""
        self._chatter()
        for line in sys.stdin.buffer:
            if line.strip():
                self._handle(line)

    def _handle(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self._send({"jsonrpc": "2.0", "id": None, "error": _error(PARSE_ERROR, "not JSON")})
            return
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            return  # a notification, or an answer to a request we never sent
        try:
            result = self._answer(str(message["method"]), message.get("params") or {})
        except (MethodNotFound, RpcError) as refused:
            self._send({"jsonrpc": "2.0", "id": message["id"], "error": refused.error})
            return
        if result is not None:
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def _answer(self, method: str, params: Json) -> Json | None:
        if method == "initialize":
            asked = params.get("protocolVersion")
            return {
                "protocolVersion": asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
                "capabilities": {"tools": {"listChanged": self.list_changed}},
                "serverInfo": {"name": self.name, "version": "0.1"},
            }
        if method == "ping" and self.pings:
            return {}
        if method == "tools/list":
            self.lists_served += 1
            return {"tools": self._listing}
        if method == "tools/call":
            tool = self.tools.get(str(params.get("name")))
            if tool is None:
                return text_result(f"no tool named {params.get('name')!r}", is_error=True)
            return tool.answer(params.get("arguments") or {})
        raise MethodNotFound(method)

    def _send(self, message: Json) -> None:
        line = json.dumps(message, ensure_ascii=False).encode(errors="surrogateescape")
        sys.stdout.buffer.write(line + b"\n")
        sys.stdout.buffer.flush()
        self._chatter()

    def notify(self, method: str) -> None:
        """Send the notification ``method`` (no params), as a server may at any time."""
        self._send({"jsonrpc": "2.0", "method": method})

    def _chatter(self) -> None:
        """Write the next line of noise, if this server makes any."""
        if self._noise is not None:
            sys.stdout.buffer.write(next(self._noise).encode() + b"\n")
            sys.stdout.buffer.flush()


class RpcError(Exception):
    """Raised by a tool's body: the call is answered with this JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.error = _error(code, message)


class MethodNotFound(Exception):
    """A request this server does not serve (``server/discover`` among them)."""

    def __init__(self, method: str) -> None:
        super().__init__(method)
        self.error = _error(METHOD_NOT_FOUND, f"method not found: {method}")


def _error(code: int, message: str) -> Json:
    return {"code": code, "message": message}
