"""The ``run_command`` tool: a shell command in the workspace, with no leftovers.

The command gets a session of its own, so the whole tree it starts can be
killed at once (``tools/process_session.py``), even the parts that made a process
group of their own (``timeout``, ``set -m``): on timeout, on cancellation,
and when the shell exits while background children still run. If Koroku
itself dies, the session dies with it (``tools/lifeline.py``). The command sees
Koroku's environment without credentials (``tools/child_env.py``).
"""

from __future__ import annotations

import asyncio
from asyncio.subprocess import Process
from typing import Any

from koroku_tui.agent.tools.child_env import tool_environment
from koroku_tui.agent.tools.lifeline import (
    KILL_SESSION_SCRIPT,
    LIFELINE_SCRIPT,
    Lifeline,
    die_with_parent,
)
from koroku_tui.agent.tools.process_session import kill_session, reap_orphans
from koroku_tui.agent.tools.tool_settings import ToolSettings

__all__ = ["MAX_STREAM_BYTES", "run_command"]

MAX_STREAM_BYTES = 1_000_000
"""Bytes kept per stream; the rest is read and counted but dropped (memory bound)."""
_CHUNK = 65_536
_POLL_INTERVAL = 0.05
_AFTER_EXIT_GRACE = 0.5
"""Seconds to keep reading after the shell exits while a background child holds its output."""
_REAP_WAIT = 1.0
"""Longest wait after the kill; SIGKILLed processes are gone in milliseconds."""


async def run_command(command: str, context: ToolSettings) -> str:
    """Run a shell command in the workspace folder; returns its exit code, stdout and stderr.
    The command gets no input and has a time limit; background processes it
    starts are stopped when it ends.

    Args:
        command: The command line, run by /bin/sh in the workspace folder.
    """
    with Lifeline() as line:
        return await _run(command, context, line)


async def _run(command: str, context: ToolSettings, line: Lifeline) -> str:
    process = await _spawn(command, context, line)
    assert process.stdout is not None and process.stderr is not None
    stdout, stderr = _Capture(), _Capture()
    code: int | None = None
    readers = asyncio.gather(stdout.drain(process.stdout), stderr.drain(process.stderr))
    # Their outcome is read here whatever happens, so a cancelled reader is
    # never logged as "exception was never retrieved".
    readers.add_done_callback(_consume)
    try:
        # Wait for the output to end or the shell to exit, whichever comes first.
        while not readers.done() and process.returncode is None:
            await asyncio.wait([readers], timeout=_POLL_INTERVAL)
        if readers.done():
            code = await process.wait()
        else:
            # The shell has exited, but a background child may still hold the
            # output pipes open: take what arrives shortly, then stop it.
            await asyncio.wait([readers], timeout=_AFTER_EXIT_GRACE)
            code = process.returncode
    except asyncio.CancelledError as exc:
        # A time limit or the user stopped it: keep what it printed so far, so
        # the time-limit answer can show the head of a long build log.
        await _stop(process, readers)
        if stdout.kept or stderr.kept:
            exc.add_note(partial_output(stdout, stderr))
        raise
    finally:
        # Runs on success too: a child left in the session would be an orphan.
        await _stop(process, readers)
    assert code is not None
    return _format(code, stdout, stderr)


async def _spawn(command: str, context: ToolSettings, line: Lifeline) -> Process:
    """Start the shell; a cancel that arrives meanwhile waits for it, kills its group, propagates.

    The setup is never cancelled itself: asyncio's clean-up of a cancelled
    setup kills only the shell (not its group) and then waits for the output
    pipes to close, which a grandchild already started holds open for ever
    (a stop signal right after the approval hung the app this way).
    """
    spawning = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            LIFELINE_SCRIPT,
            "sh",
            command,
            KILL_SESSION_SCRIPT,
            cwd=context.workspace,
            env=tool_environment(context.env_allow),
            stdin=line.read_end,  # the script gives the command /dev/null instead
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            preexec_fn=die_with_parent(),
        )
    )
    cancelled: asyncio.CancelledError | None = None
    while not spawning.done():
        try:
            await asyncio.shield(spawning)
        except asyncio.CancelledError as exc:
            if spawning.cancelled():
                raise  # the loop itself is shutting down
            cancelled = cancelled or exc
        except Exception:
            break  # the shell could not start: result() raises it
    process = spawning.result()
    line.child_started()
    if cancelled is not None:
        await _stop(process, None)
        raise cancelled
    return process


class _Capture:
    """One output stream: the first MAX_STREAM_BYTES kept, the rest counted and dropped."""

    def __init__(self) -> None:
        self.kept = bytearray()
        self.dropped = 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        # Fills the buffer as it reads, so output survives an interrupted read.
        while chunk := await stream.read(_CHUNK):
            room = MAX_STREAM_BYTES - len(self.kept)
            self.kept += chunk[:room]
            self.dropped += max(0, len(chunk) - room)


def _consume(readers: asyncio.Future[Any]) -> None:
    if not readers.cancelled():
        readers.exception()


async def _stop(process: Process, readers: asyncio.Future[Any] | None) -> None:
    """SIGKILL the command's session, wait briefly for it to be gone, release its pipes.

    Waiting lets the readers see the end of the output and the shell be
    reaped. The wait is bounded and does not use ``process.wait()``: on
    Python 3.11 that also waits for the pipes to close, which a child that
    left the session (setsid) can hold open for ever. The child watcher reaps
    the shell either way. Closing the transport at the end releases Koroku's
    ends of the pipes now rather than at garbage collection, which, after the
    loop closed, printed a traceback on stderr.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _REAP_WAIT
    await kill_session(process.pid, within=_REAP_WAIT)
    if readers is not None and not readers.done():
        await asyncio.wait([readers], timeout=max(0.0, deadline - loop.time()))
        readers.cancel()
    # There is no public exit event to await instead, hence the poll.
    while process.returncode is None and loop.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    reap_orphans(process.pid)
    # asyncio.subprocess.Process has no public close(); its transport does.
    transport = getattr(process, "_transport", None)
    if transport is not None:
        transport.close()
        await asyncio.sleep(0)  # the pipes close in the callbacks close() schedules


def _format(code: int, stdout: _Capture, stderr: _Capture) -> str:
    status = f"Exit code: {code}"
    if code < 0:
        status += f" (killed by signal {-code})"
    return "\n".join([status, _section("stdout", stdout), _section("stderr", stderr)])


def partial_output(stdout: _Capture, stderr: _Capture) -> str:
    """What a stopped command printed before it was stopped."""
    return "\n".join([_section("stdout", stdout), _section("stderr", stderr)])


def _section(label: str, capture: _Capture) -> str:
    text = capture.kept.decode("utf-8", errors="replace").rstrip("\n")
    if capture.dropped:
        text += f"\n[... {capture.dropped:,} more bytes of {label} not kept]"
    return f"--- {label} ---\n{text}" if text else f"--- {label} --- (empty)"
