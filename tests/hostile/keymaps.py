"""``keymap.toml`` files a user can get wrong: ``(file text, what the notice must say)``.

Every one of them must be reported (a notice in the app, a line in the log),
leave the default keys of what it could not remap, and leave a key that quits:
ctrl+q, or the one the file gave quit (``QUIT_KEYS``).
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
]

QUIT_KEYS = {"'main.older' would take f10 from quit": "f10"}
"""The quit key of the cases that move it (by what their notice says); ctrl+q otherwise."""
