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
import itertools
import re
from collections.abc import Callable, Iterable
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
    lengths: list[int] = field(default_factory=list)
    """Each path's length (shorter paths rank first within a tier)."""
    last: tuple[str, int, list[int]] | None = None
    """The previous search: its query, how many paths it saw, and which matched.

    A query typed one more key at a time matches a subset of what the
    shorter one matched: only those (and paths listed since) are tried.
    """

    shallow: tuple[tuple[int, int], list[str]] | None = None
    """The last bare ``@`` list, for how many paths and how many shown."""

    def update(self, paths: list[str]) -> Candidates:
        """Take in the paths appended to ``paths`` since the last call."""
        for path in paths[len(self.paths) : len(paths)]:
            low = path.lower()
            self.paths.append(path)
            self.lower.append(low)
            self.names.append(low.rpartition("/")[2])
            self.lengths.append(len(path))
        return self

    def shallowest(self, limit: int) -> list[str]:
        """What a bare ``@`` lists: the shallowest, shortest paths (kept until more are listed)."""
        paths = self.paths
        if self.shallow is None or self.shallow[0] != (len(paths), limit):
            best = heapq.nsmallest(
                limit,
                range(len(paths)),
                key=lambda i: (paths[i].count("/"), len(paths[i]), paths[i]),
            )
            self.shallow = ((len(paths), limit), [paths[i] for i in best])
        return self.shallow[1]

    def matching(self, wanted: str, search: Callable[[str], object]) -> list[int]:
        """The indices of the paths ``search`` finds ``wanted`` in (narrowing the last search)."""
        lower, count = self.lower, len(self.lower)
        tried: Iterable[int] = range(count)
        if self.last is not None and wanted.startswith(self.last[0]):
            _query, seen, matched = self.last
            tried = itertools.chain(matched, range(seen, count))
        found = [i for i in tried if search(lower[i])]
        self.last = (wanted, count, found)
        return found


def rank(candidates: Candidates, query: str, limit: int) -> list[str]:
    """The best ``limit`` paths for ``query`` (all paths, shallow and short first, when empty)."""
    paths, lower, names = candidates.paths, candidates.lower, candidates.names
    wanted = query.lower()
    if not wanted:
        return candidates.shallowest(limit)
    subsequence = _subsequence(wanted)
    matched = candidates.matching(wanted, subsequence)

    # Tier by tier, best first, each by C-level tests over what is left, until
    # the shortlist is full: one letter matches nearly every path, and a key
    # function called a hundred thousand times took a tenth of a second.
    wanted_count = max(limit, _REFINED)
    length = candidates.lengths.__getitem__
    shortlist: list[tuple[int, int]] = []
    chosen: set[int] = set()
    for tier in range(5):
        # Each test also passes the better tiers' paths, all already chosen
        # (a tier that fills the shortlist ends the loop): skipped below.
        if tier == 0:
            hits = [i for i in matched if names[i].startswith(wanted)]
        elif tier == 1:
            hits = [i for i in matched if wanted in names[i]]
        elif tier == 2:
            hits = [i for i in matched if subsequence(names[i])]
        elif tier == 3:
            hits = [i for i in matched if wanted in lower[i]]
        else:
            hits = matched
        room = wanted_count - len(shortlist)
        for i in heapq.nsmallest(room + len(chosen), hits, key=length):
            if i not in chosen and len(shortlist) < wanted_count:
                chosen.add(i)
                shortlist.append((tier, i))
        if len(shortlist) >= wanted_count:
            break
    keyed = sorted((tier, runs(wanted, lower[i]), len(paths[i]), paths[i]) for tier, i in shortlist)
    return [path for *_, path in keyed[:limit]]


def _subsequence(wanted: str) -> Callable[[str], re.Match[str] | None]:
    """A search for ``wanted``'s characters in order: ``a[^b]*b[^c]*c``.

    Negated classes, not ``.*?``: each character is found in one pass,
    where lazy dots backtracked over every path that did not match (5 µs a
    path, half a second over 100,000).
    """
    first, rest = re.escape(wanted[0]), wanted[1:]
    pattern = first + "".join(f"[^{re.escape(c)}]*{re.escape(c)}" for c in rest)
    return re.compile(pattern, re.DOTALL).search


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
