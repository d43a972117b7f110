"""The package's shape: the root holds only the entry points, every package sits in a contract.

A newcomer should tell from the folder names where a new thing goes, and
import-linter (tests/test_quality.py) can only check the layers of packages a
contract names: a module left loose in the root, or a new package no contract
places, would be outside every rule.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "koroku_tui"
PYPROJECT = PACKAGE.parent / "pyproject.toml"

MAX_MODULE_LINES = 450
"""Past this a module is asking to be split along a seam it already has."""


def _contract_modules() -> set[str]:
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    named: set[str] = set()
    for contract in contracts:
        for layer in contract.get("layers", []):
            named.update(part.strip() for part in layer.replace(":", "|").split("|"))
        named.update(contract.get("source_modules", []))
        named.update(f"koroku_tui.{c}" for c in contract.get("containers", []))
    return named


def test_the_package_root_holds_only_the_entry_points() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert modules == ["__init__.py", "__main__.py", "cli.py"]


def test_every_package_is_placed_by_an_import_contract() -> None:
    packages = {f"koroku_tui.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")}
    unplaced = packages - _contract_modules()
    assert not unplaced, f"no import-linter contract places {sorted(unplaced)}"


def test_no_module_is_past_the_size_where_it_wants_splitting() -> None:
    sizes = {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    too_big = {name: lines for name, lines in sizes.items() if lines > MAX_MODULE_LINES}
    assert not too_big, f"modules over {MAX_MODULE_LINES} lines: {too_big}"
