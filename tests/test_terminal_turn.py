"""On the terminal, a thread waiting for the interpreter gets it within a millisecond.

Textual reads keys and writes frames in threads of their own; behind a fast
answer parsed on the event loop, each of their steps waited Python's 5 ms
turn, and keys showed ~80 ms after they were typed (issue 22, item 21;
``bench/stream_input_bench.py`` measures it). The driver's start sets the
shorter turn and its stop gives the process back its own. Textual's own
start and stop (which take over the terminal) are left out here.
"""

from __future__ import annotations

import sys

import pytest
from textual.app import App
from textual.drivers.linux_driver import LinuxDriver

from koroku_tui.ui.terminal_driver import TERMINAL_TURN, PasteSafeDriver


async def test_the_driver_hands_the_interpreter_on_every_millisecond_while_it_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(LinuxDriver, "start_application_mode", lambda self: None)
    monkeypatch.setattr(LinuxDriver, "stop_application_mode", lambda self: None)
    before = sys.getswitchinterval()
    driver = PasteSafeDriver(App[None]())
    try:
        driver.start_application_mode()
        assert sys.getswitchinterval() == pytest.approx(TERMINAL_TURN)
        assert before > TERMINAL_TURN
    finally:
        driver.stop_application_mode()
    assert sys.getswitchinterval() == pytest.approx(before)
