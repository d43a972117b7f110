"""How full the context is: the numbers behind ``should_summarise`` and the UI's gauge.

Both read one ``ContextBudget`` so the gauge can never disagree with the
trigger: its ``context_remaining_percent`` is the seed design's "x% context
remaining", measured against the compaction threshold (100% = empty, 0% =
compact now), logged by :func:`should_summarise` and shown by the gauge.

Tokens used are the last measured ``prompt_token_count`` (it covers
system instruction, tools and history) plus the reply that came with it, plus
an estimate for whatever was appended since. Right after a compaction nothing
has been measured yet, so the whole figure is an estimate and says so.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

from koroku_tui.config.settings import DEFAULT_COMPACT_AT
from koroku_tui.events import CompactionEvent, Event, SessionEvent
from koroku_tui.events.views import Attached, Called, Said, ToolResult, part_views

logger = logging.getLogger(__name__)

DEFAULT_WINDOW = 1_048_576
#: Compact when the context reaches this share of the window (``KOROKU_COMPACT_AT``).
DEFAULT_THRESHOLD_SHARE = DEFAULT_COMPACT_AT
#: Compaction is driven by tokens, as Gemini CLI does: a long-lived assistant
#: keeps the detail of every event until the window really fills. An event
#: count (the seed design compacted after 30) is only an opt-in setting
#: (``KOROKU_COMPACT_AFTER_EVENTS``).
DEFAULT_EVENT_LIMIT: int | None = None
#: Rough size of one token in characters, used only for what was not measured.
CHARS_PER_TOKEN = 4
#: System instruction and tool declarations, for a context never measured.
BASE_ESTIMATE_TOKENS = 1_500
#: An image sent inline (an ``@`` attachment): Gemini counts it by its tiles,
#: 258 tokens each, 1,120 at Gemini 3's default resolution, whatever its bytes.
#: Counted by its base64 instead, a 3 MB photo passed the compaction threshold
#: and compacted the session before the message was even sent.
IMAGE_ESTIMATE_TOKENS = 1_500


@dataclass(frozen=True)
class BudgetPolicy:
    """When to compact: a share of the window, or (if set) a number of events."""

    window: int = DEFAULT_WINDOW
    threshold_share: float = DEFAULT_THRESHOLD_SHARE
    event_limit: int | None = DEFAULT_EVENT_LIMIT

    @property
    def threshold_tokens(self) -> int:
        return int(self.window * self.threshold_share)


@dataclass(frozen=True)
class ContextBudget:
    """The state of the context, as the trigger and the gauge see it."""

    tokens_used: int
    window: int
    threshold_tokens: int
    events: int
    event_limit: int | None
    estimated: bool

    @property
    def remaining_share(self) -> float:
        """Share of the window still free, 0.0 to 1.0."""
        return max(0.0, 1.0 - self.tokens_used / self.window) if self.window else 0.0

    @property
    def threshold_share_used(self) -> float:
        """How close to the compaction threshold, 0.0 to 1.0 (1.0 = compact now).

        Tokens or events, whichever is nearer its limit.
        """
        token_share = self.tokens_used / self.threshold_tokens if self.threshold_tokens else 1.0
        event_share = self.events / self.event_limit if self.event_limit else 0.0
        return min(1.0, max(token_share, event_share))

    @property
    def context_remaining(self) -> float:
        """Share of the room before compaction still free: 1.0 empty, 0.0 compact now."""
        return 1.0 - self.threshold_share_used

    @property
    def context_remaining_percent(self) -> int:
        """``context_remaining`` in whole percent, rounded up: 0 only when compaction is due.

        The one figure the log ("x% context remaining") and the gauge show.
        """
        # round() first: 1 - 0.75 is 0.25 exactly, but float noise must not make 25 into 26.
        return math.ceil(round(self.context_remaining * 100, 6))

    @property
    def should_summarise(self) -> bool:
        """True when the threshold is reached: ``context_remaining`` is 0."""
        return self.context_remaining <= 0.0


def estimate_tokens(event: Event) -> int:
    """A cheap size estimate of one event, for what no response has measured yet."""
    chars = 0
    for view in part_views(event):
        match view:
            case Said(text):
                chars += len(text)
            case Called(name, args):
                chars += len(name) + len(json.dumps(args))
            case ToolResult(name, _, response):
                chars += len(name) + len(json.dumps(response, default=str))
            case Attached(data) if _is_inline_image(data):
                chars += IMAGE_ESTIMATE_TOKENS * CHARS_PER_TOKEN
            case Attached(data):
                chars += len(json.dumps(data))
    return chars // CHARS_PER_TOKEN + 4  # a few tokens of framing per message


def _is_inline_image(data: dict[str, object]) -> bool:
    blob = data.get("inline_data")
    return isinstance(blob, dict) and str(blob.get("mime_type", "")).startswith("image/")


def _trusted_from(events: Sequence[Event]) -> int:
    """Index from which usage figures describe this context (not a pre-compaction one)."""
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if isinstance(event, CompactionEvent):
            return index + 1 + event.kept_events
    return 0


def context_budget(events: Sequence[Event], policy: BudgetPolicy | None = None) -> ContextBudget:
    """Measure ``events`` (the model's context) against ``policy``."""
    policy = policy or BudgetPolicy()
    trusted_from = _trusted_from(events)
    measured_at: int | None = None
    measured = 0
    for index in range(len(events) - 1, trusted_from - 1, -1):
        event = events[index]
        usage = event.usage if isinstance(event, SessionEvent) else None
        if usage is not None and usage.prompt_token_count is not None:
            measured_at = index
            # The reply itself joins the context for the next request.
            measured = usage.prompt_token_count + (usage.candidates_token_count or 0)
            break
    if measured_at is None:
        tokens = BASE_ESTIMATE_TOKENS + sum(estimate_tokens(e) for e in events)
    else:
        tokens = measured + sum(estimate_tokens(e) for e in events[measured_at + 1 :])
    return ContextBudget(
        tokens_used=tokens,
        window=policy.window,
        threshold_tokens=policy.threshold_tokens,
        events=len(events),
        event_limit=policy.event_limit,
        estimated=measured_at is None,
    )


def should_summarise(events: Sequence[Event], policy: BudgetPolicy | None = None) -> bool:
    """True when the context has reached the compaction threshold (tokens or events).

    Logs "x% context remaining", as the seed design does.
    """
    return summarise_due(context_budget(events, policy))


def summarise_due(budget: ContextBudget) -> bool:
    """``budget.should_summarise``, logging "x% context remaining" (the trigger's check)."""
    logger.info("%d%% context remaining", budget.context_remaining_percent)
    return budget.should_summarise
