"""Keys read together act one after another, as they would typed slowly.

Textual (8.2.8, textual#6605) hands each key the App reads to the focused
widget, which passes it up, from message queue to message queue, to the
screen and the App; the App then runs the binding it finds (a screen's
ctrl+g, a dialog's Escape, a list's Enter). The keys read after it do not
wait: they are handed to the widget focused at that moment. In one burst (a
fast typist, a macro, keys typed while the app was busy) a key that opens a
screen or moves the focus acted after the keys typed after it, and those
went where the focus had been: ``ab`` ctrl+g Enter sent "ab" instead of
rewinding. ``ui.own_keys`` fixed this for a text field's own editing keys;
``KeyOrder`` fixes it for every key, whoever binds it, naming none. The App
hands a key on only once the key before it has settled:

- it has been handled all the way up (or stopped on its way), and the way up
  has been walked once more, so that what handling it posted (a list's
  choice, the prompt's ``Submitted``) has acted too;
- a screen it opened (or uncovered) has mounted and taken its focus, and
  the jobs it started then (the history's list, the session opened) have
  ended (as below);
- a job its binding started (the rewind list reads the store first) has
  ended or opened a screen, or has run ``WORKER_WAIT`` seconds (a compaction
  runs long: typing goes on, and an Escape typed just after ctrl+o cancels
  it then). A command key waits as text does: which screen it is for is
  known only once the key before it has settled.

Text typed into the text field the text before it went to (the prompt, a
search box) is handed on at once: it queues behind that text in the
field's own queue, as Textual would have it, and a burst typed while an
answer streams is not walked key by key (that made 88 keys take 10x longer).
Only the key after it waits for the text to have settled, and for the jobs
the change it made started (the ``@`` picker's walk of the workspace: Enter
then chooses the file, as typed slowly). Text held behind another key goes
on the same way once its turn comes: the key after the last of it waits for
the jobs all of it started (each letter had waited for the search it began).

A mouse button read behind a key still on its way waits its turn as well
(on the history screen a click's move in the list armed the row's letter
actions for the letters typed before it); it is not followed up: the key
after it goes on behind it at once.

A key's time is kept: a dialog still tells the keys typed before it was
drawn (``ui.key_grace``). Pastes keep their place among keys. Should a key
never settle (its widget removed under it), it is given up on ``STUCK``
seconds after it was handed on, whether or not keys wait behind it: none is
lost, and a key typed later does not wait for it.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import deque
from typing import Any

from textual import events
from textual.app import App
from textual.message_pump import MessagePump
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, TextArea
from textual.worker import Worker

__all__ = ["KeyOrder"]

logger = logging.getLogger(__name__)

Typed = events.Key | events.Paste
Pressed = events.MouseDown | events.MouseUp | events.Click
"""Mouse buttons: a click read behind typed keys acts after them, as typed slowly."""


class KeyOrder:
    """The App's keys (and pastes), each handed on once the one before has been handled.

    The App asks :meth:`holds` first with every event it reads, and tells
    :meth:`handed_on` once Textual has dealt with it.
    """

    WORKER_WAIT = 1.0
    """Seconds a key waits for a job the key before it started (the rest of it runs on).

    Long enough for a list's read of the store before it opens (ctrl+g's
    rewind list) on a loaded machine, where 0.5 s let an Enter typed after
    ctrl+g reach the prompt; short enough that keys after ctrl+o (a
    compaction, which runs for seconds) are not held long."""
    STUCK = 2.0
    """Seconds after which a key still on its way no longer holds the next (none is lost)."""

    def __init__(self, app: App[Any]) -> None:
        self._app = app
        self._held: deque[Typed | Pressed] = deque()
        self._current: Typed | None = None
        """The key on its way, until it and what it changed have settled."""
        self._released: Typed | Pressed | None = None
        """The held key posted again to the App, which it must let through."""
        self._screen: Screen[Any] | None = None
        self._start: MessagePump | None = None
        """Where the key on its way began, until the second walk up from there."""
        self._workers: weakref.WeakSet[Worker[Any]] = weakref.WeakSet()
        """The workers there were when the key was handed on (not kept alive for it)."""
        self._started: list[Worker[Any]] = []
        """The workers the key's binding started."""
        self._carried: list[Worker[Any]] = []
        """The jobs of the text before, which the key after the last of that text waits for."""
        self._watchdog: asyncio.TimerHandle | None = None
        self._screen_changed: asyncio.Event | None = None
        self._depth = 0
        """How many screens were stacked at the last screen change."""
        self._openers: weakref.WeakSet[Worker[Any]] = weakref.WeakSet()
        """The jobs running when the top screen was pushed: one of them opened it (the
        rewind's, which waits on its question), and it is no key's to wait for then."""
        self._waiting: asyncio.Task[None] | None = None
        self._text_for: Widget | None = None
        """The text field the key on its way is text for (the next text for it need not wait)."""
        self._followed = False
        """The key on its way is being followed: bubbling back up to the App, it is not
        handed on again (a second walk settled it early, before the rewind's prefill)."""

    @property
    def idle(self) -> bool:
        """No key on its way, none waiting its turn."""
        return self._current is None and self._released is None and not self._held

    @property
    def typed_at(self) -> float | None:
        """When the key on its way was typed (``None``: none is on its way).

        What a key does by its timing (a double Escape) is judged by this, not by
        when it is handled: keys held behind a slow one are handled back to back."""
        return None if self._current is None else self._current.time

    def released(self, event: events.Event) -> bool:
        """``event`` was held and is now posted again, its turn come (it was read before)."""
        return event is self._released

    def holds(self, event: events.Event) -> bool:
        """True when ``event`` was typed after a key still on its way: it waits its turn."""
        if isinstance(event, Pressed) and not event.is_forwarded:
            return self._holds_click(event)
        if not isinstance(event, Typed) or event.is_forwarded:
            return False  # not read from the terminal (a key bubbling back up, a move...)
        if not self._app.screen_stack:  # the app is closing: the key can act on nothing
            self._held.clear()
            self._current = self._released = None
            return True
        text_for = self._text_field(event)
        if event is self._released:
            self._released = None
        elif (
            self._current is not None
            and not self._held
            and self._released is None
            and (text_for is not None and text_for is self._text_for)
        ):
            # Text after text in the same field: it goes behind it in the field's own queue
            # (a burst typed while an answer streams is not walked key by key).
            pass
        elif self._current is not None or self._released is not None or self._held:
            # A command key (Escape) waits its turn too: typed slowly, ctrl+g's Escape
            # closes the rewind list; only the job's ``WORKER_WAIT`` tells a long job apart.
            self._held.append(event)
            self._arm()
            return True
        self._current, self._screen, self._start = event, self._app.screen, None
        self._followed = False
        self._text_for = text_for
        self._started = []
        self._workers = weakref.WeakSet(self._app.workers)
        self._forget()  # the text before it, if any, is no longer followed
        self._arm()  # should it never settle, a key typed much later need not wait for it
        self._watch_screens()
        return False

    def _holds_click(self, event: Pressed) -> bool:
        # A click read in the same burst as letters before it (the driver posts them
        # together while the app is busy) acted first: on the history screen its move in
        # the list turned the letters after it into the row's actions ("deploy" deleted).
        if event is self._released:
            self._released = None
            self._next(None)  # a click is not followed: the next goes on behind it
            return False
        if self._current is not None or self._released is not None or self._held:
            self._held.append(event)
            self._arm()
            return True
        return False

    def _text_field(self, event: Typed) -> Widget | None:
        """The focused text field ``event`` will be typed into, if it is text (or a paste)."""
        focused = self._app.focused
        if not isinstance(focused, Input | TextArea) or getattr(focused, "read_only", False):
            return None
        if isinstance(event, events.Key) and not (event.is_printable and event.character):
            return None
        return focused

    def handed_on(self, event: events.Event) -> None:
        """Textual dealt with ``event``: handed to the focused widget (followed up), or acted on."""
        if event is not self._current or self._followed:
            return
        self._followed = True
        if event.is_forwarded:
            self._start = self._app.focused or self._app.screen
            self._follow(event, self._start)
        else:  # a priority binding took it in the App
            self._handled(event)

    # -- following a key up ----------------------------------------------------

    def _follow(self, event: Typed, node: MessagePump) -> None:
        # Queued behind the key: runs once ``node`` has handled it (and passed it up, or not).
        if not node.call_later(self._passed, event, node):
            self._handled(event)  # closing: the key goes no further

    def _passed(self, event: Typed, node: MessagePump) -> None:
        if event is not self._current:
            return  # given up on (``STUCK``)
        # Textual's private names, read where no public one says it: should a later
        # Textual rename them, keys go on sooner (as before ``KeyOrder``), none held.
        parent = getattr(node, "_parent", None)
        if parent is None:
            self._handled(event)
        elif (
            getattr(event, "_stop_propagation", False)
            and parent is not self._app
            and self._start is not None
        ):
            # Stopped here (a screen's key still reaches the App). What handling it posted
            # (a list's choice, the prompt's Submitted) is queued behind this: the way up
            # is walked again, behind those messages, so that they have acted too.
            self._walk_again(event)
        else:
            self._follow(event, parent)

    def _walk_again(self, event: Typed) -> None:
        start, self._start = self._start, None
        assert start is not None
        self._started = self._new_workers()  # by its binding, not by what it posted (a turn)
        self._follow(event, start)

    def _new_workers(self) -> list[Worker[Any]]:
        return [w for w in self._app.workers if w not in self._workers and not w.is_finished]

    def _handled(self, event: Typed) -> None:
        """The key reached its end; a job it started may still open a screen or move the focus."""
        if self._start is not None:  # reached the App: once more behind what it posted
            self._walk_again(event)
            return
        if not event.is_forwarded or self._text_for is not None:
            # A priority binding's jobs; or text's, started by the change it made (the ``@``
            # picker's walk of the workspace): typed slowly, Enter found the file listed.
            self._started = self._new_workers()
        started = [*self._started, *(w for w in self._carried if w not in self._started)]
        self._carried = []
        first = self._held[0] if self._held else None
        more_text = isinstance(first, Typed) and self._text_field(first) is self._text_for
        if self._text_for is not None and more_text:
            # Held text for the same field goes on into the field's queue, as text
            # behind text does unheld: each letter waited for the search it started.
            self._carried, started = started, []
        self._wait_or_settle(started, event)

    def _wait_or_settle(self, started: list[Worker[Any]], event: Typed) -> None:
        """Wait for the jobs of ``started`` still running, unless the screen changed: settle."""
        if self._waiting is not None:
            return  # already waiting for this key's jobs: one wait settles it, once
        running = [w for w in started if not w.is_finished]
        if running and self._app.screen is self._screen:
            self._waiting = asyncio.create_task(self._wait_for(running, event))
        else:
            self._settle(event)

    def _watch_screens(self) -> None:
        if self._screen_changed is None:
            self._screen_changed = asyncio.Event()
            self._depth = len(self._app.screen_stack)
            self._app.screen_change_signal.subscribe(
                self._app, self._on_screen_change, immediate=True
            )

    async def _wait_for(self, started: list[Worker[Any]], event: Typed) -> None:
        self._watch_screens()
        assert self._screen_changed is not None
        self._screen_changed.clear()
        changed = asyncio.create_task(self._screen_changed.wait())
        jobs = {task for w in started if (task := getattr(w, "_task", None)) is not None}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.WORKER_WAIT
        try:
            while jobs and not changed.done() and (left := deadline - loop.time()) > 0:
                _, jobs = await asyncio.wait(
                    {*jobs, changed}, timeout=left, return_when=asyncio.FIRST_COMPLETED
                )
                jobs.discard(changed)
        finally:
            changed.cancel()
        self._waiting = None
        self._settle(event)

    def _on_screen_change(self, _screen: Screen[Any]) -> None:
        # Published as the screen is pushed, before it mounts: the jobs it starts then
        # are not among the openers.
        depth, pushed = len(self._app.screen_stack), len(self._app.screen_stack) > self._depth
        self._depth = depth
        running = (w for w in self._app.workers if not w.is_finished) if pushed else ()
        self._openers = weakref.WeakSet(running)  # a job uncovered again goes on: it is waited for
        if self._screen_changed is not None:
            self._screen_changed.set()

    def _settle(self, event: Typed) -> None:
        if event is not self._current:
            return
        if not self._app.screen_stack:  # closing
            self._next(event)
            return
        screen = self._app.screen
        # A screen opened (or closed): it mounts, resumes and takes its focus in its own queue.
        if screen is self._screen or not screen.call_later(self._shown, event, screen):
            self._next(event)

    def _shown(self, event: Typed, screen: Screen[Any]) -> None:
        """The screen ``event`` opened has mounted: the jobs it started then (a list's read
        of the store, the session it opens) are the key's too: typed slowly, the next key
        found the list filled."""
        if event is not self._current:
            return
        self._screen = screen
        started = [w for w in self._new_workers() if w not in self._openers]
        self._wait_or_settle(started, event)

    # -- the next key ------------------------------------------------------------

    def _next(self, event: Typed | None) -> None:
        if event is not self._current:
            return
        self._current = None
        self._forget()
        if self._held:
            # Posted to the App again: after what this key asked of it (a focus move...).
            self._released = self._held.popleft()
            if not self._app.post_message(self._released):
                self._released = None
                self._held.clear()  # the app is closing

    def _forget(self) -> None:
        """The key on its way is no longer followed (settled, given up on, or text after it)."""
        self._stop_watchdog()
        if self._waiting is not None:  # its wait for jobs settles nothing now
            self._waiting.cancel()
            self._waiting = None

    def _stop_watchdog(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    def _arm(self) -> None:
        if self._watchdog is None:
            loop = asyncio.get_running_loop()
            self._watchdog = loop.call_later(self.STUCK, self._unstick, self._current)

    def _unstick(self, event: Typed | None) -> None:
        self._watchdog = None
        if event is not None and event is self._current:
            logger.warning("a key was still on its way after %s s; the next goes on", self.STUCK)
            self._carried = []  # the jobs of text given up on are no later key's to wait for
            self._next(event)
