"""An MCP Apps host inside the notebook: a tool's view, live, in a sandboxed iframe.

    view = AppView(host, "poll_ask", {"question": "Tea or coffee?"})
    view                         # the board, in the cell's output; its buttons call tools
    view.bridge.audit            # what the view asked for, and what became of it
    view.close()                 # ui/resource-teardown, answered, then the iframe goes

With ``log="view.wire"`` every ``postMessage`` each way is also written in the record format
of :mod:`mcpkit.wiretap` (the view as the client, the host as the server), so that
``WireInspector("view.wire", live=True)`` shows the view's traffic beside a server's.

Theory of operation
-------------------
Three parties, as in any web host. The kernel holds the :class:`~mcpkit.host.Host` and one
:class:`~mcpkit.app_bridge.AppBridge` per view: everything the protocol decides happens
there. The browser holds the widget's front end (an ES module run by anywidget, below in
``_ESM``): an ``<iframe sandbox="allow-scripts" srcdoc=...>`` whose document starts with the
Content-Security-Policy the bridge worked out, and a relay that passes each ``postMessage``
of that iframe (and of no other window) to the kernel, and each message from the kernel
into the iframe. The view itself is the third: it never sees the notebook, its cookies or
its DOM (no ``allow-same-origin``: its origin is opaque), cannot navigate the page (no
``allow-top-navigation``), and reaches the network only where its CSP says.

The spec asks web hosts for a second, intermediate iframe on another origin (the sandbox
proxy), which a host needs when it serves views from its own origin. A notebook serves none:
the view is a ``srcdoc`` document with an opaque origin, so the single sandboxed frame gives
the same separation, and the proxy's two ``ui/notifications/sandbox-*`` messages are not
used. Messages from the view are handled in order on a worker thread, so that nothing
blocks the kernel; the two requests that may wait for the learner's click (``tools/call``
of a possibly destructive tool, ``ui/open-link``) run on a small pool of their own, so that
a question left open does not hold up the view's other messages.
"""

from __future__ import annotations

import concurrent.futures
import html
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .app_bridge import AppBridge
from .grading import get_language
from .widgets import _View

__all__ = ["AppView", "with_policy"]

ANSWER_TIMEOUT = 120.0  # a question to the learner that nobody answers is a "no"
MAY_WAIT = frozenset({"tools/call", "ui/open-link"})  # requests that may ask the learner
WAITING_WORKERS = 4
TEARDOWN_TIMEOUT = 3.0

_LABELS = {
    "en": {"confirm": "The view wants to call {name} with {arguments}. This tool may change "
           "things. Allow it?", "link": "The view wants to open {url}. Open it?",
           "yes": "Allow", "no": "Refuse", "messages": "Messages from the view",
           "context": "What the view told the model",
           "text": "MCP Apps view {uri} of {tool} (server {server})"},
    "es": {"confirm": "La vista quiere llamar a {name} con {arguments}. Esta herramienta "
           "puede cambiar cosas. ¿Lo permites?", "link": "La vista quiere abrir {url}. "
           "¿Permites que se abra?", "yes": "Permitir", "no": "Rechazar",
           "messages": "Mensajes de la vista", "context": "Lo que la vista le dijo al modelo",
           "text": "Vista de MCP Apps {uri} de la herramienta {tool} (servidor {server})"},
}

_DOCTYPE = re.compile(r"\A\s*(<!doctype[^>]*>)?", re.IGNORECASE)


def with_policy(page: str, policy: str) -> str:
    """``page`` with its Content-Security-Policy as the first element after the doctype:
    before anything in the page can run. A policy the page adds itself can only narrow it."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">'
    doctype = _DOCTYPE.match(page)
    end = doctype.end() if doctype else 0
    return page[:end] + meta + page[end:]


_ESM = r"""
function render({ model, el }) {
  const box = document.createElement("div");
  box.className = "mcpkit-app" + (model.get("border") ? " mcpkit-app-border" : "");
  const frame = document.createElement("iframe");
  frame.className = "mcpkit-app-frame";
  frame.setAttribute("sandbox", "allow-scripts");
  frame.setAttribute("referrerpolicy", "no-referrer");
  frame.srcdoc = model.get("page");
  frame.style.height = model.get("height") + "px";
  const question = document.createElement("div");
  question.className = "mcpkit-app-question";
  const panel = document.createElement("div");
  panel.className = "mcpkit-app-panel";
  box.append(frame, question, panel);
  el.append(box);

  const fromView = (event) => {
    if (event.source !== frame.contentWindow) return;  // only this view's iframe
    const message = event.data;
    if (message && message.method === "ui/notifications/size-changed" && message.params) {
      const h = Number(message.params.height);
      if (h > 0) frame.style.height = Math.min(h + 4, model.get("max_height")) + "px";
    }
    model.send({ kind: "from_view", message });
  };
  window.addEventListener("message", fromView);

  const fromKernel = (msg) => {
    if (msg.kind === "to_view" && frame.contentWindow) {
      frame.contentWindow.postMessage(msg.message, "*");
    } else if (msg.kind === "remove") {
      frame.remove();
    }
  };
  model.on("msg:custom", fromKernel);

  const ask = () => {
    const q = model.get("question");
    question.replaceChildren();
    if (!q || !q.id) return;
    const text = document.createElement("span");
    text.textContent = q.text;
    const yes = document.createElement("button");
    yes.textContent = q.yes;
    yes.className = "mcpkit-app-yes";
    const no = document.createElement("button");
    no.textContent = q.no;
    no.className = "mcpkit-app-no";
    yes.onclick = () => {
      if (q.url) window.open(q.url, "_blank", "noopener,noreferrer");  // the learner's click
      model.send({ kind: "answer", id: q.id, yes: true });
    };
    no.onclick = () => model.send({ kind: "answer", id: q.id, yes: false });
    question.append(text, yes, no);
  };
  const show = () => { panel.innerHTML = model.get("panel"); };
  model.on("change:question", ask);
  model.on("change:panel", show);
  ask();
  show();
  return () => {
    window.removeEventListener("message", fromView);
    model.off("msg:custom", fromKernel);
  };
}
export default { render };
"""

_CSS = """
.mcpkit-app { margin: 4px 0; }
.mcpkit-app-border .mcpkit-app-frame { border: 1px solid var(--jp-border-color1, #ccc);
  border-radius: 4px; }
.mcpkit-app-frame { width: 100%; border: 0; background: #fff; }
.mcpkit-app-question:not(:empty) { padding: 6px; margin: 4px 0;
  background: var(--jp-warn-color3, #fff3cd); }
.mcpkit-app-question button { margin-left: 8px; }
.mcpkit-app-panel { font-size: 0.9em; }
"""


class _Frame(anywidget.AnyWidget):
    _esm = _ESM
    _css = _CSS
    page = traitlets.Unicode("").tag(sync=True)
    border = traitlets.Bool(True).tag(sync=True)
    height = traitlets.Int(160).tag(sync=True)
    max_height = traitlets.Int(600).tag(sync=True)
    question = traitlets.Dict({}).tag(sync=True)
    panel = traitlets.Unicode("").tag(sync=True)


class AppView(_View):
    """The view of ``tool`` (an exposed name of ``host``), called with ``arguments``,
    rendered and driven (see the module docstring). ``confirm(name, arguments) -> bool``
    replaces the question the widget asks before a possibly destructive call."""

    def __init__(self, host: Any, tool: str, arguments: dict[str, Any] | None = None, *,
                 confirm: Any = None, max_height: int = 600,
                 log: str | Path | None = None) -> None:
        self.log = Path(log) if log is not None else None
        self._log_lock = threading.Lock()
        self.language = get_language()
        self._labels = _LABELS.get(self.language, _LABELS["en"])
        server, original = host.route(tool)
        self.tool, self.server = tool, server
        self.bridge = AppBridge(host, server, original, arguments, language=self.language,
                                max_height=max_height,
                                confirm=confirm or self._ask_confirm,
                                open_link=self._ask_link)
        view = self.bridge.open()
        self.box = _Frame(page=with_policy(view.html, view.csp),
                          border=view.prefers_border is not False, max_height=max_height)
        self._answers: dict[int, tuple[threading.Event, list[bool]]] = {}
        self._torn_down = threading.Event()  # the view answered ui/resource-teardown
        self._asked = 0
        self._lock = threading.Lock()
        self._worker = concurrent.futures.ThreadPoolExecutor(1, "mcpkit-app-view")
        self._waiting = concurrent.futures.ThreadPoolExecutor(WAITING_WORKERS,
                                                              "mcpkit-app-view-ask")
        self.box.on_msg(self._on_msg)
        self.result: dict[str, Any] | None = None
        self._worker.submit(self._call, host, tool, dict(arguments or {}))

    # -- the kernel's side ------------------------------------------------------------------

    def _call(self, host: Any, tool: str, arguments: dict[str, Any]) -> None:
        """The tool call the view belongs to (the model's, here the learner's)."""
        try:
            self.result = host.call_tool(tool, arguments)
        except Exception as exc:  # the view hears of it; the notebook shows it
            self._post(self.bridge.deliver_cancelled(str(exc)))
            return
        self._post(self.bridge.deliver_result(self.result))

    def _post(self, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            self._record(b"<", message)
            self.box.send({"kind": "to_view", "message": message})
        self._refresh_panel()

    def _record(self, mark: bytes, message: Any) -> None:
        """One wiretap record: ``>`` from the view (the client), ``<`` to it."""
        if self.log is None:
            return
        try:
            data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        except (TypeError, ValueError):
            data = repr(message).encode()
        with self._log_lock, self.log.open("ab") as out:
            out.write(b"%.6f %s %s\n" % (time.time(), mark, data))

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        if content.get("kind") == "answer":
            with self._lock:
                waiting = self._answers.get(content.get("id"))  # type: ignore[arg-type]
            if waiting is not None:
                waiting[1].append(content.get("yes") is True)
                waiting[0].set()
        elif content.get("kind") == "from_view":
            message = content.get("message")
            may_wait = isinstance(message, dict) and message.get("method") in MAY_WAIT
            pool = self._waiting if may_wait and "id" in message else self._worker
            self._record(b">", message)
            pool.submit(self._handle, message)

    def _handle(self, message: Any) -> None:
        self._post(self.bridge.receive(message))
        if self.bridge.torn_down:
            self._torn_down.set()

    def _ask(self, text: str, url: str | None = None) -> bool:
        """Ask the learner in the widget; wait (bounded) for the click."""
        with self._lock:
            self._asked += 1
            asked = self._asked
            event, answer = threading.Event(), []
            self._answers[asked] = (event, answer)
        self.box.question = {"id": asked, "text": text, "yes": self._labels["yes"],
                             "no": self._labels["no"], **({"url": url} if url else {})}
        event.wait(ANSWER_TIMEOUT)
        with self._lock:
            self._answers.pop(asked, None)
        self.box.question = {}
        return bool(answer and answer[0])

    def _ask_confirm(self, name: str, arguments: dict[str, Any]) -> bool:
        return self._ask(self._labels["confirm"].format(
            name=name, arguments=json.dumps(arguments, ensure_ascii=False)))

    def _ask_link(self, url: str) -> bool:
        return self._ask(self._labels["link"].format(url=url), url=url)

    def _refresh_panel(self) -> None:
        parts = []
        if self.bridge.messages:
            items = "".join(f"<li>{html.escape(b['text'])}</li>"
                            for m in self.bridge.messages for b in m["content"])
            parts.append(f"<b>{self._labels['messages']}</b><ul class='mcpkit-app-messages'>"
                         f"{items}</ul>")
        if self.bridge.model_context is not None:
            context = html.escape(json.dumps(self.bridge.model_context, ensure_ascii=False))
            parts.append(f"<b>{self._labels['context']}</b> "
                         f"<code class='mcpkit-app-context'>{context}</code>")
        self.box.panel = "".join(parts)

    def close(self) -> None:
        """Tell the view it goes (``ui/resource-teardown``); once it has answered (or after
        ``TEARDOWN_TIMEOUT``), the iframe is removed and the worker stops. Returns at once:
        the answer reaches the kernel only when the cell that called this has finished."""
        if self.bridge.torn_down:
            return
        self._post([self.bridge.teardown()])

        def finish() -> None:
            self._torn_down.wait(TEARDOWN_TIMEOUT)
            self.box.send({"kind": "remove"})
            for pool in (self._worker, self._waiting):
                pool.shutdown(wait=False, cancel_futures=True)

        threading.Thread(target=finish, name="mcpkit-app-teardown", daemon=True).start()

    # -- what a saved notebook shows ---------------------------------------------------------

    def _text(self) -> str:
        view = self.bridge.view
        return self._labels["text"].format(uri=view.uri if view else "?", tool=self.tool,
                                           server=self.server)
