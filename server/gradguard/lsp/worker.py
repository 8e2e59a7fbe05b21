"""The analysis thread: one job at a time, the newest first, stale work dropped unstarted.

Each key (a document or notebook) has at most one waiting job: a newer one replaces it, and
the replaced job's future resolves to None. The most recently submitted key runs first, so the
document being typed in is not queued behind the two hundred opened at start-up. A running job
is stopped by its own ``cancel`` callable (the engine looks at it every thousand or so abstract
statements), not by this queue.
"""
from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable, Optional


def _settle(future: asyncio.Future, result: Any = None, error: Optional[BaseException] = None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class Worker:
    def __init__(self, name: str):
        self._cond = threading.Condition()
        self._waiting: dict[str, tuple[int, Callable[[], Any], asyncio.Future, asyncio.AbstractEventLoop]] = {}
        self._seq = 0
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def submit(self, key: str, job: Callable[[], Any]) -> asyncio.Future:
        """Run ``job()`` on the thread (call from the event loop); the future holds its result."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._cond:
            if self._closed:
                future.set_result(None)
                return future
            replaced = self._waiting.pop(key, None)
            self._seq += 1
            self._waiting[key] = (self._seq, job, future, loop)
            self._cond.notify()
        if replaced is not None:
            _settle(replaced[2], None)
        return future

    def drop(self, key: str) -> None:
        """Forget ``key``'s waiting job (its document closed)."""
        with self._cond:
            replaced = self._waiting.pop(key, None)
        if replaced is not None:
            _settle(replaced[2], None)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            dropped = list(self._waiting.values())
            self._waiting.clear()
            self._cond.notify()
        for _, _, future, loop in dropped:
            loop.call_soon_threadsafe(_settle, future, None)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._waiting and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                key = max(self._waiting, key=lambda k: self._waiting[k][0])
                _, job, future, loop = self._waiting.pop(key)
            try:
                result, error = job(), None
            except BaseException as exc:  # delivered to whoever awaits the job
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:  # the event loop is gone: the server is stopping
                return
            del job, result, error, future
