"""The form text takes in the search index, and the form a query takes to match it.

Two things the stemmed index (``porter unicode61``) cannot do alone:

* **Compatibility forms.** ``ＦＵＬＬ`` (fullwidth), ``ﬁle`` (a ligature),
  ``①`` or ``㎞`` are other characters than ``full``, ``file``, ``1`` and
  ``km`` to unicode61. Both the indexed text and the query are NFKC-normalised,
  so either form finds the other.
* **Scripts written without spaces.** unicode61 makes a whole run of
  letters one token, so ``東京都の天気`` was one word that ``天気`` never
  matched (Korean attaches particles: ``서울의`` hid ``서울``). In the index
  form, every Chinese, Japanese or Korean character is parted from the
  letters beside it by a zero-width space (U+200B, a separator to unicode61,
  invisible): each
  character is a token, and a query's run of them is a phrase of adjacent
  tokens, which matches exactly that substring. One and two characters work
  too (a trigram index finds neither; SQLite 3.40's trigram ``LIKE`` misses
  them as well). The zero-width spaces are taken out of snippets again.

A run of three or more characters in a query is also searched as its
overlapping pairs (``東京都`` as ``東京`` or ``京都``), the way a sentence
in English is searched as its words: a question written without spaces
still finds a fact that shares words with it, the exact run ranking first.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Callable

__all__ = [
    "SEPARATOR",
    "UNSPACED_STOP_WORDS",
    "index_form",
    "query_phrases",
    "reform_index",
]

#: Parts the characters of unspaced scripts in the index form (never shown).
SEPARATOR = "\u200b"

# Han (with its extensions and compatibility ideographs), kana, bopomofo and
# Hangul (syllables and jamo), and the iteration and prolonged-sound marks.
_UNSPACED_CLASS = (
    "\u1100-\u11ff\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u303c"
    "\u3041-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3105-\u312f\u3131-\u318e\u31a0-\u31bf"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7a3\ud7b0-\ud7ff"
    "\uf900-\ufaff\U00020000-\U0003134f"
)
_UNSPACED = re.compile(f"[{_UNSPACED_CLASS}]")
# Between two such characters, or one and a letter or digit ("iPhone15の").
_BESIDE_UNSPACED = re.compile(f"(?<=[{_UNSPACED_CLASS}])(?=\\w)|(?<=\\w)(?=[{_UNSPACED_CLASS}])")
_UNSPACED_RUNS = re.compile(f"([{_UNSPACED_CLASS}]+)")

#: Particles that, standing alone in a query, mean as little as "the" (added
#: to the stop words). Inside a run they stay: 的 is also half of 目的.
UNSPACED_STOP_WORDS = frozenset("のはがをにへでとも的了是")


def normalized(text: str) -> str:
    """``text`` in NFKC: ``ＦＵＬＬ`` is ``FULL``, ``ﬁle`` is ``file``."""
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


def index_form(text: str) -> str:
    """What the index holds for ``text``: NFKC, unspaced scripts one token per character.

    Idempotent (the form of a form is itself), so re-forming a row twice
    changes nothing.
    """
    text = normalized(text)
    if _UNSPACED.search(text) is None:
        return text
    return _BESIDE_UNSPACED.sub(SEPARATOR, text)


def query_phrases(term: str, *, whole: bool) -> list[str]:
    """The phrases (index form, unquoted) a query's ``term`` is searched as.

    A ``whole`` term (one the user quoted) is one exact phrase. A word of
    the query is too, and each run of three or more unspaced characters in
    it adds its overlapping pairs after it.
    """
    phrases = [index_form(term)]
    if whole:
        return phrases
    for run in _UNSPACED_RUNS.findall(normalized(term)):
        if len(run) >= 3:
            phrases += [index_form(run[i : i + 2]) for i in range(len(run) - 1)]
    return phrases


#: Rows re-formed per batch (and per progress report) by ``reform_index``.
REFORM_BATCH = 1_000
#: Past this share of rows rewritten, the index is merged afterwards.
OPTIMIZE_SHARE = 0.1

Progress = Callable[[int, int], None]


def reform_index(conn: sqlite3.Connection, progress: Progress) -> None:
    """Bring every row of ``messages_fts`` to the index form (the migration's work).

    The index keeps each row's text, so no message is parsed again: each is
    read, normalised, and rewritten only when its form changed (an English
    history changes in a handful of rows; a Japanese one in nearly all).
    Rewriting many rows leaves the index in many segments (71 MB where 55
    would do, for 100,000 messages in Chinese, Japanese and Korean): past
    ``OPTIMIZE_SHARE`` of them, FTS5 merges it (about a second there). ``progress(done,
    total)`` is told after every ``REFORM_BATCH`` rows, the last time once
    all is done.
    """
    total = int(conn.execute("SELECT count(*) FROM messages_fts").fetchone()[0])
    if total == 0:
        return
    progress(0, total)
    done, last, rewritten = 0, -1, 0
    while batch := conn.execute(
        "SELECT rowid, text FROM messages_fts WHERE rowid > ? ORDER BY rowid LIMIT ?",
        (last, REFORM_BATCH),
    ).fetchall():
        changed = [
            (form, rowid)
            for rowid, text in batch
            if text is not None and (form := index_form(text)) != text
        ]
        conn.executemany("UPDATE messages_fts SET text = ? WHERE rowid = ?", changed)
        rewritten += len(changed)
        done += len(batch)
        last = batch[-1][0]
        if done < total:
            progress(done, total)
    if rewritten > OPTIMIZE_SHARE * total:
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
    progress(total, total)
