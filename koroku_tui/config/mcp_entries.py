"""``[mcp_servers.NAME]`` in the config files: each entry checked alone, merged whole.

Imported only when a file has the table.

* **A bad entry leaves one server out, not Koroku:** no ``command`` and no
  ``url``, both, a value of the wrong type, or a key a server does not take
  is one warning naming the file's line, the server and the key; the file's
  other servers and settings still apply (a wrong value elsewhere in the
  file stops the start: a server is one of many, and one the user cannot
  reach right now must not keep them from Koroku). An unknown key leaves the
  whole server out, not just the key: what was misspelt is often what limits
  it (``disabled_tool = ["delete_repo"]``), and a server started without its
  limits would offer what the user meant to hide. A name Gemini cannot take
  in a tool's name is no fault here (the core cleans names).
* **A server comes from one file, whole.** Your own file's entry wins over a
  trusted project's of the same name, which is ignored with a warning: your
  ``[approval] tools`` rules name its tools (``time__get_current_time =
  "allow"``), and a cloned repository must not put another server behind
  them. Among project files the nearer one's entry replaces the outer's.
* **What only your own file says:** ``trust = true`` (calls without the
  dialog), and ``bearer_token_env_var`` (a variable whose value is sent to
  the server: as for ``[tools] env_allow``, a repository must not have your
  tokens sent where it chooses). A project's ``trust`` is ignored with a
  warning; a project's server that names a token variable is not started,
  and says so (copy its entry into your file to use it).
* **Tokens** are read here, with the ``KOROKU_*`` variables, at the one
  assembly point: the value goes on the entry as ``bearer_token`` (a
  ``SecretStr``); a variable that is not set is the entry's ``problem``, one
  sentence the core shows as the server's failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from koroku_tui.config.keys import SERVERS, Key
from koroku_tui.config.loading import Origin
from koroku_tui.config.mcp_servers import ENTRY_KEYS, McpServerSettings
from koroku_tui.config.reading import WARNED_KEYS

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

    from koroku_tui.config.reading import FileLayer

__all__ = [
    "dotted",
    "entry_origins",
    "header",
    "project_entry",
    "resolve_tokens",
    "said_of_untrusted",
    "take_servers",
]

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")
_LEFT_OUT = "the server was left out"
_TYPES = {
    "string_type": "must be a string",
    "float_type": "must be a number",
    "bool_type": "must be `true` or `false`",
    "list_type": "must be a list of strings",
    "dict_type": "must be a table of strings",
    "path_type": "must be a folder's path, written as a string",
    "string_too_short": "must not be empty",
    "finite_number": "must be a finite number",
}
"""What a value of the wrong kind must be, by pydantic's error type."""
_UNTRUSTED_NAMED = 5
"""Servers an untrusted project's line names one by one; the rest are counted."""


def dotted(name: str) -> str:
    """A server's key as TOML writes it: ``mcp_servers.time``, ``mcp_servers."my docs"``."""
    return f"{SERVERS}.{name if _BARE.match(name) else json.dumps(name, ensure_ascii=False)}"


def header(name: str) -> str:
    """A server's table header: ``[mcp_servers.time]``."""
    return f"[{dotted(name)}]"


def take_servers(layer: FileLayer, *, check: bool = True) -> None:
    """Turn the file's ``mcp_servers`` table into one key per usable server,
    ``("mcp_servers", NAME)``, and a warning for each bad one (up to ``WARNED_KEYS``).

    ``check=False``: every entry is kept by name as it is, unchecked and unwarned (an
    untrusted project's, which never starts: only its name is said)."""
    table = layer.values.pop((SERVERS,), None)
    if not check and isinstance(table, dict):
        layer.values.update(((SERVERS, name), entry) for name, entry in table.items())
        return
    if table is None or not check:
        return
    if not isinstance(table, dict):
        layer.warnings.append(
            f"{layer.origin((SERVERS,))}: `{SERVERS}` must be a table of servers "
            f"([{SERVERS}.NAME] sections), so none of this file's was used."
        )
        return
    bad: list[str] = []
    for name, entry in table.items():
        checked = _checked(layer, name, entry)
        if isinstance(checked, str):
            bad.append(checked)
        else:
            layer.values[(SERVERS, name)] = checked
    layer.warnings += bad[:WARNED_KEYS]
    if len(bad) > WARNED_KEYS:
        more = len(bad) - WARNED_KEYS
        layer.warnings.append(
            f"{layer.shown}: {more:,} more [{SERVERS}.*] entr{'ies' if more > 1 else 'y'} "
            f"could not be used and {'were' if more > 1 else 'was'} left out."
        )


def _checked(layer: FileLayer, name: str, entry: object) -> dict[str, Any] | str:
    """The entry as ``Settings`` takes it (``cwd`` resolved), or the warning why it is not."""
    if not isinstance(entry, dict):
        return _said(
            layer, name, (), f"must be a table with `command` or `url`, not {_kind(entry)}"
        )
    for key in entry:
        if key not in ENTRY_KEYS:
            from koroku_tui.config.suggest import closest  # difflib: only for a key it lacks

            guess = closest(key, ENTRY_KEYS)
            hint = f" (did you mean `{guess}`?)" if guess else ""
            shown = key if len(key) <= 60 else key[:59] + "…"
            return _said(layer, name, (key,), f"is not a key of a server{hint}", shown)
    cwd = entry.get("cwd")
    if isinstance(cwd, str) and cwd.strip():
        # ~ is the user's home; a relative folder is taken from this file's, as `home` is.
        folder = Path(cwd).expanduser()
        folder = folder if folder.is_absolute() else layer.path.parent.absolute() / folder
        entry = {**entry, "cwd": folder}
    try:
        McpServerSettings.model_validate(entry, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        names = tuple(str(part) for part in first["loc"] if isinstance(part, str))
        return _said(layer, name, names, _why(first))
    return entry


def _why(error: ErrorDetails) -> str:
    """What is wrong with a value, as the end of a sentence that began with its key."""
    kind, context, value = error["type"], error.get("ctx", {}), error.get("input")
    if kind == "value_error":  # the model's own check: "it needs `command` ... or `url` ..."
        return str(error["msg"]).removeprefix("Value error, ").removeprefix("it ")
    if any(isinstance(part, int) for part in error["loc"]):
        return _TYPES["list_type"]  # an item of a list (`args`, `enabled_tools`)
    if kind in ("path_type", "is_instance_of"):  # `cwd`: a Path once resolved above
        return _TYPES["string_too_short" if isinstance(value, str) else "path_type"]
    if kind == "greater_than":
        return f"must be more than {context['gt']:,g}"
    if kind == "less_than_equal":
        return f"must be at most {context['le']:,g}"
    why = _TYPES.get(kind, str(error["msg"])[:1].lower() + str(error["msg"])[1:])
    if kind.endswith("_type") and isinstance(value, (bool, int, float, str)):
        said = json.dumps(value, ensure_ascii=False)
        why += f", not {said if len(said) <= 60 else said[:59] + '…'}"
    return why


def _kind(value: object) -> str:
    return "a list" if isinstance(value, list) else f"a {type(value).__name__}"


def _said(layer: FileLayer, name: str, key: Key, why: str, shown: str | None = None) -> str:
    """One warning: ``FILE:LINE: [mcp_servers.docs] `key` WHY; the server was left out.``"""
    subject = f"`{shown or '.'.join(key)}` " if key else ""
    origin = layer.origin((SERVERS, name, *key))
    return f"{origin}: {header(name)} {subject}{why}; {_LEFT_OUT}."


def project_entry(
    layer: FileLayer, name: str, entry: dict[str, Any], user_servers: Mapping[str, Origin]
) -> dict[str, Any] | None:
    """A trusted project's entry as it may count (see the module's docstring), or ``None``
    when the user's own file names the server; what was ignored is warned in ``layer``."""
    key = (SERVERS, name)
    if name in user_servers:
        layer.warnings.append(
            f"{layer.origin(key)}: {header(name)} was ignored: your own config file names "
            f"that server too ({user_servers[name]}), and yours wins."
        )
        return None
    if entry.get("trust") is True:
        layer.warnings.append(
            f"{layer.origin((*key, 'trust'))}: `trust` of {header(name)} was ignored: only "
            "your own config file says which servers' calls run without asking."
        )
    entry = {field: value for field, value in entry.items() if field != "trust"}
    if (variable := entry.get("bearer_token_env_var")) is not None:
        entry["problem"] = (
            f"{header(name)} of {layer.shown} sends the variable {variable} as its token, and "
            "only your own config file may send a variable's value to a server (copy the "
            "entry into yours)."
        )
    return entry


def said_of_untrusted(names: list[str]) -> list[str]:
    """An untrusted project's servers as its "ignored: ..." line names them (a few, counted)."""
    said = [dotted(name) for name in names[:_UNTRUSTED_NAMED]]
    if len(names) > _UNTRUSTED_NAMED:
        said.append(f"{len(names) - _UNTRUSTED_NAMED:,} more servers")
    return said


def entry_origins(layers: list[FileLayer]) -> dict[Key, list[Origin]]:
    """Where each key of each server's entry came from (``mcp_servers.time.command`` ->
    ``config.toml:13``): from the last file that names the server, whole."""
    by_server: dict[str, dict[Key, list[Origin]]] = {}
    for layer in layers:
        for key, entry in layer.values.items():
            if key[0] == SERVERS:
                by_server[key[1]] = {
                    (*key, field): [layer.origin((*key, field))] for field in entry
                }
    return {key: origins for found in by_server.values() for key, origins in found.items()}


def resolve_tokens(servers: dict[str, dict[str, Any]], environ: Mapping[str, str]) -> None:
    """Put each remote server's token on its entry, read from the variable it names; a
    variable that is not set (or blank) is the entry's ``problem`` instead."""
    for name, entry in servers.items():
        variable = entry.get("bearer_token_env_var")
        if variable is None or entry.get("url") is None or entry.get("problem"):
            continue
        token = environ.get(variable, "").strip()
        if token:
            servers[name] = {**entry, "bearer_token": token}
        else:
            servers[name] = {
                **entry,
                "problem": f"{header(name)} takes its token from the variable {variable} "
                "(`bearer_token_env_var`), which is not set.",
            }
