"""``keymap.toml`` files a user can get wrong: ``(file text, what the notice must say)``.

Every one of them must be reported (one notice in the app, a line in the log),
leave the default keys of what it could not remap, and leave a key that quits:
ctrl+q, or the one the file gave quit (``QUIT_KEYS``).

``LARGE_KEYMAPS``: files too big or too deep to read whole, each with what the
log must say; the app must start as usual, fast, with one short notice.

``PLANTED``: what may stand at ``keymap.toml`` instead of a file: a link (to
``/dev/zero``, to a file outside the home), a FIFO, a folder.
Read by ``tests/test_ui_keymap.py``.
"""

from __future__ import annotations

KEYMAPS: list[tuple[str, str]] = [
    ('"main.compcat" = "ctrl+k"\n', "'main.compcat' is not a binding id"),  # a typo in the id
    ('"compact" = "ctrl+k"\n', "'compact' is not a binding id"),  # the id without its screen
    ("[main]\ncompact = 'ctrl+k'\n", "'main' is not a binding id"),  # a TOML table, not a key
    ('"main.toggle_sidebar" = "ctrl+kk"\n', "'ctrl+kk' is not a key Textual knows"),  # two letters
    (
        '"main.toggle_sidebar" = "Ctrl+K"\n',
        "'Ctrl+K' is not a key",
    ),  # Textual's names are lower case
    ('"main.toggle_sidebar" = "control+k"\n', "'control+k' is not a key"),  # not a modifier
    ('"main.toggle_sidebar" = "ctrl+"\n', "'ctrl+' is not a key"),  # no key after the modifier
    ('"main.toggle_sidebar" = "f6,,f7"\n', "'' is not a key"),  # an empty key in a list
    ('"main.toggle_sidebar" = "ctrl+shift+ctrl+t"\n', "is not a key"),  # a modifier twice
    ('"main.toggle_sidebar" = 6\n', "'main.toggle_sidebar' must be keys as text"),  # a number
    ('"main.compact" = "ctrl+q"\n', "'main.compact' would take ctrl+q from quit"),  # quit's key
    ('"main.history" = "f2,ctrl+q"\n', "'main.history' would take ctrl+q from quit"),  # in a list
    ('"main.quit" = "ctrl+qq"\n', "'ctrl+qq' is not a key"),  # quit remapped to nothing
    ('"main.quit" = ""\n', "'main.quit' must be keys as text"),  # quit remapped to empty
    (
        '"main.quit" = "f10"\n"main.older" = "f10"\n',
        "'main.older' would take f10 from quit",
    ),  # moved
    ("this is = = not toml\n", "keymap.toml was not used"),  # not TOML at all
    # Another action's key: that action would lose it (History without ctrl+r).
    ('"main.compact" = "ctrl+r"\n', "'main.compact' would take ctrl+r from 'main.history'"),
    ('"history.rename" = "d"\n', "'history.rename' would take d from 'history.delete'"),
    ('"main.older" = "f5"\n"main.compact" = "f5"\n', "'main.compact' would take f5"),  # twice
    ('"main.quit" = "escape"\n', "'main.quit' would take escape from 'main.cancel'"),
    # A key you type with, on the main screen: it would fire while typing.
    ('"main.quit" = "a"\n', "'main.quit' = 'a': a is typed in the prompt"),
    ('"main.history" = "shift+r"\n', "shift+r is typed in the prompt"),
    ('"main.compact" = "?"\n', "question_mark is typed in the prompt"),
    ('"main.rewind" = "f9,space"\n', "space is typed in the prompt"),
    ('"main.new_session" = "enter"\n', "enter is typed in the prompt"),
    ('"main.quit" = "a\\u001b[2J"\n', "is not a key Textual knows"),  # an escape sequence
    ("a = " + "[" * 2_000 + "]" * 2_000 + "\n", "it nests arrays or tables too deeply"),
    ("a = " + "{b = " * 2_000 + "}" * 2_000 + "\n", "it nests arrays or tables too deeply"),
]

QUIT_KEYS = {"'main.older' would take f10 from quit": "f10"}
"""The quit key of the cases that move it (by what their notice says); ctrl+q otherwise."""

LARGE_KEYMAPS: list[tuple[str, str]] = [
    ("a = " + "[" * 100_000, "more than the 64 KB Koroku takes"),  # 100,000 nested "["
    ("".join(f'"x.id{n}" = "ctrl+k"\n' for n in range(50_000)), "more than the 64 KB"),
    ("".join(f'"x.id{n}" = "ctrl+k"\n' for n in range(2_000)), "1,980 more entries"),
]

PLANTED: list[str] = ["link to /dev/zero", "link outside", "dangling link", "fifo", "folder"]
