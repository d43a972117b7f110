"""User key remapping: ``<home>/keymap.toml`` maps binding ids to keys.

The config file's ``[keys]`` table (``Settings.keys``) takes the same
entries; where both name a binding id, ``keymap.toml``'s wins.

Example (the binding ids are listed in the README)::

    "main.compact" = "ctrl+k"
    "main.history" = "f2,ctrl+r"

Textual takes any text as a key and ignores unknown binding ids, so a typo
would silently leave an action without a key. Here every entry is checked:
an unknown id, a key Textual can never report (``"ctrl+kk"``, ``"Ctrl+K"``),
or a value that is not text is reported and that entry dropped (its default
stays). So is a remap that takes a key another action keeps (Textual would
unbind that action: ``"main.compact" = "ctrl+r"`` would leave History without
a key), above all quit's (a typo must never lock the user in), and a key you
type with bound to a main-screen action (``"main.quit" = "a"`` would quit
while the user types "a question").

The file is read through ``privacy.home_files`` (no link followed, a regular
file of at most :data:`KEYMAP_LIMIT` bytes): a FIFO, ``/dev/zero`` or a huge
file is one notice, never a hang. The notice is one short sentence; the log
has every entry's reason.
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
from textual.keys import _character_to_key as character_to_key  # how Textual spells "?"

from koroku_tui.privacy.home_files import HomeFileError, read_home_file

__all__ = [
    "KEYMAP_FILENAME",
    "KEYMAP_LIMIT",
    "QUIT_BINDING",
    "Keymap",
    "binding_defaults",
    "is_key",
    "load_keymap",
    "web_keys",
]

logger = logging.getLogger(__name__)

KEYMAP_FILENAME = "keymap.toml"
CONFIG_KEYS = "[keys] in config.toml"
"""How notices name the entries of the config file's ``[keys]``."""
KEYMAP_LIMIT = 64_000
"""The largest keymap.toml read: every binding id with a few keys each fits in 2 KB."""
QUIT_BINDING = "main.quit"
TYPING_SCREEN = "main"
"""Binding ids ``main.*`` work while the user types in the prompt."""
LOG_NAME = "koroku.log"
_MOST_LOGGED = 20
"""Entries whose reason is logged one by one; the rest are counted."""
_SHOWN_ID = 40
"""An id longer than this is cut in sentences."""

BROWSER_KEYS = {
    "main.new_session": "alt+l,ctrl+l",
    "main.toggle_sidebar": "alt+t,ctrl+t",
    "main.unqueue": "alt+n,ctrl+n",
    "history.trash": "alt+t,ctrl+t",
    "history.add_memory": "alt+n,ctrl+n",
}
"""In a browser tab (``koroku-tui --serve``) the browser keeps ctrl+w, ctrl+t and
ctrl+n (and some ctrl+l) for itself: the page never sees them. The actions on those
keys get alt+ the same letter first (the key bar shows it); ctrl+w's (delete a word
in the prompt) already has alt+backspace. The user's own remaps still win."""


def web_keys(remaps: Mapping[str, str], *, in_browser: bool) -> dict[str, str]:
    """The remaps to apply: the user's (checked) over :data:`BROWSER_KEYS` in a browser.

    Added after the check, which would need every screen's bindings imported
    (the history screen's too) before the first frame.
    """
    return {**BROWSER_KEYS, **remaps} if in_browser else dict(remaps)


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
    unused: int = 0
    """How many entries were not used (``problems`` holds at most the first few)."""
    source: str = KEYMAP_FILENAME
    """Where the unused entries are (``keymap.toml``, the config's ``[keys]``, or both)."""

    @property
    def problem(self) -> str | None:
        """One short notice, or None when every entry was used.

        One reason is said as it is; more are counted, and the log has them
        (a long notice would not fit a toast at 80x24).
        """
        if not self.problems:
            return None
        if len(self.problems) == 1 and self.unused <= 1:
            return self.problems[0]
        return (
            f"{self.source}: {self.unused:,} entries were not used and their default keys "
            f"stay; {LOG_NAME} says why."
        )


def _keys_of(value: str) -> list[str]:
    return [_normal(key) for key in value.split(",")]


def _normal(key: str) -> str:
    key = key.strip()
    return character_to_key(key) if len(key) == 1 else key


def _shown(binding_id: str) -> str:
    return repr(binding_id if len(binding_id) <= _SHOWN_ID else binding_id[:_SHOWN_ID] + "…")


def _typed(key: str) -> bool:
    """True for a key that types text (``a``, ``A``, ``shift+a``, ``space``, ``question_mark``)."""
    *modifiers, base = key.split("+")
    if not set(modifiers) <= {"shift"}:
        return False
    return len(base) == 1 or base in ("space", "enter", "backspace") or _character_key(base)


class _Report:
    """The problems found: the first few as sentences, all of them counted and logged."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self.sources = sources
        """Binding id -> where its entry is (``keymap.toml`` or the config's ``[keys]``)."""
        self.sentences: list[str] = []
        self.count = 0
        self.where: dict[str, None] = {}

    def add(self, binding_id: str, sentence: str) -> None:
        self.count += 1
        where = self.sources.get(binding_id, KEYMAP_FILENAME)
        self.where[where] = None
        if self.count <= _MOST_LOGGED:
            self.sentences.append(f"{where}: {sentence}")

    def keymap(self, keys: dict[str, str]) -> Keymap:
        source = " and ".join(self.where) or KEYMAP_FILENAME
        if self.count > _MOST_LOGGED:
            self.sentences.append(
                f"{source}: {self.count - _MOST_LOGGED:,} more entries were not used."
            )
        return Keymap(keys=keys, problems=tuple(self.sentences), unused=self.count, source=source)


def _checked(
    data: Mapping[str, object], defaults: Mapping[str, str] | None, sources: Mapping[str, str]
) -> Keymap:
    keys: dict[str, str] = {}
    report = _Report(sources)
    unknown = False
    for binding_id, value in data.items():
        if defaults is not None and binding_id not in defaults:
            unknown = True
            report.add(binding_id, f"{_shown(binding_id)} is not a binding id; it was ignored.")
        elif not (isinstance(value, str) and value.strip()):
            report.add(binding_id, f"{_shown(binding_id)} must be keys as text; it was ignored.")
        elif bad := [k for k in value.split(",") if not is_key(k)]:
            default = f" ({defaults[binding_id]})" if defaults is not None else ""
            report.add(
                binding_id,
                f"{_shown(binding_id)} = {value[:_SHOWN_ID]!r}: "
                f"{', '.join(repr(k[:_SHOWN_ID]) for k in bad[:3])} "
                f'is not a key Textual knows (e.g. "ctrl+k", "f6"); the default{default} stays.',
            )
        elif binding_id.startswith(f"{TYPING_SCREEN}.") and (
            typed := [k for k in _keys_of(value) if _typed(k)]
        ):
            default = f" ({defaults[binding_id]})" if defaults is not None else ""
            report.add(
                binding_id,
                f"{_shown(binding_id)} = {value!r}: {', '.join(typed)} is typed in the prompt, "
                f"so it cannot be a main-screen key; the default{default} stays.",
            )
        else:
            keys[binding_id] = value
    if defaults is not None:
        _keep_others_bound(keys, defaults, report)
        if unknown:
            logger.warning("the binding ids are: %s", ", ".join(sorted(defaults)))
    return report.keymap(keys)


def _keep_others_bound(keys: dict[str, str], defaults: Mapping[str, str], report: _Report) -> None:
    """Drop remaps that take a key another action keeps: Textual would unbind that action.

    A key another action of the same screen keeps, or quit's from any screen.
    A displaced action that is moved elsewhere too gives its key up, so
    swapping two keys is fine. Of two remaps to one key, the later in the
    file is dropped, and quit's never. Dropping a remap brings its default
    back, which may displace another, hence the loop.
    """
    while True:
        kept = {
            binding_id: set(_keys_of(keys.get(binding_id, default)))
            for binding_id, default in defaults.items()
        }
        order = [*reversed([b for b in keys if b != QUIT_BINDING]), QUIT_BINDING]
        clash = next(
            (
                (binding_id, other, taken)
                for binding_id in order
                if binding_id in keys
                for other, other_keys in kept.items()
                if other != binding_id
                and (other == QUIT_BINDING or _scope(other) == _scope(binding_id))
                and (taken := _new_keys(binding_id, keys, defaults) & other_keys)
            ),
            None,
        )
        if clash is None:
            return
        binding_id, other, taken = clash
        del keys[binding_id]
        whose = "quit, and quit must keep a key" if other == QUIT_BINDING else repr(other)
        report.add(
            binding_id,
            f"{_shown(binding_id)} would take {', '.join(sorted(taken))} from {whose}; "
            f"the default ({defaults[binding_id]}) stays.",
        )


def _scope(binding_id: str) -> str:
    return binding_id.partition(".")[0]


def _new_keys(binding_id: str, keys: Mapping[str, str], defaults: Mapping[str, str]) -> set[str]:
    return set(_keys_of(keys[binding_id])) - set(_keys_of(defaults[binding_id]))


def load_keymap(
    path: Path,
    defaults: Mapping[str, str] | None = None,
    *,
    configured: Mapping[str, str] | None = None,
) -> Keymap:
    """Read ``path`` (a missing file means no remapping), over the config file's ``[keys]``.

    ``defaults`` (binding id -> default keys, see :func:`binding_defaults`)
    lets unknown ids and keys taken from other actions be caught;
    ``configured`` is ``Settings.keys`` (``keymap.toml``'s entries win over
    its). Every problem is also logged.
    """
    configured = dict(configured or {})
    data, problem = _read(path)
    sources = dict.fromkeys(configured, CONFIG_KEYS) | dict.fromkeys(data, KEYMAP_FILENAME)
    keymap = _checked({**configured, **data}, defaults, sources)
    for logged in keymap.problems:
        logger.warning("%s", logged)
    if problem is None:
        return keymap
    problems = (problem, *keymap.problems)
    return Keymap(keys=keymap.keys, problems=problems, unused=keymap.unused + 1)


def _read(path: Path) -> tuple[dict[str, object], str | None]:
    """``keymap.toml``'s entries, or none and why the file was not used."""
    try:
        read = read_home_file(path.parent, path.name, limit=KEYMAP_LIMIT)
    except FileNotFoundError:
        return {}, None
    except HomeFileError as exc:  # a link, a FIFO, too large: logged where it was refused
        return {}, f"{exc} The default keys apply."
    except OSError as exc:
        return {}, _unusable(f"it could not be read ({exc.strerror or exc})")
    if read.undecodable:
        return {}, _unusable("it holds bytes that are not UTF-8 (TOML is UTF-8 text)")
    try:
        return tomllib.loads(read.text), None
    except tomllib.TOMLDecodeError as exc:
        return {}, _unusable(str(exc))
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        return {}, _unusable("it nests arrays or tables too deeply")


def _unusable(why: str) -> str:
    sentence = f"{KEYMAP_FILENAME} was not used: {why}. The default keys apply."
    logger.warning("%s", sentence)
    return sentence
