"""Text that would act on the user's terminal if written to it raw.

Each case is (name, text). The ``--print`` tests put the text in a model
answer and in an API error message, and check that nothing of it reaches
stdout or stderr as an escape sequence or control character.
"""

from __future__ import annotations

TERMINAL_ATTACKS: list[tuple[str, str]] = [
    ("osc52-clipboard", "\x1b]52;c;cm0gLXJmIH4K\x07"),  # OSC 52: clipboard := "rm -rf ~"
    ("osc52-st", "\x1b]52;c;cm0gLXJmIH4K\x1b\\"),  # the same, ended by ST instead of BEL
    ("clear-screen", "\x1b[2J\x1b[3J\x1b[H"),  # CSI 2J/3J: clear screen and scrollback
    ("title", "\x1b]0;pwned\x07"),  # OSC 0: set the window title
    ("title-report", "\x1b[21t"),  # CSI 21t: the terminal types the title back on stdin
    ("hyperlink", "\x1b]8;;https://evil.example\x1b\\innocent\x1b]8;;\x1b\\"),  # OSC 8 link
    ("decrqss", '\x1bP$q"p\x1b\\'),  # DCS query: the terminal answers on stdin
    ("reset", "\x1bc"),  # RIS: full terminal reset
    ("conceal", "\x1b[8mhidden\x1b[0m"),  # SGR 8: invisible text
    ("csi-8bit", "\x9b2J"),  # 8-bit CSI: clear screen
    ("osc-8bit", "\x9d0;pwned\x9c"),  # 8-bit OSC title, 8-bit ST
    ("c1-all", "".join(map(chr, range(0x80, 0xA0)))),  # every C1 control
    ("c0-all", "".join(chr(c) for c in range(0x20) if chr(c) not in "\n\t")),  # every other C0
    ("del", "\x7f\x7f"),  # DEL
    ("carriage-return", "safe\rEVIL"),  # CR: overwrite what the line said
    ("bidi-override", "abc\u202edcb\u202c"),  # RLO ... PDF: the line reads backwards
    ("bidi-isolate", "x\u2067y\u2069z\u2066"),  # RLI/LRI isolates, one left open
]

UNENCODABLE: list[tuple[str, str]] = [
    # Not storable either: a model answer holding one fails the turn before
    # it is printed (a store issue), so only the output filter is tested on it.
    ("lone-surrogate", "\ud83d"),  # cannot be encoded: writing it raw would crash
]

FORBIDDEN_IN_OUTPUT: list[str] = [
    # What may never appear on stdout/stderr once cleaned.
    *map(chr, range(0x00, 0x09)),  # C0 before tab
    *map(chr, range(0x0B, 0x20)),  # C0 after newline, ESC and CR included
    "\x7f",  # DEL
    *map(chr, range(0x80, 0xA0)),  # C1
    *map(chr, range(0x202A, 0x202F)),  # bidi embeddings and overrides
    *map(chr, range(0x2066, 0x206A)),  # bidi isolates
]

NARROW_ENCODINGS: list[tuple[str, str, bytes]] = [
    # (PYTHONIOENCODING, model answer, stdout expected): what the encoding
    # cannot hold is written as an escape; before, one "é" gave exit 1.
    ("ascii", "café 🙂", b"caf\\xe9 \\U0001f642\n"),  # C locale style: letters and emoji
    ("ascii:strict", "naïve", b"na\\xefve\n"),  # strict asked for explicitly
    ("latin-1", "café 🙂 €", b"caf\xe9 \\U0001f642 \\u20ac\n"),  # é fits, the rest does not
    ("cp437", "ÿes ñ ✓", b"\x98es \xa4 \\u2713\n"),  # an old DOS code page
]

TAIL = " Also deleted ~/notes"  # what a model would rather the user did not read

UNTERMINATED_STRINGS: list[tuple[str, str, str]] = [
    # (name, text, what must stay visible). A string introducer (OSC, DCS, SOS,
    # PM, APC) with no BEL/ST after it once took the rest of its line with it,
    # so a model could hide a sentence from the user behind one character.
    ("osc-8bit", "The command is safe.\x9d WARNING: uploads ~/.ssh\nBye.", "WARNING: uploads"),
    ("dcs-8bit", f"Done.\x90{TAIL}\nBye.", TAIL),
    ("sos-8bit", f"Done.\x98{TAIL}\nBye.", TAIL),
    ("pm-8bit", f"Done.\x9e{TAIL}\nBye.", TAIL),
    ("apc-8bit", f"Done.\x9f{TAIL}\nBye.", TAIL),
    ("osc-7bit", f"Done.\x1b]{TAIL}\nBye.", TAIL),
    ("dcs-7bit", f"Done.\x1bP{TAIL}\nBye.", TAIL),
    ("apc-7bit", f"Done.\x1b_{TAIL}\nBye.", TAIL),
    ("ended-next-line", f"Done.\x9d{TAIL}\nBye.\x07", TAIL),  # the BEL comes a line too late
    ("too-long", f"Done.\x9d{'x' * 5_000}{TAIL}\x07", TAIL),  # BEL beyond the 4,096 bound
    ("st-broken", f"Done.\x1b]0;t\x1bX{TAIL}", TAIL),  # an ESC not followed by "\\"
]

BIDI_IN_ANSWERS: list[tuple[str, str, str]] = [
    # (name, model text, how the TUI must show it): bidi controls as escapes, as --print does.
    ("rlo", "Run it: rm -rf \u202e/ fr- mr\u202c now", "Run it: rm -rf \\u202e/ fr- mr\\u202c now"),
    ("isolate", "file\u2067txt.exe\u2069", "file\\u2067txt.exe\\u2069"),
    ("arabic-mark", "a\u061cb", "a\\u061cb"),
]
