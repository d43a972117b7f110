"""Usage statistics: what was spent, from what is stored, for one session and for all history.

Tokens in / out / cached / thinking, requests and the time spent waiting for
Gemini come from the model replies (``SessionEvent.usage``, ``model``,
``wait_seconds``; the last two stored since issue 27, so older replies count
under "model not recorded" and as untimed); tool calls and their failures
from the function responses (one per call, refused calls included, the
``error`` key marking a failure as ``FunctionResponsePart.is_error`` does);
compactions from their rows.

All in SQL (``json_extract``), in one scan: nothing but the totals leaves
SQLite. 100,000 messages (240 MB) take ~0.65 s of CPU, about what parsing
every row in Python would cost before counting anything, without moving
the text into Python (``bench/stats_bench.py``); a session alone takes
milliseconds (an index seek). Only a table of per-row figures kept at insert
would make all history instant, and it needs a migration: not done while
the screen reads in a worker and shows the session's column first.
A row whose JSON is corrupted is skipped and counted (``unreadable``), never
an error. Rows a fork copied from its source are counted once, in the
source (a copy keeps its original's timestamp, older than the fork);
abandoned rows (rewound) count: they were spent. Sessions in the trash are
part of "all history" until it is emptied.

The queries run on their own read-only connection, in a thread: a long scan
never holds the store's connection, which a running turn writes through.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from typing import Any

from koroku_tui.events import TokenCounts

__all__ = ["ModelUsage", "ToolUsage", "UsageReport", "UsageStats", "read_report", "read_usage"]


@dataclass(frozen=True)
class ModelUsage:
    """One model's replies: how many, their tokens, and how long they took."""

    model: str | None
    """``None``: replies stored before Koroku recorded the model."""
    requests: int
    tokens: TokenCounts
    wait_seconds: float
    """Summed over the ``timed`` replies."""
    timed: int
    """Replies whose waiting time was recorded (stored since issue 27)."""


@dataclass(frozen=True)
class ToolUsage:
    """One tool's calls, and how many of them failed (or were refused)."""

    name: str
    """As the model called it: untrusted text (an MCP server names its tools)."""
    calls: int
    failures: int


@dataclass(frozen=True)
class UsageStats:
    """What one scope (a session, or all history) spent."""

    models: tuple[ModelUsage, ...] = ()
    """Most requests first."""
    tools: tuple[ToolUsage, ...] = ()
    """Most calls first."""
    compactions: int = 0
    unreadable: int = 0
    """Rows skipped because their JSON is corrupted."""
    tokens: TokenCounts = field(init=False)
    requests: int = field(init=False)
    wait_seconds: float = field(init=False)
    timed: int = field(init=False)

    def __post_init__(self) -> None:
        total = TokenCounts()
        for model in self.models:
            total += model.tokens
        object.__setattr__(self, "tokens", total)
        object.__setattr__(self, "requests", sum(m.requests for m in self.models))
        object.__setattr__(self, "wait_seconds", sum(m.wait_seconds for m in self.models))
        object.__setattr__(self, "timed", sum(m.timed for m in self.models))

    @property
    def tool_calls(self) -> int:
        return sum(tool.calls for tool in self.tools)

    @property
    def tool_failures(self) -> int:
        return sum(tool.failures for tool in self.tools)


@dataclass(frozen=True)
class UsageReport:
    """``SessionManager.usage_report``: the session's column and all history's."""

    session_id: int
    session: UsageStats
    history: UsageStats


# Rows a fork copied: its own rows older than the fork itself.
_NOT_A_COPY = "NOT (s.forked_from_session IS NOT NULL AND m.created_at < s.created_at)"

# How Koroku writes a model reply's JSON (pydantic, fields in order): a row
# that starts so is one without a second parse; any other row that may be
# one (seed-era, hand-written) is asked its role.
_REPLY_START = '{"event_type":"session","role":"model",'

# ONE scan (reading 100,000 rows costs as much as parsing those that
# matter): each row becomes a small tagged JSON array, materialized once and
# summed three ways (a tag is told by its first characters, unparsed). A row
# is parsed whole once to check it (json_valid: the only way to learn it is
# corrupted without an error ending the query), then once more if it holds a
# reply or tool answers. TOTAL adds a hand-edited count's numeric value (0
# for words), never fails; a model that is no text is one not recorded, and a
# time that is no number is no timing.
_USAGE_SQL = f"""
WITH tagged AS MATERIALIZED (
  SELECT CASE
    WHEN typeof(m.event_json) != 'text' OR NOT json_valid(m.event_json)
      OR substr(ltrim(substr(m.event_json, 1, 64)), 1, 1) != '{{' THEN '["unreadable"]'
    WHEN m.kind = 'compaction' THEN '["compaction"]'
    WHEN substr(m.event_json, 1, {len(_REPLY_START)}) = '{_REPLY_START}'
      OR (instr(m.event_json, '"role":"model"') > 0
        AND json_extract(m.event_json, '$.role') = 'model')
    THEN json_extract(m.event_json, '$.role', '$.model', '$.usage.prompt_token_count',
      '$.usage.candidates_token_count', '$.usage.cached_content_token_count',
      '$.usage.thoughts_token_count', '$.wait_seconds')
    WHEN instr(m.event_json, '"function_response":') > 0 THEN (
      SELECT json_array('answers', json_group_array(json_array(
        coalesce(p.value ->> '$.fc_metadata.name', p.value ->> '$.function_response.name',
          p.value ->> '$.part.function_response.name'),
        coalesce(json_type(p.value, '$.function_response.response.error'),
          json_type(p.value, '$.part.function_response.response.error')) IS NOT NULL)))
      FROM json_each(m.event_json, '$.parts') p
      WHERE p.type = 'object' AND (p.value ->> '$.kind' = 'function_response'
        OR (p.value ->> '$.kind' = 'other' AND p.value -> '$.part.function_response' IS NOT NULL)))
  END AS f
  FROM messages m JOIN sessions s ON s.id = m.session_id
  WHERE {{scope}}m.kind IN ('session', 'compaction') AND {_NOT_A_COPY}
)
SELECT 'model', iif(typeof(f ->> 1) = 'text', f ->> 1, NULL), COUNT(*), TOTAL(f ->> 2),
  TOTAL(f ->> 3), TOTAL(f ->> 4), TOTAL(f ->> 5), TOTAL(f ->> 6),
  TOTAL(typeof(f ->> 6) IN ('integer', 'real'))
FROM tagged WHERE substr(f, 1, 8) = '["model"' GROUP BY 2
UNION ALL
SELECT 'tool', a.value ->> 0, COUNT(*), TOTAL(a.value ->> 1), 0, 0, 0, 0, 0
FROM tagged, json_each(tagged.f, '$[1]') a
WHERE substr(f, 1, 10) = '["answers"' GROUP BY 2
UNION ALL
SELECT 'rows', NULL, 0, TOTAL(f = '["compaction"]'), TOTAL(f = '["unreadable"]'), 0, 0, 0, 0
FROM tagged
"""
_STOP_CHECK_STEPS = 10_000
"""SQLite VM steps between two looks at the reader's ``stop`` (well under a millisecond)."""
_SCOPES = {"session": "m.session_id = :session AND ", "history": ""}


def _finite(total: Any) -> float:
    """A sum of ``_USAGE_SQL``; infinity counts as nothing.

    JSON's ``1e999`` (a hand-edited row) is infinity to SQLite, and so is a sum
    past any float: ``int()`` of it would end the statistics with an error.
    """
    return float(total) if isinstance(total, int | float) and math.isfinite(total) else 0.0


def _model(name: Any, count: int, figures: list[Any]) -> ModelUsage:
    """A row of ``_USAGE_SQL`` tagged ``model``."""
    tokens_in, tokens_out, cached, thinking, waited, timed = figures
    counts = (int(_finite(total)) for total in (tokens_in, tokens_out, cached, thinking))
    return ModelUsage(
        model=name if isinstance(name, str) else None,
        requests=int(count),
        tokens=TokenCounts(*counts),
        wait_seconds=_finite(waited),
        timed=int(timed),
    )


def _stats(conn: sqlite3.Connection, scope: str, session_id: int) -> UsageStats:
    sql = _USAGE_SQL.replace("{scope}", _SCOPES[scope])
    models: list[ModelUsage] = []
    tools: list[ToolUsage] = []
    compactions = unreadable = 0
    for tag, name, count, *figures in conn.execute(sql, {"session": session_id}):
        if tag == "model":
            models.append(_model(name, count, figures))
        elif tag == "tool" and name is not None:
            tools.append(ToolUsage(str(name), int(count), int(figures[0])))
        elif tag == "rows":
            compactions, unreadable = int(figures[0]), int(figures[1])
    models.sort(key=lambda m: (-m.requests, m.model or ""))
    tools.sort(key=lambda t: (-t.calls, t.name))
    return UsageStats(tuple(models), tuple(tools), compactions, unreadable)


def read_usage(
    uri: str, session_id: int | None, busy_timeout_ms: int, stop: threading.Event | None = None
) -> UsageStats:
    """One session's usage (``None``: all history's), on a new read-only connection to ``uri``.

    Blocking: run it in a thread. ``stop`` set (its reader gone) ends the scan
    at once with ``sqlite3.OperationalError``.
    """
    with _connected(uri, busy_timeout_ms, stop) as conn:
        return _stats(conn, "history" if session_id is None else "session", session_id or 0)


def read_report(
    uri: str, session_id: int, busy_timeout_ms: int, stop: threading.Event | None = None
) -> UsageReport:
    """``read_usage`` of the session and of all history, from one snapshot of the file."""
    with _connected(uri, busy_timeout_ms, stop) as conn:
        # One read transaction: a turn storing meanwhile counts in both columns or neither.
        conn.execute("BEGIN")
        session = _stats(conn, "session", session_id)
        history = _stats(conn, "history", session_id)
    return UsageReport(session_id, session, history)


@contextmanager
def _connected(
    uri: str, busy_timeout_ms: int, stop: threading.Event | None
) -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(uri, uri=True, timeout=busy_timeout_ms / 1000)) as conn:
        if stop is not None:
            # Asked every few thousand steps of the scan: a true answer interrupts it.
            conn.set_progress_handler(stop.is_set, _STOP_CHECK_STEPS)
        yield conn
