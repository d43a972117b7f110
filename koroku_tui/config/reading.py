"""One config file: read, parsed, its unknown keys set aside, its values checked.

Imported by ``config/loading.py`` only when there is a file to read.

A file is checked on its own, against ``Settings`` in strict mode (a number
written as a string is an error, as an editor checking the schema says), so
a wrong value is named with its key, its file and its line before anything
is merged or opened.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from koroku_tui.config.keys import (
    PATH_KEYS,
    SERVERS,
    Key,
    file_key,
    section_keys,
    setting_path,
    shown,
)
from koroku_tui.config.loading import CONFIG_LIMIT, ConfigError, Origin, ReadText
from koroku_tui.config.settings import EMPTY_HOME, Settings
from koroku_tui.config.toml_lines import error_place, key_lines, line_of

__all__ = ["WARNED_KEYS", "FileLayer", "read_layer"]

WARNED_KEYS = 10
"""Unknown keys a file's warnings name one by one; one more line counts the rest (a file
of 100,000 made as many lines, and seconds of looking for the closest known keys)."""


@dataclass
class FileLayer:
    """The keys one file sets (unknown ones left out), with their lines."""

    path: Path
    shown: str
    """How sentences name the file (``~/.config/koroku/config.toml``)."""
    values: dict[Key, Any]
    lines: dict[tuple[str, ...], int]
    warnings: list[str] = field(default_factory=list)

    def origin(self, key: Key) -> Origin:
        """``file:line`` of ``key`` in this file."""
        return Origin(self.shown, line_of(self.lines, key))


def read_layer(
    path: Path, shown_as: str, read: ReadText, *, follow_links: bool, check_servers: bool = True
) -> FileLayer:
    """Read and check ``path``; ``FileNotFoundError`` when absent, :class:`ConfigError` when
    it cannot be used (refused, not TOML, a value of the wrong type or out of range).

    ``check_servers=False`` (an untrusted project's file, whose servers never start):
    its ``[mcp_servers.NAME]`` entries are kept by name unchecked, for the line that says
    they were ignored; checking 25,000 of them took ~0.4 s of every start in the folder."""
    try:
        text = read(path, shown=shown_as, limit=CONFIG_LIMIT, follow_links=follow_links)
    except FileNotFoundError:
        raise
    except OSError as exc:  # the reader's sentence
        raise ConfigError(str(exc)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        why, line, column = error_place(str(exc), text)
        raise ConfigError(
            f"{shown_as} is not valid TOML at line {line}, column {column}: "
            f"{why[:1].lower()}{why[1:]}."
        ) from None
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        raise ConfigError(f"{shown_as} nests arrays or tables too deeply.") from None
    layer = FileLayer(path, shown_as, {}, key_lines(text))
    _take_known(layer, data)
    if (SERVERS,) in layer.values:
        from koroku_tui.config.mcp_entries import take_servers  # each entry checked alone

        take_servers(layer, check=check_servers)
    _resolve_paths(layer)
    _check(layer)
    return layer


def _take_known(layer: FileLayer, data: dict[str, Any]) -> None:
    """Put the file's known keys in ``layer.values``; a warning for each other one, up to
    :data:`WARNED_KEYS`, then one line counting the rest."""
    tables = section_keys()
    unknown: list[Key] = []
    for name, value in data.items():
        if name not in tables[""]:
            unknown.append((name,))
        elif name not in tables:
            layer.values[(name,)] = value
        elif not isinstance(value, dict):
            raise ConfigError(
                f"`{name}` on line {layer.origin((name,)).line} of {layer.shown} must be a "
                f"table (a [{name}] section); fix the file."
            )
        else:
            for key, entry in value.items():
                if key in tables[name]:
                    layer.values[(name, key)] = entry
                else:
                    unknown.append((name, key))
    if not unknown:
        return
    from koroku_tui.config.suggest import unknown_key  # difflib: only for a key it lacks

    for key in unknown[:WARNED_KEYS]:
        said = unknown_key(key[-1], "" if len(key) == 1 else key[0], tables)
        layer.warnings.append(f"{layer.origin(key)}: {said}")
    if len(unknown) > WARNED_KEYS:
        more = len(unknown) - WARNED_KEYS
        layer.warnings.append(
            f"{layer.shown}: {more:,} more key{'s' if more > 1 else ''} Koroku does not know "
            f"{'were' if more > 1 else 'was'} ignored."
        )


def _resolve_paths(layer: FileLayer) -> None:
    """``~`` expanded, and a relative path taken from the file's folder."""

    def resolved(value: object) -> object:
        if not isinstance(value, str) or not value.strip():
            return value  # left for the check to refuse, naming the key
        path = Path(value).expanduser()
        return path if path.is_absolute() else layer.path.parent / path

    for key in PATH_KEYS & layer.values.keys():
        value = layer.values[key]
        layer.values[key] = (
            [resolved(v) for v in value] if isinstance(value, list) else resolved(value)
        )


def _check(layer: FileLayer) -> None:
    """``Settings`` checks the file's values alone (strict; no environment, no other file)."""
    given: dict[str, Any] = {}
    for key, value in layer.values.items():
        if key[0] == SERVERS:
            continue  # each checked alone by take_servers (or unchecked, never to be used)
        setting = setting_path(key)
        if len(setting) == 1:
            given[setting[0]] = value
        else:
            given.setdefault(setting[0], {})[setting[1]] = value
    try:
        Settings.model_validate(given, strict=True, context={"environment": False})
    except ValidationError as exc:
        first = exc.errors()[0]
        key = file_key(first["loc"])
        entries = "".join(f"[{part}]" for part in first["loc"] if isinstance(part, int))
        why = str(first["msg"]).removeprefix("Value error, ")
        value = first.get("input")
        if "instance of Path" in why:  # a blank string is left a string by _resolve_paths
            why = (
                EMPTY_HOME
                if isinstance(value, str)
                else "input should be a path, written as a string"
            )
        if isinstance(value, (bool, int, float, str)):
            import json

            said = json.dumps(value)
            why += f", not {said if len(said) <= 60 else said[:59] + '…'}"
        raise ConfigError(
            f"{shown(key)}{entries} on line {layer.origin(key).line} of {layer.shown} is not "
            f"usable ({why[:1].lower()}{why[1:]}); fix the file."
        ) from None
