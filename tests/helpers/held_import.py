"""A start-up stalled at one import: a ``sitecustomize`` that holds it forever.

For tests that press a key (ctrl+c, ctrl+q) while ``koroku-tui`` is still
starting: the held import is the extreme of a slow machine, and a marker file
says when the command reached it.
"""

from __future__ import annotations

from pathlib import Path

_SITE = """
import os, pathlib, sys, threading

class HeldImport:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            pathlib.Path(os.environ["KOROKU_TEST_HELD"]).touch()
            threading.Event().wait()
        return None

sys.meta_path.insert(0, HeldImport())
"""


def hold_import(folder: Path, module: str) -> tuple[dict[str, str], Path]:
    """Variables that make a new Python hold ``module``'s import; the file made on reaching it."""
    site = folder / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SITE.format(module=module))
    reached = folder / "import-held"
    return {"PYTHONPATH": str(site), "KOROKU_TEST_HELD": str(reached)}, reached
