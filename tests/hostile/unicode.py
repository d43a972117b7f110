"""Text that is not valid Unicode or UTF-8, as tools, pipes and the shell hand it to Koroku.

``LONE_SURROGATES``: (text a tool returns, what the model must get instead).
Python text can hold lone surrogates (``surrogateescape`` makes them from
undecodable bytes); JSON for Gemini and SQLite's UTF-8 cannot.

``INVALID_UTF8``: bytes a user may pipe into ``koroku-tui --print -`` or pass
as its argument.
"""

from __future__ import annotations

LONE_SURROGATES: list[tuple[str, str]] = [
    ("caf\udcff.txt", "caf\\xff.txt"),  # an undecodable byte, via surrogateescape
    ("\udc80", "\\x80"),  # the lowest escaped byte, alone
    ("high \ud800 alone", "high \ufffd alone"),  # a high surrogate without its pair
    ("low \udc00 alone", "low \ufffd alone"),  # a low surrogate outside the escape range
    ("pair \ud83d\ude00 split", "pair \ufffd\ufffd split"),  # a pair as two code points
]

INVALID_UTF8: list[bytes] = [
    b"caf\xe9 au lait",  # Latin-1
    b"\xff\xfe\x00h\x00i",  # UTF-16 with a byte order mark
    b"ok \xed\xa0\x80 surrogate",  # an encoded surrogate
    b"cut \xe2\x82",  # a sequence cut at the end
    b"\x80\x81\x82",  # nothing but continuation bytes
]
