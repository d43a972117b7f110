"""Why a reply ended, in words: a cut answer must say it was cut.

Gemini ends every reply with a ``finishReason``. ``STOP`` is a whole answer;
anything else (``MAX_TOKENS``, ``SAFETY``, ``RECITATION``...) means the text
stopped where Gemini stopped it, and a user reading it must be told. A reply
that holds only thoughts, or nothing at all, is no answer either, and a prompt
refused outright (``promptFeedback.blockReason``, no candidate) is told as such.

The words come from a table of the reasons the SDK knows
(``google.genai.types.FinishReason`` / ``BlockedReason``); a reason added later
is still told, spelled out from its name.

A step that asks for tools can be cut too. What a user would expect:

* ``STOP``: the calls run, the turn goes on.
* ``MAX_TOKENS``: the calls run and the turn goes on. A call arrives whole
  (the API never streams half a call), so it is what the model asked for; the
  output budget ran out after it, which the next step recovers from. The cut
  is told on that step (``ModelResponse.cut``: a notice under it), and the
  turn is judged by its final answer, as if the model had paused.
* Anything else (``SAFETY``, ``BLOCKLIST``, ``PROHIBITED_CONTENT``, ``SPII``,
  ``RECITATION``, ``MALFORMED_FUNCTION_CALL``, ``OTHER``, a reason newer than
  Koroku...): Gemini itself stopped the reply, so its calls are not run, nor
  put to the user for approval. Each is answered "Not run: Gemini stopped this
  reply (safety filter)." so the history stays valid, and the turn ends there,
  told like a cut answer (``--print`` exits 2). Running a command from a reply
  a safety filter stopped is not what anyone approves of in advance.

A reply Koroku itself cut short (Escape, the app quitting, the terminal
closed, the stream broken or stalled) has no finish reason from Gemini. What
arrived is stored with one of Koroku's own reasons, ``INTERRUPTED_REASONS``
(``KOROKU_CANCELLED``, ``KOROKU_STOPPED``, ``KOROKU_CUT_OFF``), so that after a
restart it still reads "Interrupted: ..." rather than as a whole answer. They
are never sent: a Content carries no finish reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from koroku_tui.events import SessionEvent

__all__ = [
    "INTERRUPTED_REASONS",
    "KNOWN_REASONS",
    "KOROKU_CANCELLED",
    "KOROKU_CUT_OFF",
    "KOROKU_STOPPED",
    "WHOLE",
    "answer_cut",
    "blocked_prompt_message",
    "calls_withheld",
    "reason_words",
    "stored_cut",
    "withheld_call_error",
]

WHOLE = "STOP"
"""The one finish reason that means the answer is complete."""

KOROKU_CANCELLED = "KOROKU_CANCELLED"
"""Koroku's reason for a reply the user cut short: Escape, ctrl+c, quitting the app."""
KOROKU_STOPPED = "KOROKU_STOPPED"
"""Koroku's reason for a reply cut by SIGTERM or SIGHUP (the terminal closed)."""
KOROKU_CUT_OFF = "KOROKU_CUT_OFF"
"""Koroku's reason for a reply whose stream broke or stalled for good."""

_INTERRUPTED_WORDS = {
    KOROKU_CANCELLED: "cancelled",
    KOROKU_STOPPED: "Koroku was closed",
    KOROKU_CUT_OFF: "the stream from Gemini broke off",
}
INTERRUPTED_REASONS = frozenset(_INTERRUPTED_WORDS)
"""Koroku's own finish reasons: the reply was cut short on this side, not by Gemini."""

_CALLS_RUN_AFTER = frozenset({WHOLE, "MAX_TOKENS"})
"""Finish reasons after which a step's calls still run (see the module's docstring)."""

_WORDS = {
    "FINISH_REASON_UNSPECIFIED": "no reason given",
    "MAX_TOKENS": "token limit",
    "SAFETY": "safety filter",
    "RECITATION": "recitation filter (it was repeating a source)",
    "LANGUAGE": "unsupported language",
    "OTHER": "unspecified reason",
    "BLOCKLIST": "blocked terms",
    "PROHIBITED_CONTENT": "prohibited content",
    "SPII": "sensitive personal information",
    "MALFORMED_FUNCTION_CALL": "malformed tool call",
    "IMAGE_SAFETY": "image safety filter",
    "IMAGE_PROHIBITED_CONTENT": "prohibited image content",
    "IMAGE_OTHER": "image generation stopped",
    "NO_IMAGE": "no image produced",
    "IMAGE_RECITATION": "image recitation filter",
    "UNEXPECTED_TOOL_CALL": "unexpected tool call",
    "TOO_MANY_TOOL_CALLS": "too many tool calls",
    "MISSING_THOUGHT_SIGNATURE": "missing thought signature",
    "MALFORMED_RESPONSE": "malformed response",
    "ESCALATION": "escalation rule",
    "PUP_LIMITED_DISABLED": "account limited by the usage policy",
    "CONTINUATION": "per-request token limit",
    "MODEL_ARMOR": "Model Armor filter",
    # Prompt block reasons (BlockedReason) not already above.
    "BLOCKED_REASON_UNSPECIFIED": "no reason given",
    "JAILBREAK": "jailbreak attempt",
}

KNOWN_REASONS = frozenset(_WORDS)
"""Every finish and block reason that has its own words here."""

_NAME = re.compile(r"[A-Za-z0-9_]+")


def reason_words(reason: str) -> str:
    """A finish or block reason as a few words (``"MAX_TOKENS"`` -> ``"token limit"``)."""
    known = _WORDS.get(reason.upper()) or _INTERRUPTED_WORDS.get(reason)
    if known is not None:
        return known
    # A reason newer than this table: its name, spelled out. The server sent
    # it, so only its leading run of letters, digits and underscores is shown.
    name = _NAME.match(reason)
    spelled = name.group().replace("_", " ").strip().lower() if name else ""
    return spelled or "no reason given"


@dataclass(frozen=True)
class AnswerCut:
    """A model reply that is not a whole answer, and why."""

    reason: str | None
    """The raw finish reason (``"MAX_TOKENS"``), or None when Gemini gave none."""
    visible: bool
    """True when some answer text (or a tool call) arrived before the cut."""
    withheld_calls: int = 0
    """Tool calls of the reply that were not run because of the cut."""

    @property
    def words(self) -> str:
        """The reason in a few words."""
        return reason_words(self.reason) if self.reason else "no reason given"

    @property
    def interrupted(self) -> bool:
        """True when Koroku cut the reply short, not Gemini (``INTERRUPTED_REASONS``)."""
        return self.reason in INTERRUPTED_REASONS

    @property
    def message(self) -> str:
        """One sentence for the user, shown under what arrived."""
        if self.interrupted:
            return f"Interrupted: {self.words} before the answer was complete."
        if self.withheld_calls:
            calls = (
                "its tool call was"
                if self.withheld_calls == 1
                else f"its {self.withheld_calls} tool calls were"
            )
            return f"Gemini stopped the reply ({self.words}); {calls} not run."
        if self.visible:
            return f"The answer was cut off: {self.words}."
        if self.reason in (None, WHOLE):
            return "Gemini finished without an answer (only its thoughts arrived); try again."
        return f"The answer was cut off before any text: {self.words}."


def calls_withheld(reason: str | None) -> bool:
    """True when a step Gemini finished with ``reason`` must not have its calls run.

    None (no reason) is left to the request layer, which reports a stream
    that ended without one before a step gets here. Koroku's own reasons are
    not Gemini's: the calls of a reply Koroku cut short are answered by it.
    """
    return (
        reason is not None and reason not in _CALLS_RUN_AFTER and reason not in INTERRUPTED_REASONS
    )


def withheld_call_error(reason: str) -> str:
    """What each call of a withheld step is answered with."""
    return f"Not run: Gemini stopped this reply ({reason_words(reason)})."


def answer_cut(reason: str | None, *, visible: bool, withheld_calls: int = 0) -> AnswerCut | None:
    """The cut of a reply Gemini finished with ``reason``, or None for a whole answer.

    ``visible``: the reply holds answer text or tool calls (thoughts do not
    count). A reply is whole when it has something visible and finished with
    ``STOP`` (or with no reason at all, which only a prompt block leaves: a
    broken stream is reported by the request layer before this is asked).
    """
    if visible and reason in (WHOLE, None):
        return None
    return AnswerCut(reason, visible, withheld_calls)


def stored_cut(event: SessionEvent) -> AnswerCut | None:
    """The cut of a stored model reply, for a replay; None when whole or not recorded.

    A reply Koroku cut short reads "Interrupted: ..." as it did live.
    """
    if event.role != "model" or event.finish_reason is None:
        # Rows from before finish reasons (and Koroku's own) were kept: not known.
        return None
    calls = len(event.function_calls)
    withheld = calls if calls_withheld(event.finish_reason) else 0
    return answer_cut(
        event.finish_reason, visible=bool(event.text or calls), withheld_calls=withheld
    )


def blocked_prompt_message(reason: str) -> str:
    """The sentence for a prompt Gemini refused to answer at all."""
    return (
        f"Gemini blocked your message and gave no answer ({reason_words(reason)}); "
        "rephrase it and send it again."
    )
