"""``--print --output-format json`` and ``stream-json``: what a turn did, for scripts.

``json`` writes one object when the run ends; ``stream-json`` writes one
object a line as the turn happens, the same object last. Every line is
ASCII: ``json.dumps`` with ``ensure_ascii`` writes each control character,
escape sequence and bidi control of the model's text as a ``\\u001b``-style
escape, so stdout can neither drive a terminal nor be cut by a stray byte,
and a parser gets the model's text back exactly (as ``--raw`` would write
it). Nothing else is written to stdout: the run's other lines go to stderr,
as with the text output.

The shapes are tables here (:data:`EVENT_FIELDS`, :data:`TOOL_CALL_FIELDS`,
:data:`USAGE_FIELDS`); the README documents them and a test holds the two
together.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

from koroku_tui.agent.tools.answer_words import for_user
from koroku_tui.agent.tools.denials import BY_RULES, BY_YOU, denied_by, is_unattended_refusal
from koroku_tui.modes.terminal_streams import cleaned_std_streams
from koroku_tui.text.safety import without_lone_surrogates

if TYPE_CHECKING:
    from koroku_tui.agent import Agent
    from koroku_tui.agent.hooks import (
        CompactionFailed,
        CompactionFinished,
        CompactionStarted,
        ModelResponse,
        RetryNotice,
        TextDelta,
        ThoughtDelta,
        ToolCallFinished,
        ToolCallStarted,
    )
    from koroku_tui.events import TokenUsage

__all__ = [
    "EVENT_FIELDS",
    "TOOL_CALL_FIELDS",
    "USAGE_FIELDS",
    "TurnReport",
    "json_line",
    "run_reported",
]

STREAM = "stream-json"

USAGE_FIELDS = (
    "prompt_tokens",
    "candidates_tokens",
    "cached_tokens",
    "thoughts_tokens",
    "total_tokens",
)
"""A ``usage`` object: Gemini's ``usage_metadata`` counts (0 when Gemini sent none)."""
TOOL_CALL_FIELDS = ("id", "name", "arguments", "status", "output", "error")
"""One entry of the result's ``tool_calls``."""
RESULT_FIELDS = (
    "session_id",
    "model",
    "answer",
    "tool_calls",
    "usage",
    "finish_reason",
    "exit_code",
    "error",
)
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "session": ("session_id", "model"),
    "text_delta": ("text",),
    "thought_delta": ("text",),
    "tool_call_started": ("id", "name", "arguments"),
    "approval_refused": ("id", "name", "by", "reason"),
    "tool_call_finished": (*TOOL_CALL_FIELDS, "seconds"),
    "retry": ("attempt", "max_attempts", "delay_seconds", "message"),
    "compaction_started": ("reason",),
    "compaction_finished": ("summarised", "warning"),
    "compaction_failed": ("message", "nothing_to_do"),
    "usage": ("usage", "finish_reason"),
    "result": RESULT_FIELDS,
}
"""Each ``type`` of a stream-json line, and its fields besides ``type``."""

_REFUSED_BY = {BY_YOU: "user", BY_RULES: "rules"}


def json_line(value: dict[str, Any]) -> str:
    """``value`` as one line of ASCII JSON that any parser reads (no newline at the end).

    ``ensure_ascii`` escapes every character outside space..``~`` (controls,
    DEL, C1, bidi controls, letters beyond ASCII). Lone surrogates (which
    strict parsers refuse) become U+FFFD, a float JSON cannot write becomes
    ``null``, anything else unknown its text.
    """
    return json.dumps(
        _plain(without_lone_surrogates(value)),
        ensure_ascii=True,
        allow_nan=False,
        separators=(",", ":"),
        default=str,
    )


def _plain(value: Any) -> Any:
    """``value`` with the floats JSON cannot write as ``None`` (tool arguments are the
    model's: nested at most ``MAX_ARGS_DEPTH`` levels by then)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _usage(usage: TokenUsage | None) -> dict[str, int]:
    if usage is None:
        return dict.fromkeys(USAGE_FIELDS, 0)
    counts = (
        usage.prompt_token_count,
        usage.candidates_token_count,
        usage.cached_content_token_count,
        usage.thoughts_token_count,
        usage.total_token_count,
    )
    return {field: count or 0 for field, count in zip(USAGE_FIELDS, counts, strict=True)}


class TurnReport:
    """Listens to the agent's hooks; writes each event (``stream``) and the result.

    ``out`` is the real stdout, kept before the run sends ``sys.stdout`` to
    stderr. Without ``stream`` the events are only gathered for the result.
    """

    def __init__(self, out: TextIO, *, stream: bool) -> None:
        self.out = out
        self.stream = stream
        self.session_id: int | None = None
        self.model: str | None = None
        self.error: str | None = None
        """The sentence stderr gave when the run did not end with a whole answer."""
        self.finish_reason: str | None = None
        self._answer = ""
        self._arriving: list[str] = []
        self._calls: list[dict[str, Any]] = []
        self._usage = dict.fromkeys(USAGE_FIELDS, 0)
        self.unwritable: str | None = None
        """Why stdout took no more lines (a full disk; not a reader that went away)."""
        self._stopped_writing = False

    def listen(self, agent: Agent, session_id: int) -> None:
        """Follow ``agent``'s turn in session ``session_id`` (says ``session`` first)."""
        self.session_id, self.model = session_id, agent.model
        self._emit("session", session_id=session_id, model=agent.model)
        agent.on("on_text_delta", self._text)
        agent.on("on_thought_delta", self._thought)
        agent.on("on_model_response", self._model_response)
        agent.on("on_tool_call", self._tool_started)
        agent.on("on_tool_result", self._tool_finished)
        agent.on("on_retry", self._retry)
        agent.on("on_compaction_started", self._compaction_started)
        agent.on("on_compaction_finished", self._compaction_finished)
        agent.on("on_compaction_failed", self._compaction_failed)

    def result(self, exit_code: int) -> dict[str, Any]:
        """The one object of ``json``, the last line of ``stream-json``."""
        answer = "".join(self._arriving) or self._answer  # a step cut short: what arrived
        return {
            "type": "result",
            "session_id": self.session_id,
            "model": self.model,
            "answer": answer,
            "tool_calls": [self._finished_call(call) for call in self._calls],
            "usage": dict(self._usage),
            "finish_reason": self.finish_reason,
            "exit_code": exit_code,
            "error": self.error if exit_code else None,
        }

    def finish(self, exit_code: int) -> None:
        """Write the result (a reader that went away is not an error of the run)."""
        self._write(self.result(exit_code))

    def _emit(self, kind: str, **fields: Any) -> None:
        if self.stream:
            self._write({"type": kind, **fields})

    def _write(self, value: dict[str, Any]) -> None:
        """One line, flushed: a script reads each as it happens.

        After a failed write, none: the line is cut, what follows would not
        parse. A reader that went away (``| head -1``) leaves the turn to end
        as it would; stdout failing otherwise (a full disk) is said at the end
        (``unwritable``), as the text output says it.
        """
        if self._stopped_writing:
            return
        try:
            self.out.write(json_line(value) + "\n")
            self.out.flush()
        except BrokenPipeError:
            self._stopped_writing = True
        except (OSError, ValueError) as exc:
            self._stopped_writing = True
            self.unwritable = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)

    def _text(self, delta: TextDelta) -> None:
        self._arriving.append(delta.text)
        self._emit("text_delta", text=delta.text)

    def _thought(self, delta: ThoughtDelta) -> None:
        self._emit("thought_delta", text=delta.text)

    def _model_response(self, response: ModelResponse) -> None:
        self._answer, self._arriving = response.text, []
        self.finish_reason = response.finish_reason
        usage = _usage(response.usage)
        for field, count in usage.items():
            self._usage[field] += count
        self._emit("usage", usage=usage, finish_reason=response.finish_reason)

    def _tool_started(self, started: ToolCallStarted) -> None:
        call = {"id": started.call_id, "name": started.name, "arguments": started.args}
        self._calls.append({**call, "status": None, "output": None, "error": None})
        self._emit("tool_call_started", **call)

    def _tool_finished(self, finished: ToolCallFinished) -> None:
        result = finished.result
        entry = next(
            (c for c in self._calls if c["status"] is None and c["id"] == result.call_id), None
        )
        if entry is None:  # answered without a start (a step cut short): listed all the same
            entry = {"id": result.call_id, "name": result.name, "arguments": dict(result.args)}
            self._calls.append(entry)
        # Refused as the agent knows it: a tool that ran may answer a refusal's words.
        by = (_refused_by(result.error) or "no_approval") if result.refused else None
        status = "ok" if not result.is_error else "refused" if by else "failed"
        error = for_user(result.error) if result.error is not None else None
        entry.update(status=status, output=result.output, error=error)
        if by is not None:
            self._emit("approval_refused", id=entry["id"], name=entry["name"], by=by, reason=error)
        self._emit("tool_call_finished", **entry, seconds=round(finished.duration, 3))

    def _retry(self, notice: RetryNotice) -> None:
        self._emit(
            "retry",
            attempt=notice.attempt,
            max_attempts=notice.max_attempts,
            delay_seconds=round(notice.delay, 3),
            message=notice.line,
        )

    def _compaction_started(self, started: CompactionStarted) -> None:
        self._emit("compaction_started", reason=started.reason)

    def _compaction_finished(self, finished: CompactionFinished) -> None:
        self._emit("compaction_finished", summarised=finished.summarised, warning=finished.warning)

    def _compaction_failed(self, failed: CompactionFailed) -> None:
        self._emit("compaction_failed", message=failed.message, nothing_to_do=failed.nothing_to_do)

    @staticmethod
    def _finished_call(call: dict[str, Any]) -> dict[str, Any]:
        if call["status"] is None:  # started, never answered (the run stopped first)
            return {**call, "status": "failed", "error": "The call did not finish."}
        return dict(call)


def _refused_by(error: str | None) -> str | None:
    """``"user"``, ``"rules"`` or ``"no_approval"`` for a call refused before it ran."""
    if error is None:
        return None
    if (by := denied_by(error)) is not None:
        return _REFUSED_BY[by]
    return "no_approval" if is_unattended_refusal(error) else None


def run_reported(output_format: str, run: Callable[[TurnReport], int]) -> int:
    """Run ``run`` with everything but the report on stderr; write the result; its code."""
    report = TurnReport(sys.stdout, stream=output_format == STREAM)
    with _stdout_on_stderr():
        code = run(report)
    report.finish(code)
    if report.unwritable is not None:
        with contextlib.suppress(OSError):
            print(
                f"koroku-tui: could not write the JSON to stdout: {report.unwritable}.",
                file=sys.stderr,
            )
        return code or 1
    return code


@contextlib.contextmanager
def _stdout_on_stderr() -> Iterator[None]:
    """Both streams cleaned as for the text output, and ``sys.stdout`` sent to stderr:
    whatever else prints (Koroku or a library) cannot break the JSON."""
    with cleaned_std_streams(), contextlib.redirect_stdout(sys.stderr):
        yield
