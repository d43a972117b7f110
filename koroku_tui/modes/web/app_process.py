"""One browser tab's Koroku: the app process, and the packets between it and the page.

The app runs on Textual's web driver (``TEXTUAL_DRIVER``): it reads the
page's keys as ``D`` packets and ``M`` (meta: resize, focus) packets on its
stdin, and writes the screen the same way on its stdout, after one
``__GANGLION__`` line. textual-serve speaks this protocol too, but starts the
app through a shell, in the server's process group, and waits forever for
it to quit; here the app is the leader of its own process group, so closing
the tab can end it and everything it started.

Closing the tab sends the app SIGHUP, as closing a terminal does: the app
stops the turn as Escape would (the partial answer is stored, the running
command killed, its call answered) and exits; the app's own deadline
(``agent.loop.stopping``) ends it if that hangs, and the group is killed
after a little more.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence

__all__ = ["STOP_WAIT_SECONDS", "AppProcess"]

logger = logging.getLogger(__name__)

STOP_WAIT_SECONDS = 8.0
"""How long the app may take to stop after SIGHUP before its group is killed
(its own deadline is 5 s: ``agent.loop.stopping.STOP_GRACE_SECONDS``)."""
_READY_LINE = b"__GANGLION__\n"
_MAX_PRELUDE_LINES = 50
"""Lines the app may print before the web driver starts (a warning on stdout)."""
_STDERR_KEPT = 8_000
"""Bytes of the app's stderr kept to show on the page when it ends before its first frame."""

Send = Callable[[bytes], Awaitable[None]]


class AppProcess:
    """A Koroku app process for one websocket.

    ``on_screen`` gets the bytes to draw, ``on_meta`` the app's other
    messages (``open_url``, ``exit``) as dicts. :meth:`stop` ends it.
    """

    def __init__(
        self,
        argv: Sequence[str],
        environment: Mapping[str, str],
        *,
        on_screen: Send,
        on_meta: Callable[[dict[str, object]], Awaitable[None]],
    ) -> None:
        self.argv = list(argv)
        self.environment = dict(environment)
        self._on_screen = on_screen
        self._on_meta = on_meta
        self.process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._stderr = bytearray()

    @property
    def pid(self) -> int | None:
        """The app's pid (also its process group's id), once started."""
        return None if self.process is None else self.process.pid

    async def start(self, width: int, height: int) -> None:
        """Start the app at the page's size; its screen flows to ``on_screen`` from now."""
        environment = {
            **self.environment,
            "TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver",
            "TEXTUAL_FPS": "60",
            "TEXTUAL_COLOR_SYSTEM": "truecolor",
            "TERM_PROGRAM": "textual",
            "COLUMNS": str(width),
            "ROWS": str(height),
        }
        self.process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
            start_new_session=True,  # its own process group: the tab's close ends it all
        )
        logger.info("web: started an app process (pid %d)", self.process.pid)
        self._reader = asyncio.create_task(self._read())

    async def ended(self) -> None:
        """Return once the app closed its screen (quit, or died)."""
        if self._reader is not None:
            await asyncio.shield(self._reader)

    async def send_keys(self, text: str) -> None:
        """What the page typed (xterm's input, escape sequences included)."""
        await self._send(b"D", text.encode("utf-8"))

    async def send_meta(self, meta: Mapping[str, object]) -> None:
        """A meta message: ``{"type": "resize", "width": .., "height": ..}``, focus, blur."""
        await self._send(b"M", json.dumps(meta).encode("utf-8"))

    async def _send(self, kind: bytes, payload: bytes) -> None:
        if self.process is None or self.process.stdin is None:
            return
        stdin = self.process.stdin
        with contextlib.suppress(ConnectionError, RuntimeError):  # the app has ended
            stdin.write(kind + len(payload).to_bytes(4, "big") + payload)
            await stdin.drain()

    async def _read(self) -> None:
        process = self.process
        assert process is not None and process.stdout is not None and process.stderr is not None
        errors = asyncio.create_task(self._keep_stderr(process.stderr))
        try:
            if await _wait_ready(process.stdout):
                await self._forward(process.stdout)
            else:
                await process.wait()
                await errors
                said = self._stderr.decode("utf-8", "replace").strip() or "Koroku did not start."
                logger.warning("web: the app ended before its first frame: %s", said)
                await self._on_screen(said.replace("\n", "\r\n").encode() + b"\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            errors.cancel()

    async def _forward(self, stdout: asyncio.StreamReader) -> None:
        while True:
            kind = await stdout.readexactly(1)
            size = int.from_bytes(await stdout.readexactly(4), "big")
            payload = await stdout.readexactly(size)
            if kind == b"D":
                await self._on_screen(payload)
            elif kind == b"M":
                await self._on_meta(json.loads(payload))
            # "P" packets carry files the app delivers; Koroku sends none.

    async def _keep_stderr(self, stderr: asyncio.StreamReader) -> None:
        while chunk := await stderr.read(4096):
            if len(self._stderr) < _STDERR_KEPT:
                self._stderr += chunk[: _STDERR_KEPT - len(self._stderr)]

    async def stop(self) -> None:
        """End the app as a closed terminal would (SIGHUP), then its whole process group."""
        process = self.process
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGHUP)
            try:
                await asyncio.wait_for(process.wait(), STOP_WAIT_SECONDS)
            except TimeoutError:
                logger.warning("web: app %d did not stop in time; killing it", process.pid)
        # Whatever is left in its group (a command's helper, a stuck app) goes too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        logger.info("web: app process %d ended (exit %s)", process.pid, process.returncode)


async def _wait_ready(stdout: asyncio.StreamReader) -> bool:
    """Skip what the app prints before its web driver starts; False if it never does."""
    for _ in range(_MAX_PRELUDE_LINES):
        line = await stdout.readline()
        if not line:
            return False
        if line == _READY_LINE:
            return True
    return False
