"""``koroku-tui --print``: one user turn without the TUI, for scripts and tests.

The answer goes to stdout; anything that goes wrong is one sentence on stderr.
Exit codes: 0 a whole answer; 1 no answer (Koroku, the network, the API key or
the database failed, or the conversation is busy in another window); 2 Gemini
ended without a whole answer (cut off at the token limit, stopped by a safety
filter, only thoughts, prompt blocked), said on stderr after whatever arrived;
130 interrupted. Each retry is one line on stderr. The turn is stored in the
session like any other. Neither stream passes on escape sequences (see
``koroku_tui.modes.terminal_streams``). ``--output-format json`` or
``stream-json`` puts JSON on stdout instead (see ``koroku_tui.modes.json_output``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from koroku_tui.agent import AgentError, AnswerCut, ErrorKind, ErrorNotice, RetryNotice
from koroku_tui.agent.attachments import AttachmentRefused, attach, user_content
from koroku_tui.agent.context.instruction_files import InstructionFiles
from koroku_tui.agent.loop.stopping import Stopped, run_stoppable
from koroku_tui.agent.tools.file_restore import plan_rewind, restore_files
from koroku_tui.agent.wire.client import has_credentials, missing_key_help
from koroku_tui.config.files import shown_path
from koroku_tui.config.settings import COMMAND, Settings
from koroku_tui.modes.terminal_streams import cleaned_std_streams
from koroku_tui.modes.wiring import assemble
from koroku_tui.store import SessionInfo, SessionManager, StoreError, said_for, upgrade_pending

if TYPE_CHECKING:
    from google.genai import types

    from koroku_tui.modes.json_output import TurnReport

HEADLESS_OPT_IN = "run koroku-tui --print with --yes to allow it"
EXIT_INCOMPLETE = 2
"""Gemini answered, but not with a whole answer (see the module docstring)."""


@dataclass(frozen=True)
class HeadlessRequest:
    """What the command line asked for."""

    text: str
    session_id: int | None = None
    new_session: bool = False
    auto_approve: bool = False
    workspace: Path | None = None
    raw_output: bool = False
    """Write the answer unfiltered (``--raw``); honoured only when stdout is not a terminal."""
    verbose: bool = False
    """Say on stderr which instruction files the model is told, and which MCP servers
    the turn used (``--verbose``)."""
    fork_from: tuple[int, int | None] | None = None
    """``--fork SESSION[:MESSAGE]``: send the message in a new fork of that session."""
    rewind_before: int | None = None
    """``--rewind MESSAGE``: take the session back to before that user message first."""
    restore_files: bool = False
    """``--restore-files``: the rewind or fork also puts back the files the turns wrote."""
    command: str = COMMAND
    """How the user started Koroku, for advice that names it (``uv run koroku-tui``)."""
    model_pinned: bool = False
    """``--model`` named the model: it wins over the session's own choice for this turn."""
    untrusted_config: Mapping[Path, str] = field(default_factory=dict)
    """An untrusted project's config files -> what of each applies (the config loader's
    ``UntrustedFile.what_applies``), for the one line on the project's files."""
    output_format: str = "text"
    """``--output-format``: ``text`` (the answer), ``json`` or ``stream-json``."""


class BadRequest(Exception):
    """A message or session id the command line named does not fit (one sentence)."""


def fork_note(info: SessionInfo) -> str:
    """The stderr line naming a new fork (scripts read the id from it)."""
    where = (
        f" before message {info.forked_from_message}"
        if info.forked_from_message is not None
        else ""
    )
    return f"koroku-tui: session {info.id} is a fork of session {info.forked_from_session}{where}."


async def open_fork(database: Path, source: int, message: int | None) -> SessionInfo:
    """Fork ``source`` (before ``message``) for the app to open (``BadRequest``, ``StoreError``)."""
    store = SessionManager(database, session_id=source)
    await store.initialize()
    try:
        return await store.fork(source, message)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    finally:
        await store.close()


async def _branch(store: SessionManager, request: HeadlessRequest, workspace: Path) -> None:
    """Apply ``--fork`` / ``--rewind`` (and ``--restore-files``) before the turn; bad ids
    write nothing."""
    try:
        if request.fork_from is not None:
            source, message = request.fork_from
            info = await store.fork(source, message)
            await store.switch_session(info.id)
            print(fork_note(info), file=sys.stderr, flush=True)
            if request.restore_files and message is not None:
                await _restore_files(store, workspace, message, source)
        if request.rewind_before is not None:
            await store.rewind(request.rewind_before)
            if request.restore_files:
                await _restore_files(store, workspace, request.rewind_before, None)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


async def _restore_files(
    store: SessionManager, workspace: Path, message: int, session_id: int | None
) -> None:
    """Put back what the turns from ``message`` on wrote; never a file changed since by
    anything else: one stderr line for each file left as it is, then what was done."""
    plan = await plan_rewind(store, workspace, message, session_id)
    report = await restore_files(store, workspace, plan)
    for refused in report.refused:
        print(f"koroku-tui: {refused}", file=sys.stderr, flush=True)
    print(f"koroku-tui: files: {report.summary()}", file=sys.stderr, flush=True)


CLOSED_STDOUT = (
    "stdout is closed, so no answer could be written; nothing was sent "
    "(send stdout to a file, or to /dev/null)."
)

_UPGRADING = "koroku-tui: updating the database after an upgrade (once; it can take a minute)…"


BACKLOG_NOTICE = 200
"""Rows the meaning pass must have left (a few seconds at ~90 a second) for ``--print`` to
say why its search waits."""


class _MeaningBacklog:
    """Says once on stderr that the meaning pass has a backlog the search will wait for."""

    def __init__(self) -> None:
        self.said = False

    def __call__(self, done: int, total: int, what: str) -> None:
        from koroku_tui.agent.recall.passes import MEANING_PASS

        if what == MEANING_PASS and total - done > BACKLOG_NOTICE and not self.said:
            self.said = True
            print(
                f"koroku-tui: indexing {total - done:,} messages for recall by meaning…",
                file=sys.stderr,
                flush=True,
            )


def _tell_late(left: int) -> None:
    # The search stopped waiting for the meaning pass (``PRINT_WAIT``): what it did not see.
    print(
        f"koroku-tui: {left:,} messages are not indexed for recall by meaning yet; "
        "the search uses those that are (the next run carries on indexing).",
        file=sys.stderr,
        flush=True,
    )


def _tell_problem(problem: str | None, said: str | None) -> str | None:
    """Say ``problem`` on stderr unless it was ``said``; what is said now."""
    if problem is not None and problem != said:
        print(f"koroku-tui: {problem}", file=sys.stderr, flush=True)
        return problem
    return said


def _tell_retry(notice: RetryNotice) -> None:
    # A retry can wait a minute: a script's user must see why nothing happens.
    print(f"koroku-tui: {notice.line}", file=sys.stderr, flush=True)


def _tell_server_left_out(notice: ErrorNotice) -> None:
    # An MCP server the turn goes on without: the turn's own failures end it, said once.
    if notice.kind is ErrorKind.TOOL_SERVER:
        print(f"koroku-tui: {notice.message}", file=sys.stderr, flush=True)


def used_servers_line(used: set[str]) -> str:
    """``--verbose``: which MCP servers the turn called (their names from the config)."""
    return f"MCP servers used: {', '.join(sorted(used))}." if used else "MCP servers used: none."


async def _run(
    request: HeadlessRequest, settings: Settings, out: TextIO, report: TurnReport | None
) -> AnswerCut | None:
    run = assemble(
        settings,
        workspace=request.workspace,
        auto_approve=request.auto_approve,
        opt_in_hint=HEADLESS_OPT_IN,
        command=request.command,
        model_pinned=request.model_pinned,
        headless=True,
    )
    message = attached_message(request.text, run.workspace)
    said = instruction_lines(
        run.instruction_files, run.config_file, request.verbose, request.untrusted_config
    )
    for line in said:
        print(f"koroku-tui: {line}", file=sys.stderr, flush=True)
    source = request.fork_from[0] if request.fork_from is not None else request.session_id
    store = run.open_store(source)
    if upgrade_pending(run.database_path):
        print(_UPGRADING, file=sys.stderr, flush=True)
    await store.initialize()
    try:
        if request.new_session:
            await store.new_session()
        await _branch(store, request, run.workspace)
        agent = run.build_agent(store)
        agent.on("on_retry", _tell_retry)
        agent.on("on_error", _tell_server_left_out)
        if report is not None:
            report.listen(agent, store.session_id)
        # Vectors for what is not embedded yet, while the turn starts; a search waits for them.
        local = run.settings.recall_embeddings == "local"
        indexer = run.recall_indexer(
            store,
            client=agent.client,
            headless=True,
            on_progress=_MeaningBacklog() if local else None,
            on_late=_tell_late,
        )
        indexing = asyncio.create_task(indexer.run()) if indexer is not None else None
        problem: str | None = None
        try:
            async with agent:
                if indexer is not None:
                    await indexer.loaded.wait()  # the model's one search may come at once
                    problem = _tell_problem(indexer.problem, problem)
                answer = await agent.run_turn(message)
        finally:
            if indexing is not None:
                # MiniLM's model loads while the turn runs: a failure may be known only now.
                _tell_problem(indexer.problem if indexer is not None else None, problem)
                indexing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await indexing
        if request.verbose and agent.mcp is not None:
            print(f"koroku-tui: {used_servers_line(agent.mcp.used)}", file=sys.stderr, flush=True)
    finally:
        await store.close()
    if answer and report is None:  # only thoughts arrived: nothing to print, the cut says why
        out.write(answer if answer.endswith("\n") else answer + "\n")
    out.flush()
    return agent.last_cut


def attached_message(text: str, workspace: Path) -> str | types.Content:
    """``text`` with the files its ``@`` paths name; a refused one is a ``BadRequest``.

    Refused before anything is stored or sent (exit 1); a path that names
    no file is sent as written, said in one line.
    """
    try:
        mentioned = attach(text, workspace)
    except AttachmentRefused as exc:
        raise BadRequest(f"{exc} Nothing was sent.") from None
    for path in mentioned.missing:
        print(
            f"koroku-tui: no file @{path} in the workspace; sent as written.",
            file=sys.stderr,
            flush=True,
        )
    return user_content(text, mentioned.files) if mentioned.files else text


def instruction_lines(
    files: InstructionFiles,
    config_file: Path,
    verbose: bool,
    untrusted_config: Mapping[Path, str] | None = None,
) -> list[str]:
    """What stderr says of the instruction files before the turn (reading them).

    With ``verbose``, which are used, in one line. Always, in an untrusted
    folder with project files, that they are not used (``--print`` never
    asks), in one line with what of its config files still applies
    (``untrusted_config``: the config loader's word on each).
    """
    loaded = files.refresh()
    lines = [loaded.summary() or "Instructions: none."] if verbose else []
    ignored = [] if files.trusted else files.project_files()
    if ignored:
        root = files.project_root
        applies = untrusted_config or {}
        names = ", ".join(
            _named(path, root, files.home) + (f" ({applies[path]})" if path in applies else "")
            for path in ignored
        )
        lines.append(
            f"{shown_path(root, files.home)} is not trusted, so its project files are not "
            f"used: {names}. Start {COMMAND} there to trust it, or add it to trusted_folders "
            f"in {shown_path(config_file, files.home)}."
        )
    return lines


def _named(path: Path, root: Path, home: Path | None) -> str:
    """``path`` from ``root`` (``app/AGENTS.md``); whole when above it (a dotfiles repository
    in the home, whose root is not the folder offered for trust)."""
    return str(path.relative_to(root)) if path.is_relative_to(root) else shown_path(path, home)


def run_headless(request: HeadlessRequest, settings: Settings) -> int:
    """Run the turn; returns the process exit code.

    Model text and server messages are untrusted: on both streams, escape
    sequences and control characters are taken out (``cleaned_std_streams``).
    """
    if sys.stdout is None:  # started with ``>&-``: Python gives no stream at all
        if sys.stderr is not None:  # it may be closed as well
            print(f"koroku-tui: {CLOSED_STDOUT}", file=sys.stderr)
        return 1
    if sys.stderr is None:  # ``2>&-``: the sentences go nowhere, as the caller chose
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (stderr, for the rest of the run)
    if request.output_format != "text":
        from koroku_tui.modes.json_output import run_reported

        return run_reported(
            request.output_format, lambda report: _run_headless(request, settings, report)
        )
    with cleaned_std_streams(raw_stdout=request.raw_output):
        return _run_headless(request, settings)


def _said(sentence: str, report: TurnReport | None, *, prefix: str = "koroku-tui: ") -> None:
    """One sentence on stderr, kept for the JSON result too."""
    if report is not None:
        report.error = sentence
    with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
        print(f"{prefix}{sentence}", file=sys.stderr)


def _run_headless(
    request: HeadlessRequest, settings: Settings, report: TurnReport | None = None
) -> int:
    if not has_credentials():
        _said(missing_key_help(request.command), report, prefix="")
        return 1
    try:
        # SIGTERM/SIGHUP stop the turn cleanly: the command is killed, its call answered.
        cut = asyncio.run(run_stoppable(_run(request, settings, sys.stdout, report)))
    except BadRequest as exc:
        _said(str(exc), report)
        return 1
    except (AgentError, StoreError) as exc:
        message = (
            exc.user_message if isinstance(exc, AgentError) else said_for(exc, request.command)
        )
        _said(message, report)
        incomplete = isinstance(exc, AgentError) and exc.kind is ErrorKind.INCOMPLETE
        return EXIT_INCOMPLETE if incomplete else 1
    except Stopped as stop:
        _said(f"stopped by {stop.name}; the conversation so far is saved.", report)
        return stop.exit_code
    except KeyboardInterrupt:
        _said("cancelled; the conversation so far is saved.", report)
        return 130
    except Exception as exc:
        # A bug of ours, not the user's: one line here, the traceback in the log.
        logging.getLogger(__name__).exception("headless turn failed")
        _said(
            f"unexpected error ({type(exc).__name__}: {exc}); "
            "details are in koroku.log in the Koroku home.",
            report,
        )
        return 1
    if cut is not None:
        _said(cut.message, report)
        return EXIT_INCOMPLETE
    return 0
