"""What the Agent needs before its first step: a client, a compactor, the window, the replay.

Each of these may fail in its own way, and each failure is told in one
sentence: no key (or a client that cannot be built) is an :class:`AgentError`;
an unknown model or no network falls back to the default window; a replay
handler that cannot draw an event is reported once and the replay goes on.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Iterable

from google import genai

from koroku_tui.agent.config import AgentConfig
from koroku_tui.agent.context.budget import DEFAULT_WINDOW
from koroku_tui.agent.context.compaction import MessageStore, SummaryCompactor
from koroku_tui.agent.hooks import ErrorNotice, HookEmitter
from koroku_tui.agent.protocols import ReplayHandler
from koroku_tui.agent.wire.client import has_credentials, make_client, missing_key_help
from koroku_tui.agent.wire.errors import AgentError, ErrorKind
from koroku_tui.agent.wire.redaction import Redactor
from koroku_tui.events import Event
from koroku_tui.store import SessionManager

__all__ = [
    "client_from_environment",
    "context_window",
    "replay",
    "session_model",
    "summary_compactor",
]

logger = logging.getLogger(__name__)


def client_from_environment(config: AgentConfig) -> genai.Client:
    """The client ``Agent()`` builds when given none; an :class:`AgentError` if it cannot."""
    if not has_credentials():
        raise AgentError(missing_key_help(config.command), ErrorKind.AUTH)
    try:
        return make_client(
            api_version=config.api_version,
            # Never shorter than the stall limit, which must be what
            # ends a silent request (with its own sentence).
            timeout_seconds=max(config.request_timeout, config.stall_timeout),
        )
    except Exception as exc:  # e.g. Vertex selected but no project or credentials
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise AgentError(
            f"Could not set up the Gemini client ({reason}); check GEMINI_API_KEY "
            "(or the Vertex AI settings).",
            ErrorKind.AUTH,
        ) from exc


def summary_compactor(
    client: genai.Client, history: MessageStore, config: AgentConfig, redactor: Redactor
) -> SummaryCompactor:
    """The standard compactor (``config.auto_compact``): a summary by ``compaction_model``;
    the lasting facts it proposes wait in ``history`` when that is the store."""
    return SummaryCompactor(
        client,
        history,
        config.memory_dir,
        config.compaction_model,
        retry=config.retry,
        redact=redactor.text,
        suggestions=history if isinstance(history, SessionManager) else None,
    )


async def context_window(
    client: genai.Client, model: str, config: AgentConfig, known: int | None = None
) -> int:
    """The model's input token limit: the configured one, else ``known`` (the model list's),
    else Gemini's, else the default."""
    if config.context_window or known:
        return config.context_window or known or DEFAULT_WINDOW
    try:
        async with asyncio.timeout(config.model_info_timeout):
            info = await client.aio.models.get(model=model)
    except Exception as exc:
        # Offline or an unknown model: the default fits every Gemini 3 model.
        logger.info("models.get(%s) failed (%r); assuming the default window", model, exc)
        return DEFAULT_WINDOW
    return info.input_token_limit or DEFAULT_WINDOW


async def session_model(store: SessionManager | None, configured: str, config: AgentConfig) -> str:
    """The model the current session's turns use: the one it chose ("Change model…", kept
    with it), else ``configured`` (the settings'; also when ``config`` says to keep it)."""
    if store is None or not config.session_models:
        return configured
    return (await store.current_session()).model or configured


async def replay(events: Iterable[Event], handler: ReplayHandler, emitter: HookEmitter) -> None:
    """Call ``await handler(event=event)`` for each event, oldest first.

    A failing handler is logged for each event and reported on ``on_error``
    once: one event the handler cannot draw must not hide the rest.
    """
    reported = False
    for event in list(events):
        try:
            shown = handler(event=event)
            if inspect.isawaitable(shown):
                await shown
        except Exception as exc:
            logger.error("replay handler failed", exc_info=exc)
            if not reported:
                reported = True
                notice = ErrorNotice(
                    f"Showing the history failed ({type(exc).__name__}); "
                    "the conversation itself is intact.",
                    ErrorKind.INTERNAL,
                )
                await emitter.emit("on_error", notice)
