"""The error a turn ends with, told apart from the SDK that causes it.

``AgentError`` (and its ``ErrorKind``) are what the UI catches and shows:
they live here, free of the SDK and its transport, so that the screens that
name them load before the first frame without the Gemini SDK (its import
alone takes ~1.5 s). Sorting the SDK's exceptions into them is
``agent.wire.errors``'s job.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["AgentError", "ErrorKind", "NoCompactorError", "retry_words"]


class ErrorKind(StrEnum):
    """The families of failure the user is told about differently."""

    RATE_LIMIT = "rate_limit"
    """429: quota or rate limit used up."""
    AUTH = "auth"
    """Bad, expired or unauthorised API key (400 API_KEY_INVALID, 401, 403)."""
    NETWORK = "network"
    """Gemini could not be reached, or the connection dropped before an answer."""
    TIMEOUT = "timeout"
    """No answer within the request time limit."""
    SERVER = "server"
    """5xx: Gemini's own trouble."""
    BAD_REQUEST = "bad_request"
    """Any other 4xx: the API refused the request and says why."""
    CUT_OFF = "cut_off"
    """The answer broke off part way; what arrived was kept."""
    EMPTY_ANSWER = "empty_answer"
    """The stream ended without anything worth keeping (closed early, broken off)."""
    INCOMPLETE = "incomplete"
    """Gemini ended its reply without an answer and said why (safety filter, token
    limit, blocked prompt...); ``--print`` exits 2 for it, as for a cut answer."""
    UNREADABLE = "unreadable"
    """The answer could not be parsed."""
    STORE = "store"
    """The conversation could not be saved or read."""
    BUSY = "busy"
    """Another Koroku process is running a turn on this conversation; nothing was stored."""
    NOTHING_TO_RETRY = "nothing_to_retry"
    """``retry()`` was called when the context does not end with a user message."""
    TOOL_SERVER = "tool_server"
    """An MCP server the turn goes on without (it did not start, died, or stopped
    answering): news, not a failed turn."""
    INTERNAL = "internal"
    """A bug or an unexpected failure inside Koroku."""


class AgentError(Exception):
    """A turn failed; ``user_message`` is one sentence saying what happened and what to do.

    The user's message stays stored: call ``Agent.retry()`` to send the same
    context again, or send a new message.
    """

    def __init__(self, user_message: str, kind: ErrorKind = ErrorKind.INTERNAL) -> None:
        super().__init__(user_message)
        self.user_message = user_message
        self.kind = kind

    @property
    def retryable(self) -> bool:
        """True when ``Agent.retry()`` makes sense (the context ends with a user message)."""
        return self.kind not in (ErrorKind.NOTHING_TO_RETRY, ErrorKind.CUT_OFF)


class NoCompactorError(AgentError):
    """``Agent.compact()`` was asked for, but the agent has no compactor."""

    def __init__(self) -> None:
        super().__init__(
            "Compaction is not available in this session: no compactor is configured.",
            ErrorKind.INTERNAL,
        )


_RETRY_WORDS = {
    ErrorKind.RATE_LIMIT: "rate limited",
    ErrorKind.SERVER: "Gemini server error",
    ErrorKind.NETWORK: "connection failed",
    ErrorKind.TIMEOUT: "no answer in time",
    ErrorKind.EMPTY_ANSWER: "empty reply",
}


def retry_words(kind: ErrorKind, reason: str) -> str:
    """Why a request is retried, in two or three words (``reason`` when there are none)."""
    return _RETRY_WORDS.get(kind, reason)
