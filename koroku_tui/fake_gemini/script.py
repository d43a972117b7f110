"""Scripted answers: what the fake model says, one item per generate request.

A test queues items (:class:`Reply`, :class:`ErrorReply`, :class:`Hang`, or a
callable ``(RecordedRequest) -> item``) and the server consumes one per
``generateContent`` / ``streamGenerateContent`` request that passes validation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from koroku_tui.fake_gemini.recording import RecordedRequest


@dataclass(frozen=True)
class Text:
    """A text part; ``thought=True`` makes it a thought summary."""

    text: str
    thought: bool = False
    signature: bytes | None = None
    """Explicit signature. Setting one on any part turns off auto signatures."""


@dataclass(frozen=True)
class Call:
    """A functionCall part. ``id=None`` gets a fresh id when served."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None
    signature: bytes | None = None
    """Explicit signature. Setting one on any part turns off auto signatures."""


Part: TypeAlias = Text | Call


@dataclass(frozen=True)
class Usage:
    """Token counts to report; None fields are estimated by the server."""

    prompt_tokens: int | None = None
    candidates_tokens: int | None = None
    thoughts_tokens: int | None = None
    cached_tokens: int | None = None
    """``cachedContentTokenCount`` (of the prompt's); None: not sent, as without a cache."""


@dataclass(frozen=True)
class ErrorReply:
    """An API error: as the HTTP answer, or as a mid-stream ``error`` event.

    ``message``/``status`` default to the real API's wording for ``code``.
    """

    code: int
    message: str | None = None
    status: str | None = None
    delay: float = 0.0
    """Seconds to wait before answering."""


@dataclass(frozen=True)
class Reply:
    """One model step.

    ``chunks`` is how the step streams: one inner tuple of parts per SSE event.
    A non-streaming request gets all parts in one response, with adjacent text
    parts of the same kind merged, as the real API does.

    Unless a part carries an explicit signature, the server signs the step with
    fresh random bytes: on the FIRST functionCall part, else on the last part.
    """

    chunks: tuple[tuple[Part, ...], ...]
    finish_reason: str | None = "STOP"
    usage: Usage = Usage()
    auto_signature: bool = True
    delay: float = 0.0
    """Seconds before the answer starts (before the HTTP headers)."""
    chunk_delay: float = 0.0
    """Seconds between streamed chunks."""
    error_after: int | None = None
    """Stream only: send ``error`` as an SSE event after this many chunks."""
    error: ErrorReply | None = None
    cut_after: int | None = None
    """Stream only: drop the connection after this many chunks."""
    clean_cut: bool = False
    """With ``cut_after``: end the HTTP body properly instead of aborting it."""
    block_reason: str | None = None
    """Refuse the prompt itself: one answer with ``promptFeedback.blockReason`` and
    no candidate at all (``chunks`` and ``finish_reason`` are not sent)."""

    @property
    def parts(self) -> tuple[Part, ...]:
        """All parts of the step, chunks flattened."""
        return tuple(p for chunk in self.chunks for p in chunk)


@dataclass(frozen=True)
class Hang:
    """Never answer until :meth:`FakeGemini.release` (or the server stops).

    After a release ``then`` is served; without it the connection is closed.
    """

    then: ScriptItem | None = None


Responder: TypeAlias = Callable[[RecordedRequest], "ScriptItem"]
"""Dynamic behaviour: called in the server thread with the request."""

ScriptItem: TypeAlias = Reply | ErrorReply | Hang | Responder


def _split(text: str, pieces: int) -> list[str]:
    """Cut ``text`` into ``pieces`` non-empty runs (fewer if it is short)."""
    pieces = max(1, min(pieces, len(text) or 1))
    size, extra = divmod(len(text), pieces)
    out: list[str] = []
    start = 0
    for i in range(pieces):
        end = start + size + (1 if i < extra else 0)
        out.append(text[start:end])
        start = end
    return out


def text_reply(
    text: str,
    *,
    thought: str | None = None,
    pieces: int = 1,
    signature_chunk: bool = False,
    finish_reason: str | None = "STOP",
    usage: Usage | None = None,
    delay: float = 0.0,
    chunk_delay: float = 0.0,
) -> Reply:
    """A text answer, optionally after a thought summary.

    ``pieces`` splits the text over that many streamed chunks. With
    ``signature_chunk`` the stream ends with a chunk holding one EMPTY text
    part that carries only the signature, as Gemini 3 does.
    """
    chunks: list[tuple[Part, ...]] = []
    if thought is not None:
        chunks.append((Text(thought, thought=True),))
    chunks.extend((Text(piece),) for piece in _split(text, pieces))
    if signature_chunk:
        chunks.append((Text(""),))
    return _streamed(chunks, finish_reason, usage, delay, chunk_delay)


def _streamed(
    chunks: list[tuple[Part, ...]],
    finish_reason: str | None,
    usage: Usage | None,
    delay: float,
    chunk_delay: float,
) -> Reply:
    """A candidate streamed as ``chunks`` (what ``text_reply`` and ``call_reply`` build)."""
    return Reply(
        tuple(chunks),
        finish_reason=finish_reason,
        usage=usage or Usage(),
        delay=delay,
        chunk_delay=chunk_delay,
    )


def call_reply(
    *calls: Call | tuple[str, Mapping[str, Any]],
    text: str | None = None,
    thought: str | None = None,
    finish_reason: str | None = "STOP",
    usage: Usage | None = None,
    delay: float = 0.0,
    chunk_delay: float = 0.0,
) -> Reply:
    """A step with one or more (parallel) function calls.

    ``call_reply(("read_file", {"path": "a.txt"}))``: ids and the signature on
    the first call are generated when served. Streams as: thought, text, then
    all calls in one chunk.
    """
    if not calls:
        raise ValueError("call_reply needs at least one call")
    parts = tuple(c if isinstance(c, Call) else Call(c[0], dict(c[1])) for c in calls)
    chunks: list[tuple[Part, ...]] = []
    if thought is not None:
        chunks.append((Text(thought, thought=True),))
    if text is not None:
        chunks.append((Text(text),))
    chunks.append(parts)
    return _streamed(chunks, finish_reason, usage, delay, chunk_delay)


def blocked_prompt(reason: str = "SAFETY") -> Reply:
    """Gemini refusing the prompt outright: ``promptFeedback.blockReason``, no candidates."""
    return Reply((), finish_reason=None, block_reason=reason)


def thoughts_only(thought: str, *, finish_reason: str | None = "MAX_TOKENS") -> Reply:
    """A step that thinks and never answers (what a token limit hit while thinking leaves)."""
    return Reply(((Text(thought, thought=True),),), finish_reason=finish_reason)


def error_reply(
    code: int, message: str | None = None, *, status: str | None = None, delay: float = 0.0
) -> ErrorReply:
    """An HTTP error answer, e.g. ``error_reply(429)`` or ``error_reply(503)``."""
    return ErrorReply(code, message, status, delay)


def stream_error(reply: Reply, *, after: int, error: ErrorReply | None = None) -> Reply:
    """``reply`` whose stream breaks with an ``error`` event after ``after`` chunks.

    The default error is a 500 INTERNAL. A non-streaming request gets the error
    as its HTTP answer instead.
    """
    return dataclasses.replace(reply, error_after=after, error=error or ErrorReply(500))


def stream_cut(reply: Reply, *, after: int, clean: bool = False) -> Reply:
    """``reply`` whose connection drops after ``after`` chunks, without finishReason.

    By default the HTTP body is aborted mid-way (the client's transport raises);
    ``clean=True`` ends the body properly so the stream just stops early. A
    non-streaming request gets its connection closed without an answer.
    """
    return dataclasses.replace(reply, cut_after=after, clean_cut=clean)


def last_user_text(request: RecordedRequest) -> str:
    """Text of the last user content holding text, or "" (handy in responders)."""
    for content in reversed(request.contents):
        if content.get("role") != "user":
            continue
        texts = [p["text"] for p in content.get("parts") or () if isinstance(p.get("text"), str)]
        if texts:
            return "".join(texts)
    return ""


def echo_responder(request: RecordedRequest) -> ScriptItem:
    """Answers ``You said: <last user text>``; the CLI's default behaviour."""
    return text_reply(f"You said: {last_user_text(request)}", pieces=3, signature_chunk=True)
