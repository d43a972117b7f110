"""The demo's scratch workspace: a few small files the tools can really act on.

The demo never works in the user's current folder: ``run_command`` and
``write_file`` would otherwise touch real files. Instead each demo run gets a
fresh temporary folder holding these files, removed when the demo ends.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

__all__ = ["DEMO_FILES", "create_workspace", "unit_test_command"]

DEMO_FILES: dict[str, str] = {
    "notes.md": (
        "# Demo notes\n"
        "\n"
        "Koroku is a personal assistant that lives in the terminal.\n"
        "It keeps every conversation in a local SQLite file and writes a short\n"
        "summary of older turns to a daily memory file when the context fills up.\n"
    ),
    "todo.txt": (
        "- [x] install Koroku\n"
        "- [ ] try the demo\n"
        "- [ ] set GEMINI_API_KEY and talk to the real Gemini\n"
    ),
    "test_todo.py": (
        '"""A tiny test suite, so "run the tests" has something real to run."""\n'
        "\n"
        "import pathlib\n"
        "import unittest\n"
        "\n"
        "\n"
        "class TodoTest(unittest.TestCase):\n"
        "    def test_todo_has_open_items(self):\n"
        '        lines = pathlib.Path("todo.txt").read_text().splitlines()\n'
        '        self.assertTrue(any(line.startswith("- [ ]") for line in lines))\n'
        "\n"
        "    def test_notes_have_a_title(self):\n"
        '        first = pathlib.Path("notes.md").read_text().splitlines()[0]\n'
        '        self.assertTrue(first.startswith("# "))\n'
        "\n"
        "\n"
        'if __name__ == "__main__":\n'
        "    unittest.main()\n"
    ),
}


def create_workspace(folder: Path) -> Path:
    """Write :data:`DEMO_FILES` into ``folder`` (created if needed); returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in DEMO_FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def unit_test_command() -> str:
    """The shell command that runs the workspace's tests.

    ``python3`` reads best in the approval modal; the running interpreter is
    the fallback because it certainly exists. ``-B`` keeps ``__pycache__`` out
    of the workspace listing.
    """
    python = "python3" if shutil.which("python3") else shlex.quote(sys.executable)
    return f"{python} -B -m unittest -v"
