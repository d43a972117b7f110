"""Showing untrusted text (model replies, tool output, stored rows) literally and safely.

Two dangers, two rules:

* Markup: Rich and Textual parse ``[bold]``, ``[link=...]`` and ``[@click=...]``
  in plain strings. Untrusted text therefore goes into a ``rich.text.Text``
  (which is never parsed), or into widgets built with ``markup=False``.
* Terminal control: an escape sequence such as ``ESC ] 0 ; title BEL`` or
  ``ESC [ 2 J`` could retitle or clear the user's terminal if it reached it
  unfiltered (an export ``cat``-ed later, a copy to the clipboard). ``sanitize``
  removes whole escape sequences, then every remaining C0/C1 control character
  except newline and tab.
"""

from __future__ import annotations

import re

from rich.style import Style
from rich.text import Text

__all__ = ["literal", "sanitize"]

# One alternative per escape-sequence family (ECMA-48), both the 7-bit "ESC x"
# form and the 8-bit C1 form. Removing the whole sequence rather than only the
# ESC byte keeps "[2J" or "0;title" from showing up as junk in the text.
_ESCAPE_SEQUENCE = re.compile(
    r"""
    (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?      # CSI: colours, cursor, clear
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])                     # OSC, DCS, SOS, PM, APC...
      [^\x07\x1b\x9c\n]* (?:\x07|\x1b\\|\x9c)?                    # ...up to BEL or ST
    | \x1b [\x20-\x2f]* [\x30-\x7e]?                              # any other ESC sequence
    """,
    re.VERBOSE,
)
# Everything in C0, DEL and C1 except \t (0x09) and \n (0x0a).
_CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def sanitize(text: str) -> str:
    """``text`` without terminal escape sequences or control characters (``\\n``/``\\t`` stay).

    Carriage returns become newlines (``\\r\\n`` becomes one newline), so
    progress-bar style output keeps its lines instead of being glued together.
    The result is stable: ``sanitize(sanitize(t)) == sanitize(t)``.
    """
    if text.isprintable():
        # Fast path for the common case; isprintable() is False for \n and \t
        # too, so anything multi-line takes the full path below.
        return text
    text = text.replace("\r\n", "\n")
    text = _ESCAPE_SEQUENCE.sub("", text)
    text = text.replace("\r", "\n")
    return _CONTROL_CHARACTER.sub("", text)


def literal(text: str, style: str | Style | None = None) -> Text:
    """A ``Text`` showing ``text`` exactly as written: sanitized, never parsed as markup."""
    return Text(sanitize(text), style=style or "")
