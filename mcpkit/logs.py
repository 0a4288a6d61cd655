"""Loggers made on first use.

Importing :mod:`logging` costs a Python process about 4 ms, a quarter of a bare
interpreter's start, and a server that works as it should never logs. So the modules a
server process loads name their logger here, and :mod:`logging` is imported the first
time one of them is used. Everything else behaves as ``logging.getLogger(name)`` does.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LazyLogger"]


class LazyLogger:
    """Stands for ``logging.getLogger(name)``, which it makes on first use."""

    __slots__ = ("name", "_logger")

    def __init__(self, name: str) -> None:
        self.name = name
        self._logger: Any = None

    def __getattr__(self, attribute: str) -> Any:  # only for what the slots do not hold
        if self._logger is None:
            import logging

            self._logger = logging.getLogger(self.name)
        return getattr(self._logger, attribute)

    def __repr__(self) -> str:
        return f"<LazyLogger {self.name}>"
