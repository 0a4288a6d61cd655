"""Resumable SSE streams (2025-11-25): event ids, and the events a client may still ask for.

A legacy server gives every event of an SSE response an ``id``. When the stream breaks (or
the server closes it on purpose, to free the connection while a call runs on), the client
reconnects with GET and ``Last-Event-ID: <the last id it saw>``, and the server sends what
that stream said after it, then goes on with the stream's live events. To do that the
server must remember each stream's recent events: this module is that memory, and nothing
else (no I/O, no clock).

Bounded, because nothing a client does may grow it without limit: each stream keeps its
last ``per_stream`` events (a ring), and the whole store at most ``max_bytes`` of them in
at most ``max_streams`` streams, the streams written least recently dropped first. A
``Last-Event-ID`` that points before what is kept (or at a stream dropped, or another
owner's) is :class:`UnknownEvent`: the client gets a clear error instead of a silent gap.

An id is ``<stream>.<n>``: the stream's number in this store, then the event's. Streams
belong to an owner (a session id), and only their owner can resume them.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, deque
from dataclasses import dataclass

DEFAULT_PER_STREAM = 256
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_STREAMS = 10_000


class UnknownEvent(LookupError):
    """A ``Last-Event-ID`` this store cannot resume from (unknown, or no longer kept)."""


@dataclass
class _Stream:
    owner: str
    label: str
    events: deque[tuple[int, bytes]]
    next_seq: int = 0
    finished: bool = False
    size: int = 0
    oldest_gone: int = -1  # the highest sequence number the ring has dropped


class EventStore:
    """The recent events of SSE streams, by stream; see the module docstring."""

    def __init__(self, per_stream: int = DEFAULT_PER_STREAM,
                 max_bytes: int = DEFAULT_MAX_BYTES,
                 max_streams: int = DEFAULT_MAX_STREAMS) -> None:
        self.per_stream = per_stream
        self.max_bytes = max_bytes
        self.max_streams = max_streams
        self.size = 0  # bytes kept, over every stream
        self._streams: OrderedDict[str, _Stream] = OrderedDict()  # least recently written first
        self._numbers = itertools.count(1)

    def __len__(self) -> int:
        return len(self._streams)

    def open(self, owner: str, label: str = "") -> str:
        """A new stream; ``label`` says what it is to the caller (say "call" or "get")."""
        stream_id = f"s{next(self._numbers)}"
        self._streams[stream_id] = _Stream(owner, label, deque())
        self._shrink(keep=stream_id)
        return stream_id

    def alive(self, stream_id: str) -> bool:
        return stream_id in self._streams

    def label(self, stream_id: str) -> str:
        return self._streams[stream_id].label

    def append(self, stream_id: str, payload: bytes) -> str:
        """Keep one event's bytes (everything but its ``id:`` line); its new id.

        Raises KeyError if the stream was dropped (open a new one)."""
        stream = self._streams[stream_id]
        seq = stream.next_seq
        stream.next_seq += 1
        if len(stream.events) == self.per_stream:
            gone, payload_gone = stream.events.popleft()
            stream.oldest_gone = gone
            stream.size -= len(payload_gone)
            self.size -= len(payload_gone)
        stream.events.append((seq, payload))
        stream.size += len(payload)
        self.size += len(payload)
        self._streams.move_to_end(stream_id)
        self._shrink(keep=stream_id)
        return f"{stream_id}.{seq}"

    def finish(self, stream_id: str) -> None:
        """The stream said its last event (a call's answer): a resume ends after it."""
        if stream_id in self._streams:
            self._streams[stream_id].finished = True

    def finished(self, stream_id: str) -> bool:
        stream = self._streams.get(stream_id)
        return stream is None or stream.finished

    def forget(self, owner: str) -> None:
        """Drop every stream of an owner (its session ended)."""
        for stream_id in [s for s, st in self._streams.items() if st.owner == owner]:
            self.size -= self._streams.pop(stream_id).size

    def after(self, event_id: str, owner: str) -> tuple[str, list[tuple[str, bytes]]]:
        """The stream ``event_id`` belongs to, and its events after that one (id, bytes)."""
        stream_id, _, number = event_id.rpartition(".")
        stream = self._streams.get(stream_id)
        if stream is None or stream.owner != owner or not number.isdigit():
            raise UnknownEvent(f"no stream of this session has the event {event_id!r} (or "
                               "it is no longer kept)")
        seq = int(number)
        if seq >= stream.next_seq:
            raise UnknownEvent(f"the stream has sent no event {event_id!r} yet")
        if seq < stream.oldest_gone:
            raise UnknownEvent(f"the events after {event_id!r} are no longer kept (a stream "
                               f"keeps its last {self.per_stream})")
        return stream_id, [(f"{stream_id}.{n}", data) for n, data in stream.events if n > seq]

    def _shrink(self, keep: str) -> None:
        """Drop the streams written least recently until the store fits its bounds."""
        while (self.size > self.max_bytes or len(self._streams) > self.max_streams) \
                and len(self._streams) > 1:
            oldest = next(iter(self._streams))
            if oldest == keep:
                break
            self.size -= self._streams.pop(oldest).size
