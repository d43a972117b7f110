"""``koroku-tui --show-config``: the effective settings, each with where its value came from.

Written as the config file writes them (``[compaction] at``), each line
ending in a comment naming its source: ``default``,
``~/.config/koroku/config.toml:4``, ``KOROKU_COMPACT_AT``, ``--model``. So
the output can be read as a config file too. Values under a name that looks
secret (``*key``, ``*token``, ``*secret``, ``*password``, ``Authorization``,
``Cookie``) are masked; the caller also takes out any credential value it
knows (``redact``). Each MCP server is a table of its own, last, with the
file and line it came from; a server's token is never shown, only that it
was found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from koroku_tui.config.keys import SERVERS, Key, section_keys, setting_path
from koroku_tui.config.loading import LoadedConfig
from koroku_tui.config.mcp_servers import ENTRY_KEYS, McpServerSettings
from koroku_tui.config.settings import Settings

__all__ = ["MASK", "show_config"]

MASK = "********"
_SECRET_NAME = re.compile(
    r"(key|token|secret|password|passphrase|auth|authorization|cookie|credentials)$",
    re.IGNORECASE,
)
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def show_config(
    settings: Settings, loaded: LoadedConfig, redact: Callable[[str], str] = str
) -> str:
    """The text ``--show-config`` prints (ends with a newline)."""
    tables = section_keys()
    top = [key for key in tables[""] if key not in tables and key != SERVERS]
    lines = ["# koroku-tui's settings, each with where its value came from."]
    config_origin = ", ".join(str(origin) for origin in loaded.origin(("config",)))
    lines.append(f"# your config file: {settings.config} ({config_origin})")
    read = ", ".join(str(path) for path in loaded.files) or "none"
    lines += [f"# files read: {read}", ""]
    lines += [_entry((key,), settings, loaded) for key in top]
    for table in (name for name in tables if name):
        lines += ["", f"[{table}]"]
        lines += [_entry((table, key), settings, loaded) for key in tables[table]]
    for name, server in settings.mcp_servers.items():
        lines += ["", *_server(name, server, loaded)]
    if not settings.mcp_servers:
        lines += ["", f"# no MCP servers ([{SERVERS}.NAME])  # default"]
    return redact("\n".join(lines) + "\n")


def _server(name: str, server: McpServerSettings, loaded: LoadedConfig) -> list[str]:
    """``[mcp_servers.NAME]``, where it came from, and each of its keys with theirs."""
    from koroku_tui.config.mcp_entries import header

    key = (SERVERS, name)
    lines = [f"{header(name)}  # {', '.join(str(origin) for origin in loaded.origin(key))}"]
    if server.problem is not None:
        lines.append(f"# not started: {server.problem}")
    for field in ENTRY_KEYS:
        lines.append(_line((*key, field), getattr(server, field), loaded))
        if field == "bearer_token_env_var" and server.bearer_token is not None:
            lines.append(f"# its token: {MASK} (found in {server.bearer_token_env_var})")
    return lines


def _entry(key: Key, settings: Settings, loaded: LoadedConfig) -> str:
    value: Any = settings
    for name in setting_path(key):
        value = getattr(value, name)
    return _line(key, value, loaded)


def _line(key: Key, value: object, loaded: LoadedConfig) -> str:
    origin = ", ".join(str(origin) for origin in loaded.origin(key))
    name = key[-1]
    if value is None:
        return f"# {name} is not set  # {origin}"
    shown = _toml(MASK) if _SECRET_NAME.search(name) and value else _toml(value)
    return f"{name} = {shown}  # {origin}"


def _toml(value: object) -> str:
    """``value`` as TOML writes it (paths as strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, Path):
        return json.dumps(str(value), ensure_ascii=False)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        entries = [
            f"{_name(str(k))} = {_toml(MASK if _SECRET_NAME.search(str(k)) else v)}"
            for k, v in value.items()
        ]
        return "{ " + ", ".join(entries) + " }"
    return json.dumps(str(value), ensure_ascii=False)


def _name(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)
