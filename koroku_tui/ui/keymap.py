"""User key remapping: ``<home>/keymap.toml`` maps binding ids to keys.

Example (the binding ids are listed in the README)::

    "main.compact" = "ctrl+k"
    "main.history" = "f2,ctrl+r"

Textual takes any text as a key and ignores unknown binding ids, so a typo
would silently leave an action without a key. Here every entry is checked:
an unknown id, a key Textual can never report (``"ctrl+kk"``, ``"Ctrl+K"``),
or a value that is not text is reported and that entry dropped (its default
stays). A remap that would leave quit without a key (another action taking
quit's key) is dropped too: a typo must never lock the user in.
"""

from __future__ import annotations

import logging
import tomllib
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from textual.binding import Binding
from textual.dom import DOMNode
from textual.keys import KEY_NAME_REPLACEMENTS, Keys

__all__ = [
    "KEYMAP_FILENAME",
    "QUIT_BINDING",
    "Keymap",
    "binding_defaults",
    "is_key",
    "load_keymap",
]

logger = logging.getLogger(__name__)

KEYMAP_FILENAME = "keymap.toml"
QUIT_BINDING = "main.quit"

_MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})


def _named_keys() -> frozenset[str]:
    """Every key name Textual reports for a non-character key ("f5", "pageup"...)."""
    names = {key.value.rpartition("+")[2] for key in Keys if not key.value.startswith("<")}
    try:  # the kitty keyboard protocol's extra keys ("caps_lock", "f30"...)
        from textual._keyboard_protocol import FUNCTIONAL_KEYS
    except ImportError:  # a private table: without it those keys are only refused
        return frozenset(names)
    return frozenset(names | set(FUNCTIONAL_KEYS.values()))


_NAMED_KEYS = _named_keys()


def _character_key(name: str) -> bool:
    """True when ``name`` is how Textual names a character key (``slash``, ``question_mark``)."""
    original = {v: k for k, v in KEY_NAME_REPLACEMENTS.items()}.get(name, name)
    try:
        character = unicodedata.lookup(original.replace("_", " ").upper())
    except KeyError:
        return False
    # Textual's own naming: the Unicode name, lower case, spaces and dashes as "_".
    spelled = unicodedata.name(character, "").lower().replace("-", "_").replace(" ", "_")
    return KEY_NAME_REPLACEMENTS.get(spelled, spelled) == name


def is_key(key: str) -> bool:
    """True when Textual can report ``key`` (``"ctrl+k"``, ``"f6"``, ``"slash"``, ``"?"``)."""
    *modifiers, base = key.strip().split("+")
    if len(set(modifiers)) != len(modifiers) or not set(modifiers) <= _MODIFIERS:
        return False
    if len(base) == 1:
        return base.isprintable() and not base.isspace()
    return base in _NAMED_KEYS or _character_key(base)


def binding_defaults(nodes: Iterable[type[DOMNode]]) -> dict[str, str]:
    """Every binding id of ``nodes`` (classes) and their subclasses, with its default keys."""
    found: dict[str, str] = {}
    seen: set[type[DOMNode]] = set()
    pending = list(nodes)
    while pending:
        node = pending.pop()
        if node in seen:
            continue
        seen.add(node)
        pending.extend(node.__subclasses__())
        for binding in node.BINDINGS:
            if isinstance(binding, Binding) and binding.id is not None:
                found.setdefault(binding.id, binding.key)
    return found


@dataclass(frozen=True)
class Keymap:
    """The remaps to apply, and a sentence per entry that was not used."""

    keys: dict[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    @property
    def problem(self) -> str | None:
        """All problems as one notice, or None when every entry was used."""
        return " ".join(self.problems) or None


def _keys_of(value: str) -> list[str]:
    return [key.strip() for key in value.split(",")]


def _checked(path: Path, data: Mapping[str, object], defaults: Mapping[str, str] | None) -> Keymap:
    keys: dict[str, str] = {}
    problems: list[str] = []
    for binding_id, value in data.items():
        if defaults is not None and binding_id not in defaults:
            problems.append(
                f"{path.name}: {binding_id!r} is not a binding id (known: "
                f"{', '.join(sorted(defaults))}); it was ignored."
            )
        elif not (isinstance(value, str) and value.strip()):
            problems.append(f"{path.name}: {binding_id!r} must be keys as text; it was ignored.")
        elif bad := [k for k in _keys_of(value) if not is_key(k)]:
            default = f" ({defaults[binding_id]})" if defaults is not None else ""
            problems.append(
                f"{path.name}: {binding_id!r} = {value!r}: {', '.join(repr(k) for k in bad)} "
                f'is not a key Textual knows (e.g. "ctrl+k", "f6"); '
                f"the default{default} stays."
            )
        else:
            keys[binding_id] = value
    if defaults is not None:
        _keep_quit_bound(path, keys, defaults, problems)
    return Keymap(keys=keys, problems=tuple(problems))


def _keep_quit_bound(
    path: Path, keys: dict[str, str], defaults: Mapping[str, str], problems: list[str]
) -> None:
    """Drop remaps that take quit's key: Textual would unbind quit for them."""
    if QUIT_BINDING not in defaults:
        return
    quit_keys = set(_keys_of(keys.get(QUIT_BINDING, defaults[QUIT_BINDING])))
    for binding_id in sorted(keys):
        if binding_id == QUIT_BINDING:
            continue
        taken = quit_keys & set(_keys_of(keys[binding_id]))
        if taken:
            del keys[binding_id]
            problems.append(
                f"{path.name}: {binding_id!r} would take {', '.join(sorted(taken))} from quit, "
                f"and quit must keep a key; the default ({defaults[binding_id]}) stays."
            )


def load_keymap(path: Path, defaults: Mapping[str, str] | None = None) -> Keymap:
    """Read ``path``; a missing file means no remapping.

    ``defaults`` (binding id -> default keys, see :func:`binding_defaults`)
    lets unknown ids and a quit left without a key be caught; every problem
    is also logged.
    """
    if not path.exists():
        return Keymap()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        keymap = Keymap(problems=(f"{path} was not used: {exc}. The default keys apply.",))
    else:
        keymap = _checked(path, data, defaults)
    for problem in keymap.problems:
        logger.warning("%s", problem)
    return keymap
