"""Characters a terminal hides, swallows or uses to reorder a line, and commands built on them.

Wherever a tool argument is shown (approval dialog, transcript, sidebar,
history, export) each of these must appear as a visible ``\\u009d``-style
escape: never dropped, never sent to the terminal raw.
"""

from __future__ import annotations

HIDDEN_RANGES: list[tuple[int, int]] = [
    # (first, last) code point, both included. The tests check every one.
    (0x0000, 0x0008),  # C0 controls before tab (NUL, BEL, backspace...)
    (0x000B, 0x001F),  # C0 after newline: VT, FF, CR, ESC, the separators 0x1C-0x1F
    (0x007F, 0x007F),  # DEL
    (
        0x0080,
        0x009F,
    ),  # C1: 8-bit CSI 0x9B, OSC 0x9D, DCS 0x90, SOS, PM, APC, NEL 0x85
    (0x00A0, 0x00A0),  # no-break space: looks like a space, but /bin/sh reads it as a letter
    (0x00AD, 0x00AD),  # soft hyphen: invisible unless the line breaks there
    (0x034F, 0x034F),  # combining grapheme joiner: an invisible mark
    (0x061C, 0x061C),  # Arabic letter mark (a bidi control)
    (0x115F, 0x1160),  # Hangul choseong/jungseong fillers: letters drawn as blanks
    (0x1680, 0x1680),  # Ogham space mark
    (0x17B4, 0x17B5),  # Khmer inherent vowels: marks that draw nothing
    (0x180B, 0x180D),  # Mongolian free variation selectors 1-3
    (0x180E, 0x180E),  # Mongolian vowel separator: zero width
    (0x180F, 0x180F),  # Mongolian free variation selector 4
    (0x2000, 0x200A),  # en/em quads and spaces, thin and hair spaces: spaces sh does not split on
    (0x200B, 0x200F),  # zero-width space, ZWNJ, ZWJ, left-to-right and right-to-left marks
    (0x2028, 0x2029),  # line and paragraph separators
    (0x202A, 0x202E),  # bidi embeddings and overrides (RLO U+202E reverses what follows)
    (0x202F, 0x202F),  # narrow no-break space
    (0x205F, 0x205F),  # medium mathematical space
    (0x2060, 0x2064),  # word joiner and the invisible math operators
    (0x2066, 0x2069),  # bidi isolates
    (0x206A, 0x206F),  # deprecated format characters
    (0x2800, 0x2800),  # Braille pattern blank
    (0x3000, 0x3000),  # ideographic space
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors 1-16: change no glyph of a Latin letter
    (0xFEFF, 0xFEFF),  # zero-width no-break space (byte order mark)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF9, 0xFFFB),  # interlinear annotation controls
    (0xE0000, 0xE007F),  # tag characters: invisible ASCII look-alikes
    (0xE0100, 0xE01EF),  # variation selectors 17-256
    (0xD800, 0xDFFF),  # lone surrogates: cannot even be encoded for the terminal
]

SHOWN_AS_THEMSELVES: list[str] = [
    "\n",  # newline: shown (as a line break, or as \n inside JSON)
    "\t",  # tab
    " ",  # plain space
    "é",  # accented letter
    "日本語",  # CJK
    "עברית",  # right-to-left script without any control
    "🙂",  # emoji
    "[bold]x[/]",  # markup-looking text is text
    "\\u009d",  # a literal backslash-u written by the model: text, not a control
]

HIDDEN_COMMANDS: list[tuple[str, str]] = [
    # (command the model asks to run, its value as the approval dialog must show it)
    ("echo hello\u009d; touch PWNED", r"echo hello\u009d; touch PWNED"),  # 8-bit OSC ate the rest
    ("echo hi\u009b8m; touch PWNED", r"echo hi\u009b8m; touch PWNED"),  # 8-bit CSI "conceal"
    ("echo hi\x1b]0;x\x07; touch PWNED", r"echo hi\u001b]0;x\u0007; touch PWNED"),  # 7-bit OSC
    ("echo ok\x1b[2K\r; touch PWNED", r"echo ok\u001b[2K\u000d; touch PWNED"),  # erase + CR
    ("echo ok \u202e; DENWP hcuot", r"echo ok \u202e; DENWP hcuot"),  # RLO mirrors the tail
    ("ls\u2066\u2069 && touch PWNED", r"ls\u2066\u2069 && touch PWNED"),  # empty bidi isolate
    ("ls\u200b\u200d; touch PWNED", r"ls\u200b\u200d; touch PWNED"),  # zero-width characters
    ("echo a\x85touch PWNED", r"echo a\u0085touch PWNED"),  # NEL: a C1 "next line"
    ("echo a\u2028touch PWNED", r"echo a\u2028touch PWNED"),  # Unicode line separator
    ("echo \U000e0041\U000e0042; touch PWNED", r"echo \U000e0041\U000e0042; touch PWNED"),  # tags
    ("echo \u3164\u3164; touch PWNED", r"echo \u3164\u3164; touch PWNED"),  # Hangul fillers
    ("echo safe\u00a0#; touch PWNED", r"echo safe\u00a0#; touch PWNED"),  # NBSP: "#" is no comment
    ("echo safe\u2009#; touch PWNED", r"echo safe\u2009#; touch PWNED"),  # thin space, the same
    ("echo safe\u3000#; touch PWNED", r"echo safe\u3000#; touch PWNED"),  # ideographic space
    ("ls\ufe0f\U000e0100; touch PWNED", r"ls\ufe0f\U000e0100; touch PWNED"),  # variation selectors
]

MULTILINE_COMMANDS: list[tuple[str, list[str], int]] = [
    # (command, the lines the dialog must draw for its value, lines the dialog counts).
    # One dialog line per shell line: a newline may not pass for "\n" inside a comment.
    (
        "echo safe # the rest is a comment, see docs\ntouch PWNED",  # the comment "hides" line 2
        ['"command": "echo safe # the rest is a comment, see docs\\n', 'touch PWNED"'],
        2,
    ),
    (
        "ls\n\n  rm -rf ~/.ssh\n",  # a blank line, an indented line and a final newline
        ['"command": "ls\\n', "\\n", "  rm -rf ~/.ssh\\n", '"'],
        3,
    ),
    (
        "echo 'a\nb' # \\n stays text\ttab",  # a real newline, a written "\\n", a real tab
        ['"command": "echo \'a\\n', "b' # \\\\n stays text\\ttab\""],
        2,
    ),
]
