"""When the agent compacts, and how a compaction is announced.

The agent asks :meth:`CompactionRunner.maybe_run` right after storing a typed
user message, never inside a tool loop. It runs the compactor when the
context budget says so, unless compaction just failed on (nearly) the same
context: a failing summariser should not cost a request on every turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field

from koroku_tui.agent.context.budget import ContextBudget, summarise_due
from koroku_tui.agent.context.compaction import CompactionError
from koroku_tui.agent.hooks import (
    CompactionFailed,
    CompactionFinished,
    CompactionStarted,
    HookEmitter,
)
from koroku_tui.agent.protocols import Compactor, History
from koroku_tui.agent.wire.errors import NoCompactorError
from koroku_tui.events import CompactionEvent, Event

__all__ = ["CompactionRunner"]

logger = logging.getLogger(__name__)

NOTHING_TO_COMPACT = (
    "Nothing to summarise yet: the context is almost all the current request, "
    "so the conversation was left as it was."
)


@dataclass(eq=False)
class CompactionRunner:
    """Runs a :class:`Compactor` between turns, with the ``on_compaction_*`` hooks."""

    compactor: Compactor | None
    """The summariser, or None (compaction is then skipped)."""
    _: KW_ONLY
    emitter: HookEmitter
    """Where the hooks go."""
    history: History
    """The store; the compactor gets its messages with ids."""
    context: Callable[[], Sequence[Event]]
    """The agent's current context (for the failure marker)."""
    budget: Callable[[], ContextBudget]
    """The agent's current context budget."""
    store: Callable[[CompactionEvent, bool], Awaitable[None]]
    """Stores an event the compactor did not store itself (``stored=False``); refreshes
    the agent's context either way."""
    retry_after_events: int
    """After a failure: the events to add before compacting on its own again."""
    _failed_at: tuple[int, int] | None = field(default=None, init=False)
    """(id of the context's first event, its length) when compaction last failed."""

    def require(self) -> Compactor:
        """The compactor; raises ``NoCompactorError`` when there is none."""
        if self.compactor is None:
            raise NoCompactorError()
        return self.compactor

    def _recently_failed(self, events: Sequence[Event]) -> bool:
        if self._failed_at is None or not events:
            return False
        base, size = self._failed_at
        same_base = id(events[0]) == base
        return same_base and len(events) < size + self.retry_after_events

    async def maybe_run(self) -> CompactionEvent | None:
        """Compact if the budget says so and it did not just fail on this context."""
        if self.compactor is None or not summarise_due(self.budget()):
            return None
        if self._recently_failed(self.context()):
            logger.info("compaction skipped: it failed on this context a moment ago")
            return None
        return await self.run("threshold")

    async def run(self, reason: str) -> CompactionEvent | None:
        """Compact now; ``reason`` is ``"threshold"`` or ``"manual"``. None when nothing changed."""
        compactor = self.require()
        before = self.budget()
        await self.emitter.emit("on_compaction_started", CompactionStarted(reason, before))
        try:
            outcome = await compactor.compact(await self.history.context_messages())
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.warning("compaction failed", exc_info=exc)
            await self._failed(_sentence(exc))
            return None
        if outcome is None:
            await self._failed(NOTHING_TO_COMPACT, nothing_to_do=True)
            return None
        summarised: int | None = None
        suggested = 0
        if isinstance(outcome, CompactionEvent):
            event, stored, warning = outcome, False, None
        else:
            event, stored, warning = outcome.event, outcome.message_id is not None, outcome.warning
            summarised, suggested = outcome.summarised_events, outcome.suggested
        await self.store(event, stored)
        self._failed_at = None
        finished = CompactionFinished(event, self.budget(), warning, before, summarised, suggested)
        await self.emitter.emit("on_compaction_finished", finished)
        return event

    async def _failed(self, message: str, *, nothing_to_do: bool = False) -> None:
        events = self.context()
        self._failed_at = (id(events[0]), len(events)) if events else None
        await self.emitter.emit("on_compaction_failed", CompactionFailed(message, nothing_to_do))


def _sentence(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, CompactionError):
        return text  # already a sentence for the user
    return (
        f"Compaction failed ({type(exc).__name__}: {text[:160]}); "
        "the conversation was left as it was."
    )
