"""The vectors of one embedder in memory, searched by cosine similarity.

Each row is kept as int8 with one float32 scale (its largest component over
127): 100,000 MiniLM rows (384 dimensions) take 39 MB instead of float32's
154, WordLlama's (256) 26 MB. A search widens the rows to float32 a block
at a time (``SCAN_BLOCK``) for a matrix-vector product, then scales each
score: as fast as a float32 scan (there is a quarter of the memory to
read), and ``bench/recall_rerank.py`` measured the same recall at every K
as with float32 rows. numpy has no integer or
half-precision matrix product, so the rows are never scanned as int8 or
float16 directly (4-15 times slower). The sqlite-vec extension was the
other candidate; Python's ``sqlite3`` on this machine (a pyenv build, like
many users') cannot load extensions at all, and a scan in memory is as fast
as its brute-force KNN. Vectors are kept as float16 in the file (half the
disk) and quantized when read. numpy is imported here only, and this module
only after the app's first frame (the store imports it when vectors are
first used).
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "SCAN_BLOCK",
    "Matrix",
    "Vector",
    "VectorIndex",
    "from_blob",
    "give_back_free_memory",
    "to_blob",
]

Matrix = npt.NDArray[np.float32]
"""Vectors as rows (unit length, float32)."""
Vector = Sequence[float] | npt.NDArray[np.float32]
"""One vector, as a list of floats or a numpy row."""

_FILE_DTYPE = np.dtype("<f2")
SCAN_BLOCK = 4096
"""Rows widened to float32 at once in a scan (6 MB of MiniLM's: stays in cache, reused)."""
_QUANTIZE_BLOCK = 2048
"""Rows of a page quantized at once: small temporaries, no large freed blocks left over."""
_MASK_SLACK = 1 << 20
"""Message ids the mask covers at least (a MB); past it and four times the rows, ids are
kept sorted apart (``_far``): rowids need not be dense (an imported or hand-edited file),
and one id of 2**40 asked for a terabyte."""


def to_blob(vector: Vector) -> bytes:
    """A vector as the file keeps it: float16, little-endian, scaled to unit length."""
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    if norm > 0:
        array = array / norm
    return array.astype(_FILE_DTYPE).tobytes()


def from_blob(blob: bytes) -> Matrix:
    """The vector of a ``to_blob`` blob, float32."""
    return np.frombuffer(blob, dtype=_FILE_DTYPE).astype(np.float32)


def normalized(vector: Vector) -> Matrix:
    """``vector`` as float32 of unit length (a zero vector stays zero)."""
    array = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


_Rows = tuple[npt.NDArray[np.int8], npt.NDArray[np.float32], npt.NDArray[np.int64]]
"""int8 rows, their scales, their message ids: grown together."""


class VectorIndex:
    """Message ids and their vectors (one embedder's), grown in place as vectors come.

    A row is ``scale * int8 row``, ``scale`` its largest component / 127.
    """

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self._space: _Rows = _empty(0, dims)
        """Rows, scales and ids, set together: a scan in a thread reads them at once."""
        self._count = 0
        self._position = np.zeros(0, dtype=np.int32)
        """Where each message id (an index here) has its row, counted from 1 (0: none): a
        scan checks every row at once (``held``) where a set took a Python lookup a row,
        and a row added after a search took the count is not held for it."""
        self._far: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] = _no_far()
        """The ids the mask does not reach (negative, or far past the rows' number), sorted,
        and their positions: one attribute, so a scan in a thread never pairs new with old."""
        self._removed = 0
        """Rows taken out (``remove``): their places stay, so ``len`` still counts them."""

    def __len__(self) -> int:
        """The rows' places, those taken out included: a scan's ``upto`` counts places."""
        return self._count

    @property
    def live(self) -> int:
        """How many message ids have their row here (``len`` less the rows taken out)."""
        return self._count - self._removed

    def __contains__(self, message_id: object) -> bool:
        if not isinstance(message_id, int):
            return False
        return bool(self.held(np.array([message_id], dtype=np.int64))[0])

    def held(
        self, message_ids: npt.NDArray[np.int64], rows: int | None = None
    ) -> npt.NDArray[np.bool_]:
        """Whether each of ``message_ids`` has its row here, as one array.

        ``rows``: among the first ``rows`` only (the count a search took, ``len``).
        """
        found = self._places(message_ids)
        return (found > 0) if rows is None else (found > 0) & (found <= rows)

    def _places(self, message_ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Where each of ``message_ids`` has its row, counted from 1 (0: none)."""
        # Taken once: ``add_blobs`` may replace them meanwhile (a thread).
        position, (far, far_position) = self._position, self._far
        inside = (message_ids >= 0) & (message_ids < len(position))
        found = np.zeros(len(message_ids), dtype=np.int64)
        found[inside] = position[message_ids[inside]]
        if len(far):
            at = np.minimum(np.searchsorted(far, message_ids), len(far) - 1)
            match = far[at] == message_ids
            found[match] = far_position[at[match]]
        return found

    def remove(self, message_ids: Iterable[int]) -> None:
        """Take the rows of ``message_ids`` out: they left the search index (the trash
        emptied, a fork's copies unindexed), so they are no longer held, nor ranked.

        Their places stay (a scan in a thread may be reading them), their scale made 0,
        which no row added has (a zero vector's is 1/127): a scan passes them over. Kept,
        their vectors stood in for rows another process added since (``live`` against the
        file's count), and MiniLM counted twice while it lacked those. Joining the index
        again, a row is added anew (``add_blobs``). Not in a thread beside ``add_blobs``:
        the store's lock keeps them apart.
        """
        ids = np.unique(np.fromiter(message_ids, dtype=np.int64))
        places = self._places(ids)
        held = places > 0
        if not held.any():
            return
        self._space[1][places[held] - 1] = 0.0
        ids = ids[held]
        position = self._position
        near = (ids >= 0) & (ids < len(position))
        position[ids[near]] = 0
        far, far_position = self._far
        if len(far):
            kept = ~np.isin(far, ids)
            self._far = (far[kept], far_position[kept])
        self._removed += int(held.sum())

    @property
    def nbytes(self) -> int:
        """Bytes the rows, scales and ids take (room reserved included)."""
        return sum(part.nbytes for part in self._space)

    @property
    def row_type(self) -> np.dtype[np.generic]:
        """How a row's components are kept in memory (int8)."""
        return self._space[0].dtype

    def reserve(self, count: int) -> None:
        """Make room for ``count`` vectors in all (loading a known number: no growth copies)."""
        if count > len(self._space[2]):
            self._grow(count)

    def add_blobs(self, rows: Iterable[tuple[int, bytes]]) -> None:
        """Add ``(message id, to_blob bytes)`` pairs; ids already held are skipped.

        Not on the event loop: quantizing a page of 20,000 rows takes ~30 ms.
        """
        given = [(i, b) for i, b in rows if len(b) == self.dims * 2]
        # One check for the page: a lookup a row tripled the CPU of reading 100,000 rows.
        held = self.held(np.array([i for i, _ in given], dtype=np.int64)).tolist()
        fresh: dict[int, bytes] = {}
        for (message_id, blob), known in zip(given, held, strict=True):
            if not known:
                fresh.setdefault(message_id, blob)
        if not fresh:
            return
        needed = self._count + len(fresh)
        if needed > len(self._space[2]):
            self._grow(max(needed, len(self._space[2]) * 5 // 4, 1024))
        rows_, scales, ids = self._space
        start = self._count
        pairs = list(fresh.items())
        for at in range(0, len(pairs), _QUANTIZE_BLOCK):
            part = pairs[at : at + _QUANTIZE_BLOCK]
            block = np.frombuffer(b"".join(b for _, b in part), dtype=_FILE_DTYPE)
            wide = block.reshape(len(part), self.dims).astype(np.float32)
            top = np.abs(wide).max(axis=1)
            top[top == 0] = 1.0
            scale = top / 127.0
            here = slice(start + at, start + at + len(part))
            rows_[here] = np.rint(wide / scale[:, None])
            scales[here] = scale
            ids[here] = [i for i, _ in part]
        reach = max(4 * needed, _MASK_SLACK)
        placed = {i: start + 1 + n for n, i in enumerate(fresh)}
        near = [i for i in fresh if 0 <= i < reach]
        far = [i for i in fresh if not 0 <= i < reach]
        if far:
            known_far, known_at = self._far
            far_ids = np.concatenate([known_far, np.array(far, dtype=np.int64)])
            far_at = np.concatenate([known_at, [placed[i] for i in far]])
            order = np.argsort(far_ids, kind="stable")
            self._far = (far_ids[order], far_at[order].astype(np.int64))
        top = max(near, default=-1) + 1
        position = self._position
        if top > len(position):  # SQLite's rowids: dense, rising, so a quarter more
            size = max(top, min(max(len(position) * 5 // 4, 1024), reach))
            position = np.zeros(size, dtype=np.int32)
            position[: len(self._position)] = self._position
        position[near] = [placed[i] for i in near]
        self._position = position  # before the count: a scan meanwhile skips what it ranks
        self._count = needed

    def _grow(self, capacity: int) -> None:
        (rows, scales, ids), count = self._space, self._count
        grown = _empty(capacity, self.dims)
        grown[0][:count], grown[1][:count], grown[2][:count] = (
            rows[:count],
            scales[:count],
            ids[:count],
        )
        self._space = grown

    def nearest(
        self,
        query: Vector,
        k: int,
        exclude: frozenset[int] = frozenset(),
        skip: VectorIndex | None = None,
        *,
        upto: int | None = None,
        skip_upto: int | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` most similar messages not in ``exclude``: ``(id, cosine)``, best first.

        ``skip``: another index whose rows are passed over (those another side
        ranks: ``fills_in_for``). ``upto``, ``skip_upto``: the rows of each, counted
        (``len``) before either side scans: a row added meanwhile is ranked by one side.
        """
        # Taken once: vectors added meanwhile (in another thread) may grow the arrays.
        (rows, scales, ids), count = self._space, self._count
        count = min(count if upto is None else upto, len(ids))
        if count == 0 or k <= 0:
            return []
        vector = normalized(query)
        if vector.shape[0] != self.dims:
            return []  # a vector of another embedder: nothing here compares
        scores = _scores(rows[:count], vector)
        scores *= scales[:count]
        # Rows passed over are masked out at once: near the meaning pass's end nearly every
        # row is skipped, and a Python check a row, widening k up to the row count, took
        # 17.5 ms of CPU a search at 99% coverage of 100,000 rows against 6.1 with none
        # skipped; masked, 5.6 (issue 26, D4).
        passed = scales[:count] == 0  # taken out (``remove``); any other row's scale is not
        if skip is not None:
            passed |= skip.held(ids[:count], skip_upto)
        if exclude:
            passed |= np.isin(ids[:count], np.fromiter(exclude, dtype=np.int64, count=len(exclude)))
        if passed.any():
            scores[passed] = -np.inf
        wanted = min(k, count - int(passed.sum()))
        if wanted <= 0:
            return []
        top = np.argpartition(-scores, wanted - 1)[:wanted]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(ids[at]), float(scores[at])) for at in top.tolist()]


def _scores(rows: npt.NDArray[np.int8], vector: Matrix) -> Matrix:
    """Each int8 row's dot product with ``vector``, widened a block at a time into one buffer."""
    scores = np.empty(len(rows), dtype=np.float32)
    wide = np.empty((min(SCAN_BLOCK, len(rows)), rows.shape[1]), dtype=np.float32)
    for start in range(0, len(rows), SCAN_BLOCK):
        block = rows[start : start + SCAN_BLOCK]
        buffer = wide[: len(block)]
        np.copyto(buffer, block, casting="unsafe")
        np.matmul(buffer, vector, out=scores[start : start + len(block)])
    return scores


def _no_far() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)


def _empty(capacity: int, dims: int) -> _Rows:
    return (
        np.zeros((capacity, dims), dtype=np.int8),
        np.zeros(capacity, dtype=np.float32),
        np.zeros(capacity, dtype=np.int64),
    )


def give_back_free_memory() -> None:
    """Return the C heap's free pages to the system (glibc only; elsewhere nothing).

    Reading 100,000 MiniLM vectors frees some 100,000 blobs and page-sized
    temporaries in the threads' heaps; glibc kept 40-60 MB of them one start
    in two (+81 MB RSS after the first search against +43), none once trimmed
    (+18-27 MB). A few milliseconds, in a thread.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # musl and others: no glibc heap to trim
        return
    trim(0)
