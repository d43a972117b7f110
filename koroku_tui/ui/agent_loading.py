"""The agent's imports, in a thread of their own after the first frame.

The agent, the Gemini SDK and httpx2 take ~1.5 s to import here; the app
asks for them once its first frame is drawn (``KorokuApp.start_agent``), and
the CLI asks whether they are still running when the app quits
(``agent_still_importing``: a quitting user does not wait for them).
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable
from contextlib import suppress
from importlib import import_module

from koroku_tui.ui.main.answer import MARKDOWN_MODULES
from koroku_tui.ui.main.answer_cuts import warm_up

__all__ = ["agent_still_importing", "importing", "in_own_thread", "load_agent"]

importing = threading.Event()
"""Set from the moment ``start_agent`` asks for the agent's imports until they end."""


def agent_still_importing() -> bool:
    """True when the app quit before the agent's imports (in their thread) ended."""
    return importing.is_set()


def load_agent() -> None:
    """Import the agent and the Gemini SDK and httpx2 it brings, in a thread.

    They take ~1.5 s here, which the first frame must not wait for:
    ``start_agent`` runs this after that frame, off the event loop. What
    the imports leave is frozen as the CLI froze what came before the app
    (``cli.freeze_heap``): modules and classes that live until exit, kept out
    of the collections that would stall a streamed answer.
    """
    try:
        import_module("koroku_tui.agent.loop.agent")
        import_module("httpcore2")  # the client imports it when made (on the loop)
        import_module("koroku_tui.agent.wire.body").warm_up()  # first uses, off the loop
        for module in MARKDOWN_MODULES:  # already there when the first frame held an answer
            import_module(module)
        warm_up()
        gc.freeze()
    finally:
        importing.clear()


async def in_own_thread(work: Callable[[], None]) -> None:
    """``work()`` in a thread of its own, awaited (an error is raised here).

    Not ``asyncio.to_thread``: the event loop's shutdown joins the threads of
    its executor, so ``app.run()`` would not return before the imports ended,
    and ``cli._exit_now`` could not spare a quitting user the wait.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle(error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    def run() -> None:
        error: BaseException | None = None
        try:
            work()
        except BaseException as exc:  # raised in the awaiting task
            error = exc
        with suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, error)

    threading.Thread(target=run, name="koroku-agent-import").start()
    await done
