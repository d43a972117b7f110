"""The core (events, store, agent, fake server) never imports Textual or Rich."""

from __future__ import annotations

import subprocess
import sys

import pytest

CORE_MODULES = [
    "koroku_tui",
    "koroku_tui.events",
    "koroku_tui.settings",
    "koroku_tui.store",
    "koroku_tui.agent.context.repair",
    "koroku_tui.memory_files",
    "koroku_tui.agent.tools",
    "koroku_tui.fake_gemini",
    "koroku_tui.text_safety",
    "koroku_tui.tool_args",
    "koroku_tui.terminal_streams",
]


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_does_not_pull_in_the_ui(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(leaked))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"{module} imported {result.stdout.strip()}"
