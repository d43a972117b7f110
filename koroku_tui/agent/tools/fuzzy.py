"""Fuzzy file matching for the ``@`` picker: a subsequence, ranked as a person would.

A path matches when the query's characters appear in it in order (case
ignored). Among matches, better first:

1. the query whole inside the file's name (``prompt`` finds ``prompt.py``
   before ``prompts/index.md``), its start first;
2. the query a subsequence of the file's name alone;
3. the query whole somewhere in the path;
4. anywhere else;

then fewer separate runs of matched characters (``ui/main`` beats
``u...i...m``), then shorter paths. Filtering and the first tiers are C-level
string and regex calls over every path; the run count, which is Python,
only for the few best.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field

__all__ = ["Candidates", "rank", "runs"]

_REFINED = 400
"""Paths whose runs are counted: the best by tier and length."""


@dataclass
class Candidates:
    """The listed paths with their lower-case forms (kept in step as the list grows)."""

    paths: list[str] = field(default_factory=list)
    lower: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    """The lower-case file names (last component)."""

    def update(self, paths: list[str]) -> Candidates:
        """Take in the paths appended to ``paths`` since the last call."""
        for path in paths[len(self.paths) : len(paths)]:
            low = path.lower()
            self.paths.append(path)
            self.lower.append(low)
            self.names.append(low.rpartition("/")[2])
        return self


def rank(candidates: Candidates, query: str, limit: int) -> list[str]:
    """The best ``limit`` paths for ``query`` (all paths, shallow and short first, when empty)."""
    paths, lower, names = candidates.paths, candidates.lower, candidates.names
    count = len(paths)
    wanted = query.lower()
    if not wanted:
        best = heapq.nsmallest(
            limit, range(count), key=lambda i: (paths[i].count("/"), len(paths[i]), paths[i])
        )
        return [paths[i] for i in best]
    subsequence = re.compile(".*?".join(map(re.escape, wanted)), re.DOTALL).search
    matched = [i for i in range(count) if subsequence(lower[i])]

    def tier(i: int) -> tuple[int, int, int]:
        name = names[i]
        at = name.find(wanted)
        if at >= 0:
            return (0 if at == 0 else 1, len(paths[i]), i)
        if subsequence(name):
            return (2, len(paths[i]), i)
        return (3 if wanted in lower[i] else 4, len(paths[i]), i)

    best = heapq.nsmallest(max(limit, _REFINED), matched, key=tier)
    keyed = sorted((tier(i)[0], runs(wanted, lower[i]), len(paths[i]), paths[i]) for i in best)
    return [path for *_, path in keyed[:limit]]


def runs(query: str, text: str) -> int:
    """The fewest runs of consecutive characters that spell ``query`` in order in ``text``.

    Tries each place the first character occurs, then takes characters
    greedily, preferring the one right after the last (a near-optimal
    count, linear per start; ``len(text) + 1`` when there is no match).
    """
    best = len(text) + 1
    start = text.find(query[0]) if query else -1
    while start >= 0:
        count, position, ok = 1, start + 1, True
        for char in query[1:]:
            if position < len(text) and text[position] == char:
                position += 1
                continue
            found = text.find(char, position)
            if found < 0:
                ok = False
                break
            count += 1
            position = found + 1
        if ok:
            best = min(best, count)
        start = text.find(query[0], start + 1)
    return best
