"""File names and paths the file tools must handle without crashing or leaving the workspace.

``BYTE_NAMES``: names a file in the workspace may have (POSIX names are bytes).
Each must be listed as valid UTF-8 text on one line, and the shown name must
read and write that very file.

``ESCAPING_PATHS``: paths the model may send; each must be refused as outside
the workspace (``{outside}`` is replaced by a folder next to the workspace).

``UNUSABLE_PATHS``: paths that are refused for what they hold, with a sentence.

``SPELLED_PATHS``: paths that spell, with ``\\xNN`` escapes, characters that
``list_directory`` shows as themselves (``/``, ``.``, letters...). Each is
refused before anything is touched: read as one odd name in the approval
dialog, it would lead somewhere else (``.git/config``).

``UNPLAIN_NEW_NAMES``: paths ``write_file`` may not create, because the new
name would hold control characters or bytes that are not UTF-8. Nothing of
them is made, not even a folder on the way.
"""

from __future__ import annotations

BYTE_NAMES: list[bytes] = [
    b"caf\xff.txt",  # a byte that is never UTF-8
    b"latin1-caf\xe9.txt",  # Latin-1 text, not UTF-8
    b"\xc3\x28.txt",  # a two-byte sequence cut short
    b"\xed\xa0\x80.txt",  # an encoded surrogate (invalid in UTF-8)
    b"\x80",  # a lone continuation byte, nothing else
    b"line\nbreak.txt",  # a newline would split the one-name-a-line listing
    b"tab\there.txt",  # a tab
    b"esc\x1b[31mred.txt",  # a terminal escape sequence
    b"c1-\xc2\x9d-osc.txt",  # U+009D (C1 OSC) hides the rest of a line in a terminal
    b"del\x7f.txt",  # DEL
    b"back\\slash.txt",  # a real backslash in the name
    b"literal-\\xff.txt",  # the text of an escape, not the byte
    b"euro-\xe2\x82\xac.txt",  # valid UTF-8 stays as it is
]

ESCAPING_PATHS: list[str] = [
    "../outside/secret.txt",  # plain parent
    "sub/../../outside",  # through a folder that does not exist
    "{outside}/secret.txt",  # absolute, elsewhere
    "/etc/passwd",  # absolute, the system
    "./././../outside",  # dots before the parent
]

UNUSABLE_PATHS: list[str] = [
    "a\x00b.txt",  # a NUL byte in the text
    "a\\x00b.txt",  # a NUL byte spelt as an escape
    "lone-\ud800.txt",  # a lone surrogate the model sent as a JSON escape
]

SPELLED_PATHS: list[str] = [
    "notes.git\\x2f..\\x2f.git\\x2fconfig",  # one odd name in the dialog, .git/config on disk
    "\\x2e\\x2e/outside/secret.txt",  # ".." spelt as escapes
    "..\\x2foutside\\x2fsecret.txt",  # "/" spelt as escapes
    "\\x2fetc/passwd",  # a leading "/" spelt as an escape
    ".\\x2Egit/config",  # one dot spelt, upper-case hex digits
    "a\\x5cb.txt",  # a backslash spelt as \\x5c (list_directory shows it as \\\\)
    "caf\\xc3\\xa9.txt",  # "é" spelt as its UTF-8 bytes
    "\\xe2\\x80\\xaetxt.exe",  # U+202E (right-to-left override) spelt as bytes
    "\\x20lead.txt",  # a space spelt as an escape
]

UNPLAIN_NEW_NAMES: list[str] = [
    "esc\\x1b[31mred.txt",  # an ESC byte, as list_directory would show it
    "real-esc-\x1b[2J.txt",  # a real ESC character in the JSON text
    "caf\\xff.txt",  # a byte that is never UTF-8
    "line\nbreak.txt",  # a real newline
    "c1-\\xc2\\x9d-osc.txt",  # U+009D, which hides the rest of a terminal line
    "del\\x7f.txt",  # DEL
    "new-\\x1b-folder/file.txt",  # a new folder with an ESC byte in its name
    "plain-folder/bad-\\x9b.txt",  # a plain new folder, then a byte that is not UTF-8
]
