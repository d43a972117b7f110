"""Commands whose long-running process leaves the command's process group.

Each starts one long-lived process that writes its own pid to ``held.pid``
and then runs for ever; it stays in the command's *session*, so Koroku must
kill it when the call ends, is cancelled, or Koroku is stopped or killed.
``{python}`` stands for the test's Python interpreter.
"""

from __future__ import annotations

REGROUPING = [
    # GNU timeout puts itself (and the command) in a process group of its own.
    "timeout 300 sh -c 'echo $$ > held.pid; exec sleep 1000'",
    # Any program can do the same with setpgid(0, 0).
    "{python} -c \"import os; os.setpgid(0, 0); print(os.getpid(), file=open('held.pid', 'w'));"
    " os.execvp('sleep', ['sleep', '1000'])\"",
]
