"""``PasteSafeDriver``: Textual's Linux/macOS driver, reading keys with ``PasteParser``.

Textual's driver builds its ``XTermParser`` inside ``run_input_thread``;
this is that method with the parser swapped (``ui.terminal_input`` says why).
The reading loop is Textual's (8.x) but for one thing: a terminal that is
gone (its reads end or fail) is a hang-up. Textual's loop went on selecting
the ended terminal, which is always ready, so an app whose terminal closed
without a SIGHUP (its pty not its controlling terminal, as a bench or a
wrapper starts it) spun a core for ever, its output thread dead and the
screen's writes blocked behind it. It now sends itself the SIGHUP a
terminal would have sent: the turn stops and is kept, and the stop's
deadline ends the process even if a write is stuck.

It also hands the interpreter on sooner (:data:`TERMINAL_TURN`) while it
runs: keys are read and frames written in threads of their own.
"""

from __future__ import annotations

import os
import selectors
import signal
import sys
from codecs import getincrementaldecoder

from textual._loop import loop_last
from textual._parser import ParseError
from textual.drivers.linux_driver import LinuxDriver

from koroku_tui.ui.terminal_input import PasteParser

__all__ = ["TERMINAL_TURN", "PasteSafeDriver"]

TERMINAL_TURN = 0.001
"""Seconds a thread runs on while another waits for the interpreter (Python's default: 0.005).

Textual reads the keys and writes the frames in threads of their own, and
each step of theirs (a read, a parse, a queue's wake-up, a write) waits for
the interpreter anew. Behind a fast answer parsed on the event loop, each
wait took Python's full 5 ms turn, and more when the machine was busy: a
key typed during 20,000 one-character chunks showed after 80 ms (median;
150-200 ms at p95), its frame written up to 90 ms after it was drawn; with
1 ms turns, 17-30 ms (p95 55-65 ms), the answer no slower (issue 22, item 21).
"""


class PasteSafeDriver(LinuxDriver):
    """The terminal driver Koroku runs on outside Windows: a paste arrives whole."""

    _turn_before: float | None = None

    def start_application_mode(self) -> None:
        """Textual's, with the interpreter handed on every :data:`TERMINAL_TURN` seconds."""
        self._turn_before = sys.getswitchinterval()
        sys.setswitchinterval(TERMINAL_TURN)
        super().start_application_mode()  # type: ignore[no-untyped-call]  # Textual 8 leaves it untyped

    def stop_application_mode(self) -> None:
        """Textual's; the interpreter's turns are as they were."""
        try:
            super().stop_application_mode()
        finally:
            if self._turn_before is not None:
                sys.setswitchinterval(self._turn_before)
                self._turn_before = None

    def run_input_thread(self) -> None:
        """Wait for input and dispatch events (Textual's loop, on ``PasteParser``)."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        fileno, event_read = self.fileno, selectors.EVENT_READ
        parser = PasteParser(self._debug)
        feed, tick = parser.feed, parser.tick
        decode = getincrementaldecoder("utf-8")().decode

        gone = False

        def process_selector_events(
            selector_events: list[tuple[selectors.SelectorKey, int]], final: bool = False
        ) -> None:
            nonlocal gone
            for last, (_selector_key, mask) in loop_last(selector_events):
                if mask & event_read:
                    try:
                        data = os.read(fileno, 1024 * 4)
                    except OSError:  # EIO: the terminal hung up
                        data = b""
                    if not data:
                        gone = True  # the terminal is gone (or stdin was piped and ended)
                        break
                    for event in feed(decode(data, final=final and last)):
                        self.process_message(event)
            for event in tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set() and not gone:
                process_selector_events(selector.select(0.1))
            if not gone:
                selector.unregister(self.fileno)
                process_selector_events(selector.select(0.1), final=True)
        finally:
            selector.close()
            try:
                for _event in feed(""):
                    pass
            except (EOFError, ParseError):
                pass
            if gone and not self.exit_event.is_set():
                os.kill(os.getpid(), signal.SIGHUP)
