"""Approval rules: calls allowed or denied without the dialog (``[approval]`` in the settings).

Pure and plain: :class:`ApprovalRules` holds strings (the settings' lists and
table, copied by ``modes/wiring.py``), and :meth:`ApprovalRules.rule_for`
judges one call from its tool's name and, for a tool whose spec names a
``command_argument``, the command it would run. Nothing here knows a tool
by name: ``allow_commands`` and ``deny_commands`` apply to any such tool.

- A command rule is a prefix of words: the command and the rule are split
  as the shell splits them (``shlex``), so ``git status --short`` and
  ``git  "status"`` match ``git status``; ``git statusx``, ``'git status'``
  (one word), ``GIT status`` and ``FOO=1 git status`` do not. A matching
  allow rule allows the command *with any further arguments*.
- The strictest rule wins: deny (``deny_commands``, ``tools = "deny"``),
  then ask (``tools = "ask"``), then allow. No rule: the spec decides.
- A rule never matches a command that holds shell syntax or a character a
  reader cannot see (:func:`command_problem`); such a command asks, and
  the dialog says which rule did not apply and why (:class:`UnappliedRule`).
  Only ``tools = "deny"`` still denies it: it reads nothing of the command.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from types import MappingProxyType

from koroku_tui.text.safety import hidden_characters

__all__ = [
    "NO_RULES",
    "SHELL_SYNTAX",
    "ApprovalRules",
    "Ruling",
    "UnappliedRule",
    "Verdict",
    "command_problem",
]

SHELL_SYNTAX = (";", "&", "|", "<", ">", "`", "$", "(", ")", "#", "\n", "\t")
"""Characters that make a command more than one program with its arguments, quoted or not.

Separators and pipes (``; & |``), redirections (``< >``), command
substitution and every expansion (`` ` ``, ``$``: ``$(...)``, ``$VAR``,
``${...}``), subshells (``( )``), comments (``#``: what follows does not
run, and the words the rule read are not the words that run) and line
breaks. A tab is here too: the shell splits on it, but a reader may not see
it. Looked for anywhere, inside quotes too: the rule does not out-guess the
shell's quoting, it asks. Globs (``* ? [``), ``~`` and braces expand only to
further arguments and are left to the rule's owner.
"""

_SAID = {"\n": "a line break", "\t": "a tab"}


class Verdict(StrEnum):
    """What a rule says of a call (the values of ``[approval] tools``)."""

    ALLOW = "allow"
    """Run it without the dialog (also in ``--print`` without ``--yes``)."""
    ASK = "ask"
    """Ask in the dialog (``--print`` refuses it unless ``--yes``)."""
    DENY = "deny"
    """Do not run it: answered "denied by your rules", even with ``--yes``."""


@dataclass(frozen=True)
class UnappliedRule:
    """A rule that would have decided the call but does not apply to what the command holds."""

    rule: str
    """The rule as the user wrote it (a command prefix), or ``every NAME call`` for a tool rule."""
    verdict: Verdict
    """What it would have said: allow or deny."""
    problem: str
    """What the command holds, in words (``` `;` ```, "a line break", "hidden characters …")."""

    @property
    def sentence(self) -> str:
        """What the approval dialog says of it (the rule may hold anything: escape it to draw)."""
        how = "allowing" if self.verdict is Verdict.ALLOW else "denying"
        return f"Your rule {how} {self.rule} does not apply: the command holds {self.problem}."


@dataclass(frozen=True)
class Ruling:
    """What the rules decide about one call."""

    verdict: Verdict | None = None
    """``None``: no rule speaks of the call, the tool's spec decides (ask or run)."""
    rule: str = ""
    """The rule that decided, for the answer and the user (``deny_commands `rm```)."""
    unapplied: tuple[UnappliedRule, ...] = ()
    """Rules that did not apply to this command (shown in the dialog)."""


def command_problem(command: str) -> str | None:
    """Why no rule may match ``command``, in words; ``None`` when it is plain words.

    Hidden characters first (a reader cannot see what they do), then the first
    shell syntax character, then quotes or a backslash the shell would not close.
    """
    if hidden := hidden_characters(command):
        return f"hidden characters ({', '.join(hidden)})"
    first = min((at for at in map(command.find, SHELL_SYNTAX) if at >= 0), default=-1)
    if first >= 0:
        char = command[first]
        return _SAID.get(char, f"`{char}`")
    if _split(command) is None:
        return "an unclosed quote or a trailing backslash"
    return None


def _split(text: str) -> list[str] | None:
    """``text``'s words as ``/bin/sh`` reads them (no syntax in it); ``None`` if it cannot."""
    import shlex  # not on the app's first frame, which reads specs and settings

    try:
        return shlex.split(text)
    except ValueError:  # an unclosed quote, a trailing backslash
        return None


@cache
def _rule_words(prefix: str) -> tuple[str, ...]:
    """A rule's words, split once per run (``()``: it never matches): a project's file
    may hold 40,000 rules, which took a second to split again at every call."""
    if command_problem(prefix) is not None:
        return ()
    if not any(quote in prefix for quote in "'\"\\"):
        return tuple(prefix.split())  # plain words: what shlex says, without its cost
    return tuple(_split(prefix) or ())


def _starts_with(words: list[str], prefix: str) -> bool:
    rule = _rule_words(prefix)
    return bool(rule) and tuple(words[: len(rule)]) == rule


def _matching(words: list[str], prefixes: Iterable[str]) -> list[str]:
    return [prefix for prefix in prefixes if _starts_with(words, prefix)]


def _head_words(command: str) -> list[str]:
    """The words before the first problem (best effort), to say which rules did not apply."""
    cut = len(command)
    for at, char in enumerate(command):
        if char in SHELL_SYNTAX or hidden_characters(char):
            cut = at
            break
    head = command[:cut]
    return _split(head) or head.split()


@dataclass(frozen=True)
class ApprovalRules:
    """The ``[approval]`` rules as plain values (see the module docstring)."""

    allow_commands: tuple[str, ...] = ()
    """Command prefixes (words) that run without asking."""
    deny_commands: tuple[str, ...] = ()
    """Command prefixes (words) never run."""
    tools: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Per tool name: ``allow``, ``ask`` or ``deny`` (other values are ignored)."""

    def __post_init__(self) -> None:
        # Frozen all the way: a session's rules do not change under it.
        object.__setattr__(self, "allow_commands", tuple(self.allow_commands))
        object.__setattr__(self, "deny_commands", tuple(self.deny_commands))
        object.__setattr__(self, "tools", MappingProxyType(dict(self.tools)))

    def tool_verdict(self, tool: str) -> Verdict | None:
        """What the ``tools`` table says of every call of ``tool`` (``None``: nothing)."""
        said = self.tools.get(tool)
        return Verdict(said) if said in tuple(Verdict) else None

    def rule_for(self, tool: str, command: str | None = None) -> Ruling:
        """Judge one call of ``tool``; ``command``: what it runs, when its spec names one.

        ``command`` is ``None`` for a tool without a command argument (or one
        whose value is not text): only the ``tools`` table applies to it.
        """
        said = self.tool_verdict(tool)
        by_tool = f'tools.{tool} = "{said}"'
        if said is Verdict.DENY or command is None:
            return Ruling(said, by_tool) if said is not None else Ruling()
        problem = command_problem(command)
        if problem is not None:
            return self._unclean(tool, command, problem, said)
        words = _split(command) or []
        if denied := _matching(words, self.deny_commands):
            return Ruling(Verdict.DENY, f"deny_commands `{denied[0]}`")
        if said is Verdict.ASK:
            return Ruling(Verdict.ASK, by_tool)
        if allowed := _matching(words, self.allow_commands):
            return Ruling(Verdict.ALLOW, f"allow_commands `{allowed[0]}`")
        return Ruling(said, by_tool) if said is not None else Ruling()

    def _unclean(self, tool: str, command: str, problem: str, said: Verdict | None) -> Ruling:
        """A command no rule may match: it asks, naming the rules that would have decided."""
        words = _head_words(command)
        unapplied = [
            UnappliedRule(f"`{prefix}`", verdict, problem)
            for verdict, prefixes in (
                (Verdict.DENY, self.deny_commands),
                (Verdict.ALLOW, self.allow_commands),
            )
            for prefix in _matching(words, prefixes)
        ]
        if said is Verdict.ALLOW:
            unapplied.append(UnappliedRule(f"every {tool} call", Verdict.ALLOW, problem))
        if said is None and not self.allow_commands and not self.deny_commands:
            return Ruling()  # no rule speaks of this tool: its spec decides, as without rules
        return Ruling(Verdict.ASK, f"the command holds {problem}", tuple(unapplied))


NO_RULES = ApprovalRules()
"""No rules: every tool's spec decides, as before rules existed."""
