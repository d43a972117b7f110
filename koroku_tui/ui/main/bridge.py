"""Turns the agent's hooks into Textual messages posted to the main screen.

One table, ``HOOK_MESSAGES``, says which message carries which hook's
payload: adding a hook is one payload class (``agent/hooks.py``), one row
here with its message class, and one handler on the screen. A hook left out
on purpose goes in ``NOT_SHOWN`` with the reason; a test checks that every
hook of ``HOOK_NAMES`` is in one of the two.

The agent worker runs on the App's loop, so the handlers only collect: the
widgets change later, in the screen's message handlers, in arrival order.

Why batches: Textual repaints a screen only when its message queue runs
empty. A fast stream posted one message per chunk kept the queue full for
the whole answer, so nothing was drawn, keys typed into the prompt included,
and Escape waited behind thousands of chunks (issue 22, item 21). The feed
posts what the hooks said as one :class:`~koroku_tui.ui.main.messages.AgentBatch`
at most :data:`BATCHES_PER_SECOND` times a second, so the queue empties and
the screen is drawn between two batches.

Why a step's last result waits for the next request: once its tools have
answered, the agent stores their results and builds the next request, CPU
work that shares one interpreter (one lock) with the screen. Shown at once,
a thousand calls' rows were drawn in the middle of that work and the next
request left ~45 ms later; shown when the agent asks the model again
(``on_model_request``), they are drawn while it waits for the reply. The
results before a step's last go at the usual pace (calls still run: holding
them would save nothing), and the last waits at most
:data:`RESULTS_WAIT_AT_MOST`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.message import Message

from koroku_tui.ui.main import messages as m

if TYPE_CHECKING:  # the agent (and its SDK) loads after the first frame
    from koroku_tui.agent import Agent
    from koroku_tui.agent.hooks import HookName

__all__ = [
    "BATCHES_PER_SECOND",
    "HOOK_MESSAGES",
    "NOT_SHOWN",
    "RESULTS_WAIT_AT_MOST",
    "HookFeed",
    "ToolRun",
    "coalesced",
    "connect_hooks",
]

BATCHES_PER_SECOND = 30
"""How often a running turn's hooks reach the screen at most (a frame every 33 ms)."""

RESULTS_WAIT_AT_MOST = 0.25
"""Seconds a step's last result (and what follows it) waits for the agent to ask the model."""

HOOK_MESSAGES: Mapping[HookName, Callable[[Any], m.AgentMessage]] = {
    "on_text_delta": m.AgentTextDelta,
    "on_thought_delta": m.AgentThoughtDelta,
    "on_reply_streamed": m.AgentReplyStreamed,
    "on_model_response": m.AgentModelResponse,
    "on_tool_call": m.AgentToolCall,
    "on_tool_result": m.AgentToolResult,
    "on_usage": m.AgentUsage,
    "on_compaction_started": m.AgentCompactionStarted,
    "on_compaction_finished": m.AgentCompactionFinished,
    "on_compaction_failed": m.AgentCompactionFailed,
    "on_error": m.AgentError,
    "on_retry": m.AgentRetry,
    "on_history_synced": m.AgentHistorySynced,
    "on_session_busy": m.AgentSessionBusy,
    "on_mcp_status": m.AgentMcpStatus,
}
"""Each hook the screen shows, and the message that carries its payload."""

NOT_SHOWN: Mapping[str, str] = {
    "on_model_request": "no row of its own: it tells the feed to show the results it held"
    " (HookFeed.model_asked)",
}
"""Hooks deliberately not bridged, each with why."""


class HookFeed:
    """The hooks' messages, posted to the screen in order, in batches (see the module's doc)."""

    def __init__(self, post: Callable[[Message], object]) -> None:
        self._post = post
        self._pending: list[m.AgentMessage] = []
        self._scheduled: asyncio.TimerHandle | None = None
        self._last_post = float("-inf")
        self._holding = False
        """A step's last result is pending: the batch waits for the next request (module doc)."""
        self._results_due: int | None = None
        """Results the step still owes (its calls, told by its model response), if known."""

    def add(self, message: m.AgentMessage) -> None:
        """Queue ``message`` for the next batch; the first after a pause goes at once.

        From a step's last result on (from each result, when the step's calls
        are not known), the batch waits for ``model_asked`` (at most
        ``RESULTS_WAIT_AT_MOST``); a message of another kind than the step's
        calls, results and usage ends the wait. The end of a reply's stream
        goes at once, with what came before it.
        """
        self._pending.append(message)
        if isinstance(message, m.AgentReplyStreamed):
            self.flush()  # the answer's last words: drawn now, not at the next batch's turn
            return
        if isinstance(message, m.AgentModelResponse):
            self._results_due = len(message.response.function_calls)
        last_result = isinstance(message, m.AgentToolResult) and self._last_result()
        if last_result and not self._holding:
            self._holding = True
            self._schedule(RESULTS_WAIT_AT_MOST)
        elif self._holding and not isinstance(message, _HELD):
            self._holding = False
            self._schedule(self._cadence())
        elif self._scheduled is None:
            self._schedule(self._cadence())

    def _last_result(self) -> bool:
        """Count a result in; True when it is its step's last (or the step's size is unknown)."""
        if self._results_due is None:
            return True
        self._results_due -= 1
        return self._results_due <= 0

    def model_asked(self) -> None:
        """The agent sent its next request: show what waited for it."""
        if self._holding:
            self.flush()

    def _cadence(self) -> float:
        """Seconds until the next batch may go (none for the first after a pause)."""
        return self._last_post + 1 / BATCHES_PER_SECOND - asyncio.get_running_loop().time()

    def _schedule(self, wait: float) -> None:
        if self._scheduled is not None:
            self._scheduled.cancel()
        loop = asyncio.get_running_loop()
        self._scheduled = loop.call_later(max(0.0, wait), self.flush)

    def flush(self) -> None:
        """Post what is pending now (before a message that must come after it)."""
        self._holding = False
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None
        if self._pending:
            batch, self._pending = self._pending, []
            self._last_post = asyncio.get_running_loop().time()
            self._post(m.AgentBatch(batch))

    def post(self, message: Message) -> None:
        """Post ``message`` after everything the hooks said before it."""
        self.flush()
        self._post(message)


_HELD = (m.AgentToolCall, m.AgentToolResult, m.AgentUsage)
"""What a step says between its results and the next request (stored results' usage)."""


@dataclass
class ToolRun:
    """Tool calls and results that came one after another: their rows are mounted at once."""

    calls: list[m.AgentToolCall] = field(default_factory=list)
    results: list[m.AgentToolResult] = field(default_factory=list)
    """Applied after every call of the run is shown (each result follows its own call)."""
    newest: m.AgentToolCall | m.AgentToolResult | None = None
    """The run's last message as the hooks said it (what the status line follows)."""


def coalesced(messages: Iterable[m.AgentMessage]) -> list[m.AgentMessage | ToolRun]:
    """``messages`` with neighbouring deltas of one kind joined, and tool runs grouped.

    A thousand one-character deltas become one write, and a thousand calls
    one mount, however they were split on the wire.
    """
    out: list[m.AgentMessage | ToolRun] = []
    texts: list[str] = []  # the pieces of the delta run that ends ``out``, joined once

    def end_deltas() -> None:
        last = out[-1] if out else None
        if texts and isinstance(last, (m.AgentTextDelta, m.AgentThoughtDelta)):
            whole = dataclasses.replace(last.delta, text="".join(texts))
            out[-1] = type(last)(whole)  # type: ignore[arg-type]
        texts.clear()

    for message in messages:
        last = out[-1] if out else None
        if isinstance(message, (m.AgentTextDelta, m.AgentThoughtDelta)):
            if type(message) is not type(last):
                end_deltas()
                out.append(message)
            texts.append(message.delta.text)
            continue
        end_deltas()
        if isinstance(message, (m.AgentToolCall, m.AgentToolResult)):
            if not isinstance(last, ToolRun):
                last = ToolRun()
                out.append(last)
            if isinstance(message, m.AgentToolCall):
                last.calls.append(message)
            else:
                last.results.append(message)
            last.newest = message
        else:
            out.append(message)
    end_deltas()
    return out


def _collector(feed: HookFeed, message: Callable[[Any], m.AgentMessage]) -> Callable[[Any], None]:
    # One positional parameter: the agent passes it the hook's typed payload.
    def handler(payload: Any) -> None:
        feed.add(message(payload))

    return handler


def connect_hooks(agent: Agent, post: Callable[[Message], object]) -> HookFeed:
    """Register one handler per hook of ``HOOK_MESSAGES``, feeding batches to ``post``."""
    feed = HookFeed(post)
    for name, message in HOOK_MESSAGES.items():
        agent.on(name, _collector(feed, message))
    agent.on("on_model_request", lambda _request: feed.model_asked())
    return feed
