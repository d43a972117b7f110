"""The vectors of one embedder in memory, searched by cosine similarity.

A plain float32 matrix scanned with one matrix-vector product: 100,000
messages of 256 dimensions take ~100 MB and ~20 ms a search here. The
sqlite-vec extension was the other candidate; Python's ``sqlite3`` on this
machine (a pyenv build, like many users') cannot load extensions at all,
and a scan of the same matrix in memory is as fast as its brute-force KNN.
Vectors are kept as float16 in the file (half the disk) and widened once,
when loaded. numpy is imported here only, and this module only after the
app's first frame (the store imports it when vectors are first used).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["Matrix", "Vector", "VectorIndex", "from_blob", "to_blob"]

Matrix = npt.NDArray[np.float32]
"""Vectors as rows (unit length, float32)."""
Vector = Sequence[float] | npt.NDArray[np.float32]
"""One vector, as a list of floats or a numpy row."""

_FILE_DTYPE = np.dtype("<f2")


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


class VectorIndex:
    """Message ids and their vectors (one embedder's), grown in place as vectors come."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self._ids = np.zeros(0, dtype=np.int64)
        self._rows: Matrix = np.zeros((0, dims), dtype=np.float32)
        self._count = 0
        self._known: set[int] = set()

    def __len__(self) -> int:
        return self._count

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._known

    def reserve(self, count: int) -> None:
        """Make room for ``count`` vectors in all (loading a known number: no growth copies)."""
        if count > len(self._ids):
            self._grow(count)

    def add_blobs(self, rows: Iterable[tuple[int, bytes]]) -> None:
        """Add ``(message id, to_blob bytes)`` pairs; ids already held are skipped."""
        fresh = [(i, b) for i, b in rows if i not in self._known and len(b) == self.dims * 2]
        if not fresh:
            return
        block = np.frombuffer(b"".join(b for _, b in fresh), dtype=_FILE_DTYPE)
        self._append([i for i, _ in fresh], block.reshape(len(fresh), self.dims))

    def _append(self, ids: list[int], block: npt.NDArray[np.generic]) -> None:
        needed = self._count + len(ids)
        if needed > len(self._ids):
            self._grow(max(needed, len(self._ids) * 5 // 4, 1024))
        self._rows[self._count : needed] = block
        self._ids[self._count : needed] = ids
        self._count = needed
        self._known.update(ids)

    def _grow(self, capacity: int) -> None:
        rows = np.zeros((capacity, self.dims), dtype=np.float32)
        rows[: self._count] = self._rows[: self._count]
        grown = np.zeros(capacity, dtype=np.int64)
        grown[: self._count] = self._ids[: self._count]
        self._rows, self._ids = rows, grown

    def nearest(
        self, query: Vector, k: int, exclude: frozenset[int] = frozenset()
    ) -> list[tuple[int, float]]:
        """The ``k`` most similar messages not in ``exclude``: ``(id, cosine)``, best first."""
        # Taken once: vectors added meanwhile (on the event loop) may grow the arrays.
        rows, ids, count = self._rows, self._ids, self._count
        if count == 0 or k <= 0:
            return []
        vector = normalized(query)
        if vector.shape[0] != self.dims:
            return []  # a vector of another embedder: nothing here compares
        scores = rows[:count] @ vector
        wanted = min(count, k + len(exclude))
        top = np.argpartition(-scores, wanted - 1)[:wanted]
        top = top[np.argsort(-scores[top], kind="stable")]
        found: list[tuple[int, float]] = []
        for position in top.tolist():
            message_id = int(ids[position])
            if message_id not in exclude:
                found.append((message_id, float(scores[position])))
                if len(found) == k:
                    break
        return found
