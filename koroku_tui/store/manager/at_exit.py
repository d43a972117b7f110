"""Closing a store its program never closed, so that the program still exits.

The seed's terminal program returns from ``main()`` without ``close()``.
aiosqlite (0.22) runs each connection on a worker thread that is not a daemon
and ends only when the connection is closed; the interpreter joins such
threads before it exits, so a store left open used to hang the process
forever. Two safety nets close it; the first that applies does the work:

1. The end of the store's event loop. ``asyncio.run`` (and Textual's ``App.run``
   and pytest-asyncio's runners) close the loop's async generators once the
   main coroutine has returned, while the loop still runs. Opening the store
   starts a small async generator on its loop; when the loop closes it, it
   runs the store's own ``close()`` there: the lease and an unused session id
   are given back and the connection is closed, exactly as ``close()`` does.
2. The interpreter's exit, for a loop that ended without that step (a bare
   ``run_until_complete``, say). ``threading._register_atexit`` functions run
   before non-daemon threads are joined (``concurrent.futures`` relies on it
   for its workers). A connection still open then, opened by the main thread
   (whose code has ended) or by a thread that has ended, whose loop no longer
   runs, gets aiosqlite's own ``Connection.stop()``: its worker closes the
   sqlite3 connection after anything queued before it, and ends, so the join
   returns. A store of a thread still running is that thread's to close: the
   interpreter is about to wait for that thread, which may still write.

Neither loses a row: every write commits before it returns, and SQLite rolls
back a transaction cut short. Not chosen: a daemon worker (a daemon thread cut
off at exit inside C code aborted the process with SIGABRT, in pydantic-core);
``atexit`` or ``weakref.finalize`` (both run after the join: too late); the
connection's ``__del__`` (it runs only once the manager is garbage, which an
object still referenced at exit never is before the join).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import suppress

import aiosqlite

__all__ = ["ExitGuard"]

logger = logging.getLogger(__name__)

_open: weakref.WeakKeyDictionary[
    aiosqlite.Connection, tuple[asyncio.AbstractEventLoop, threading.Thread]
] = weakref.WeakKeyDictionary()
"""Connections of stores not closed yet, with the loop and the thread each was opened on."""
_open_lock = threading.Lock()
_hook_registered = False


class ExitGuard:
    """Closes one store at its loop's end or the interpreter's exit, if nothing did before."""

    def __init__(self) -> None:
        self._watcher: AsyncGenerator[None, None] | None = None
        self._close: weakref.WeakMethod[Callable[[], Awaitable[None]]] | None = None
        self._conn: aiosqlite.Connection | None = None

    async def arm(self, conn: aiosqlite.Connection, close: Callable[[], Awaitable[None]]) -> None:
        """Watch the store just opened on ``conn``; ``close`` is its ``close`` method.

        Call it on the loop the store was opened on. ``close`` is held weakly:
        the guard never keeps a store alive.
        """
        with _open_lock:
            _open[conn] = (asyncio.get_running_loop(), threading.current_thread())
        _register_exit_hook()
        self._conn = conn
        self._close = weakref.WeakMethod(close)
        watcher = _close_at_loop_end(weakref.ref(self))
        # Its first step makes the running loop track it (sys asyncgen hooks),
        # so the loop's shutdown_asyncgens() will close it.
        await anext(watcher)
        self._watcher = watcher

    def disarm(self) -> None:
        """The store has closed its connection (or queued the close): watch no more."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with _open_lock:
                _open.pop(conn, None)
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            _finish(watcher)

    def __del__(self) -> None:
        # Dropped with its store, unclosed: aiosqlite's own ``__del__`` stops
        # the worker. Finish the watcher here, or its loop would schedule a
        # task to close it, which a loop never run again reports at exit.
        if self._watcher is not None:
            _finish(self._watcher)

    async def _loop_ends(self) -> None:
        """The loop is closing its async generators: close the store while it still runs."""
        self._watcher = None  # running now: ``disarm`` must not resume it
        close = self._close() if self._close is not None else None
        if close is not None:
            await close()


async def _close_at_loop_end(guard: weakref.ref[ExitGuard]) -> AsyncGenerator[None, None]:
    """Waits at ``yield`` while the store is open; ``aclose()`` there closes the store."""
    try:
        yield
    except GeneratorExit:
        if (alive := guard()) is not None:
            await alive._loop_ends()
        raise


def _finish(watcher: AsyncGenerator[None, None]) -> None:
    """Resume ``watcher`` normally: it returns at once, closing nothing, awaiting nothing."""
    with suppress(StopAsyncIteration):
        watcher.asend(None).send(None)


def _register_exit_hook() -> None:
    global _hook_registered
    with _open_lock:
        if _hook_registered:
            return
        _hook_registered = True
    # CPython's, used by concurrent.futures; missing elsewhere (then only
    # the loop's end closes a forgotten store).
    register = getattr(threading, "_register_atexit", None)
    if register is None:
        return
    # RuntimeError: opened while the interpreter is already shutting down.
    with suppress(RuntimeError):
        register(_stop_forgotten_connections)


def _abandoned(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> bool:
    """Whether no code is left to close a store opened on ``loop`` in ``thread``.

    Asked at exit, in the main thread, whose own code has ended. Another
    thread still running may yet write and close (the interpreter waits for
    it next), and so may a loop still running anywhere.
    """
    if loop.is_running():
        return False
    return thread is threading.current_thread() or not thread.is_alive()


def _stop_forgotten_connections() -> None:
    """At exit, before non-daemon threads are joined: stop the workers of open stores."""
    with _open_lock:
        forgotten = [conn for conn, (loop, thread) in _open.items() if _abandoned(loop, thread)]
        _open.clear()
    if not forgotten:
        return
    # ``stop()`` makes a future on asyncio's current loop, which its worker
    # then resolves; with none current it makes none. The main loop may be
    # closed by now, and resolving a future on it would raise in the worker.
    with suppress(Exception):
        asyncio.set_event_loop(None)
    for conn in forgotten:
        try:
            conn.stop()
        except Exception:
            logger.debug("stopping a forgotten store connection", exc_info=True)
