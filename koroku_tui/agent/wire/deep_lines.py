"""Streamed lines nested too deeply for a JSON parser, cut down before the SDK parses them.

The SDK reads each server-sent event with ``json.loads``, which recurses once
per level: call arguments nested ~990 levels deep raised ``RecursionError``
before Koroku saw the call, and the turn ended as "Something went wrong
inside Koroku". Here, before the SDK reads a line, any object or array that
starts deeper than :data:`CUT_DEPTH` levels into the line is replaced by a
string that says how many levels it held (``call_depth.cut_marker``). The
line then parses at any depth, and ``call_depth`` counts the marker as the
levels it stands for: the call is answered "nested too deeply (N levels)",
N being the depth the model sent, as a call of 65 levels is.

Only ``alt=sse`` responses are touched, and only a line with more than
:data:`CUT_DEPTH` brackets is scanned at all (a count in C; no answer needs
that many levels). Those requests ask for an uncompressed stream, so the
lines can be read as they arrive.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

import httpx2

from koroku_tui.agent.wire.call_depth import cut_marker

__all__ = ["CUT_DEPTH", "cap_stream_depth", "capped_line"]

CUT_DEPTH = 256
"""Levels of one streamed line left as they came (the call's arguments start ~7 levels in)."""

_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
"""JSON strings (skipped whole, brackets in them are text) and brackets."""


def capped_line(line: bytes) -> bytes:
    """``line`` with every container deeper than :data:`CUT_DEPTH` replaced by its marker."""
    if line.count(b"{") + line.count(b"[") <= CUT_DEPTH:
        return line
    pieces: list[bytes] = []
    kept_from = 0  # where the text not yet copied starts
    depth = 0
    cut_start = -1  # where the container being cut starts, or -1
    deepest = 0
    for token in _TOKENS.finditer(line):
        mark = token.group()[:1]
        if mark == b'"':
            continue
        if mark in b"{[":
            depth += 1
            if depth == CUT_DEPTH + 1 and cut_start < 0:
                cut_start, deepest = token.start(), depth
            deepest = max(deepest, depth)
            continue
        if cut_start >= 0 and depth == CUT_DEPTH + 1:
            pieces += [line[kept_from:cut_start], _marker_json(deepest - CUT_DEPTH)]
            kept_from, cut_start = token.end(), -1
        depth -= 1
    if not pieces:
        return line  # many brackets, but inside strings or side by side
    if cut_start >= 0:  # the line ends inside a cut container: cut it all the same
        pieces += [line[kept_from:cut_start], _marker_json(deepest - CUT_DEPTH)]
        return b"".join(pieces)
    pieces.append(line[kept_from:])
    return b"".join(pieces)


def _marker_json(levels: int) -> bytes:
    return json.dumps(cut_marker(levels)).encode()


class _CappedLines(httpx2.AsyncByteStream):
    """A response body passed on line by line, each line through :func:`capped_line`."""

    def __init__(self, inner: httpx2.AsyncByteStream) -> None:
        self._inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending: list[bytes] = []  # the start of a line whose end has not arrived
        async for chunk in self._inner:
            end = chunk.rfind(b"\n")
            if end < 0:
                pending.append(chunk)
                continue
            whole = b"".join([*pending, chunk[: end + 1]])
            pending = [chunk[end + 1 :]] if end + 1 < len(chunk) else []
            yield b"\n".join(capped_line(line) for line in whole.split(b"\n"))
        if pending:
            yield capped_line(b"".join(pending))

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _ask_plain_stream(request: httpx2.Request) -> None:
    if request.url.params.get("alt") == "sse":
        request.headers["Accept-Encoding"] = "identity"


async def _cap_stream(response: httpx2.Response) -> None:
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    streamed = response.request.url.params.get("alt") == "sse" and encoding == "identity"
    if streamed and isinstance(response.stream, httpx2.AsyncByteStream):
        response.stream = _CappedLines(response.stream)


def cap_stream_depth(client: httpx2.AsyncClient) -> httpx2.AsyncClient:
    """``client``, its streamed Gemini replies passed through :func:`capped_line`."""
    client.event_hooks["request"].append(_ask_plain_stream)
    client.event_hooks["response"].append(_cap_stream)
    return client
