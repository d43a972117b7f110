"""Settings come from one place: no module below the command line builds them or reads the
environment itself; they are handed down from the one assembly point (``koroku_tui.modes.wiring``).

An AST scan of ``koroku_tui/``: a ``Settings(...)`` call (or ``Settings.<anything>(...)``)
and any use of ``os.environ`` / ``os.getenv`` (and their kin) is allowed only in the files
below, each for the reason given.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

import koroku_tui

PACKAGE = Path(koroku_tui.__file__).parent
ROOT = PACKAGE.parent

BUILDS_SETTINGS = "Settings()"
READS_ENVIRONMENT = "os.environ"

ALLOWED: dict[str, dict[str, str]] = {
    "koroku_tui/cli.py": {
        BUILDS_SETTINGS: "the command line builds the one Settings value, flags over KOROKU_*",
        READS_ENVIRONMENT: "how Koroku was started (UV: under `uv run`), so advice names the "
        "command the user can type (handed down as RunParts.command), and whether KOROKU_HOME "
        "named the home a refusal is about",
    },
    "koroku_tui/config/reading.py": {
        BUILDS_SETTINGS: "checks one config file's values with the model, strictly and without "
        "the environment, to name a bad key with its file and line; the value is thrown away "
        "(the run's Settings is still built in cli.py)",
    },
    "koroku_tui/config/settings.py": {
        READS_ENVIRONMENT: "the Settings model's own source: its KOROKU_* variables, and the "
        "variables MCP servers' bearer_token_env_var name (process_environment), read by the "
        "loader with them",
    },
    "koroku_tui/modes/seed_entry.py": {
        BUILDS_SETTINGS: "the seed's `Agent()` has no command line: it builds Settings from "
        "the environment, as cli.py does, then assembles through koroku_tui.modes.wiring",
    },
    "koroku_tui/agent/wire/credentials.py": {
        READS_ENVIRONMENT: "the credential reader: API keys are withdrawn from the environment "
        "at start-up and kept out of Settings (see koroku_tui/modes/wiring.py's docstring)",
    },
    "koroku_tui/agent/tools/child_env.py": {
        READS_ENVIRONMENT: "what a child inherits (a command, a stdio MCP server): Koroku's "
        "environment without credentials, passed on to the child, not read as configuration",
    },
}
"""Path -> what it may do -> why."""

_ENVIRONMENT_NAMES = frozenset({"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"})


def _builds_settings(func: ast.expr) -> bool:
    """``Settings(...)``, ``settings.Settings(...)`` or ``Settings.model_validate(...)``."""
    if isinstance(func, ast.Name):
        return func.id == "Settings"
    if isinstance(func, ast.Attribute):
        owner = func.value
        return func.attr == "Settings" or (isinstance(owner, ast.Name) and owner.id == "Settings")
    return False


def _reads_environment(node: ast.AST) -> bool:
    """``os.environ``, ``os.getenv`` and their kin, or ``from os import environ``."""
    if isinstance(node, ast.Attribute) and node.attr in _ENVIRONMENT_NAMES:
        return isinstance(node.value, ast.Name) and node.value.id == "os"
    if isinstance(node, ast.ImportFrom) and node.module == "os":
        return any(alias.name in _ENVIRONMENT_NAMES for alias in node.names)
    return False


def uses_in(source: str) -> Counter[str]:
    """How often ``source`` builds Settings and touches the environment."""
    found: Counter[str] = Counter()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and _builds_settings(node.func):
            found[BUILDS_SETTINGS] += 1
        elif _reads_environment(node):
            found[READS_ENVIRONMENT] += 1
    return found


def package_uses() -> dict[str, Counter[str]]:
    """Every module of koroku_tui/ that builds Settings or touches the environment."""
    uses = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found = uses_in(path.read_text(encoding="utf-8"))
        if found:
            uses[path.relative_to(ROOT).as_posix()] = found
    return uses


def test_the_scan_sees_each_way_of_reading_settings() -> None:
    source = (
        "import os\n"
        "from os import getenv\n"
        "from koroku_tui import settings\n"
        "a = Settings()\n"
        "b = settings.Settings(home='x')\n"
        "c = Settings.model_validate({})\n"
        "d = os.environ.get('KOROKU_HOME')\n"
        "e = os.getenv('KOROKU_HOME')\n"
        "f = settings.model_copy()  # a given value: fine\n"
        "g = ToolSettings()  # another class: fine\n"
    )
    assert uses_in(source) == {BUILDS_SETTINGS: 3, READS_ENVIRONMENT: 3}


def test_no_module_below_the_command_line_reads_settings_itself() -> None:
    strays = {
        path: sorted(set(found) - set(ALLOWED.get(path, {})))
        for path, found in package_uses().items()
    }
    strays = {path: kinds for path, kinds in strays.items() if kinds}
    assert not strays, (
        f"{strays}: take the value from the Settings handed down (koroku_tui.modes.wiring "
        "assembles a run's parts), or justify an entry in ALLOWED"
    )


@pytest.mark.parametrize("path", sorted(ALLOWED))
def test_each_allowed_use_is_still_there(path: str) -> None:
    """An entry whose use is gone is removed, so the list stays the real one."""
    assert set(package_uses().get(path, {})) == set(ALLOWED[path])
