"""The README's example file, the ``--config-schema`` output and the loader agree on every key."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from helpers.config_kit import Desk, show_config

from koroku_tui.cli import main
from koroku_tui.config.file_model import ConfigFile
from koroku_tui.config.keys import (
    FILE_KEYS,
    NOT_IN_FILE,
    OPEN_TABLES,
    SECTION_MODELS,
    section_keys,
)
from koroku_tui.config.settings import Settings

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_example() -> str:
    """The first TOML block of the README's "Configuration" section."""
    section = README.read_text(encoding="utf-8").split("\n## Configuration\n", 1)[1]
    found = re.search(r"```toml\n(.*?)```", section, re.DOTALL)
    assert found is not None, "the Configuration section has no ```toml block"
    return found.group(1)


OPEN = {".".join(key) for key in OPEN_TABLES}
"""Tables whose keys are the user's (binding ids, tool names)."""


def keys_of(table: dict[str, Any], prefix: str = "") -> set[str]:
    """Every key of a TOML table, dotted (``compaction.at``); open tables not entered."""
    found = set()
    for name, value in table.items():
        found.add(prefix + name)
        if isinstance(value, dict) and prefix + name not in OPEN:
            found |= keys_of(value, f"{prefix}{name}.")
    return found


def schema_keys(schema: dict[str, Any]) -> set[str]:
    """Every property the schema lists, dotted, following ``$ref``s into ``$defs``."""
    definitions = schema["$defs"]
    found = set()
    for name, spec in schema["properties"].items():
        found.add(name)
        if "$ref" in spec:
            table = definitions[spec["$ref"].rpartition("/")[2]]
            found |= {f"{name}.{key}" for key in table["properties"]}
    return found


def config_schema_output(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["--config-schema"]) == 0
    schema: dict[str, Any] = json.loads(capsys.readouterr().out)
    return schema


def test_the_readme_example_sets_every_key_the_schema_lists(
    capsys: pytest.CaptureFixture[str],
) -> None:
    example = tomllib.loads(readme_example())
    schema = config_schema_output(capsys)
    assert keys_of(example) == schema_keys(schema)
    assert "approval.tools" in schema_keys(schema) and "tools.env_allow" in schema_keys(schema)
    ConfigFile.model_validate(example)  # strict, no extra key: raises if the example is wrong


def test_every_key_has_a_description(capsys: pytest.CaptureFixture[str]) -> None:
    schema = config_schema_output(capsys)
    tables = [schema, *schema["$defs"].values()]
    missing = [
        name
        for table in tables
        for name, spec in table["properties"].items()
        if not spec.get("description")
    ]
    assert missing == []
    assert "share of the model's context window" in json.dumps(schema).lower()


def test_the_loader_and_the_schema_know_the_same_keys() -> None:
    loader = {
        f"{table}.{key}" if table else key for table, keys in section_keys().items() for key in keys
    }
    assert loader == schema_keys(ConfigFile.model_json_schema())
    # Every setting has a place in the file, or a reason not to.
    for name in Settings.model_fields:
        assert name in FILE_KEYS or name in SECTION_MODELS or name in NOT_IN_FILE, name


def test_the_readme_example_loads_without_a_warning(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    desk.user(readme_example().replace("/home/me/src/koroku", str(desk.workspace)))
    said = show_config(capsys)
    assert (said.code, said.err) == (0, "")
    assert (
        said.line("model = ") == 'model = "gemini-3-pro-preview"  # ~/.config/koroku/config.toml:1'
    )
    assert said.line("env_allow = ").startswith('env_allow = ["GITHUB_TOKEN"]  #')
    assert said.line("grace = ").startswith("grace = 0.6  #")
    assert said.line("home = ").endswith("# KOROKU_HOME")  # the variable is over the file
