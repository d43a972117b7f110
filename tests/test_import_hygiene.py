"""What each part imports: the core (events, store, agent, fake server) never
Textual or Rich; the app's launch nothing of the Gemini SDK before its first frame."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.first_frame_modules import HEAVY
from helpers.held_import import hold_import

from koroku_tui.config.settings import Settings
from koroku_tui.events import (
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
    TextPart,
)
from koroku_tui.store import SessionManager

CORE_MODULES = [
    "koroku_tui",
    "koroku_tui.events",
    "koroku_tui.config.settings",
    "koroku_tui.store",
    "koroku_tui.agent.context.repair",
    "koroku_tui.store.memory_files",
    "koroku_tui.agent.tools",
    "koroku_tui.fake_gemini",
    "koroku_tui.text.safety",
    "koroku_tui.text.tool_args",
    "koroku_tui.modes.terminal_streams",
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


# -- the launch: nothing of the Gemini SDK before the first frame --------------

HELPERS = Path(__file__).parent / "helpers"


def heavy_modules_after(code: str) -> str:
    """The ``HEAVY`` modules a fresh interpreter holds after running ``code``."""
    report = f"print(','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    result = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\n{report}"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_app_module_loads_without_the_sdk() -> None:
    """The SDK alone takes ~1.5 s to import: the app's module must not need it."""
    assert heavy_modules_after("import koroku_tui.ui.app") == ""


def test_the_app_module_loads_without_pydantic_settings() -> None:
    """pydantic-settings imported all its sources (~100 ms) before the first frame."""
    code = "import sys, koroku_tui.ui.app\nprint('pydantic_settings' in sys.modules)\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_the_command_reaches_the_app_without_the_sdk(tmp_path: Path) -> None:
    """``koroku-tui`` up to ``app.run()`` (run replaced by a no-op): credentials, home, database."""
    code = (
        "from koroku_tui.ui.app import KorokuApp\n"
        "KorokuApp.run = lambda self, *args, **kwargs: None\n"
        "from koroku_tui.cli import main\n"
        f"assert main(['--home', {str(tmp_path)!r}]) == 0\n"
    )
    assert heavy_modules_after(code) == ""


def passes_in_a_fresh_interpreter(code: str) -> None:
    """Run ``code`` in a new Python; its asserts are the test's."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_command_runs_no_full_collection_before_the_app(tmp_path: Path) -> None:
    """A full collection before the first frame found nothing to free and cost ~40 ms."""
    code = (
        "import gc\n"
        "from koroku_tui.ui.app import KorokuApp\n"
        "from koroku_tui.cli import main\n"
        "full = []\n"
        "KorokuApp.run = lambda self, *args, **kwargs: None\n"
        "gc.collect()  # the imports' own collections are not the command's\n"
        "gc.callbacks.append(lambda phase, info: full.append(info) if info['generation'] == 2 "
        "and phase == 'start' else None)\n"
        f"assert main(['--home', {str(tmp_path)!r}]) == 0\n"
        "assert not full, full\n"
        "assert gc.get_freeze_count() > 0\n"
    )
    passes_in_a_fresh_interpreter(code)


def test_the_command_collects_nothing_until_the_app_runs(tmp_path: Path) -> None:
    """The start's imports make ~100,000 objects that live until exit: collecting
    among them freed nothing and cost ~10% of the launch. The app runs with
    collection on again, over a frozen start-up heap."""
    code = (
        "import gc, sys, textual.app\n"
        "from koroku_tui.cli import main\n"
        "assert 'pydantic' not in sys.modules  # main's imports are all under its switch\n"
        "collections, running = [], []\n"
        "gc.callbacks.append(lambda phase, info: collections.append(info) "
        "if phase == 'start' else None)\n"
        "def run(self, *args, **kwargs):\n"
        "    running.append((len(collections), gc.isenabled(), gc.get_freeze_count()))\n"
        "textual.app.App.run = run\n"
        f"assert main(['--home', {str(tmp_path)!r}]) == 0\n"
        "(before_run, enabled, frozen), = running\n"
        "assert before_run == 0, collections\n"
        "assert enabled and frozen > 0 and gc.isenabled()\n"
    )
    passes_in_a_fresh_interpreter(code)


@pytest.mark.parametrize("argv", [["--fork", "x"], ["--version"]], ids=["bad flag", "version"])
def test_a_start_that_ends_early_collects_again(tmp_path: Path, argv: list[str]) -> None:
    code = (
        "import gc\n"
        "from koroku_tui.cli import main\n"
        "try:\n"
        f"    assert main(['--home', {str(tmp_path)!r}, *{argv!r}]) == 1\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert gc.isenabled()\n"
    )
    passes_in_a_fresh_interpreter(code)


async def seed_tool_turn(home: Path) -> None:
    """One turn with a tool call: a question, the call, its response, the answer."""
    args = {"path": "notes.txt"}
    call = FunctionCallData(name="read_file", args=args, id="c1")
    response = FunctionResponseData(name="read_file", response={"output": "hello"}, id="c1")
    events = [
        SessionEvent(role="user", parts=[TextPart(text="What is in notes.txt?")]),
        SessionEvent(role="model", parts=[FunctionCallPart(function_call=call)]),
        SessionEvent(
            role="user",
            parts=[
                FunctionResponsePart(
                    function_response=response, fc_metadata=FCMetadata(name="read_file", args=args)
                )
            ],
        ),
        SessionEvent(role="model", parts=[TextPart(text="It says **hello**.")]),
    ]
    async with SessionManager(Settings(home=home).database_path) as store:
        for event in events:
            await store.add_message(event)


def launch_fresh(home: Path, script: str = "first_frame_modules.py") -> dict[str, Any]:
    """The real app on ``home`` in a fresh interpreter: the JSON report of a helper ``script``."""
    # A key and a server that refuses connections: the agent starts as usual,
    # offline (a script that talks to Gemini brings its own fake server).
    env = os.environ | {
        "GEMINI_API_KEY": "test-key",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9",
    }
    result = subprocess.run(
        [sys.executable, str(HELPERS / script), str(home)], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    return report


def test_the_first_frame_is_drawn_before_the_sdk_loads(tmp_path: Path) -> None:
    """The conversation shows first; the agent (with the SDK) starts after that frame.

    The screens shown later (history, approval) load when first shown.
    """
    asyncio.run(seed_tool_turn(tmp_path))
    loaded = launch_fresh(tmp_path)
    assert loaded["first_frame"] == [], f"loaded before the first frame: {loaded['first_frame']}"
    assert loaded["agent"], "the agent did not start after the first frame"
    assert "google.genai" in loaded["started"]


def test_mcp_servers_start_after_the_first_frame(tmp_path: Path) -> None:
    """The MCP SDK (~1 s to import) and the servers wait for the agent, after that frame."""
    server = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    (tmp_path / "mcp_servers.json").write_text(json.dumps({"time": server}))
    loaded = launch_fresh(tmp_path)
    assert loaded["first_frame"] == [], f"loaded before the first frame: {loaded['first_frame']}"
    assert {"mcp", "mcp_types"} <= set(loaded["started"])


def test_a_first_frame_without_answers_loads_no_markdown(tmp_path: Path) -> None:
    """Rich Markdown and markdown-it (~50 ms) wait for the first answer to draw."""
    empty = launch_fresh(tmp_path)
    assert empty["markdown"] == [], empty["markdown"]
    asyncio.run(seed_tool_turn(tmp_path / "with-answer"))
    assert launch_fresh(tmp_path / "with-answer")["markdown"] == ["markdown_it", "rich.markdown"]


def test_the_first_frame_shows_the_keys(tmp_path: Path) -> None:
    """Textual's Footer drew no key in the first frame (they came a frame and ~0.1 s later)."""
    asyncio.run(seed_tool_turn(tmp_path))
    keys = launch_fresh(tmp_path)["keys"]
    assert "esc Cancel" in keys and "^r History" in keys and "^p palette" in keys, keys


@pytest.mark.parametrize(
    ("known", "unknown"), [("history.rename", "history.nope"), ("approval.deny", "approval.nope")]
)
def test_a_keymap_may_name_keys_of_the_screens_loaded_later(
    tmp_path: Path, known: str, unknown: str
) -> None:
    """The history and approval screens load on first use; a keymap naming their keys is checked."""
    asyncio.run(seed_tool_turn(tmp_path))
    (tmp_path / "keymap.toml").write_text(f'"{known}" = "f2"\n"{unknown}" = "f3"\n')
    notices = " ".join(launch_fresh(tmp_path)["notices"])
    assert f"'{unknown}' is not a binding id" in notices, notices
    assert f"'{known}'" not in notices, notices


def test_the_first_approval_loads_the_dialog_asks_and_records_the_denial(tmp_path: Path) -> None:
    """The approval dialog loads when first needed; it still shows, and the status says so."""
    report = launch_fresh(tmp_path, "first_approval.py")
    assert report["loaded_before"] is False, "the dialog was loaded before it was needed"
    assert report["screen"] == "ApprovalScreen"
    assert "waiting for your answer" in report["status"]
    assert [row for row in report["rows"] if row.startswith("⊘")], report["rows"]


@pytest.mark.parametrize("package", ["koroku_tui.agent", "koroku_tui.agent.tools"])
def test_every_name_the_package_exports_loads_on_first_use(package: str) -> None:
    """These packages import their names when first asked for (so a light part loads alone)."""
    module = importlib.import_module(package)
    assert set(module._MODULE_OF) == set(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, name


def test_ctrl_c_while_starting_says_so_without_a_traceback(tmp_path: Path) -> None:
    variables, held = hold_import(tmp_path, "textual.app")  # ctrl+c lands while starting
    env = os.environ | variables
    command = [str(Path(sys.executable).parent / "koroku-tui"), "--home", str(tmp_path / "home")]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        while not held.exists() and process.poll() is None:
            time.sleep(0.05)  # polling a file the child makes; no event to wait on
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
    assert (process.returncode, stderr) == (130, "koroku-tui: cancelled while starting.\n")
