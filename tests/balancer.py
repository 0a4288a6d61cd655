"""Several mcpkit HTTP server processes behind a real HAProxy on loopback (for the test and
the benchmark): round robin per request, and legacy sessions kept on the backend that
created them by a stick table on ``Mcp-Session-Id``, learnt from the ``initialize``
response."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parents[1]

CONFIG = """\
global
    maxconn 512
defaults
    mode http
    option http-keep-alive
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend mcp
    bind 127.0.0.1:{port}
    default_backend mcpkit
backend mcpkit
    balance roundrobin
    # Legacy sessions live in the process that created them: route by the session id
    # that process gave out. Modern (2026-07-28) requests carry no session: any backend.
    stick-table type string len 64 size 100k expire 1h
    stick on req.hdr(mcp-session-id)
    stick store-response res.hdr(mcp-session-id)
    http-response set-header X-Mcpkit-Backend %s
{servers}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


class Balanced:
    """``with Balanced(target, backends=2) as lb:`` ``lb.url`` is HAProxy's MCP endpoint."""

    def __init__(self, target: str, backends: int = 2, secret: str = "shared-by-backends",
                 haproxy: str | None = None) -> None:
        self.target = target
        self.count = backends
        self.secret = secret
        self.haproxy = haproxy or shutil.which("haproxy") or "/usr/sbin/haproxy"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._folder = tempfile.TemporaryDirectory()

    def __enter__(self) -> Balanced:
        try:
            ports = [free_port() for _ in range(self.count)]
            env = {**os.environ, "MCPKIT_STATE_SECRET": self.secret}
            for port in ports:
                self.procs.append(subprocess.Popen(
                    [sys.executable, "-m", "mcpkit", "serve", self.target, "--http", "--port",
                     str(port), "--log-level", "warning"], env=env, cwd=ROOT,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            for port in ports:
                if not wait_listening(port):
                    raise RuntimeError(f"a backend did not start on port {port}")
            servers = "\n".join(f"    server s{i} 127.0.0.1:{port}"
                                for i, port in enumerate(ports, 1))
            config = Path(self._folder.name) / "haproxy.cfg"
            config.write_text(CONFIG.format(port=self.port, servers=servers))
            self.procs.append(subprocess.Popen([self.haproxy, "-f", str(config), "-db"],
                                               stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL))
            if not wait_listening(self.port):
                raise RuntimeError("HAProxy did not start")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self.procs.clear()
        self._folder.cleanup()
