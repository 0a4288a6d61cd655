"""Record a stdio session's bytes with the time of each line, and read them back as a trace.

A client never has to be changed to be watched: put a relay between it and its server. ::

    log = Path("session.wire")
    client = Client(wiretap.command(log, [sys.executable, "-m", "mcpkit", "serve", "..."]))
    ...
    trace = wiretap.Trace.from_file(log)

The relay (``python -m mcpkit.wiretap LOG -- COMMAND...``) starts the server, passes both
streams through untouched, and appends one record per line that passed::

    1764590000.123456 > {"jsonrpc":"2.0","id":1,"method":"initialize",...}\\n
    1764590000.125001 < {"jsonrpc":"2.0","id":1,"result":{...}}\\n

(``>`` towards the server, ``<`` from it). A :class:`Trace` turns the records into events
(direction, kind, method, id, size, latency of each response) and exports them as a Mermaid
sequence diagram or as the literal bytes. Nothing here imports ipywidgets: the wire inspector
in :mod:`mcpkit.widgets` is a view of a :class:`Trace`.
"""

from __future__ import annotations

import html
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["Event", "Trace", "command", "relay"]

TO_SERVER, FROM_SERVER = "C->S", "S->C"
_MARKS = {b">": TO_SERVER, b"<": FROM_SERVER}


def command(log: str | Path, server_command: Sequence[str]) -> list[str]:
    """``server_command`` wrapped in the relay that records its traffic into ``log``."""
    return [sys.executable, "-m", "mcpkit.wiretap", str(log), "--", *server_command]


def relay(log_path: str | Path, server_command: Sequence[str], stamp: bool = True) -> int:
    """Run ``server_command``, pass stdin and stdout through, record each line that passes.

    Standard error is inherited: the client reads the server's stderr as before. Without
    ``stamp`` a record is only ``> line`` (what ``mcpkit trace`` prints).
    """
    child = subprocess.Popen(list(server_command), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lock = threading.Lock()
    with open(log_path, "ab") as log:
        def pump(source: BinaryIO, sink: BinaryIO, mark: bytes) -> None:
            for line in iter(source.readline, b""):
                with lock:  # one record at a time, stamped when the line arrived
                    if stamp:
                        log.write(b"%.6f " % time.time())
                    log.write(b"%s %s" % (mark, line))
                    if not line.endswith(b"\n"):
                        log.write(b"\n")
                    log.flush()
                try:
                    sink.write(line)
                    sink.flush()
                except (BrokenPipeError, ValueError):
                    break
            try:
                sink.close()
            except OSError:
                pass

        assert child.stdin is not None and child.stdout is not None
        upstream = threading.Thread(target=pump, args=(sys.stdin.buffer, child.stdin, b">"),
                                    daemon=True)
        upstream.start()
        pump(child.stdout, sys.stdout.buffer, b"<")
        code = child.wait()
        upstream.join(1)
    return code


@dataclass(frozen=True)
class Event:
    """One line that crossed the pipe."""

    index: int
    time: float  # seconds since the first line of the trace
    direction: str  # "C->S" or "S->C"
    data: bytes  # the line exactly as it travelled, newline included
    message: Any  # the decoded JSON, or None if the line was not JSON
    kind: str  # request | notification | result | error | invalid
    method: str | None  # for a response: the method of the request it answers
    id: Any
    latency: float | None = None  # for a response: seconds since its request

    @property
    def size(self) -> int:
        return len(self.data)


def _kind(message: Any) -> str:
    if not isinstance(message, dict):
        return "invalid"
    if "method" in message:
        return "request" if "id" in message else "notification"
    if "result" in message:
        return "result"
    return "error" if "error" in message else "invalid"


class Trace:
    """The events of one session, in the order they crossed the pipe."""

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self.events = list(events)

    @classmethod
    def from_bytes(cls, records: bytes) -> Trace:
        events: list[Event] = []
        asked: dict[tuple[str, str], Event] = {}  # (direction, json id) -> the request
        start: float | None = None
        for record in records.splitlines(keepends=True):
            if not record.endswith(b"\n"):
                break  # the last record, read while the relay was still writing it
            stamp, _space, rest = record.partition(b" ")
            mark, _space, data = rest.partition(b" ")
            if mark not in _MARKS:
                continue
            moment = float(stamp)
            start = moment if start is None else start
            try:
                message = json.loads(data)
            except ValueError:
                message = None
            kind = _kind(message)
            key = json.dumps(message.get("id")) if isinstance(message, dict) else ""
            method = message.get("method") if isinstance(message, dict) else None
            latency = None
            direction = _MARKS[mark]
            if kind in ("result", "error"):  # answered in the other direction
                other = FROM_SERVER if direction == TO_SERVER else TO_SERVER
                request = asked.get((other, key))
                if request is not None:
                    method = request.method
                    latency = moment - start - request.time
            event = Event(len(events), moment - start, direction, data, message, kind, method,
                          message.get("id") if isinstance(message, dict) else None, latency)
            if kind == "request":
                asked[(direction, key)] = event
            events.append(event)
        return cls(events)

    @classmethod
    def from_file(cls, path: str | Path) -> Trace:
        path = Path(path)
        return cls.from_bytes(path.read_bytes() if path.exists() else b"")

    def __len__(self) -> int:
        return len(self.events)

    def filter(self, direction: str | None = None, method: str | None = None,
               kinds: Iterable[str] | None = None) -> Trace:
        """The events going ``direction``, whose method contains ``method``, of ``kinds``."""
        wanted = set(kinds) if kinds is not None else None
        return Trace(e for e in self.events
                     if (direction is None or e.direction == direction)
                     and (not method or method in (e.method or ""))
                     and (wanted is None or e.kind in wanted))

    def to_bytes(self, direction: str | None = None) -> bytes:
        """The literal bytes: those that went ``direction``, or all, each line marked with
        ``> `` (to the server) or ``< `` (from it)."""
        if direction is not None:
            return b"".join(e.data for e in self.events if e.direction == direction)
        return b"".join((b"> " if e.direction == TO_SERVER else b"< ") + e.data
                        for e in self.events)

    def to_mermaid(self, latency: bool = False) -> str:
        """A Mermaid sequence diagram, one arrow per message (responses dashed).

        Latencies vary from run to run, so they are left out unless asked for.
        """
        lines = ["sequenceDiagram", "    participant C as Client", "    participant S as Server"]
        for e in self.events:
            arrow = "->>" if e.kind in ("request", "notification") else "-->>"
            ends = "C" + arrow + "S" if e.direction == TO_SERVER else "S" + arrow + "C"
            label = _label(e)
            if latency and e.latency is not None:
                label += f", {e.latency * 1000:.1f} ms"
            lines.append(f"    {ends}: {label.replace(';', ',')}")
        return "\n".join(lines)

    def rows(self) -> list[tuple[str, ...]]:
        """(#, direction, kind, method, id, size, latency) per event, as text."""
        return [(str(e.index), "→" if e.direction == TO_SERVER else "←", e.kind,
                 e.method or "-", "-" if e.id is None else json.dumps(e.id), f"{e.size} B",
                 "-" if e.latency is None else f"{e.latency * 1000:.1f} ms")
                for e in self.events]

    def table(self, latency: bool = True,
              headers: Sequence[str] = ("#", "dir", "kind", "method", "id", "size", "latency")
              ) -> str:
        rows = [tuple(headers), *self.rows()]
        if not latency:
            rows = [r[:-1] for r in rows]
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                         for r in rows)

    def __repr__(self) -> str:  # no latencies: the text of a saved notebook stays the same
        return f"Trace: {len(self.events)} messages\n{self.table(latency=False)}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        return timeline_html(self, latency=False)


def _label(e: Event) -> str:
    ident = "" if e.id is None else f" #{json.dumps(e.id)}"
    if e.kind in ("request", "notification"):
        return f"{e.method}{ident}"
    if e.kind in ("result", "error"):
        return f"{e.kind} {e.method or ''}{ident}".replace("  ", " ")
    return f"invalid line ({e.size} bytes)"


def timeline_html(trace: Trace, latency: bool = True,
                  headers: Sequence[str] = ("#", "", "kind", "method", "id", "size",
                                            "latency")) -> str:
    """The trace as an HTML table; each row's JSON opens below it (a ``<details>``)."""
    cells = []
    for e, row in zip(trace.events, trace.rows(), strict=True):
        shown = row if latency else row[:-1]
        body = (json.dumps(e.message, indent=2, ensure_ascii=False) if e.message is not None
                else e.data.decode("utf-8", "backslashreplace"))
        colour = {"error": "#fde2e2", "request": "#e8f0fe", "notification": "#f1f3f4"}.get(
            e.kind, "#e6f4ea")
        summary = "".join(f"<td style='padding:0 .6em'>{html.escape(c)}</td>" for c in shown)
        cells.append(
            f"<tr class='mcpkit-event mcpkit-{e.kind}' style='background:{colour}'>{summary}</tr>"
            f"<tr><td colspan='{len(shown)}'><details><summary>JSON</summary>"
            f"<pre style='margin:0'>{html.escape(body)}</pre></details></td></tr>")
    head = "".join(f"<th style='text-align:left;padding:0 .6em'>{html.escape(h)}</th>"
                   for h in (headers if latency else headers[:-1]))
    return (f"<table class='mcpkit-trace' style='font-family:monospace;font-size:90%'>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(cells)}</tbody></table>")


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[2] == "--":
        sys.exit(relay(sys.argv[1], sys.argv[3:]))
    sys.exit("usage: python -m mcpkit.wiretap LOG -- COMMAND...")
