"""The sources of ``Settings``, merged, with where each value came from.

defaults < the user's ``config.toml`` < a trusted project's
``.koroku/config.toml`` < ``KOROKU_*`` variables < flags. :func:`load_config`
reads the files and returns the arguments ``Settings`` is built from (the
variables it reads itself, above them), where each value came from
(``--show-config``), and one-line warnings (unknown keys, parts of a
project's file that were ignored). A file that cannot be used is a
:class:`ConfigError`, one sentence: the command exits 2 before it opens
anything.

A project's file is used only when the workspace is trusted (the user's own
file's ``trusted_folders``); in an untrusted one only its rules that
restrict apply: ``[approval] deny_commands`` and ``tools`` entries that say
``deny`` or ``ask``, and what it leaves out is said once, by the caller
(:class:`UntrustedFile`: ``--print`` joins it to its line about the
instruction files). An untrusted project's file that cannot be used is
ignored whole, deny rules included: a cloned repository must not be able to
stop Koroku from starting in it; in a trusted folder it stops the start, as
the user's own does. Some keys only the user's own file sets, trusted
project or not (``keys.USER_ONLY``). Rule lists add up across files; for
``tools`` the strictest word wins (``deny`` > ``ask`` > ``allow``); anything
else the nearer file sets wins, but for ``[mcp_servers.NAME]``: each entry
is one key, the user's entry of a name wins over a project's, and what only
the user's file says of a server is kept to it (``config/mcp_entries.py``,
which also reads the servers' token variables here).

Cheap on purpose (it runs before the first frame): without a file it reads
nothing; with one it parses it with ``tomllib`` and checks it with
``Settings`` itself, no other model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from koroku_tui.config.files import project_config_files, tilde
from koroku_tui.config.keys import (
    FILE_KEYS,
    LIST_RULES,
    SERVERS,
    USER_ONLY,
    Key,
    file_key,
    setting_path,
    shown,
)
from koroku_tui.config.settings import (
    ENV_PREFIX,
    default_config_file,
    koroku_variables,
    process_environment,
    settings_problem,
)
from koroku_tui.config.trust import is_trusted

if TYPE_CHECKING:
    from pydantic import ValidationError

    from koroku_tui.config.reading import FileLayer

__all__ = [
    "CONFIG_LIMIT",
    "ConfigError",
    "LoadedConfig",
    "Origin",
    "ReadText",
    "UntrustedFile",
    "load_config",
]

_STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
_RESTRICTING = (("approval", "deny_commands"), ("approval", "tools"))


CONFIG_LIMIT = 1_000_000
"""The largest config file read (1 MB): the README's full example is under 2 KB."""


class ReadText(Protocol):
    """Reads a file's UTF-8 text (``privacy.user_files.read_text_file``).

    Raises ``FileNotFoundError`` when there is none, and any other
    ``OSError`` with one sentence (naming the file as ``shown``) when refused.
    """

    def __call__(self, path: Path, *, shown: str, limit: int, follow_links: bool) -> str:
        """The text of ``path``."""
        ...


class ConfigError(Exception):
    """A config file (or a setting) that cannot be used; ``str()`` is one sentence."""


@dataclass(frozen=True)
class Origin:
    """Where a value came from: ``default``, ``~/.config/koroku/config.toml:4``,
    ``KOROKU_COMPACT_AT``, ``--model``."""

    where: str
    line: int | None = None

    def __str__(self) -> str:
        return self.where if self.line is None else f"{self.where}:{self.line}"


DEFAULT = Origin("default")


@dataclass(frozen=True)
class UntrustedFile:
    """A project's config file in a folder that is not trusted, and what of it was not used."""

    path: Path
    shown: str
    """How sentences name the file (``~/src/proj/.koroku/config.toml``)."""
    ignored: tuple[str, ...] = ()
    """Its keys that were not used: all but the rules that restrict (``model``...)."""
    broken: str | None = None
    """Why the file cannot be used (one sentence): then none of it applies."""

    def what_applies(self) -> str:
        """What of the file counts: "only its deny and ask rules apply; ignored: model"."""
        if self.broken is not None:
            why = self.broken.removesuffix(".").removesuffix("; fix the file")
            return f"none of it applies, not even its deny rules: {why}"
        ignored = f"; ignored: {', '.join(self.ignored)}" if self.ignored else ""
        return f"only its deny and ask rules apply{ignored}"

    def sentence(self) -> str:
        """One line on its own (``--show-config``, ``--list``)."""
        return f"{self.shown}: this folder is not trusted, so {self.what_applies()}."


@dataclass
class LoadedConfig:
    """What the sources say, before ``Settings`` checks it: ``Settings(**loaded.given)``."""

    given: dict[str, Any] = field(default_factory=dict)
    """The arguments of ``Settings``: the files' values (where no variable sets them) and flags."""
    origins: dict[Key, list[Origin]] = field(default_factory=dict)
    """File key (``("compaction", "at")``; ``("config",)``) -> where its value came from."""
    warnings: list[str] = field(default_factory=list)
    """One line each: unknown keys, parts of a project's file that were ignored."""
    files: list[Path] = field(default_factory=list)
    """The config files read, user's first."""
    untrusted: list[UntrustedFile] = field(default_factory=list)
    """The project's config files in a folder that is not trusted, outermost first."""

    def said(self) -> list[str]:
        """Every line about the files, each whole: the warnings, then what of an untrusted
        project's file was not used (for the log, ``--show-config`` and ``--list``)."""
        return [*self.warnings, *(file.sentence() for file in self.untrusted)]

    def origin(self, key: Key) -> list[Origin]:
        """Where ``key``'s value came from (``[DEFAULT]`` when nothing set it)."""
        return self.origins.get(key, [DEFAULT])

    def named(self, setting: str, default: str) -> str:
        """How a sentence about one setting's value names its source: "--home",
        "KOROKU_HOME", "home (~/.config/koroku/config.toml:3)", else ``default``."""
        key = FILE_KEYS.get(setting, (setting,))
        origin = self.origin(key)[-1]
        if origin == DEFAULT:
            return default
        return f"{shown(key)} ({origin})" if origin.line is not None else origin.where

    def problem(self, exc: ValidationError) -> tuple[str, int]:
        """The sentence and exit code for ``Settings`` refusing what the sources said:
        2 for a file or a flag (as for a bad flag), 1 for a ``KOROKU_*`` variable."""
        first = exc.errors()[0]
        key = file_key(first["loc"])
        origin = self.origin(key)[-1]
        why = str(first["msg"]).removeprefix("Value error, ")
        why = why[:1].lower() + why[1:]
        if origin.line is not None:
            return f"{shown(key)} ({origin}) is not usable ({why}); fix the file.", 2
        if origin == DEFAULT or origin.where.upper().startswith(ENV_PREFIX):
            return settings_problem(exc), 1
        return f"{origin.where} is not usable ({why}).", 2


def load_config(
    *,
    workspace: Path,
    read: ReadText,
    flags: Mapping[str, tuple[str, Any]] | None = None,
    environ: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Read the user's file and the workspace's project files; merge them under the
    variables and ``flags`` (setting -> (the flag, its value), e.g.
    ``{"model": ("--model", "gemini-3-pro-preview")}``).

    ``environ`` (default: the process's) is read for ``KOROKU_*``; the
    variables' values are left to ``Settings``, which reads them itself.
    Raises :class:`ConfigError` for a file that cannot be used.
    """
    flags = dict(flags or {})
    variables = koroku_variables(environ)
    loaded = LoadedConfig()
    layers: list[FileLayer] = []
    user = _user_layer(flags, variables, read)
    if user is not None:
        layers.append(user)
    trusted_folders = user.values.get(("trusted_folders",), []) if user else []
    user_servers = {k[1]: user.origin(k) for k in user.values if k[0] == SERVERS} if user else {}
    trusted = is_trusted(workspace, trusted_folders)
    for path in project_config_files(workspace):
        from koroku_tui.config.reading import read_layer  # tomllib: only with a file

        try:
            layer = read_layer(path, tilde(path), read, follow_links=False, check_servers=trusted)
        except FileNotFoundError:
            continue  # gone since it was found
        except ConfigError as exc:
            if trusted:
                raise
            loaded.untrusted.append(UntrustedFile(path, tilde(path), broken=str(exc)))
            continue
        layers.append(_as_project(layer, trusted, loaded.untrusted, user_servers))
    for layer in layers:
        loaded.files.append(layer.path)
        loaded.warnings += layer.warnings
    for key, (value, origins) in _merged(layers).items():
        setting = setting_path(key)
        if setting[0] in variables:
            continue  # the variable wins: Settings reads it
        if len(setting) == 1:
            loaded.given[setting[0]] = value
        else:
            loaded.given.setdefault(setting[0], {})[setting[1]] = value
        loaded.origins[key] = origins
    for name, (variable, _) in variables.items():
        loaded.origins[FILE_KEYS.get(name, (name,))] = [Origin(variable)]
    for name, (flag, value) in flags.items():
        loaded.given[name] = value
        loaded.origins[FILE_KEYS.get(name, (name,))] = [Origin(flag)]
    if SERVERS in loaded.given:
        from koroku_tui.config.mcp_entries import entry_origins, resolve_tokens

        loaded.origins.update(entry_origins(layers))
        resolve_tokens(loaded.given[SERVERS], process_environment(environ))
    return loaded


def _user_layer(
    flags: Mapping[str, tuple[str, Any]], variables: Mapping[str, tuple[str, str]], read: ReadText
) -> FileLayer | None:
    """The user's own file: ``--config``, else ``KOROKU_CONFIG``, else the platform's."""
    if "config" in flags:
        named, path = flags["config"][0], Path(flags["config"][1])
    elif "config" in variables:
        named, path = variables["config"][0], Path(variables["config"][1])
    else:
        named, path = None, default_config_file()
    try:
        if not os.path.lexists(path):
            raise FileNotFoundError(path)
        from koroku_tui.config.reading import read_layer  # tomllib: only with a file

        return read_layer(path, str(path) if named else tilde(path), read, follow_links=True)
    except FileNotFoundError:
        if named is None:
            return None  # no file: the defaults
        raise ConfigError(f"{named} names {path}, and there is no such file.") from None


def _as_project(
    layer: FileLayer,
    trusted: bool,
    untrusted: list[UntrustedFile],
    user_servers: Mapping[str, Origin],
) -> FileLayer:
    """A project's file as it may count: never the user's own keys, nor a server the
    user's file names (``user_servers``: name -> where); only what restricts, untrusted
    (what it leaves out is added to ``untrusted``): none of its MCP servers start."""
    kept: dict[Key, Any] = {}
    ignored: list[str] = []
    servers: list[str] = []
    for key, value in layer.values.items():
        if key[0] == SERVERS and not trusted:
            servers.append(key[1])
        elif key[0] == SERVERS:
            from koroku_tui.config.mcp_entries import project_entry

            if (entry := project_entry(layer, key[1], value, user_servers)) is not None:
                kept[key] = entry
        elif trusted and key in USER_ONLY:
            layer.warnings.append(
                f"{layer.origin(key)}: `{shown(key)}` was ignored: only your own config "
                f"file says {USER_ONLY[key]}."
            )
        elif trusted:
            kept[key] = value
        elif key == ("approval", "tools"):
            kept[key] = {tool: rule for tool, rule in value.items() if rule != "allow"}
            ignored += [f"approval.tools.{tool}" for tool, rule in value.items() if rule == "allow"]
        elif key in _RESTRICTING:
            kept[key] = value
        else:
            ignored.append(shown(key))
    if trusted:
        return replace(layer, values=kept)
    if servers:
        from koroku_tui.config.mcp_entries import said_of_untrusted

        ignored += said_of_untrusted(servers)
    untrusted.append(UntrustedFile(layer.path, layer.shown, tuple(ignored)))
    # Its unknown keys are not worth a word: all but its deny and ask rules is ignored.
    return replace(layer, values=kept, warnings=[])


def _merged(layers: list[FileLayer]) -> dict[Key, tuple[Any, list[Origin]]]:
    """Every key any file sets -> its value over all files, and the files that set it."""
    merged: dict[Key, tuple[Any, list[Origin]]] = {}
    for layer in layers:
        for key, value in layer.values.items():
            origin = layer.origin(key)
            if key not in merged:
                merged[key] = (value, [origin])
                continue
            before, origins = merged[key]
            if key in LIST_RULES:
                value = list(dict.fromkeys([*before, *value]))
            elif key == ("approval", "tools"):
                stricter = {
                    tool: rule
                    for tool, rule in value.items()
                    if _STRICTNESS[rule] >= _STRICTNESS.get(before.get(tool), -1)
                }
                value = {**before, **stricter}
            elif key == ("keys",):
                value = {**before, **value}
            else:
                origins = []
            merged[key] = (value, [*origins, origin])
    return merged
