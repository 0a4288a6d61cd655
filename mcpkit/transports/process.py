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
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence

log = logging.getLogger("mcpkit.process")

READ_SIZE = 64 * 1024
DEFAULT_STDERR_LINES = 200
DEFAULT_STDERR_LINE_BYTES = 2000


class SpawnError(OSError):
    """The server's process could not be started (command not found, bad cwd, ...)."""


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
        self._shutdown_lock = threading.Lock()
        self._shut_down = False
        self._closed = False

    # -- starting ------------------------------------------------------------------------

    def start(self) -> ServerProcess:
        if self._popen is not None:
            raise RuntimeError("the process was already started")
        env = None
        if self.env or not self.inherit_env:
            env = dict(os.environ) if self.inherit_env else {}
            env.update({k: str(v) for k, v in self.env.items()})
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
        except FileNotFoundError as exc:
            if self.cwd is not None and not os.path.isdir(self.cwd):
                raise SpawnError(f"cannot start server {self.name!r}: "
                                 f"working directory {str(self.cwd)!r} does not exist") from exc
            raise SpawnError(f"cannot start server {self.name!r}: command {self.command!r} "
                             "not found (is it installed and on PATH?)") from exc
        except OSError as exc:
            raise SpawnError(f"cannot start server {self.name!r}: {exc}") from exc
        assert self._popen.stdin and self._popen.stdout and self._popen.stderr
        self._stdin_fd = self._popen.stdin.fileno()
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

    def write(self, data: bytes) -> None:
        """Write all of ``data`` (one whole message) to the child's stdin.

        Raises :class:`BrokenPipeError` once stdin is closed or the child has gone.
        """
        with self._stdin_lock:
            fd = self._stdin_fd
            if fd < 0:
                raise BrokenPipeError("the server's stdin is closed")
            written = os.write(fd, data)
            while written < len(data):  # more than the pipe holds: it goes in several writes
                data = data[written:]
                written = os.write(fd, data)

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
        if self.close_stdin(timeout=grace):
            code = self.wait(grace)
        else:
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
