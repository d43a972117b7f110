"""Work in a thread that quitting does not wait for."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["in_daemon_thread"]

T = TypeVar("T")


async def in_daemon_thread(work: Callable[[], T], name: str = "koroku-background") -> T:
    """``work()`` in a daemon thread, awaited: ``asyncio.to_thread`` without the wait at exit.

    ``asyncio.to_thread`` runs on the loop's default executor, whose threads
    the interpreter joins before it exits: quitting during the agent's
    start-up imports (the Gemini SDK, ~1.6 s on a loaded machine) or the
    conversion of a long context (3.4 s at 10,000 events) waited for them to
    end. A daemon thread is dropped where it stands, so this is only for work
    that leaves nothing behind once the program ends: imports, caches in
    memory. A cancelled caller stops waiting; the work runs on, unseen.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = work()
        except BaseException as exc:  # handed to the caller, raised there
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name=name, daemon=True).start()
    return await done
