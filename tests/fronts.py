"""Both client fronts behind one blocking interface, so one test body checks both.

``BlockingAsync`` runs an :class:`~mcpkit.aclient.AsyncClient` on an event loop of its own
(a thread, started and joined by it) and turns each awaitable method into a blocking call
with ``asyncio.run_coroutine_threadsafe``. Everything else (``era``, ``stderr_tail()``,
``cached_list()``) is the AsyncClient's own, read as is.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from typing import Any

from mcpkit.aclient import AsyncClient
from mcpkit.client import Client

WAIT = 60.0  # no call in these tests may take longer: a hang fails, it does not block


class BlockingAsync:
    def __init__(self, *args: Any, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="test-loop")
        self._thread.start()
        self._stopped = False
        try:
            self.client: AsyncClient = self._run(_make(args, options))
        except BaseException:
            self._stop()
            raise

    def _run(self, coroutine: Any) -> Any:
        if self._stopped:  # closed: the client only has errors left to give
            return asyncio.run(coroutine)
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(WAIT)

    def connect(self) -> BlockingAsync:
        try:
            self._run(self.client.connect())
        except BaseException:
            self._stop()
            raise
        return self

    def close(self) -> None:
        if not self._stopped:
            try:
                self._run(self.client.close())
                self._run(_settle())  # calls of other threads finish on this loop
            finally:
                self._stop()

    def _stop(self) -> None:
        self._stopped = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(WAIT)
        self._loop.close()

    def __enter__(self) -> BlockingAsync:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.client, name)
        if inspect.iscoroutinefunction(attribute):
            return lambda *args, **kwargs: self._run(attribute(*args, **kwargs))
        return attribute


async def _settle() -> None:
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    if others:
        await asyncio.wait(others, timeout=5)


async def _make(args: tuple[Any, ...], options: dict[str, Any]) -> AsyncClient:
    return AsyncClient(*args, **options)  # made on its loop, as an asyncio program would


def finish(client: Any, value: Any) -> Any:
    """What a method of either front gave, awaited on the client's loop if it must be
    (``sub.close()`` of an AsyncClient's subscription is a coroutine)."""
    if inspect.isawaitable(value):
        return client._run(value)
    return value


def make_client(front: str, *args: Any, **options: Any) -> Any:
    """A ``Client``, or an ``AsyncClient`` behind :class:`BlockingAsync`."""
    if front == "blocking":
        return Client(*args, **options)
    return BlockingAsync(*args, **options)
