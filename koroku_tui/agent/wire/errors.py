"""What went wrong in a turn, said in one sentence the user can act on.

The SDK and its transport raise a zoo of exceptions (``APIError`` with an HTTP
code, ``httpx2`` transport errors, bare ``TimeoutError``, JSON and pydantic
errors for unreadable answers). :func:`describe_failure` sorts them into an
:class:`ErrorKind` and words them; :class:`AgentError` is what ``Agent.run``
raises once retries are exhausted, carrying that sentence (both live in
``agent.errors``, which the UI imports without the SDK).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx2
import pydantic
from google.genai import errors

from koroku_tui.agent.errors import AgentError, ErrorKind, NoCompactorError

__all__ = [
    "AgentError",
    "EmptyStreamError",
    "ErrorKind",
    "FailureDescription",
    "NoCompactorError",
    "StallError",
    "StreamCutError",
    "api_error_reason",
    "describe_failure",
    "seconds_text",
    "short_reason",
]

_MAX_API_MESSAGE = 300
_AUTH_REASONS = frozenset({"API_KEY_INVALID", "API_KEY_EXPIRED", "API_KEY_SERVICE_BLOCKED"})


class EmptyStreamError(Exception):
    """The stream ended before a single chunk: nothing was received, so it is retried."""

    def __init__(self) -> None:
        super().__init__("Gemini closed the stream without sending anything")


class StreamCutError(Exception):
    """The stream ended cleanly but without a finish reason: the answer is incomplete."""

    def __init__(self) -> None:
        super().__init__("the stream ended before Gemini said it was finished")


class StallError(Exception):
    """Gemini sent nothing (no headers, no chunk) for ``seconds``: the request is given up.

    Not retried: the wait already lasted the whole stall limit, and retrying
    would multiply it (four silent attempts once held a turn for 489 s).
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(f"Gemini sent nothing for {seconds_text(seconds)} s")
        self.seconds = seconds


def seconds_text(seconds: float) -> str:
    """A duration for a sentence: ``120``, ``4``, ``0.3`` (the caller adds "s")."""
    if seconds >= 1:
        return f"{seconds:.0f}"
    return f"{seconds:.1f}".rstrip("0").rstrip(".") or "0"


@dataclass(frozen=True)
class FailureDescription:
    """How a failure is classified and told."""

    kind: ErrorKind
    message: str


def _one_line(text: str, limit: int = _MAX_API_MESSAGE) -> str:
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 3].rstrip() + "..."
    return flat.rstrip(".")


def _error_body(exc: errors.APIError) -> dict[str, Any]:
    details: Any = exc.details
    if isinstance(details, dict):
        inner = details.get("error", details)
        if isinstance(inner, dict):
            return inner
    return {}


def api_error_reason(exc: errors.APIError) -> str | None:
    """The ``ErrorInfo.reason`` of an API error (e.g. ``API_KEY_INVALID``), if any."""
    for detail in _error_body(exc).get("details") or ():
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("ErrorInfo"):
            reason = detail.get("reason")
            return str(reason) if reason else None
    return None


def _describe_api_error(exc: errors.APIError) -> FailureDescription:
    code = exc.code
    status = exc.status or ""
    label = f"{code} {status}".strip()
    api_message = _one_line(exc.message or "no details given")
    if code == 429:
        return FailureDescription(
            ErrorKind.RATE_LIMIT,
            f"Gemini's rate limit or quota is used up ({label}): wait a minute and retry, "
            "or check your plan and billing in Google AI Studio.",
        )
    if code in (401, 403) or (code == 400 and api_error_reason(exc) in _AUTH_REASONS):
        return FailureDescription(
            ErrorKind.AUTH,
            f"Gemini rejected the API key ({label}: {api_message}): check GEMINI_API_KEY "
            "or create a new key at https://aistudio.google.com/apikey.",
        )
    if code in (408, 504):
        return FailureDescription(
            ErrorKind.TIMEOUT,
            f"Gemini took too long to answer ({label}): retry in a moment.",
        )
    if code >= 500:
        return FailureDescription(
            ErrorKind.SERVER,
            f"Gemini had a problem on its side ({label}: {api_message}): retry in a moment.",
        )
    return FailureDescription(
        ErrorKind.BAD_REQUEST, f"Gemini refused the request ({label}: {api_message})."
    )


def short_reason(exc: BaseException) -> str:
    """A few words on a transient failure, for "retrying in 2 s (reason)" notices."""
    if isinstance(exc, errors.APIError):
        return f"Gemini answered {exc.code} {exc.status or ''}".strip()
    if isinstance(exc, EmptyStreamError):
        return "Gemini closed the stream without answering"
    if isinstance(exc, httpx2.TimeoutException | TimeoutError):
        return "Gemini did not answer in time"
    if isinstance(exc, httpx2.TransportError | ConnectionError | OSError):
        return f"the connection to Gemini failed ({type(exc).__name__})"
    return type(exc).__name__


def describe_failure(exc: BaseException) -> FailureDescription:
    """Classify ``exc`` (raised while talking to Gemini) and word it in one sentence."""
    if isinstance(exc, AgentError):
        return FailureDescription(exc.kind, exc.user_message)
    if isinstance(exc, StallError):
        return FailureDescription(
            ErrorKind.TIMEOUT,
            f"Gemini sent nothing for {seconds_text(exc.seconds)} s; try again "
            "(KOROKU_STALL_TIMEOUT sets how long Koroku waits).",
        )
    if isinstance(exc, errors.APIError):
        return _describe_api_error(exc)
    if isinstance(exc, EmptyStreamError):
        return FailureDescription(
            ErrorKind.EMPTY_ANSWER,
            "Gemini closed the connection without answering: retry in a moment.",
        )
    if isinstance(exc, StreamCutError):
        # Reaching here means nothing worth keeping arrived (a kept partial is
        # reported by the agent as CUT_OFF), so resending is the right move.
        return FailureDescription(
            ErrorKind.EMPTY_ANSWER,
            "Gemini's answer stopped before it was finished: retry in a moment.",
        )
    if isinstance(exc, httpx2.TimeoutException | TimeoutError):
        return FailureDescription(
            ErrorKind.TIMEOUT,
            "Gemini did not answer in time: check your connection and retry.",
        )
    if isinstance(exc, httpx2.TransportError | ConnectionError | OSError):
        return FailureDescription(
            ErrorKind.NETWORK,
            f"Koroku could not reach Gemini ({_one_line(str(exc) or type(exc).__name__, 120)}): "
            "check your internet connection and retry.",
        )
    if isinstance(
        exc, errors.UnknownApiResponseError | json.JSONDecodeError | pydantic.ValidationError
    ):
        return FailureDescription(
            ErrorKind.UNREADABLE,
            "Gemini sent an answer Koroku could not read: retry, and update Koroku if it "
            "keeps happening.",
        )
    return FailureDescription(
        ErrorKind.INTERNAL,
        f"Something went wrong inside Koroku ({type(exc).__name__}: "
        f"{_one_line(str(exc), 160)}): retry, and report it if it keeps happening.",
    )
