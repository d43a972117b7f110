"""Commands that try to pass an allow rule of ``git status`` or ``ls`` without being asked about.

``SNEAKING``: none of them may run without the dialog (``tests/test_approval_rules.py``
checks each against the rules, and through the executor with an approver
that records being asked and says no). Their payloads are harmless on
purpose (``touch PWNED``, ``> PWNED``): a regression makes a test fail, it
does not wipe anything. ``MATCHING``: what those rules do allow, by design.
"""

from __future__ import annotations

ALLOWED = ("git status", "ls")
"""The allow rules the lists below are checked against."""

SNEAKING = [
    # Separators, pipes, background: more than one command.
    "git status; touch PWNED",
    "git status ; touch PWNED",
    "git status;touch PWNED",
    "ls ; touch PWNED",
    "git status && touch PWNED",
    "git status || touch PWNED",
    "git status & touch PWNED",
    "git status | sh -c 'touch PWNED'",
    "git status && echo touch PWNED | sh",
    "ls | sh",
    "ls |& touch PWNED",
    # Redirections: the command writes (or reads) where it should not.
    "git status > PWNED",
    "git status >> PWNED",
    "git status 2> PWNED",
    "git status >PWNED",
    "ls > PWNED",
    "ls < /dev/null > PWNED",
    "ls < /dev/null",
    "git status <<< x",
    "ls <<EOF\ntouch PWNED\nEOF",
    # Substitution and expansion: the words that run are not the words read.
    "git status $(touch PWNED)",
    "git status `touch PWNED`",
    'git status "$(touch PWNED)"',
    "git status '$(touch PWNED)'",  # harmless to sh, but the rule does not out-guess quotes
    "git status $((1))",
    "git status ${IFS}x",
    "git status $HOME",
    "ls <(touch PWNED)",
    "ls >(touch PWNED)",
    # Subshells and comments.
    "(git status; touch PWNED)",
    "git status ( touch PWNED )",
    "ls (",
    "ls )",
    "git status # touch PWNED",
    "git status #",
    # Line breaks: each line runs.
    "git status\ntouch PWNED",
    "git status\r\ntouch PWNED",
    "git status\rtouch PWNED",
    "git status \\\ntouch PWNED",
    "ls\n\ntouch PWNED",
    # Hidden characters: a reader cannot see what they do.
    "git status\u202e",
    "git status \u202e",
    "git status \u202e -- \u202d",
    "git status \u200b",
    "git status \ufeff",
    "git status \x00",
    "ls \x1b[2J",
    "ls \u2066",
    "git status\u202edehsinif #\u202d",
    "git\u200b status",
    "git status\u200b",
    "git status\u00a0touch PWNED",
    "git status\u2028touch PWNED",
    "git status\x1b[2K",
    "git status\x00touch PWNED",
    "git status\x85touch PWNED",
    "git status\ufeff",
    "ls\u3000-la",
    "ls\U000e0041",
    "git status\t",
    "git\tstatus",
    # Not the rule's words.
    "GIT status",
    "git STATUS",
    "'git status'",
    '"git status"',
    "git\\ status",
    "git statusx",
    "gitstatus",
    "git-status",
    "lsof",
    "ls-files",
    "./ls",
    "FOO=1 git status",
    "PATH=. git status",
    "command git status",
    "env git status",
    "sudo git status",
    "nice ls",
    "xargs ls",
    "sh -c 'git status'",
    "git -c core.fsmonitor='touch PWNED' status",
    "git --exec-path=. status",
    # Quoting the shell would not close.
    "git status 'unclosed",
    'git status "unclosed',
    "git status \\",
    # Nothing at all.
    "",
    "   ",
]
"""Commands that must ask, with ``allow_commands = ["git status", "ls"]``."""

MATCHING = [
    "git status",
    "git status --short",
    "git  status",
    "  git status  ",
    '"git" status',
    "git 'status' -s",
    "\\git status",
    "git status -- 'a b.txt'",
    "git status \uff1btouch PWNED",  # a fullwidth semicolon is a letter to sh: a path argument
    "ls",
    "ls -la",
    "ls *.py",
    "ls ~",
    "ls {a,b}",
]
"""Commands the same rules allow: the rule's words, as sh splits them, then any arguments."""
