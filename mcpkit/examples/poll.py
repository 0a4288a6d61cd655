"""The poll server: an MCP Apps example (lesson 11). A tool with a view.

``poll_ask`` (the model calls it) opens a vote and comes with a board, the ``ui://`` view
below; the board's buttons call ``poll_vote`` and ``poll_reset``, which only the view may call
(``visibility: ["app"]``); ``poll_reset`` says it is destructive, so a host asks the user
first. ``poll_close`` is the model's only. The board is plain HTML and JavaScript that speaks
the view's side of the protocol by hand (no SDK): it is short enough to read.
"""

from __future__ import annotations

import threading
from typing import Any

from mcpkit import Server, apps

server = Server("poll", "1.0.0", title="Poll",
                instructions="Open a vote with poll_ask; the user votes on the board.")

_lock = threading.Lock()
_poll: dict[str, Any] = {"question": "", "counts": {}, "open": False}

BOARD = "ui://poll/board"
BOARD_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>Poll</title>
<style>
  body { font-family: var(--font-sans, sans-serif); margin: 0; padding: 12px;
         color: var(--color-text-primary, #171717);
         background: var(--color-background-primary, #fff); }
  .choices button { font-size: 1rem; margin: 0 8px 8px 0; padding: 6px 14px; }
  .count { font-variant-numeric: tabular-nums; }
  #status { color: #a33; min-height: 1.2em; }
</style></head>
<body>
  <h3 id="question">…</h3>
  <div class="choices" id="choices"></div>
  <p id="counts" class="count"></p>
  <p><button id="reset"></button> <button id="tell"></button> <a href="#" id="about"></a></p>
  <p id="status"></p>
<script>
const WORDS = {
  en: {reset: "Reset the votes", tell: "Tell the assistant", about: "About MCP Apps",
       votes: "votes", closed: "closed"},
  es: {reset: "Poner los votos a cero", tell: "Contárselo al asistente",
       about: "Acerca de MCP Apps", votes: "votos", closed: "cerrada"},
};
let words = WORDS.en, counts = {}, nextId = 1;
const waiting = new Map();
const $ = (id) => document.getElementById(id);

function request(method, params) {
  const id = nextId++;
  parent.postMessage({jsonrpc: "2.0", id, method, params}, "*");
  return new Promise((resolve, reject) => waiting.set(id, {resolve, reject}));
}
function notify(method, params) { parent.postMessage({jsonrpc: "2.0", method, params}, "*"); }

function show(result) {
  const data = (result && result.structuredContent) || {};
  if (data.question !== undefined) $("question").textContent = data.question;
  counts = data.counts || counts;
  const box = $("choices");
  box.replaceChildren(...Object.keys(counts).map((choice) => {
    const button = document.createElement("button");
    button.textContent = choice;
    button.className = "vote";
    button.onclick = () => call("poll_vote", {choice});
    return button;
  }));
  $("counts").textContent = Object.entries(counts).map(([c, n]) => `${c}: ${n}`).join(" · ")
    + ` ${words.votes}` + (data.open === false ? ` (${words.closed})` : "");
}

async function call(name, args) {
  $("status").textContent = "";
  try {
    const result = await request("tools/call", {name, arguments: args});
    if (result.isError) { $("status").textContent = result.content[0].text; return; }
    show(result);
    await request("ui/update-model-context", {structuredContent: {counts}});
  } catch (error) { $("status").textContent = error.message; }
}

window.addEventListener("message", (event) => {
  if (event.source !== parent) return;
  const m = event.data;
  if (!m || m.jsonrpc !== "2.0") return;
  if (m.method === undefined && waiting.has(m.id)) {
    const {resolve, reject} = waiting.get(m.id);
    waiting.delete(m.id);
    m.error ? reject(m.error) : resolve(m.result);
  } else if (m.method === "ui/notifications/tool-result") {
    show(m.params);
  } else if (m.method === "ui/resource-teardown") {
    parent.postMessage({jsonrpc: "2.0", id: m.id, result: {}}, "*");
  }
});

(async () => {
  const answer = await request("ui/initialize", {
    protocolVersion: "2026-01-26", appInfo: {name: "poll-board", version: "1.0.0"},
    appCapabilities: {availableDisplayModes: ["inline"]}});
  const locale = (answer.hostContext && answer.hostContext.locale) || "en";
  words = WORDS[locale.slice(0, 2)] || WORDS.en;
  $("reset").textContent = words.reset;
  $("tell").textContent = words.tell;
  $("about").textContent = words.about;
  $("reset").onclick = () => call("poll_reset", {});
  $("tell").onclick = () => request("ui/message", {role: "user", content: {type: "text",
    text: Object.entries(counts).map(([c, n]) => `${c}: ${n}`).join(", ")}})
    .catch((error) => { $("status").textContent = error.message; });
  $("about").onclick = (e) => { e.preventDefault();
    request("ui/open-link", {url: "https://modelcontextprotocol.io/extensions/apps"})
      .catch((error) => { $("status").textContent = error.message; }); };
  notify("ui/notifications/initialized", {});
  new ResizeObserver(() => notify("ui/notifications/size-changed", {
    width: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight})).observe(document.body);
})();
</script></body></html>
"""

apps.add_view(server, BOARD, BOARD_HTML, title="Poll board",
              description="The votes so far, with a button per choice.", prefers_border=True)


def _state() -> dict[str, Any]:
    return {"question": _poll["question"], "counts": dict(_poll["counts"]),
            "open": _poll["open"]}


def _summary() -> str:
    return ", ".join(f"{c}: {n}" for c, n in _poll["counts"].items()) or "no choices"


@apps.tool(server, BOARD, read_only=False, destructive=False, structured=True)
def poll_ask(question: str, choices: list[str] | None = None) -> dict[str, Any]:
    """Open a vote on a question; the user votes on the board.

    Args:
        question: what to ask.
        choices: the answers to choose from (default: yes, no).
    """
    with _lock:
        _poll.update(question=question, open=True,
                     counts={c: 0 for c in (choices or ["yes", "no"])})
        return _state()


@apps.tool(server, BOARD, visibility=["app"], destructive=False, structured=True)
def poll_vote(choice: str) -> dict[str, Any]:
    """Count one vote (the board's buttons call it).

    Args:
        choice: one of the poll's choices.
    """
    with _lock:
        if not _poll["open"]:
            raise ValueError("the poll is closed")
        if choice not in _poll["counts"]:
            raise ValueError(f"{choice!r} is not one of {', '.join(_poll['counts'])}")
        _poll["counts"][choice] += 1
        return _state()


@apps.tool(server, BOARD, visibility=["app"], destructive=True, structured=True)
def poll_reset() -> dict[str, Any]:
    """Set every count back to zero (the board's reset button)."""
    with _lock:
        _poll["counts"] = {c: 0 for c in _poll["counts"]}
        return _state()


@apps.tool(server, None, visibility=["model"], destructive=False)
def poll_close() -> str:
    """Close the vote and give the final counts."""
    with _lock:
        _poll["open"] = False
        return f"closed: {_summary()}"


if __name__ == "__main__":
    server.run()
