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
"""

from __future__ import annotations

import os
import selectors
import signal
from codecs import getincrementaldecoder

from textual._loop import loop_last
from textual._parser import ParseError
from textual.drivers.linux_driver import LinuxDriver

from koroku_tui.ui.terminal_input import PasteParser

__all__ = ["PasteSafeDriver"]


class PasteSafeDriver(LinuxDriver):
    """The terminal driver Koroku runs on outside Windows: a paste arrives whole."""

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
