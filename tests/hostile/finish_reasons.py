"""Ways Gemini ends a reply without a whole answer: ``(finishReason, words the user reads)``.

Read by ``tests/test_agent_finish.py`` (agent hooks) and, for a few, by the
TUI and ``--print`` tests. The words are what follows "The answer was cut off: ".
"""

from __future__ import annotations

CUT_REASONS: list[tuple[str, str]] = [
    ("MAX_TOKENS", "token limit"),  # the output budget ran out mid-answer
    ("SAFETY", "safety filter"),  # a safety filter stopped the text
    ("RECITATION", "recitation filter (it was repeating a source)"),  # quoting a source
    ("BLOCKLIST", "blocked terms"),  # a term from a configured blocklist
    ("PROHIBITED_CONTENT", "prohibited content"),  # policy stop
    ("SPII", "sensitive personal information"),  # personal data in the output
    ("MALFORMED_FUNCTION_CALL", "malformed tool call"),  # a call the API could not parse
    ("OTHER", "unspecified reason"),  # Gemini's catch-all
    ("LANGUAGE", "unsupported language"),  # the model stopped on the language
    ("FINISH_REASON_UNSPECIFIED", "no reason given"),  # the enum's zero value
    ("CONTINUATION", "per-request token limit"),  # continuable, but cut here
    ("SOMETHING_NEW_IN_2027", "something new in 2027"),  # a reason newer than Koroku
    ("NEW\x1b]52;c;cHduZWQ=\x07", "new"),  # escape codes in a reason never reach the screen
]

RUN_CALLS_AFTER: list[str] = [
    "STOP",  # a whole step
    "MAX_TOKENS",  # the budget ran out after whole calls: they run, the turn goes on
]
"""Finish reasons after which a step's tool calls still run; after every other
one in ``CUT_REASONS`` they are answered "not run" and the turn ends, exit 2."""

BLOCKED_PROMPTS: list[tuple[str, str]] = [
    ("SAFETY", "safety filter"),  # the prompt itself tripped a safety filter
    ("PROHIBITED_CONTENT", "prohibited content"),  # policy block of the prompt
    ("BLOCKLIST", "blocked terms"),  # a blocklisted term in the prompt
    ("OTHER", "unspecified reason"),  # the catch-all block
    ("JAILBREAK", "jailbreak attempt"),  # Vertex's jailbreak detector
]
