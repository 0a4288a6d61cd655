"""A stdio server as a child process: spawn it, keep its stderr drained, shut it down.

Theory of operation
-------------------
A stdio server is a child process with three pipes. stdin and stdout carry protocol
messages and belong to the session that talks over them (:mod:`mcpkit.client`); this
module owns the process itself and the third pipe.

- **stderr is drained all the time**, by one thread per process. A pipe holds 64 KiB on
  Linux; a child that writes more to a pipe nobody reads blocks inside ``write()`` for
  ever, so a server that logs verbosely would hang in the middle of a call. The drain
  keeps only the last lines (bounded in number and in length) for error messages.
- **The child gets its own session** (``start_new_session``), hence its own process
  group. Ctrl-C in a terminal, or "interrupt kernel" in Jupyter, then stops the host's
  own code and not every server it runs; and escalation can signal the whole group,
  which also reaches grandchildren that inherited the pipes (``npx``, ``uv run`` and
  shell wrappers all start one).
- **Writes are bounded.** A child that stops reading its stdin fills the pipe, and a
  blocking ``write()`` would then wait for ever (and every writer queued behind it). So
  stdin is non-blocking: :meth:`ServerProcess.write` writes what fits, waits in
  ``poll()`` for room until its deadline, and raises :class:`StdinTimeout`. A message
  written only in part cannot be finished or taken back: the next bytes would be read as
  its rest. So stdin is then given up (later writes raise BrokenPipeError). Messages of at
  most ``PIPE_BUF`` (4 KiB) are written whole or not at all, so small ones never tear.
- **Shutdown follows the spec**: close stdin (a well-behaved server exits on end of
  input), wait; send SIGTERM, wait; send SIGKILL, wait. Every wait is bounded. Waiting
  is what reaps the child, so none is left as a zombie. Then the drain thread is joined
  and the read end of stderr closed. The read end of stdout is closed by :meth:`close`,
  which the session calls once its reader thread has stopped: closing a descriptor that
  another thread is blocked reading is a race, not a way to wake it up.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence

log = logging.getLogger("mcpkit.process")

READ_SIZE = 64 * 1024
DEFAULT_STDERR_LINES = 200
DEFAULT_STDERR_LINE_BYTES = 2000


class SpawnError(OSError):
    """The server's process could not be started (command not found, bad cwd, ...)."""


class StdinTimeout(TimeoutError):
    """A write to the child's stdin did not finish in time: the child stopped reading.

    ``written`` of ``size`` bytes went into the pipe (``queued``: none, the write waited
    behind another writer). A write cut short after some bytes leaves half a message in
    the pipe, so stdin is then given up: later writes raise BrokenPipeError.
    """

    def __init__(self, server: str, written: int, size: int, timeout: float,
                 queued: bool = False) -> None:
        if queued:
            how = "waited behind another message that the server is not reading"
        else:
            how = f"wrote {written} of {size} bytes"
        super().__init__(f"server {server!r} stopped reading its stdin: {how} in "
                         f"{timeout:g} s")
        self.server = server
        self.written = written
        self.size = size
        self.timeout = timeout
        self.queued = queued

    @property
    def torn(self) -> bool:
        """Part of the message was written: the stream is unusable."""
        return 0 < self.written < self.size


def describe_exit(returncode: int | None) -> str:
    """``exit code 3``, ``killed by SIGKILL``, or ``still running``."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def child_env(env: Mapping[str, str], inherit_env: bool) -> dict[str, str] | None:
    """The environment a server starts with: ours plus ``env`` (None: just ours)."""
    if not env and inherit_env:
        return None
    merged = dict(os.environ) if inherit_env else {}
    merged.update({k: str(v) for k, v in env.items()})
    return merged


def spawn_error(name: str, command: str, cwd: str | os.PathLike[str] | None,
                exc: OSError) -> SpawnError:
    """Why a server could not start, in words that say what to fix."""
    if isinstance(exc, FileNotFoundError):
        if cwd is not None and not os.path.isdir(cwd):
            return SpawnError(f"cannot start server {name!r}: "
                              f"working directory {str(cwd)!r} does not exist")
        return SpawnError(f"cannot start server {name!r}: command {command!r} "
                          "not found (is it installed and on PATH?)")
    return SpawnError(f"cannot start server {name!r}: {exc}")


class ServerProcess:
    """One server process: stdin/stdout for the protocol, stderr drained into a tail.

    ``env`` is added to this process's environment (set ``inherit_env=False`` to pass
    only ``env``). ``on_stderr`` is called with each stderr line, on the drain thread: it
    must be quick, since the drain does not read while it runs.
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        inherit_env: bool = True,
        cwd: str | os.PathLike[str] | None = None,
        name: str | None = None,
        stderr_lines: int = DEFAULT_STDERR_LINES,
        stderr_line_bytes: int = DEFAULT_STDERR_LINE_BYTES,
        on_stderr: Callable[[str], None] | None = None,
    ) -> None:
        self.command = command
        self.args = list(args)
        self.env = dict(env or {})
        self.inherit_env = inherit_env
        self.cwd = cwd
        self.name = name or os.path.basename(command)
        self.on_stderr = on_stderr
        self.stderr_bytes = 0  # total bytes the child wrote to stderr
        self._line_limit = stderr_line_bytes
        self._tail: deque[str] = deque(maxlen=stderr_lines)
        self._tail_lock = threading.Lock()
        self._popen: subprocess.Popen[bytes] | None = None
        self._drain: threading.Thread | None = None
        self._stdin_fd = -1
        self._stdout_fd = -1
        # Held for each whole message written, and to close stdin: closing a descriptor
        # another thread is writing to could hand its number to an unrelated file first.
        self._stdin_lock = threading.Lock()
        self._stdin_gone: str | None = None  # why stdin can no longer be written, if so
        self._shutdown_lock = threading.Lock()
        self._shut_down = False
        self._closed = False

    # -- starting ------------------------------------------------------------------------

    def start(self) -> ServerProcess:
        if self._popen is not None:
            raise RuntimeError("the process was already started")
        env = child_env(self.env, self.inherit_env)
        try:
            self._popen = subprocess.Popen(
                [self.command, *self.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                env=env,
                cwd=self.cwd,
                start_new_session=os.name != "nt",
            )
        except OSError as exc:
            raise spawn_error(self.name, self.command, self.cwd, exc) from exc
        assert self._popen.stdin and self._popen.stdout and self._popen.stderr
        self._stdin_fd = self._popen.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)  # see write()
        self._stdout_fd = self._popen.stdout.fileno()
        self._drain = threading.Thread(
            target=self._drain_stderr, name=f"mcpkit-stderr-{self.name}", daemon=True)
        self._drain.start()
        return self

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen else None

    @property
    def returncode(self) -> int | None:
        """The exit status once the child has exited (and been reaped), else None."""
        return self._popen.poll() if self._popen else None

    # -- the protocol pipes --------------------------------------------------------------

    def write(self, data: bytes, timeout: float | None = None) -> float:
        """Write all of ``data`` (one whole message) to the child's stdin, within
        ``timeout`` seconds (None: no limit), waiting for other writers included.

        Raises :class:`StdinTimeout` when the child does not read in time, and
        :class:`BrokenPipeError` once stdin is closed, the child has gone, or an earlier
        write was cut short (see :class:`StdinTimeout`). Returns the seconds it had to wait
        (0.0, without reading the clock, when it did not).
        """
        # The descriptor is non-blocking, so a write takes what the pipe has room for and
        # returns: the common case (a message smaller than the free space) is one
        # os.write, as fast as a blocking one. Only a full pipe waits, in poll(), and only
        # until the deadline. A writer thread with a queue would bound waits as well, but
        # would add a thread hop to every message, and the hot path is one write.
        if timeout is not None and timeout < 0:
            timeout = 0
        lock = self._stdin_lock
        start = None  # the clock is read only if something has to wait
        if not lock.acquire(False):  # (positional: measurably cheaper on this path)
            start = time.monotonic()
            if not lock.acquire(timeout=-1 if timeout is None else timeout):
                raise StdinTimeout(self.name, 0, len(data), timeout or 0, queued=True)
        try:
            fd = self._stdin_fd
            if fd < 0:
                raise BrokenPipeError(self._stdin_gone or "the server's stdin is closed")
            try:
                written = os.write(fd, data)
            except BlockingIOError:
                written = 0
            if written < len(data):
                if start is None:
                    start = time.monotonic()
                deadline = None if timeout is None else start + timeout
                self._write_rest(fd, data, written, deadline, timeout)
        finally:
            lock.release()
        return 0.0 if start is None else time.monotonic() - start

    def _write_rest(self, fd: int, data: bytes, written: int, deadline: float | None,
                    timeout: float | None) -> None:
        """The slow path: the pipe is full, wait for the child to read (lock held)."""
        view = memoryview(data)
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        try:
            while written < len(data):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise StdinTimeout(self.name, written, len(data), timeout or 0)
                # POLLERR/POLLHUP (the child closed its end) also wake poll: os.write
                # then raises BrokenPipeError.
                poller.poll(None if left is None else max(1, int(left * 1000 + 0.999)))
                try:
                    written += os.write(fd, view[written:])
                except BlockingIOError:
                    pass
        except BaseException:  # the deadline, a dead child, or Ctrl-C
            if written:
                # Half a message is in the pipe: whatever is written next would be read
                # as its continuation. The stream is unusable from here on.
                self._stdin_gone = (f"an earlier message was cut short after {written} of "
                                    f"{len(data)} bytes (the server stopped reading its "
                                    "stdin), so the stream is unusable")
                self._stdin_fd = -1
            raise

    @property
    def stdin_gone(self) -> str | None:
        """Why stdin can no longer be written to (a write was cut short), else None."""
        return self._stdin_gone

    def read(self) -> bytes:
        """Block for the next chunk of the child's stdout; ``b""`` at end of stream."""
        try:
            return os.read(self._stdout_fd, READ_SIZE)
        except OSError:
            return b""

    # -- stderr --------------------------------------------------------------------------

    def stderr_tail(self, lines: int | None = None) -> list[str]:
        """The last lines the child wrote to stderr (all that are kept, or the last n)."""
        with self._tail_lock:
            tail = list(self._tail)
        return tail if lines is None else tail[-lines:]

    def wait_stderr(self, timeout: float) -> bool:
        """Wait until the child's stderr reached end of stream (all its lines are kept)."""
        if self._drain is None:
            return True
        self._drain.join(timeout)
        return not self._drain.is_alive()

    def _drain_stderr(self) -> None:
        assert self._popen and self._popen.stderr
        fd = self._popen.stderr.fileno()
        limit = self._line_limit
        partial = b""
        while True:
            try:
                chunk = os.read(fd, READ_SIZE)
            except OSError:
                break
            if not chunk:
                break
            self.stderr_bytes += len(chunk)
            lines = chunk.split(b"\n")
            lines[0] = partial + lines[0]
            partial = lines.pop()
            if len(partial) > limit:
                # A "line" with no end in sight: keep what fits, as if it had ended.
                lines.append(partial)
                partial = b""
            self._keep(lines)
        if partial:
            self._keep([partial])

    def _keep(self, raw_lines: list[bytes]) -> None:
        limit = self._line_limit
        if self.on_stderr is None:
            # Only the last lines can survive in the tail: skip decoding the rest.
            raw_lines = raw_lines[-(self._tail.maxlen or len(raw_lines)):]
        decoded = []
        for raw in raw_lines:
            line = raw[:limit].decode("utf-8", "replace").rstrip("\r")
            if len(raw) > limit:
                line += " [...]"
            decoded.append(line)
        with self._tail_lock:
            self._tail.extend(decoded)
        if self.on_stderr is not None:
            for line in decoded:
                try:
                    self.on_stderr(line)
                except Exception:
                    log.exception("on_stderr callback failed")

    # -- stopping ------------------------------------------------------------------------

    def wait(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for the child to exit; its status, or None."""
        if self._popen is None:
            return None
        try:
            return self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def terminate(self) -> None:
        """SIGTERM to the child's whole process group (it leads its own group)."""
        self._signal(hard=False)

    def kill(self) -> None:
        """SIGKILL to the child's whole process group."""
        self._signal(hard=True)

    def _signal(self, hard: bool) -> None:
        if self._popen is None:
            return
        if os.name == "nt":  # no process groups or signals: TerminateProcess either way
            self._popen.kill()
            return
        try:
            os.killpg(self._popen.pid, signal.SIGKILL if hard else signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass  # the group is gone already

    def close_stdin(self, timeout: float = -1) -> bool:
        """Close the child's stdin (it should then exit). False if a write held the pipe
        for longer than ``timeout`` (a child that stopped reading): kill it instead."""
        if not self._stdin_lock.acquire(timeout=timeout):
            return False
        try:
            self._stdin_fd = -1
            if self._popen and self._popen.stdin and not self._popen.stdin.closed:
                try:
                    self._popen.stdin.close()
                except OSError:
                    pass
        finally:
            self._stdin_lock.release()
        return True

    def shutdown(
        self, grace: float = 2.0, term_timeout: float = 2.0, kill_timeout: float = 2.0
    ) -> int | None:
        """Stop the child as the spec says and reap it; its exit status. Idempotent.

        Close stdin and wait ``grace`` seconds; then SIGTERM and wait ``term_timeout``;
        then SIGKILL and wait ``kill_timeout``.
        """
        if self._popen is None:
            return None
        with self._shutdown_lock:
            if not self._shut_down:
                self._shut_down = True
                self._stop(grace, term_timeout, kill_timeout)
        return self._popen.returncode

    def _stop(self, grace: float, term_timeout: float, kill_timeout: float) -> None:
        if self._stdin_gone is None and self.close_stdin(timeout=grace):
            code = self.wait(grace)
        else:  # it would not see the end of its input: no point waiting for its exit
            log.info("server %s is not reading its stdin: skipping the grace period", self.name)
            code = self.returncode
        if code is None:
            log.info("server %s did not exit %.1f s after stdin closed: SIGTERM",
                     self.name, grace)
            self.terminate()
            code = self.wait(term_timeout)
        if code is None:
            log.warning("server %s ignored SIGTERM for %.1f s: SIGKILL", self.name, term_timeout)
            self.kill()
            code = self.wait(kill_timeout)
        if code is None:  # pragma: no cover - SIGKILL cannot be ignored
            log.error("server %s (pid %s) survived SIGKILL", self.name, self.pid)
        self.close_stdin(timeout=1.0)  # a write blocked on the dead child has failed by now
        self._join_drain()

    def _join_drain(self) -> None:
        drain = self._drain
        if drain is None:
            return
        drain.join(0.5)
        if drain.is_alive():
            # The child is gone but something still holds stderr open: a grandchild left
            # behind in its process group. It has no server to serve any more.
            self.kill()
            drain.join(1.0)
        if drain.is_alive():
            log.warning("server %s: stderr still open after the process exited "
                        "(a detached grandchild?); leaving the drain thread", self.name)
            return
        assert self._popen and self._popen.stderr
        self._popen.stderr.close()

    def close(self) -> None:
        """Shut down (if not yet) and close the read end of stdout. Call it after the
        thread reading stdout has stopped. Idempotent."""
        self.shutdown()
        if self._closed or self._popen is None:
            return
        self._closed = True
        assert self._popen.stdout
        try:
            self._popen.stdout.close()
        except OSError:
            pass

    def __repr__(self) -> str:
        state = describe_exit(self.returncode) if self._popen else "not started"
        return f"<ServerProcess {self.name} pid={self.pid} {state}>"
