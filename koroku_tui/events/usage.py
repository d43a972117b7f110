"""Token counts added up: one reply's ``usage``, a turn's, a session's, all history's.

Import them from ``koroku_tui.events``, which re-exports every public name.
"""

from __future__ import annotations

from dataclasses import dataclass

from koroku_tui.events.records import TokenUsage

__all__ = ["TokenCounts"]


@dataclass(frozen=True)
class TokenCounts:
    """Tokens in, out, cached and thinking: what the usage statistics and the gauge show.

    ``tokens_in`` is Gemini's prompt count, of which ``cached`` came from its
    cache (cached tokens are part of what went in, not more); ``tokens_out``
    its candidates count (the answer and the calls); ``thinking`` its
    thoughts count, which Gemini reports apart from the answer.
    """

    tokens_in: int = 0
    tokens_out: int = 0
    cached: int = 0
    thinking: int = 0

    @classmethod
    def of(cls, usage: TokenUsage | None) -> TokenCounts:
        """One reply's counts (nothing reported counts as 0)."""
        if usage is None:
            return cls()
        return cls(
            tokens_in=usage.prompt_token_count or 0,
            tokens_out=usage.candidates_token_count or 0,
            cached=usage.cached_content_token_count or 0,
            thinking=usage.thoughts_token_count or 0,
        )

    def __add__(self, other: TokenCounts) -> TokenCounts:
        return TokenCounts(
            self.tokens_in + other.tokens_in,
            self.tokens_out + other.tokens_out,
            self.cached + other.cached,
            self.thinking + other.thinking,
        )

    def describe(self) -> str:
        """``12,345 in (2,000 cached) · 678 out · 90 thinking``."""
        cached = f" ({self.cached:,} cached)" if self.cached else ""
        return (
            f"{self.tokens_in:,} in{cached} · {self.tokens_out:,} out · {self.thinking:,} thinking"
        )
