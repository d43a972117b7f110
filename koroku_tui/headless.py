"""``koroku-tui --print``: one user turn without the TUI, for scripts and tests.

The answer goes to stdout; anything that goes wrong is one sentence on stderr.
Exit codes: 0 a whole answer; 1 no answer (Koroku, the network, the API key or
the database failed, or the conversation is busy in another window); 2 Gemini
ended without a whole answer (cut off at the token limit, stopped by a safety
filter, only thoughts, prompt blocked), said on stderr after whatever arrived;
130 interrupted. Each retry is one line on stderr. The turn is stored in the
session like any other. Neither stream passes on escape sequences (see
``koroku_tui.terminal_streams``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from koroku_tui.agent import Agent, AgentConfig, AgentError, AnswerCut, ErrorKind, RetryNotice
from koroku_tui.agent.tools import ToolSettings
from koroku_tui.agent.wire.client import MISSING_KEY_HELP, has_credentials
from koroku_tui.settings import Settings
from koroku_tui.stopping import Stopped, run_stoppable
from koroku_tui.store import SessionManager, StoreError, upgrade_pending
from koroku_tui.terminal_streams import cleaned_std_streams

HEADLESS_OPT_IN = "run koroku-tui --print with --yes to allow it"
EXIT_INCOMPLETE = 2
"""Gemini answered, but not with a whole answer (see the module docstring)."""


@dataclass(frozen=True)
class HeadlessRequest:
    """What the command line asked for."""

    text: str
    model: str
    session_id: int | None = None
    new_session: bool = False
    auto_approve: bool = False
    workspace: Path | None = None
    raw_output: bool = False
    """Write the answer unfiltered (``--raw``); honoured only when stdout is not a terminal."""


_UPGRADING = "koroku-tui: updating the database after an upgrade (once; it can take a minute)…"


def _tell_retry(notice: RetryNotice) -> None:
    # A retry can wait a minute: a script's user must see why nothing happens.
    print(f"koroku-tui: {notice.line}", file=sys.stderr, flush=True)


async def _run(request: HeadlessRequest, settings: Settings, out: TextIO) -> AnswerCut | None:
    store = SessionManager(settings.database_path, session_id=request.session_id)
    if upgrade_pending(settings.database_path):
        print(_UPGRADING, file=sys.stderr, flush=True)
    await store.initialize()
    try:
        if request.new_session:
            await store.new_session()
        tools = ToolSettings(
            workspace=request.workspace or Path.cwd(),
            memory_dir=settings.memory_dir,
            history=store,
            auto_approve=request.auto_approve,
            opt_in_hint=HEADLESS_OPT_IN,
            env_allow=frozenset(settings.tool_env_allow),
        )
        config = AgentConfig(memory_dir=settings.memory_dir, stall_timeout=settings.stall_timeout)
        agent = Agent(request.model, session_manager=store, tool_settings=tools, config=config)
        agent.on("on_retry", _tell_retry)
        async with agent:
            answer = await agent.run_turn(request.text)
    finally:
        await store.close()
    if answer:  # only thoughts arrived: nothing to print, the cut says why
        out.write(answer if answer.endswith("\n") else answer + "\n")
    out.flush()
    return agent.last_cut


def run_headless(request: HeadlessRequest, settings: Settings) -> int:
    """Run the turn; returns the process exit code.

    Model text and server messages are untrusted: on both streams, escape
    sequences and control characters are taken out (``cleaned_std_streams``).
    """
    with cleaned_std_streams(raw_stdout=request.raw_output):
        return _run_headless(request, settings)


def _run_headless(request: HeadlessRequest, settings: Settings) -> int:
    if not has_credentials():
        print(MISSING_KEY_HELP, file=sys.stderr)
        return 1
    try:
        # SIGTERM/SIGHUP stop the turn cleanly: the command is killed, its call answered.
        cut = asyncio.run(run_stoppable(_run(request, settings, sys.stdout)))
    except (AgentError, StoreError) as exc:
        message = exc.user_message if isinstance(exc, AgentError) else str(exc)
        print(f"koroku-tui: {message}", file=sys.stderr)
        incomplete = isinstance(exc, AgentError) and exc.kind is ErrorKind.INCOMPLETE
        return EXIT_INCOMPLETE if incomplete else 1
    except Stopped as stop:
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            print(
                f"koroku-tui: stopped by {stop.name}; the conversation so far is saved.",
                file=sys.stderr,
            )
        return stop.exit_code
    except KeyboardInterrupt:
        print("koroku-tui: cancelled; the conversation so far is saved.", file=sys.stderr)
        return 130
    except Exception as exc:
        # A bug of ours, not the user's: one line here, the traceback in the log.
        logging.getLogger(__name__).exception("headless turn failed")
        print(
            f"koroku-tui: unexpected error ({type(exc).__name__}: {exc}); "
            "details are in koroku.log in the Koroku home.",
            file=sys.stderr,
        )
        return 1
    if cut is not None:
        print(f"koroku-tui: {cut.message}", file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0
