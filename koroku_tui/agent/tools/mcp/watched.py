"""The SDK's read stream, watched: a server's end is noticed even when nothing is asked of it.

The client session reads the transport's stream until it ends (a stdio
server's stdout closed: it died). :class:`WatchedStream` passes every item
on and sets an event when the stream ends, which the task holding the server
waits on together with its stop.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar

import anyio

__all__ = ["WatchedStream", "first_error"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class _Readable(Protocol[T_co]):
    async def receive(self) -> T_co: ...
    async def aclose(self) -> None: ...


class WatchedStream(Generic[T]):
    """A read stream that says when it ended (see the module docstring)."""

    def __init__(self, inner: _Readable[T]) -> None:
        self._inner = inner
        self.ended = anyio.Event()

    @property
    def last_context(self) -> Any:
        """The sender's context, as the SDK's own streams carry it (None when they do not)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> T:
        """The next item; sets :attr:`ended` when there is none any more."""
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.ended.set()
            raise

    async def aclose(self) -> None:
        self.ended.set()
        await self._inner.aclose()

    def __aiter__(self) -> WatchedStream[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> WatchedStream[T]:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def wait_for_end_or(self, stop: anyio.Event) -> None:
        """Return when the stream ends or ``stop`` is set, whichever comes first."""
        async with anyio.create_task_group() as group:

            async def wait(event: anyio.Event) -> None:
                await event.wait()
                group.cancel_scope.cancel()

            group.start_soon(wait, self.ended)
            group.start_soon(wait, stop)


def first_error(exc: BaseException) -> BaseException:
    """The first error inside ``exc`` (anyio's task groups wrap errors in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
